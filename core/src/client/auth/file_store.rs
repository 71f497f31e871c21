//! A [`TokenStore`] in a JSON file, so a login outlives the process: what a
//! command-line tool or a desktop agent keeps between runs.
//!
//! Every call reads the file afresh and every save rewrites it whole
//! (through a temporary file renamed over it), so several processes using
//! one file see each other's logins and a crash never leaves half a file.
//! Two processes saving at the same instant: the later rename wins, which
//! costs at most a repeated login. On Unix the file is created readable by
//! its owner only (0600): it holds bearer and refresh tokens.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::store::{ClientCredentials, StoredTokens, TokenStore};
use crate::rpc::lock_unpoisoned;

/// The file's layout (`version` lets a later format be told apart).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Contents {
    #[serde(default = "format_version")]
    version: u32,
    /// Per MCP server URL.
    #[serde(default)]
    tokens: BTreeMap<String, StoredTokens>,
    /// Per authorization server issuer.
    #[serde(default)]
    clients: BTreeMap<String, ClientCredentials>,
}

fn format_version() -> u32 {
    1
}

/// Tokens and client registrations kept in one JSON file.
///
/// The [`TokenStore`] calls cannot fail, so a file that cannot be read or
/// written is logged (with `tracing`) and treated as empty: the user is
/// asked to log in again rather than the request failing.
///
/// ```
/// use ferromcp::client::auth::{FileTokenStore, StoredTokens, TokenStore};
/// let dir = std::env::temp_dir().join(format!("ferromcp-doc-{}", std::process::id()));
/// let store = FileTokenStore::new(dir.join("tokens.json"));
/// store.save_tokens("https://mcp.example/mcp", &StoredTokens {
///     access_token: "t".into(), refresh_token: None, expires_at: None,
///     scopes: vec![], issuer: "https://as.example".into(), token_type: None,
/// });
/// // Another store on the same file (another process, a later run) sees it.
/// let again = FileTokenStore::new(dir.join("tokens.json"));
/// assert_eq!(again.load_tokens("https://mcp.example/mcp").unwrap().access_token, "t");
/// # std::fs::remove_dir_all(dir).unwrap();
/// ```
#[derive(Debug)]
pub struct FileTokenStore {
    path: PathBuf,
    /// Serialises this process's read-modify-write cycles.
    writing: Mutex<()>,
}

impl FileTokenStore {
    /// A store in `path` (created, with its directory, on the first save).
    pub fn new(path: impl Into<PathBuf>) -> FileTokenStore {
        FileTokenStore {
            path: path.into(),
            writing: Mutex::new(()),
        }
    }

    /// The default file of a user: `$XDG_CONFIG_HOME/ferromcp/tokens.json`,
    /// else `~/.config/ferromcp/tokens.json` (`%APPDATA%\ferromcp\tokens.json`
    /// on Windows); `None` when the environment names no home.
    pub fn default_path() -> Option<PathBuf> {
        let non_empty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let base = if cfg!(windows) {
            non_empty("APPDATA").map(PathBuf::from)
        } else {
            non_empty("XDG_CONFIG_HOME")
                .map(PathBuf::from)
                .or_else(|| non_empty("HOME").map(|home| Path::new(&home).join(".config")))
        }?;
        Some(base.join("ferromcp").join("tokens.json"))
    }

    /// The file this store uses.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every MCP server URL with saved tokens.
    pub fn resources(&self) -> Vec<String> {
        self.read().tokens.into_keys().collect()
    }

    fn read(&self) -> Contents {
        let text = match std::fs::read(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Contents::default(),
            Err(e) => {
                tracing::warn!(path = %self.path.display(), error = %e, "cannot read the token file; ignoring it");
                return Contents::default();
            }
        };
        serde_json::from_slice(&text).unwrap_or_else(|e| {
            tracing::warn!(path = %self.path.display(), error = %e, "the token file is not valid; ignoring it");
            Contents::default()
        })
    }

