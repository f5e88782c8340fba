//! The process source: one pass over `/proc` (Linux).
//!
//! Every pid's `stat` is read once (name, parent, state, CPU and start times); only
//! processes of our own user whose name could be an agent (a known name, an
//! interpreter, a version-named native binary) get their `cmdline`, `exe` and `cwd`
//! looked at. argv is used to match and then dropped: it can carry prompts and keys.
//! Only `argv[0]` and, for interpreters, the first script argument are ever examined.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use super::finding::{Finding, Scope, Source};
use super::kinds::DETECTORS;

/// At most this many `/proc` entries are looked at.
const MAX_PROCESSES: usize = 20_000;
/// Bytes of `cmdline` read per candidate.
const CMDLINE_CAP: u64 = 4096;
/// `/proc` times are in USER_HZ ticks, 100 per second on every Linux ABI.
const TICKS_PER_SEC: u64 = 100;
/// A child younger than this, or running, is a tool call in progress.
const TOOL_CHILD_SECS: u64 = 120;
/// CPU ticks between two samples that mean the agent itself is busy.
const CPU_BUSY_TICKS: u64 = 2;

/// What the scan learned.
#[derive(Debug, Default, Clone)]
pub struct Snapshot {
    pub scanned: u64,
    /// Process findings for agents whose working directory is in the repository.
    pub findings: Vec<Finding>,
    /// Every agent process of our user, wherever it works: pid → agent kind.
    pub agents: HashMap<u32, &'static str>,
    /// pid → parent pid, for every process seen.
    pub parents: HashMap<u32, u32>,
    /// Our ancestors, nearest first.
    pub ancestors: Vec<u32>,
    /// The agent kind of our nearest agent ancestor: the caller.
    pub caller_agent: Option<String>,
    /// Session logs that agent processes hold open (Codex rollouts): path → pid.
    pub open_logs: HashMap<PathBuf, u32>,
    /// First CPU sample of the reported processes: pid → (start time, CPU ticks).
    cpu: HashMap<u32, (u64, u64)>,
}

impl Snapshot {
    /// The nearest agent process among `pid`'s ancestors (itself excluded).
    pub fn agent_ancestor(&self, pid: u32) -> Option<(u32, &'static str)> {
        let mut current = pid;
        for _ in 0..64 {
            let parent = *self.parents.get(&current)?;
            if parent <= 1 {
                return None;
            }
            if let Some(agent) = self.agents.get(&parent) {
                return Some((parent, agent));
            }
            current = parent;
        }
        None
    }
}

struct Stat {
    ppid: u32,
    comm: String,
    state: u8,
    cpu: u64,
    start: u64,
}

#[cfg(target_os = "linux")]
pub fn scan(scope: &Scope) -> Result<Snapshot, &'static str> {
    let (stats, mine) = read_processes(scope)?;
    let mut snap = Snapshot {
        scanned: stats.len() as u64,
        parents: stats.iter().map(|(p, s)| (*p, s.ppid)).collect(),
        ..Snapshot::default()
    };
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for (pid, s) in &stats {
        children.entry(s.ppid).or_default().push(*pid);
    }
    for pid in &mine {
        let s = &stats[pid];
        if !candidate(&s.comm) {
            continue;
        }
        if let Some(agent) = classify(*pid, &s.comm) {
            snap.agents.insert(*pid, agent);
        }
    }
    // Wrapper and relaunch: a match whose child is a match of the same agent is the outer
    // half of one agent; keep the innermost process.
    let outer: HashSet<u32> = snap
        .agents
        .iter()
        .filter(|(pid, agent)| {
            children
                .get(pid)
                .is_some_and(|kids| kids.iter().any(|k| snap.agents.get(k) == Some(agent)))
        })
        .map(|(pid, _)| *pid)
        .collect();

    let me = std::process::id();
    snap.ancestors = ancestors(&stats, me);
    snap.caller_agent = snap
        .ancestors
        .iter()
        .find_map(|p| snap.agents.get(p))
        .map(|a| (*a).to_owned());

    let uptime = read_uptime_ticks();
    let mut reported: Vec<(u32, &'static str)> = snap
        .agents
        .iter()
        .filter(|(pid, _)| !outer.contains(pid))
        .map(|(p, a)| (*p, *a))
        .collect();
    reported.sort_unstable();
    for (pid, agent) in reported {
        let likely_caller = snap.ancestors.contains(&pid);
        let Some(cwd) = std::fs::read_link(format!("/proc/{pid}/cwd")).ok() else {
            continue;
        };
        let Some(worktree) = scope.locate(&cwd) else {
            continue;
        };
        let busy = tool_child(pid, me, &stats, &children, uptime);
        snap.cpu.insert(pid, (stats[&pid].start, stats[&pid].cpu));
        snap.findings.push(Finding {
            agent: agent.to_owned(),
            source: Some(Source::Process),
            pid: Some(pid),
            worktree: Some(worktree),
            live: true,
            busy,
            likely_caller,
            ..Finding::default()
        });
    }
    // A running Codex holds its rollout open: that maps the pid to its session log.
    for (pid, agent) in &snap.agents {
        if *agent == "codex" {
            for path in open_logs(*pid) {
                snap.open_logs.insert(path, *pid);
            }
        }
    }
    Ok(snap)
}

