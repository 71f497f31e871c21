//! Pieces of the examples that their tests use too: the echo server's
//! definition (`echo-server` serves it; `tests/echo_server.rs` tests it
//! in memory, as the README says a server is tested).

pub mod echo;
