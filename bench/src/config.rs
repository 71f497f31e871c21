//! The bench configuration (bench/servers.json): which servers to measure,
//! how to start them, and the targets to check. ferromcp servers name an
//! entry of examples/manifest.json instead of repeating its commands.

use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

#[derive(Debug, Clone, Deserialize)]
pub struct Config {
    pub servers: Vec<ServerSpec>,
    #[serde(default)]
    pub targets: Vec<Target>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ServerSpec {
    /// Short unique name, used in tables and JSON.
    pub name: String,
    /// `baseline`, `ferromcp` or `official`.
    pub kind: String,
    /// Language of the server (`rust`, `python`, `node`, `c`, …).
    pub language: String,
    /// What is measured, for the report (SDK name and version).
    #[serde(default)]
    pub description: String,
    /// The server to compare with in the ratios table (same-language
    /// official SDK).
    #[serde(default)]
    pub compare_with: Option<String>,
    /// A reference into examples/manifest.json.
    #[serde(default)]
    pub manifest: Option<ManifestRef>,
    /// Commands, when not taken from the manifest; `{port}` is replaced.
    #[serde(default)]
    pub http: Option<Vec<String>>,
    #[serde(default)]
    pub stdio: Option<Vec<String>>,
    /// The HTTP server reports its event-loop delay on SIGUSR2
    /// (bench/servers/event-loop-delay.mjs preloaded; see `event_loop`).
    #[serde(default)]
    pub event_loop_delay: bool,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ManifestRef {
    pub fixture: String,
    pub language: String,
}

/// A target of issue #6, item 4, as a ratio between two servers' figures.
#[derive(Debug, Clone, Deserialize)]
pub struct Target {
    pub description: String,
    pub server: String,
    pub metric: String,
    pub reference: String,
    /// The reference's figure may be a different one (rarely needed).
    #[serde(default)]
    pub reference_metric: Option<String>,
    /// `<=`, `<`, `>=` or `>`: server / reference compared with `ratio`.
    pub op: String,
    pub ratio: f64,
}

impl Target {
    pub fn holds(&self, measured: f64) -> bool {
        match self.op.as_str() {
            "<=" => measured <= self.ratio,
            "<" => measured < self.ratio,
            ">=" => measured >= self.ratio,
            ">" => measured > self.ratio,
            _ => false,
        }
    }
}

/// A server with its commands resolved.
#[derive(Debug, Clone)]
pub struct Server {
    pub spec: ServerSpec,
    pub http: Option<Vec<String>>,
    pub stdio: Option<Vec<String>>,
}

impl Server {
    pub fn name(&self) -> &str {
        &self.spec.name
    }
}

/// `argv` with `{port}` replaced by `port` and `{otlp}` by the URL of the
/// bench's OTLP sink (started then; see `otlp_sink`).
pub fn substitute_port(argv: &[String], port: u16) -> Vec<String> {
    argv.iter()
        .map(|a| {
            let a = a.replace("{port}", &port.to_string());
            if a.contains("{otlp}") {
                a.replace("{otlp}", &crate::otlp_sink::url())
            } else {
                a
            }
        })
        .collect()
}

fn string_list(v: Option<&Value>) -> Option<Vec<String>> {
    v?.as_array()?
        .iter()
        .map(|s| s.as_str().map(str::to_owned))
        .collect()
}

/// Only the targets of the config (the scale rows are not servers of it,
/// so their manifest entries need not resolve).
pub fn load_targets(config_path: &Path) -> Result<Vec<Target>, String> {
    let text = std::fs::read_to_string(config_path)
        .map_err(|e| format!("cannot read {}: {e}", config_path.display()))?;
    let config: Config =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", config_path.display()))?;
    Ok(config.targets)
}

/// Reads the config and resolves manifest references.
pub fn load(config_path: &Path, manifest_path: &Path) -> Result<(Config, Vec<Server>), String> {
    let text = std::fs::read_to_string(config_path)
        .map_err(|e| format!("cannot read {}: {e}", config_path.display()))?;
    let config: Config =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", config_path.display()))?;
    let manifest: Option<Value> = match std::fs::read_to_string(manifest_path) {
        Ok(t) => Some(
            serde_json::from_str(&t).map_err(|e| format!("{}: {e}", manifest_path.display()))?,
        ),
        Err(_) => None,
    };
    let mut servers = Vec::new();
    for spec in &config.servers {
        let (mut http, mut stdio) = (spec.http.clone(), spec.stdio.clone());
        if let Some(r) = &spec.manifest {
            let entry = manifest
                .as_ref()
                .and_then(|m| m.get(&r.fixture))
                .and_then(|f| f.get(&r.language))
                .ok_or_else(|| {
                    format!(
                        "{}: {} has no entry {}/{}",
                        spec.name,
                        manifest_path.display(),
                        r.fixture,
                        r.language
                    )
                })?;
            http = http.or_else(|| string_list(entry.get("http")));
            stdio = stdio.or_else(|| string_list(entry.get("stdio")));
        }
        if http.is_none() && stdio.is_none() {
            return Err(format!(
                "{}: neither an http nor a stdio command",
                spec.name
            ));
        }
        servers.push(Server {
            spec: spec.clone(),
            http,
            stdio,
        });
    }
    let mut names: Vec<&str> = servers.iter().map(Server::name).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("server name {} is used twice", w[0]));
    }
    Ok((config, servers))
}