/// Every process's stat line, and which of them belong to the current user.
#[cfg(target_os = "linux")]
fn read_processes(scope: &Scope) -> Result<(HashMap<u32, Stat>, HashSet<u32>), &'static str> {
    use std::os::unix::fs::MetadataExt;
    let uid = rustix::process::getuid().as_raw();
    let entries = std::fs::read_dir("/proc").map_err(|_| "unreadable")?;
    let mut stats: HashMap<u32, Stat> = HashMap::new();
    let mut mine: HashSet<u32> = HashSet::new();
    for entry in entries.flatten().take(MAX_PROCESSES) {
        if scope.meter.expired() {
            return Err("deadline");
        }
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Some(stat) = read_stat(pid) else {
            continue;
        };
        if entry.metadata().is_ok_and(|m| m.uid() == uid) {
            mine.insert(pid);
        }
        stats.insert(pid, stat);
    }
    Ok((stats, mine))
}

/// The parents of `pid` up to (not including) init, nearest first.
#[cfg(target_os = "linux")]
fn ancestors(stats: &HashMap<u32, Stat>, pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let mut current = pid;
    for _ in 0..64 {
        match stats.get(&current) {
            Some(s) if s.ppid > 1 => {
                found.push(s.ppid);
                current = s.ppid;
            }
            _ => break,
        }
    }
    found
}

/// Open `rollout-*.jsonl` files of a process.
fn open_logs(pid: u32) -> Vec<PathBuf> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    fds.flatten()
        .take(1024)
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter(|t| {
            t.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(".jsonl"))
        })
        .take(8)
        .collect()
}

#[cfg(not(target_os = "linux"))]
pub fn scan(_scope: &Scope) -> Result<Snapshot, &'static str> {
    Err("unsupportedPlatform")
}

/// One CPU sample of a process: (start time, ticks, when taken).
type CpuSample = (u64, u64, Instant);
/// The previous call's last CPU sample per pid.
static CPU_SAMPLES: Mutex<Option<HashMap<u32, CpuSample>>> = Mutex::new(None);
/// A previous sample older than this says nothing about now.
const CPU_SAMPLE_MAX_AGE_SECS: u64 = 10;

/// The pids of reported processes that used CPU since the first sample of this call, or
/// since the previous call's sample when that is recent (a sample a few milliseconds
/// old cannot show much). A process is matched by pid and start time, so a reused pid
/// is never compared with another process.
pub fn cpu_busy(snap: &Snapshot) -> HashSet<u32> {
    let now = Instant::now();
    let mut cache = CPU_SAMPLES.lock().unwrap_or_else(|p| p.into_inner());
    let previous = cache.take().unwrap_or_default();
    let mut next = HashMap::new();
    let mut busy = HashSet::new();
    for (pid, (start, first)) in &snap.cpu {
        let Some(stat) = read_stat(*pid).filter(|s| s.start == *start) else {
            continue;
        };
        let mut used = stat.cpu.saturating_sub(*first) >= CPU_BUSY_TICKS;
        if let Some((p_start, p_cpu, at)) = previous.get(pid)
            && *p_start == *start
            && now.duration_since(*at).as_secs() <= CPU_SAMPLE_MAX_AGE_SECS
        {
            // More than a tenth of a core on average since then.
            let elapsed_ticks = now.duration_since(*at).as_millis() as u64 / 10;
            used |= stat.cpu.saturating_sub(*p_cpu) * 10 > elapsed_ticks.max(CPU_BUSY_TICKS);
        }
        if used {
            busy.insert(*pid);
        }
        next.insert(*pid, (*start, stat.cpu, now));
    }
    *cache = Some(next);
    busy
}

/// A descendant (three levels deep at most, never this server) that runs now or started
/// within the last two minutes: a tool call in progress. Long-lived idle children (MCP
/// servers started with the session) do not count.
fn tool_child(
    pid: u32,
    me: u32,
    stats: &HashMap<u32, Stat>,
    children: &HashMap<u32, Vec<u32>>,
    uptime: Option<u64>,
) -> bool {
    let mut level = vec![pid];
    for _ in 0..3 {
        let mut next = Vec::new();
        for parent in level {
            for kid in children.get(&parent).into_iter().flatten() {
                if *kid == me {
                    continue;
                }
                let s = &stats[kid];
                let running = matches!(s.state, b'R' | b'D');
                let young = uptime.is_some_and(|up| {
                    up.saturating_sub(s.start) <= TOOL_CHILD_SECS * TICKS_PER_SEC
                });
                if running || young {
                    return true;
                }
                next.push(*kid);
            }
        }
        level = next;
    }
    false
}

