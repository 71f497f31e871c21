//! Finding a stdio server's program on Windows the way a user's shell does.
//!
//! Users write `npx`, `uvx` or `pnpm` in a server's configuration, and on
//! Windows those are `npx.cmd`-style shims. `CreateProcess`, and Rust's std
//! on top of it, only try `.exe` when searching `PATH`, so such a command
//! fails with "program not found" (a known failure of other MCP SDKs), while
//! the same line typed in cmd.exe works. cmd.exe tries every extension of
//! `PATHEXT`; so does [`resolve`], and the stdio client starts what it finds.
//! Rust's std (1.77 and later) runs a `.bat`/`.cmd` file through cmd.exe with
//! its arguments escaped, and refuses arguments it cannot escape safely.
//!
//! Everything here is pure (the file system is a predicate, the environment
//! a function) so that the tests run on every platform; only the stdio
//! client's start-up on Windows calls it.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// cmd.exe's `PATHEXT` when the variable is unset.
pub(crate) const DEFAULT_PATHEXT: &str = ".COM;.EXE;.BAT;.CMD";

/// The program to start for `command` on Windows: the file cmd.exe would
/// run, looked up in the `PATH` the command sets for the server (first) and
/// in this process's, with the `PATHEXT` of the server's environment, or
/// `None` when nothing matches (the caller then starts the name as given,
/// and std's own search, which also covers the system folders, reports
/// what it finds or "not found").
///
/// `parent_env` reads this process's environment; `is_file` tells whether
/// a path names a file.
// Called on Windows only; compiled (and tested) everywhere so it cannot rot.
#[cfg_attr(not(windows), allow(dead_code))]
pub(crate) fn program_for_windows(
    program: &OsStr,
    env: &[(OsString, OsString)],
    parent_env: impl Fn(&str) -> Option<OsString>,
    is_file: impl Fn(&Path) -> bool,
) -> Option<PathBuf> {
    let var = |name: &str| env_override(env, name).or_else(|| parent_env(name));
    // std also searches the server's PATH before its parent's when the
    // command changes it: a server may be installed where only it looks.
    let path = match (env_override(env, "PATH"), parent_env("PATH")) {
        (Some(child), Some(parent)) => {
            let mut both = child;
            both.push(";");
            both.push(parent);
            Some(both)
        }
        (child, parent) => child.or(parent),
    };
    resolve(program, path.as_deref(), var("PATHEXT").as_deref(), is_file)
}

/// The last value `env` gives the variable `name`; Windows' variable names
/// ignore case (`Path` is `PATH`).
pub(crate) fn env_override(env: &[(OsString, OsString)], name: &str) -> Option<OsString> {
    env.iter()
        .rev()
        .find(|(key, _)| key.to_str().is_some_and(|k| k.eq_ignore_ascii_case(name)))
        .map(|(_, value)| value.clone())
}

/// Resolves `program` as cmd.exe does, given the values of `PATH` and
/// `PATHEXT` (`;`-separated, Windows style, on every platform):
///
/// - a name with a path (a `\`, `/` or drive colon in it) is taken as
///   given when that file exists, else with each `PATHEXT` extension
///   appended unless it already ends in one;
/// - a bare name is looked up in each `PATH` folder in order, as given
///   when it ends in a `PATHEXT` extension (any case), else with each
///   extension appended in `PATHEXT` order. Never the bare name alone:
///   npm puts a shell script named `npx` next to `npx.cmd`, and
///   `CreateProcess` cannot run it. Not the current folder either: std no
///   longer searches it (Rust 1.58), for safety.
///
/// `None` when no file matches.
pub(crate) fn resolve(
    program: &OsStr,
    path: Option<&OsStr>,
    pathext: Option<&OsStr>,
    is_file: impl Fn(&Path) -> bool,
) -> Option<PathBuf> {
    // Lossy: a name or PATHEXT that is not Unicode cannot match an
    // extension anyway, and the name itself is kept as an OsStr below.
    let pathext = pathext.map(OsStr::to_string_lossy);
    let extensions = extensions(pathext.as_deref().unwrap_or(DEFAULT_PATHEXT));
    let has_known_extension = Path::new(program)
        .extension()
        .and_then(OsStr::to_str)
        .is_some_and(|ext| {
            extensions
                .iter()
                .any(|known| known[1..].eq_ignore_ascii_case(ext))
        });
    let candidates = |base: &Path| -> Vec<PathBuf> {
        if has_known_extension {
            return vec![base.to_path_buf()];
        }
        extensions
            .iter()
            .map(|ext| {
                let mut name = base.as_os_str().to_os_string();
                name.push(ext);
                PathBuf::from(name)
            })
            .collect()
    };
    if has_path(program) {
        let given = Path::new(program);
        if is_file(given) {
            return Some(given.to_path_buf());
        }
        return candidates(given).into_iter().find(|c| is_file(c));
    }
    let path = path?.to_string_lossy();
    split_path(&path)
        .into_iter()
        .flat_map(|dir| candidates(&Path::new(&dir).join(program)))
        .find(|c| is_file(c))
}

