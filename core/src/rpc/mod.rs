//! JSON-RPC bookkeeping shared by both roles and every transport: the
//! table of requests in flight, and the lock helpers the tables use.

pub(crate) mod inflight;

pub(crate) use inflight::{DuplicateId, InFlight, Reply, Tracked, duplicate_id_error};

use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Locks `m`, ignoring poisoning.
///
/// Every lock in this crate guards plain bookkeeping (maps of channel ends
/// and tokens, caches, counters) that each critical section leaves
/// consistent before anything can panic, so a panic on another thread is no
/// reason to stop serving.
pub(crate) fn lock_unpoisoned<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Read-locks `l`, ignoring poisoning (see [`lock_unpoisoned`]).
pub(crate) fn read_unpoisoned<T: ?Sized>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|p| p.into_inner())
}

/// Write-locks `l`, ignoring poisoning (see [`lock_unpoisoned`]).
pub(crate) fn write_unpoisoned<T: ?Sized>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_poisoned_lock_still_opens() {
        let m = Arc::new(Mutex::new(1));
        let l = Arc::new(RwLock::new(1));
        let (m2, l2) = (m.clone(), l.clone());
        let _ = std::thread::spawn(move || {
            let _g = m2.lock();
            let _w = l2.write();
            panic!("poison both");
        })
        .join();
        assert!(m.is_poisoned() && l.is_poisoned());
        *lock_unpoisoned(&m) += 1;
        *write_unpoisoned(&l) += 1;
        assert_eq!(*lock_unpoisoned(&m), 2);
        assert_eq!(*read_unpoisoned(&l), 2);
    }
}