fn read_stat(pid: u32) -> Option<Stat> {
    let bytes = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    let open = bytes.iter().position(|b| *b == b'(')?;
    let close = bytes.iter().rposition(|b| *b == b')')?;
    let comm = String::from_utf8_lossy(bytes.get(open + 1..close)?).into_owned();
    let rest = std::str::from_utf8(bytes.get(close + 1..)?).ok()?;
    let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
    let num = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
    Some(Stat {
        state: fields.first()?.bytes().next()?,
        ppid: num(1)? as u32,
        cpu: num(11)? + num(12)?,
        start: num(19)?,
        comm,
    })
}

fn read_uptime_ticks() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/uptime").ok()?;
    let secs: f64 = text.split_ascii_whitespace().next()?.parse().ok()?;
    Some((secs * TICKS_PER_SEC as f64) as u64)
}

const INTERPRETERS: &[&str] = &["node", "bun", "deno", "python", "python3"];

fn is_interpreter(name: &str) -> bool {
    INTERPRETERS.contains(&name)
        || name
            .strip_prefix("python3.")
            .is_some_and(|v| v.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether a process name is worth a look at its argv.
fn candidate(comm: &str) -> bool {
    let lower = comm.to_ascii_lowercase();
    is_interpreter(&lower)
        // Native Claude Code runs a file named after its version.
        || lower.starts_with(|c: char| c.is_ascii_digit())
        || DETECTORS
            .iter()
            .flat_map(|d| d.names.iter())
            // `comm` is cut to 15 bytes.
            .any(|n| lower == *n || (lower.len() == 15 && n.starts_with(lower.as_str())))
}

/// The agent a process is, from its executable, `argv[0]` and (for interpreters) its
/// script. Nothing after the script is looked at.
fn classify(pid: u32, comm: &str) -> Option<&'static str> {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok();
    let argv = read_argv_head(pid);
    let argv0 = argv.first().map(String::as_str).unwrap_or("");
    let mut subjects: Vec<&str> = vec![comm, argv0];
    let exe_text = exe.as_deref().and_then(Path::to_str).unwrap_or("");
    subjects.push(exe_text);
    let interpreted = [exe_text, argv0, comm]
        .iter()
        .any(|s| is_interpreter(&basename(s).to_ascii_lowercase()));
    let script = if interpreted { script_of(&argv) } else { None };
    if let Some(script) = &script {
        subjects.push(script);
    }
    DETECTORS.iter().find_map(|d| {
        let named = subjects.iter().any(|s| {
            let base = basename(s).to_ascii_lowercase();
            let stem = base
                .strip_suffix(".js")
                .or_else(|| base.strip_suffix(".mjs"))
                .or_else(|| base.strip_suffix(".cjs"))
                .or_else(|| base.strip_suffix(".py"))
                .unwrap_or(&base);
            d.names.contains(&stem)
        });
        let marked = subjects
            .iter()
            .any(|s| d.markers.iter().any(|m| s.contains(m)));
        (named || marked).then_some(d.id)
    })
}

/// `argv[0]` up to the first script argument of an interpreter (`-m module` included).
fn read_argv_head(pid: u32) -> Vec<String> {
    use std::io::Read;
    let Ok(file) = std::fs::File::open(format!("/proc/{pid}/cmdline")) else {
        return Vec::new();
    };
    let mut bytes = Vec::new();
    if file.take(CMDLINE_CAP).read_to_end(&mut bytes).is_err() {
        return Vec::new();
    }
    // Keep no more than four elements: enough for `python -X opt -m aider` shapes.
    bytes
        .split(|b| *b == 0)
        .take(4)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

/// The first non-option argument of an interpreter, or the module after `-m`.
fn script_of(argv: &[String]) -> Option<String> {
    let mut iter = argv.iter().skip(1);
    while let Some(arg) = iter.next() {
        if arg == "-m" {
            return iter.next().cloned();
        }
        if !arg.starts_with('-') {
            return Some(arg.clone());
        }
    }
    None
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_of_interpreters() {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            script_of(&v(&[
                "node",
                "--no-warnings",
                "/x/@openai/codex/bin/codex.js"
            ]))
            .as_deref(),
            Some("/x/@openai/codex/bin/codex.js")
        );
        assert_eq!(
            script_of(&v(&["python3", "-m", "aider"])).as_deref(),
            Some("aider")
        );
        assert_eq!(script_of(&v(&["node"])), None);
    }

    #[test]
    fn candidates() {
        assert!(candidate("node"));
        assert!(candidate("python3.12"));
        assert!(candidate("2.1.3"));
        assert!(candidate("claude"));
        assert!(candidate("cursor-agent"));
        assert!(!candidate("bash"));
        assert!(!candidate("sleep"));
    }
}
