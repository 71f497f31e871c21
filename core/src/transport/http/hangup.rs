//! Noticing that a client closed its connection while a request runs.
//!
//! hyper does not read from a connection while its service is busy, so it
//! cannot notice a hang-up until it writes the response; but closing the
//! connection is how a Streamable HTTP client cancels a request. So each
//! connection is also watched for read-closed readiness, without consuming
//! any bytes, and its token fires on hang-up.
//!
//! On Linux one epoll instance per server watches a duplicate descriptor of
//! every connection for `EPOLLRDHUP` alone, so a connection costs two
//! `epoll_ctl` calls in its lifetime and requests cost nothing. (Watching
//! through tokio would also report every incoming request as readable,
//! waking a task per request only to ignore it: about 3% of the CPU of a
//! small request.) Elsewhere a task per connection watches through tokio.

use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

/// Fires when the client hangs up; stops watching when dropped.
pub(super) struct Hangup {
    token: CancellationToken,
    #[cfg(target_os = "linux")]
    registration: Option<epoll::Registration>,
}

impl Hangup {
    /// Cancelled when the client hangs up (or the watch ends).
    pub(super) fn token(&self) -> &CancellationToken {
        &self.token
    }
}

impl Drop for Hangup {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        drop(self.registration.take());
        // Ends a per-connection watcher task, where there is one.
        self.token.cancel();
    }
}

/// Watches the connections of one server.
pub(super) struct HangupWatcher {
    #[cfg(target_os = "linux")]
    epoll: Option<std::sync::Arc<epoll::Watcher>>,
    /// Whether an unwatched connection was already logged at warn.
    warned: std::sync::atomic::AtomicBool,
}

impl HangupWatcher {
    /// Must be called within the runtime (it registers with its reactor).
    pub(super) fn new() -> HangupWatcher {
        #[cfg(target_os = "linux")]
        {
            let epoll = epoll::Watcher::start()
                .inspect_err(|e| {
                    tracing::debug!(error = %e, "no epoll hang-up watcher; watching per connection");
                })
                .ok();
            HangupWatcher {
                epoll,
                warned: Default::default(),
            }
        }
        #[cfg(not(target_os = "linux"))]
        HangupWatcher::portable()
    }

    /// The watcher of every platform but Linux (a task per connection):
    /// what `new` gives there, and on Linux to the tests, so that it is
    /// exercised where the tests run.
    #[cfg(any(test, not(target_os = "linux")))]
    fn portable() -> HangupWatcher {
        HangupWatcher {
            #[cfg(target_os = "linux")]
            epoll: None,
            warned: Default::default(),
        }
    }

    /// Starts watching `stream`, handing it back. When the watch cannot
    /// be set up (typically no descriptor left for the duplicate: EMFILE)
    /// the connection is still served, with a hang-up token that never
    /// fires: a request then runs to its end even if the client left, which
    /// beats refusing the client. Only fails when the stream itself is lost.
    pub(super) fn watch(&self, stream: TcpStream) -> std::io::Result<(TcpStream, Hangup)> {
        let token = CancellationToken::new();
        let unwatched = |token| Hangup {
            token,
            #[cfg(target_os = "linux")]
            registration: None,
        };
        #[cfg(target_os = "linux")]
        if let Some(epoll) = &self.epoll {
            return match epoll.register(&stream, token.clone()) {
                Ok(registration) => {
                    let hangup = Hangup {
                        token,
                        registration: Some(registration),
                    };
                    Ok((stream, hangup))
                }
                Err(e) => {
                    self.unwatched(&e);
                    Ok((stream, unwatched(token)))
                }
            };
        }
        let stream = match spawn_task_watcher(stream, token.clone())? {
            Ok(stream) => stream,
            Err((stream, e)) => {
                self.unwatched(&e);
                stream
            }
        };
        Ok((stream, unwatched(token)))
    }

    /// Logs a connection served without a watch: the first at warn, the
    /// rest at debug, as under descriptor exhaustion it happens for every
    /// connection.
    fn unwatched(&self, error: &std::io::Error) {
        if !self.warned.swap(true, std::sync::atomic::Ordering::Relaxed) {
            tracing::warn!(
                error = %error,
                "cannot watch a connection for hang-ups; serving it unwatched \
                 (further cases are logged at debug)"
            );
        } else {
            tracing::debug!(error = %error, "serving a connection unwatched for hang-ups");
        }
    }
}