/// Whether a program name says where it is rather than asking for a
/// search: Windows takes both slashes, and `C:name` is relative to drive C.
fn has_path(program: &OsStr) -> bool {
    program
        .as_encoded_bytes()
        .iter()
        .any(|b| matches!(b, b'\\' | b'/' | b':'))
}

/// The extensions of a `PATHEXT` value, each with its dot; entries without
/// a dot are ignored, as cmd.exe does.
fn extensions(pathext: &str) -> Vec<&str> {
    pathext
        .split(';')
        .map(str::trim)
        .filter(|ext| ext.len() > 1 && ext.starts_with('.'))
        .collect()
}

/// The folders of a Windows `PATH`: `;`-separated, empty entries skipped,
/// and double quotes removed (`"C:\Program Files\nodejs"`), a `;` inside
/// them kept, as std's `split_paths` does on Windows.
fn split_path(path: &str) -> Vec<String> {
    let mut dirs = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in path.chars() {
        match c {
            '"' => quoted = !quoted,
            ';' if !quoted => {
                if !current.is_empty() {
                    dirs.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        dirs.push(current);
    }
    dirs
}

/// Why a program could not be started, naming it (and the file found for
/// it); a `.bat`/`.cmd` file that std refused to run with these arguments
/// (it cannot pass them through cmd.exe unchanged) is said so.
pub(crate) fn start_error(
    program: &OsStr,
    resolved: Option<&Path>,
    error: std::io::Error,
) -> crate::Error {
    let found = resolved.map_or_else(String::new, |p| format!(" (found as {})", p.display()));
    let batch = resolved
        .and_then(Path::extension)
        .and_then(OsStr::to_str)
        .is_some_and(|ext| ext.eq_ignore_ascii_case("bat") || ext.eq_ignore_ascii_case("cmd"));
    let message = if batch && error.kind() == std::io::ErrorKind::InvalidInput {
        format!(
            "could not start {program:?}{found}: a .bat/.cmd program runs through cmd.exe, \
             which cannot be given these arguments safely (quotes, %, line breaks or \
             other characters it would reinterpret): {error}"
        )
    } else {
        format!("could not start {program:?}{found}: {error}")
    };
    crate::Error::Io(std::io::Error::new(error.kind(), message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::StdioCommand;
    use std::fs;

    /// A scratch folder, emptied first; its name has a space, as
    /// `C:\Program Files` does.
    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("ferromcp program {name} {}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn touch(dir: &Path, name: &str) {
        fs::create_dir_all(dir).unwrap();
        fs::write(dir.join(name), b"").unwrap();
    }

    /// `is_file` as on Windows, where file names ignore case (`npx.cmd` is
    /// found as `npx.CMD`, PATHEXT's spelling).
    fn windows_is_file(path: &Path) -> bool {
        let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
            return false;
        };
        let Ok(entries) = fs::read_dir(dir) else {
            return false;
        };
        entries.flatten().any(|entry| {
            entry.path().is_file()
                && entry
                    .file_name()
                    .to_string_lossy()
                    .eq_ignore_ascii_case(&name.to_string_lossy())
        })
    }

    fn path_of(dirs: &[&Path]) -> OsString {
        let dirs: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        OsString::from(dirs.join(";"))
    }

    fn find(program: &str, path: &OsStr, pathext: Option<&str>) -> Option<PathBuf> {
        resolve(
            OsStr::new(program),
            Some(path),
            pathext.map(OsStr::new),
            windows_is_file,
        )
    }

    #[test]
    fn npx_is_found_as_npx_cmd_in_the_second_path_folder() {
        let root = scratch("npx");
        let (first, second) = (
            root.join("first"),
            root.join("Program Files").join("nodejs"),
        );
        touch(&first, "node.exe");
        // npm's shell script for Git Bash sits next to the shim: never run.
        touch(&second, "npx");
        touch(&second, "npx.cmd");
        touch(&second, "npx.ps1");
        let path = path_of(&[&first, &second]);
        assert_eq!(find("npx", &path, None), Some(second.join("npx.CMD")));
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn pathext_order_decides_and_extensions_ignore_case() {
        let root = scratch("order");
        touch(&root, "tool.cmd");
        touch(&root, "tool.bat");
        let path = path_of(&[&root]);
        // The default order: .COM;.EXE;.BAT;.CMD.
        assert_eq!(find("tool", &path, None), Some(root.join("tool.BAT")));
        assert_eq!(
            find("tool", &path, Some(".cmd;.bat")),
            Some(root.join("tool.cmd"))
        );
        // Entries without a dot (and spaces around them) are skipped.
        assert_eq!(
            find("tool", &path, Some("CMD; .Cmd ;.BAT")),
            Some(root.join("tool.Cmd"))
        );
        // An earlier folder wins over a preferred extension in a later one.
        let early = root.join("early");
        touch(&early, "tool.exe");
        let path = path_of(&[&early, &root]);
        assert_eq!(
            find("tool", &path, Some(".CMD;.EXE")),
            Some(early.join("tool.EXE"))
        );
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_name_with_a_pathext_extension_is_kept_as_given() {
        let root = scratch("bat");
        touch(&root, "server.bat");
        touch(&root, "server.bat.cmd");
        let path = path_of(&[&root]);
        assert_eq!(
            find("server.bat", &path, None),
            Some(root.join("server.bat"))
        );
        // Upper case in the name, lower case in PATHEXT: still one of them.
        assert_eq!(
            find("SERVER.BAT", &path, Some(".bat;.cmd")),
            Some(root.join("SERVER.BAT"))
        );
        assert_eq!(find("server.exe", &path, None), None);
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_path_folder_with_spaces_is_searched_quoted_or_not() {
        let root = scratch("spaces");
        let dir = root.join("Program Files").join("node js");
        touch(&dir, "uvx.cmd");
        let plain = path_of(&[&dir]);
        assert_eq!(find("uvx", &plain, None), Some(dir.join("uvx.CMD")));
        let quoted = OsString::from(format!(";\"{}\";;", dir.display()));
        assert_eq!(find("uvx", &quoted, None), Some(dir.join("uvx.CMD")));
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_name_with_a_path_is_used_as_given_or_with_an_extension() {
        let root = scratch("explicit");
        let bin = root.join("node_modules").join(".bin");
        touch(&bin, "tsc.cmd");
        let given = bin.join("tsc").display().to_string();
        // PATH holds a `tsc.cmd` too: a name with a path never searches it.
        let elsewhere = root.join("elsewhere");
        touch(&elsewhere, "tsc.cmd");
        let path = path_of(&[&elsewhere]);
        // No `tsc` file: the extensions are tried.
        assert_eq!(find(&given, &path, None), Some(bin.join("tsc.CMD")));
        // The file as given exists: it is the one.
        touch(&bin, "tsc");
        assert_eq!(find(&given, &path, None), Some(bin.join("tsc")));
        // Backslashes and drive colons say "a path" too.
        assert!(has_path(OsStr::new(r"bin\tsc")));
        assert!(has_path(OsStr::new("C:tsc")));
        assert!(!has_path(OsStr::new("tsc")));
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn nothing_found_is_none() {
        let root = scratch("none");
        touch(&root, "other.cmd");
        touch(&root, "npx");
        let path = path_of(&[&root]);
        assert_eq!(find("npx", &path, None), None);
        assert_eq!(
            resolve(OsStr::new("npx"), None, None, |_| true),
            None,
            "no PATH, nothing to search"
        );
        let missing = root.join("missing").display().to_string();
        assert_eq!(find(&missing, &path, None), None);
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn the_servers_own_path_and_pathext_come_first() {
        let root = scratch("env");
        let (own, parent) = (root.join("own"), root.join("parent"));
        touch(&own, "srv.bat");
        touch(&parent, "srv.cmd");
        let parent_path = path_of(&[&parent]);
        let parent_env = |name: &str| (name == "PATH").then(|| parent_path.clone());
        let mut command = StdioCommand::new("srv", Vec::<OsString>::new());
        let found = |command: &StdioCommand| {
            program_for_windows(&command.program, &command.env, parent_env, windows_is_file)
        };
        assert_eq!(found(&command), Some(parent.join("srv.CMD")));
        command.env.push(("Path".into(), path_of(&[&own])));
        assert_eq!(found(&command), Some(own.join("srv.BAT")));
        // The server's PATHEXT decides which extensions are tried.
        command.env.push(("PATHEXT".into(), ".CMD".into()));
        assert_eq!(found(&command), Some(parent.join("srv.CMD")));
        assert_eq!(
            env_override(&command.env, "pathext"),
            Some(OsString::from(".CMD"))
        );
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_refused_batch_file_is_named_and_explained() {
        let refused = std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "batch file arguments are invalid",
        );
        let shim = Path::new(r"C:\Program Files\nodejs\npx.cmd");
        let message = start_error(OsStr::new("npx"), Some(shim), refused).to_string();
        assert!(message.contains("\"npx\""), "{message}");
        assert!(
            message.contains(r"C:\Program Files\nodejs\npx.cmd"),
            "{message}"
        );
        assert!(message.contains("cmd.exe"), "{message}");
        assert!(
            message.contains("batch file arguments are invalid"),
            "{message}"
        );

        let missing = std::io::Error::new(std::io::ErrorKind::NotFound, "program not found");
        let message = start_error(OsStr::new("npx"), None, missing).to_string();
        assert!(message.contains("could not start \"npx\": "), "{message}");
        assert!(!message.contains("cmd.exe"), "{message}");
    }
}
