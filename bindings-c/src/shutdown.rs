//! A shutdown request that may be raised from a signal handler.
//!
//! Waking an async task normally takes locks (a `CancellationToken`, a
//! `Notify`), which a signal handler must not do. A socket pair is the
//! classic self-pipe: raising is one `write(2)`, which is async-signal-safe,
//! and the serving task waits for the other end to become readable.

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;

/// A sticky request to stop serving: raised any number of times, consumed
/// by the serve call that is running (or the next one to start).
#[derive(Debug)]
pub(crate) struct ShutdownSignal {
    raise_end: UnixStream,
    wait_end: UnixStream,
}

impl ShutdownSignal {
    pub(crate) fn new() -> io::Result<ShutdownSignal> {
        let (raise_end, wait_end) = UnixStream::pair()?;
        // Non-blocking on both ends: raising must never block (a full buffer
        // already means "requested"), and tokio requires it for the waiter.
        raise_end.set_nonblocking(true)?;
        wait_end.set_nonblocking(true)?;
        Ok(ShutdownSignal {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn raised_before_waiting_is_sticky_and_consumed_once() {
        let signal = ShutdownSignal::new().expect("socketpair");
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

    #[test]
    fn raise_from_another_thread_wakes_the_waiter() {
        let signal = std::sync::Arc::new(ShutdownSignal::new().expect("socketpair"));
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
