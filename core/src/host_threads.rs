//! The old path of [`crate::host::threads`], kept for code written before
//! the host kit had a folder of its own.

pub use crate::host::threads::*;
