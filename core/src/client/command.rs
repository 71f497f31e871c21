//! What a stdio client starts: the server's command line
//! ([`StdioCommand`]) and what becomes of its stderr ([`StderrMode`]). The
//! stdio transport (`transport/stdio/client.rs`) spawns and supervises the
//! process from them.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use crate::Error;

/// How to start a server process.
#[derive(Debug, Clone)]
pub struct StdioCommand {
    /// The program to run.
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Extra environment variables.
    pub env: Vec<(OsString, OsString)>,
    /// Working directory, if not the current one.
    pub cwd: Option<PathBuf>,
}

impl StdioCommand {
    /// A command from a program and its arguments.
    pub fn new<I, S>(program: impl Into<OsString>, args: I) -> StdioCommand
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        StdioCommand {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
            cwd: None,
        }
    }

    /// Splits a command line on whitespace (no shell quoting).
    pub fn parse(command_line: &str) -> Result<StdioCommand, Error> {
        let mut parts = command_line.split_whitespace();
        let program = parts
            .next()
            .ok_or_else(|| Error::Protocol("empty server command".into()))?;
        Ok(StdioCommand::new(program, parts))
    }
}

/// What happens to the server's stderr.
#[derive(Clone, Default)]
pub enum StderrMode {
    /// Read line by line into the log (`tracing`, target `ferromcp::stderr`)
    /// and keep the last lines to explain a crash.
    #[default]
    Capture,
    /// Pass through to this process's stderr.
    Inherit,
    /// Discard.
    Null,
    /// Hand each line to a callback (and keep the tail, as `Capture`).
    Callback(Arc<dyn Fn(&str) + Send + Sync>),
}

impl std::fmt::Debug for StderrMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StderrMode::Capture => "Capture",
            StderrMode::Inherit => "Inherit",
            StderrMode::Null => "Null",
            StderrMode::Callback(_) => "Callback",
        })
    }
}
