//! `examples/manifest.json`: how to start every example server and fixture
//! in every language. Tests and tools read it instead of hard-coding
//! commands.

use serde_json::Value;
use std::path::{Path, PathBuf};

/// The repository root (the parent of this crate's folder).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(".."))
}

/// The parsed manifest.
pub struct Manifest {
    root: Value,
}

/// A transport a server can be started on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Newline-delimited JSON-RPC over stdin/stdout.
    Stdio,
    /// Streamable HTTP on a local port.
    Http,
}

impl Transport {
    /// The manifest key.
    pub fn key(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
        }
    }
}

impl Manifest {
    /// Loads `examples/manifest.json` from the repository.
    pub fn load() -> Result<Manifest, String> {
        let path = repo_root().join("examples/manifest.json");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        let root = serde_json::from_str(&text).map_err(|e| format!("parsing manifest: {e}"))?;
        Ok(Manifest { root })
    }

    /// Languages that provide `fixture`, in manifest order.
    pub fn languages(&self, fixture: &str) -> Vec<String> {
        self.root
            .get(fixture)
            .and_then(Value::as_object)
            .map(|langs| langs.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The argv that starts `fixture` in `language` on `transport`, with
    /// `{port}` replaced.
    pub fn command(
        &self,
        fixture: &str,
        language: &str,
        transport: Transport,
        port: Option<u16>,
    ) -> Result<Vec<String>, String> {
        let argv = self
            .root
            .get(fixture)
            .and_then(|f| f.get(language))
            .and_then(|l| l.get(transport.key()))
            .and_then(Value::as_array)
            .ok_or_else(|| format!("manifest has no {fixture}.{language}.{}", transport.key()))?;
        argv.iter()
            .map(|a| {
                let a = a.as_str().ok_or("manifest arguments must be strings")?;
                Ok(match port {
                    Some(p) => a.replace("{port}", &p.to_string()),
                    None => a.to_owned(),
                })
            })
            .collect()
    }
}
