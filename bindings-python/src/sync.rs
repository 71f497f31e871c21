//! Locking the binding's own mutexes.

use std::sync::{Mutex, MutexGuard};

/// Locks `mutex`, poisoned or not. Every mutex of this crate guards plain
/// values (references, queues, slots), each changed in one step under the
/// lock: a panic while holding it cannot leave one half-updated.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
