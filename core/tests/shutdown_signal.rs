//! `transport::shutdown_on_signals` (issue 11, item 10): SIGTERM starts
//! the same graceful shutdown as cancelling the token by hand. Alone in its
//! test binary because it signals the whole process.

#[path = "server_shutdown.rs"]
#[allow(dead_code)]
mod shutdown;

#[tokio::test]
async fn sigterm_shuts_the_stdio_server_down_gracefully() {
    let stop = ferromcp::transport::shutdown_on_signals().unwrap();
    shutdown::shutdown_ends_listen_and_finishes_in_flight(stop, || {
        // SAFETY: kill(2) on our own pid; the handler installed above turns
        // SIGTERM into the token's cancellation instead of ending the process.
        let rc = unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
        assert_eq!(rc, 0);
    })
    .await;
}