impl Drop for HangupWatcher {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if let Some(epoll) = &self.epoll {
            epoll.stop();
        }
    }
}

/// What a failed watch hands back: the stream, still usable, and why.
type NotWatched = (TcpStream, std::io::Error);

/// The portable watcher: a task waiting on a second descriptor for the
/// socket, ignoring (without consuming) the readable edges of requests.
/// The outer error means the stream was lost; the inner one that it could
/// not be watched.
fn spawn_task_watcher(
    stream: TcpStream,
    token: CancellationToken,
) -> std::io::Result<Result<TcpStream, NotWatched>> {
    let std_stream = stream.into_std()?;
    let duplicate = std_stream.try_clone();
    let stream = TcpStream::from_std(std_stream)?;
    let watcher = match duplicate.and_then(TcpStream::from_std) {
        Ok(watcher) => watcher,
        Err(e) => return Ok(Err((stream, e))),
    };
    tokio::spawn(async move {
        loop {
            let ready = tokio::select! {
                ready = watcher.ready(tokio::io::Interest::READABLE) => ready,
                _ = token.cancelled() => return,
            };
            match ready {
                Ok(r) if r.is_read_closed() => break,
                Ok(_) => {
                    // Bytes for hyper to read: forget this edge without
                    // consuming them and wait for the next one.
                    let _ = watcher.try_io(tokio::io::Interest::READABLE, || {
                        Err::<(), _>(std::io::ErrorKind::WouldBlock.into())
                    });
                }
                Err(_) => break,
            }
        }
        token.cancel();
    });
    Ok(Ok(stream))
}

