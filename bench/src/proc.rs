//! Starting server processes pinned to a core, and reading what they cost
//! from /proc: CPU time (utime + stime) and peak resident set (VmHWM), summed
//! over the process and its descendants (a Node or Python server may fork
//! helpers).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::process::{Child, Command};

/// How a server process is started.
#[derive(Debug, Clone)]
pub struct Launch {
    /// Program and arguments, `{port}` already substituted.
    pub argv: Vec<String>,
    /// Directory the command runs in (the repository root).
    pub cwd: PathBuf,
    /// Core to pin the server to with `taskset`, if any.
    pub cpu: Option<usize>,
    /// File that receives the server's stderr (and stdout for HTTP servers).
    pub log: Option<PathBuf>,
}

/// Whether the program of `argv` and any script it names exist, so that a
/// server whose binding has not been built is reported rather than started.
pub fn missing_parts(argv: &[String], cwd: &Path) -> Option<String> {
    let program = argv.first()?;
    let program_ok = if program.contains('/') {
        cwd.join(program).exists()
    } else {
        which(program).is_some()
    };
    if !program_ok {
        return Some(format!("{program} not found"));
    }
    for arg in &argv[1..] {
        let looks_like_script = [".py", ".mjs", ".js", ".cjs"]
            .iter()
            .any(|ext| arg.ends_with(ext));
        if looks_like_script && !cwd.join(arg).exists() {
            return Some(format!("{arg} not found"));
        }
    }
    None
}

/// A warning when `target/bin/NAME` is not the optimised build: make copies
/// the last build of either profile there, so a concurrent debug `make build`
/// can replace the release binary the benchmark is meant to measure.
pub fn profile_warning(argv: &[String], cwd: &Path) -> Option<String> {
    let program = argv.first()?;
    let name = program.strip_prefix("target/bin/")?;
    let release = cwd.join("target/release").join(name);
    let debug = cwd.join("target/debug").join(name);
    let size = |p: &Path| std::fs::metadata(p).ok().map(|m| m.len());
    let used = size(&cwd.join(program))?;
    if size(&release) == Some(used) {
        return None;
    }
    if size(&debug) == Some(used) {
        return Some(format!(
            "{program} is the debug build (run `make build RELEASE=1`)"
        ));
    }
    None
}

pub fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// Removed from the servers' environment (see [`command`]).
pub const MACHINE_ONLY_ENV: &str = "NODE_EXTRA_CA_CERTS";

/// Builds the command: `taskset -c CPU argv…` when pinned. taskset execs the
/// server, so the child's pid is the server's own.
pub fn command(launch: &Launch, stdin: Stdio, stdout: Stdio) -> std::io::Result<Command> {
    let mut cmd = match launch.cpu {
        Some(cpu) => {
            let mut c = Command::new("taskset");
            c.arg("-c").arg(cpu.to_string()).args(&launch.argv);
            c
        }
        None => {
            let (program, args) = launch
                .argv
                .split_first()
                .ok_or_else(|| std::io::Error::other("empty command"))?;
            let mut c = Command::new(program);
            c.args(args);
            c
        }
    };
    let stderr = match &launch.log {
        Some(path) => Stdio::from(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)?,
        ),
        None => Stdio::null(),
    };
    cmd.current_dir(&launch.cwd)
        // A machine setting, not part of any SDK: it makes every Node
        // process read and parse a CA bundle before running any code (about
        // 85 ms here), which would add the same constant to every Node
        // server's cold start. See PERFORMANCE.md, "cold start".
        .env_remove(MACHINE_ONLY_ENV)
        .stdin(stdin)
        .stdout(stdout)
        .stderr(stderr)
        // Its own process group, so the whole tree can be killed at once.
        .process_group(0)
        .kill_on_drop(true);
    Ok(cmd)
}

/// A writable handle for a log file, used as the stdout of HTTP servers.
pub fn log_stdio(launch: &Launch) -> std::io::Result<Stdio> {
    Ok(match &launch.log {
        Some(path) => Stdio::from(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)?,
        ),
        None => Stdio::null(),
    })
}

/// Kills the process group of `child` and reaps it.
pub async fn kill(child: &mut Child) {
    if let Some(pid) = child.id() {
        // SAFETY: kill(2) with a negative pid signals a process group; it has
        // no memory-safety preconditions.
        unsafe {
            libc::kill(-(pid as i32), libc::SIGKILL);
        }
    }
    let _ = child.start_kill();
    let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
}

/// The fields of /proc/PID/stat after the command name.
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may itself contain spaces.
    let rest = &text[text.rfind(')')? + 1..];
    Some(rest.split_whitespace().map(str::to_owned).collect())
}

/// `pid` and all its live descendants.
pub fn process_tree(pid: u32) -> Vec<u32> {
    let mut parent_of = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(p) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            if let Some(ppid) = stat_fields(p).and_then(|f| f.get(1)?.parse::<u32>().ok()) {
                parent_of.push((p, ppid));
            }
        }
    }
    let mut tree = vec![pid];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(
            parent_of
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    tree
}

fn clock_ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as f64 } else { 100.0 }
}

/// CPU time used so far by the processes (user + system, including reaped
/// children), in seconds.
pub fn cpu_seconds(pids: &[u32]) -> f64 {
    let tck = clock_ticks_per_second();
    pids.iter()
        .filter_map(|&pid| {
            let f = stat_fields(pid)?;
            // utime, stime, cutime, cstime are fields 14–17 of stat(5); the
            // slice starts at field 3 (state).
            let ticks: u64 = f
                .get(11..15)?
                .iter()
                .filter_map(|v| v.parse::<u64>().ok())
                .sum();
            Some(ticks as f64 / tck)
        })
        .sum()
}

/// A `kB` field of /proc/PID/status.
fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Peak resident set of the processes, summed, in MiB.
pub fn peak_rss_mib(pids: &[u32]) -> Option<f64> {
    summed_status_mib(pids, "VmHWM:")
}

/// Current anonymous resident memory (heap, stacks) of the processes, summed,
/// in MiB: peak RSS also counts the pages of the executable and libraries
/// that were touched, which grow with code size rather than with load.
pub fn anon_rss_mib(pids: &[u32]) -> Option<f64> {
    summed_status_mib(pids, "RssAnon:")
}

/// A /proc/PID/status field summed over the processes that report it.
fn summed_status_mib(pids: &[u32], field: &str) -> Option<f64> {
    let kib: Vec<u64> = pids.iter().filter_map(|&p| status_kib(p, field)).collect();
    (!kib.is_empty()).then(|| kib.iter().sum::<u64>() as f64 / 1024.0)
}

/// Pins the calling thread (and so every thread it starts later) to `cpu`.
pub fn pin_self(cpu: usize) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_ZERO/CPU_SET write within it and
    // sched_setaffinity reads exactly size_of::<cpu_set_t>() bytes.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The number of CPUs this process may run on.
pub fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A free TCP port on the loopback interface.
pub fn free_port() -> std::io::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

/// The last lines of a log file, for an error report.
pub fn log_tail(path: Option<&Path>) -> String {
    let Some(path) = path else {
        return String::new();
    };
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(8)..].join("\n")
}