    fn update(&self, change: impl FnOnce(&mut Contents)) {
        let _writing = lock_unpoisoned(&self.writing);
        let mut contents = self.read();
        change(&mut contents);
        contents.version = format_version();
        if let Err(e) = self.write(&contents) {
            tracing::warn!(path = %self.path.display(), error = %e, "cannot save the token file");
        }
    }

    fn write(&self, contents: &Contents) -> std::io::Result<()> {
        let dir = match self.path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        std::fs::create_dir_all(dir)?;
        let mut name = self.path.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".{}.tmp", std::process::id()));
        let temporary = dir.join(name);
        let result = (|| {
            let mut file = owner_only()
                .write(true)
                .create(true)
                .truncate(true)
                .open(&temporary)?;
            file.write_all(&serde_json::to_vec_pretty(contents)?)?;
            file.sync_all()?;
            std::fs::rename(&temporary, &self.path)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
        result
    }
}

/// Open options creating a file only its owner can read (Unix).
fn owner_only() -> std::fs::OpenOptions {
    #[cfg_attr(not(unix), allow(unused_mut))]
    let mut options = std::fs::OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
}

impl TokenStore for FileTokenStore {
    fn load_tokens(&self, resource: &str) -> Option<StoredTokens> {
        self.read().tokens.remove(resource)
    }
    fn save_tokens(&self, resource: &str, tokens: &StoredTokens) {
        self.update(|c| {
            c.tokens.insert(resource.to_owned(), tokens.clone());
        });
    }
    fn clear_tokens(&self, resource: &str) {
        self.update(|c| {
            c.tokens.remove(resource);
        });
    }
    fn load_client(&self, issuer: &str) -> Option<ClientCredentials> {
        self.read().clients.remove(issuer)
    }
    fn save_client(&self, issuer: &str, client: &ClientCredentials) {
        self.update(|c| {
            c.clients.insert(issuer.to_owned(), client.clone());
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(access: &str) -> StoredTokens {
        StoredTokens {
            access_token: access.into(),
            refresh_token: Some("r".into()),
            expires_at: Some(1),
            scopes: vec!["a".into()],
            issuer: "https://as".into(),
            token_type: None,
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("ferromcp-file-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn saves_survive_a_new_store_and_clear_forgets_one_resource() {
        let dir = scratch("survive");
        let path = dir.join("nested").join("tokens.json");
        let store = FileTokenStore::new(&path);
        assert_eq!(store.load_tokens("https://one/mcp"), None);
        store.save_tokens("https://one/mcp", &tokens("1"));
        store.save_tokens("https://two/mcp", &tokens("2"));
        let client = ClientCredentials {
            client_id: "id".into(),
            client_secret: Some("s".into()),
            ..Default::default()
        };
        store.save_client("https://as", &client);

        let again = FileTokenStore::new(&path);
        assert_eq!(again.load_tokens("https://one/mcp"), Some(tokens("1")));
        assert_eq!(again.load_client("https://as"), Some(client));
        again.clear_tokens("https://one/mcp");
        assert_eq!(store.load_tokens("https://one/mcp"), None);
        assert_eq!(store.resources(), vec!["https://two/mcp".to_owned()]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn the_file_is_readable_by_its_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("mode");
        let path = dir.join("tokens.json");
        FileTokenStore::new(&path).save_tokens("https://one/mcp", &tokens("1"));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_corrupt_file_reads_as_empty_and_is_replaced_on_save() {
        let dir = scratch("corrupt");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tokens.json");
        std::fs::write(&path, b"{not json").unwrap();
        let store = FileTokenStore::new(&path);
        assert_eq!(store.load_tokens("https://one/mcp"), None);
        store.save_tokens("https://one/mcp", &tokens("1"));
        assert_eq!(store.load_tokens("https://one/mcp"), Some(tokens("1")));
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("tokens.json")]);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
