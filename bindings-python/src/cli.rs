//! `cli_main`: the `ferromcp` command line (the `ferromcp-cli` crate's
//! [`ferromcp_cli::main_with_args`]) run inside the Python process. The
//! package's `ferromcp` command (`ferromcp.cli:main`, also
//! `python -m ferromcp`) calls it for every command but `run`, so
//! `ferromcp tools --stdio '...'` after `pip install ferromcp` is the same
//! program as the Rust binary.

use std::ffi::OsString;
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};

use pyo3::prelude::*;

/// The status a panic of the command line exits with, as a Rust binary's
/// does.
const PANIC_STATUS: i32 = 101;

/// Runs the `ferromcp` command line with `argv` (the program name first:
/// ``["ferromcp", "tools", "--stdio", "python server.py"]``) and returns its
/// exit status: 0 on success (``--help`` and ``--version`` included), 2
/// for a usage error (printed to stderr with the usage), 1 when the
/// command failed.
///
/// Blocks the calling thread until the command is done, with the GIL
/// released (other Python threads run meanwhile); the command has its own
/// runtime and reads and writes the process's stdin, stdout and stderr as
/// the Rust binary does (flush Python's own streams first). A command
/// that serves (``proxy``) stops gracefully on SIGTERM/SIGINT.
///
/// >>> _native.cli_main(["ferromcp", "no-such-command"])  # the usage goes to stderr
/// 2
#[pyfunction]
pub(crate) fn cli_main(py: Python<'_>, argv: Vec<OsString>) -> i32 {
    py.detach(|| {
        // A panic was printed by the panic hook; the caller still gets a
        // status, the one a panicking binary exits with.
        let status = catch_unwind(AssertUnwindSafe(|| ferromcp_cli::main_with_args(argv)))
            .unwrap_or(PANIC_STATUS);
        // Rust's stdout keeps what a `print!` left without a newline.
        let _ = std::io::stdout().flush();
        status
    })
}