#[cfg(target_os = "linux")]
mod epoll {
    use std::collections::HashMap;
    use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex, MutexGuard};

    use tokio::io::unix::AsyncFd;
    use tokio::net::TcpStream;
    use tokio_util::sync::CancellationToken;

    /// One epoll instance, itself watched by the runtime's reactor.
    pub(super) struct Watcher {
        epoll: AsyncFd<OwnedFd>,
        watches: Mutex<HashMap<u64, CancellationToken>>,
        next_key: AtomicU64,
        /// Ends the delivering task.
        stopped: CancellationToken,
    }

    /// One connection's watch: its duplicate descriptor, closed (after
    /// being removed from the epoll set) on drop.
    pub(super) struct Registration {
        watcher: Arc<Watcher>,
        key: u64,
        duplicate: OwnedFd,
    }

    impl Drop for Registration {
        fn drop(&mut self) {
            self.watcher.watches().remove(&self.key);
            // SAFETY: both descriptors are open (owned here and by the
            // watcher); a null event is allowed for EPOLL_CTL_DEL.
            unsafe {
                libc::epoll_ctl(
                    self.watcher.epoll.as_raw_fd(),
                    libc::EPOLL_CTL_DEL,
                    self.duplicate.as_raw_fd(),
                    std::ptr::null_mut(),
                );
            }
            // `duplicate` closes after this.
        }
    }

    impl Watcher {
        pub(super) fn start() -> std::io::Result<Arc<Watcher>> {
            // SAFETY: plain syscall; the result is checked before use.
            let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // SAFETY: `fd` was just created and is owned by nothing else.
            let owned = unsafe { OwnedFd::from_raw_fd(fd) };
            // SAFETY: an OwnedFd keeps its descriptor open and unchanged for
            // as long as it lives, which is as long as the AsyncFd owning it.
            let epoll =
                unsafe { AsyncFd::register_with_interest(owned, tokio::io::Interest::READABLE) }
                    .map_err(std::io::Error::from)?;
            let watcher = Arc::new(Watcher {
                epoll,
                watches: Mutex::new(HashMap::new()),
                next_key: AtomicU64::new(0),
                stopped: CancellationToken::new(),
            });
            tokio::spawn(deliver(watcher.clone()));
            Ok(watcher)
        }

        /// Ends the delivering task (the server is gone); the epoll
        /// descriptor closes once the last connection's watch is dropped.
        pub(super) fn stop(&self) {
            self.stopped.cancel();
        }

        pub(super) fn watches(&self) -> MutexGuard<'_, HashMap<u64, CancellationToken>> {
            // A map of tokens, updated in single calls: never half-written.
            crate::rpc::lock_unpoisoned(&self.watches)
        }

        pub(super) fn register(
            self: &Arc<Self>,
            stream: &TcpStream,
            token: CancellationToken,
        ) -> std::io::Result<Registration> {
            let duplicate = stream.as_fd().try_clone_to_owned()?;
            let key = self.next_key.fetch_add(1, Ordering::Relaxed);
            self.watches().insert(key, token);
            let registration = Registration {
                watcher: self.clone(),
                key,
                duplicate,
            };
            // Read-closed (and hang-up/error, which epoll always reports),
            // but not readable: requests arriving cause no event. One shot:
            // once fired, the watch has done its job.
            let mut event = libc::epoll_event {
                events: (libc::EPOLLRDHUP | libc::EPOLLONESHOT) as u32,
                u64: key,
            };
            // SAFETY: both descriptors are open; `event` is a valid pointer.
            let added = unsafe {
                libc::epoll_ctl(
                    self.epoll.as_raw_fd(),
                    libc::EPOLL_CTL_ADD,
                    registration.duplicate.as_raw_fd(),
                    &mut event,
                )
            };
            if added < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(registration)
        }

        /// Fires the tokens of every connection reported hung up; false
        /// when nothing was pending.
        fn drain(&self) -> std::io::Result<bool> {
            const BATCH: usize = 64;
            let mut events = [libc::epoll_event { events: 0, u64: 0 }; BATCH];
            // SAFETY: `events` has room for BATCH entries; timeout 0 never
            // blocks.
            let n = unsafe {
                libc::epoll_wait(self.epoll.as_raw_fd(), events.as_mut_ptr(), BATCH as i32, 0)
            };
            if n < 0 {
                let error = std::io::Error::last_os_error();
                return if error.kind() == std::io::ErrorKind::Interrupted {
                    Ok(true)
                } else {
                    Err(error)
                };
            }
            let watches = self.watches();
            for event in &events[..n as usize] {
                let key = event.u64;
                if let Some(token) = watches.get(&key) {
                    token.cancel();
                }
            }
            Ok(n > 0)
        }
    }

    async fn deliver(watcher: Arc<Watcher>) {
        loop {
            let ready = tokio::select! {
                ready = watcher.epoll.readable() => ready,
                _ = watcher.stopped.cancelled() => return,
            };
            let Ok(mut guard) = ready else {
                return;
            };
            match watcher.drain() {
                Ok(true) => {}
                Ok(false) => guard.clear_ready(),
                Err(e) => {
                    tracing::warn!(error = %e, "hang-up watcher failed; hang-ups go unnoticed");
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use tokio::net::TcpListener;

    async fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (server, _) = listener.accept().await.unwrap();
        (server, client)
    }

    #[tokio::test]
    async fn fires_on_hang_up_but_not_on_incoming_bytes() {
        fires_on_hang_up_only(HangupWatcher::new()).await;
    }

    /// The per-connection task watcher, which Linux does not use.
    #[tokio::test]
    async fn the_portable_watcher_fires_on_hang_up_but_not_on_incoming_bytes() {
        let watcher = HangupWatcher::portable();
        #[cfg(target_os = "linux")]
        assert!(watcher.epoll.is_none());
        fires_on_hang_up_only(watcher).await;
    }

    async fn fires_on_hang_up_only(watcher: HangupWatcher) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (server, mut client) = pair().await;
        let (mut server, hangup) = watcher.watch(server).unwrap();
        client.write_all(b"request").await.unwrap();
        let mut buf = [0u8; 7];
        server.read_exact(&mut buf).await.unwrap();
        // The bytes were for the server to read, not a hang-up.
        let early = tokio::time::timeout(Duration::from_millis(50), hangup.token().cancelled());
        assert!(early.await.is_err(), "fired without a hang-up");
        drop(client);
        tokio::time::timeout(Duration::from_secs(10), hangup.token().cancelled())
            .await
            .expect("hang-up noticed");
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_finished_connection_leaves_nothing_watched() {
        let watcher = HangupWatcher::new();
        let epoll = watcher.epoll.clone().expect("epoll watcher on Linux");
        for _ in 0..3 {
            let (server, _client) = pair().await;
            let (_server, hangup) = watcher.watch(server).unwrap();
            assert_eq!(epoll.watches().len(), 1);
            drop(hangup);
        }
        assert!(epoll.watches().is_empty());
    }
}
