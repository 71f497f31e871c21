//! `cliMain`: the `ferromcp` command line (the `ferromcp-cli` crate's
//! [`ferromcp_cli::main_with_args`]) run inside the Node process. The
//! package's `bin/ferromcp.js` calls it for every command but `run`, so
//! `npx ferromcp tools --stdio '...'` is the same program as the Rust
//! binary.

use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;

use napi::bindgen_prelude::Object;
use napi::{Env, JsDeferred, Status};
use napi_derive::napi;

/// The resolver of `cliMain`'s promise: the exit status.
type Resolve = Box<dyn FnOnce(Env) -> napi::Result<i32> + Send>;

/// The status a panic of the command line exits with, as a Rust binary's
/// does.
const PANIC_STATUS: i32 = 101;

/// Runs the `ferromcp` command line with `argv` (the program name first,
/// as in `process.argv.slice(1)`: `["ferromcp", "tools", "--stdio", "..."]`)
/// and resolves with its exit status: 0 on success (`--help` and
/// `--version` included), 2 for a usage error (printed to stderr with the
/// usage), 1 when the command failed.
///
/// The command runs on a thread of its own with its own runtime, so the
/// JS event loop keeps running meanwhile; it reads and writes the
/// process's stdin, stdout and stderr as the Rust binary does (a command
/// serving stdio, such as `proxy --stdio`, owns stdin and stdout until it
/// returns) and, while a serving command runs, stops gracefully on
/// SIGTERM/SIGINT. What it printed is flushed before the promise resolves.
///
/// @example
/// ```js
/// const native = require("./native.js");
/// const status = await native.cliMain(["ferromcp", "tools", "--url", "http://127.0.0.1:8000/mcp"]);
/// process.exit(status);
/// ```
#[cfg_attr(test, allow(dead_code))]
#[napi(js_name = "cliMain", ts_return_type = "Promise<number>")]
pub fn cli_main<'env>(env: &'env Env, argv: Vec<String>) -> napi::Result<Object<'env>> {
    // The thread starts first and waits for the promise's deferred: if it
    // cannot start, nothing was created that would stay pending forever.
    let (sender, receiver) = mpsc::channel::<JsDeferred<i32, Resolve>>();
    std::thread::Builder::new()
        .name("ferromcp-cli".into())
        .spawn(move || {
            let Ok(deferred) = receiver.recv() else {
                return;
            };
            // A panic was printed by the panic hook; the promise still
            // settles, with the status a panicking binary exits with.
            let status = catch_unwind(AssertUnwindSafe(|| ferromcp_cli::main_with_args(argv)))
                .unwrap_or(PANIC_STATUS);
            // Rust's stdout keeps what a `print!` left without a newline,
            // and a Node process exits without flushing it.
            let _ = std::io::stdout().flush();
            deferred.resolve(Box::new(move |_env| Ok(status)));
        })
        .map_err(|e| {
            napi::Error::new(
                Status::GenericFailure,
                format!("ferromcp: cannot start the command line: {e}"),
            )
        })?;
    let (deferred, promise) = env.create_deferred::<i32, Resolve>()?;
    let _ = sender.send(deferred);
    Ok(promise)
}
