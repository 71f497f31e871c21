//! A shutdown request that may be raised from a signal handler.
//!
//! Waking an async task normally takes locks (a `CancellationToken`, a
//! `Notify`), which a POSIX signal handler must not do. There a socket pair
//! is the classic self-pipe: raising is one `write(2)`, which is
//! async-signal-safe, and the serving task waits for the other end to become
//! readable. Windows runs a C program's signal and console-control handlers
//! on a thread of their own, where taking a lock is allowed, so there a flag
//! and a `Notify` do (`FlagSignal`, also tested on Linux so it cannot rot).

use std::io;
#[cfg(unix)]
use std::io::{Read, Write};
#[cfg(unix)]
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};

#[cfg(unix)]
pub(crate) type ShutdownSignal = SelfPipeSignal;
#[cfg(not(unix))]
pub(crate) type ShutdownSignal = FlagSignal;

/// A sticky request to stop serving: raised any number of times, consumed
/// by the serve call that is running (or the next one to start).
#[cfg(unix)]
#[derive(Debug)]
pub(crate) struct SelfPipeSignal {
    raise_end: UnixStream,
    wait_end: UnixStream,
}

#[cfg(unix)]
impl SelfPipeSignal {
    pub(crate) fn new() -> io::Result<SelfPipeSignal> {
        let (raise_end, wait_end) = UnixStream::pair()?;
        // Non-blocking on both ends: raising must never block (a full buffer
        // already means "requested"), and tokio requires it for the waiter.
        raise_end.set_nonblocking(true)?;
        wait_end.set_nonblocking(true)?;
        Ok(SelfPipeSignal {
            raise_end,
            wait_end,
        })
    }

    /// Requests shutdown. Performs a single `write(2)`: no allocation, no
    /// lock, so it is safe inside a signal handler.
    pub(crate) fn raise(&self) {
        // WouldBlock means the buffer is full of earlier requests; any other
        // error cannot happen while both ends are owned by `self`.
        let _ = (&self.raise_end).write(&[1]);
    }

    /// Resolves once shutdown has been requested, consuming every pending
    /// request. Must run inside the tokio runtime.
    pub(crate) async fn requested(&self) -> io::Result<()> {
        // A duplicate descriptor, because tokio takes ownership of what it
        // registers and the original must outlive this serve call.
        let waiter = tokio::net::UnixStream::from_std(self.wait_end.try_clone()?)?;
        loop {
            waiter.readable().await?;
            let mut buf = [0u8; 64];
            match waiter.try_read(&mut buf) {
                Ok(_) => break,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(e),
            }
        }
        self.drain();
        Ok(())
    }

    /// Drops requests raised more than once, so they do not stop a later
    /// serve call as well.
    fn drain(&self) {
        let mut buf = [0u8; 64];
        while matches!((&self.wait_end).read(&mut buf), Ok(n) if n > 0) {}
    }
}

/// The same sticky request for platforms whose signal handlers may lock
/// (Windows): a flag that says "requested" and a `Notify` that wakes the
/// waiter. Raising twice before the wait is one request, as with the pipe.
#[derive(Debug, Default)]
#[cfg_attr(unix, allow(dead_code))] // built on Linux for its tests
pub(crate) struct FlagSignal {
    requested: AtomicBool,
    wake: tokio::sync::Notify,
}

#[cfg_attr(unix, allow(dead_code))]
impl FlagSignal {
    pub(crate) fn new() -> io::Result<FlagSignal> {
        Ok(FlagSignal::default())
    }

    pub(crate) fn raise(&self) {
        self.requested.store(true, Ordering::SeqCst);
        self.wake.notify_one();
    }

    pub(crate) async fn requested(&self) -> io::Result<()> {
        loop {
            // Registered before the flag is read, so a raise between the
            // read and the wait still wakes this waiter.
            let woken = self.wake.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            if self.requested.swap(false, Ordering::SeqCst) {
                return Ok(());
            }
            woken.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Both kinds of signal pass the same tests on every platform that has
    /// both, so the one Windows uses is exercised on Linux.
    trait Signal: Send + Sync + 'static {
        fn make() -> Self;
        fn raise(&self);
        fn requested(&self) -> impl std::future::Future<Output = io::Result<()>> + Send;
    }

    #[cfg(unix)]
    impl Signal for SelfPipeSignal {
        fn make() -> Self {
            SelfPipeSignal::new().expect("socketpair")
        }
        fn raise(&self) {
            SelfPipeSignal::raise(self)
        }
        fn requested(&self) -> impl std::future::Future<Output = io::Result<()>> + Send {
            SelfPipeSignal::requested(self)
        }
    }

    impl Signal for FlagSignal {
        fn make() -> Self {
            FlagSignal::new().expect("flag")
        }
        fn raise(&self) {
            FlagSignal::raise(self)
        }
        fn requested(&self) -> impl std::future::Future<Output = io::Result<()>> + Send {
            FlagSignal::requested(self)
        }
    }

    #[test]
    fn raised_before_waiting_is_sticky_and_consumed_once() {
        #[cfg(unix)]
        sticky_and_consumed_once::<SelfPipeSignal>();
        sticky_and_consumed_once::<FlagSignal>();
    }

    #[test]
    fn raise_from_another_thread_wakes_the_waiter() {
        #[cfg(unix)]
        wakes_from_another_thread::<SelfPipeSignal>();
        wakes_from_another_thread::<FlagSignal>();
    }

    fn sticky_and_consumed_once<S: Signal>() {
        let signal = S::make();
        signal.raise();
        signal.raise();
        let rt = ferromcp_core::runtime::get();
        rt.block_on(async {
            tokio::time::timeout(Duration::from_secs(5), signal.requested())
                .await
                .expect("first wait returns")
                .expect("no I/O error");
            let second = tokio::time::timeout(Duration::from_millis(100), signal.requested()).await;
            assert!(second.is_err(), "the duplicate request was drained");
        });
    }

    fn wakes_from_another_thread<S: Signal>() {
        let signal = std::sync::Arc::new(S::make());
        let raiser = std::sync::Arc::clone(&signal);
        let thread = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            raiser.raise();
        });
        ferromcp_core::runtime::get().block_on(async {
            tokio::time::timeout(Duration::from_secs(5), signal.requested())
                .await
                .expect("woken")
                .expect("no I/O error");
        });
        thread.join().expect("raiser thread");
    }
}
