//! The agents' own session stores, and activity files they keep in the repository.
//!
//! Each reader does directed lookups (never a walk of an agent's whole history): the
//! directory an agent derives from the repository path, today's and yesterday's dated
//! folders, or an indexed query. JSONL logs are read from the tail within byte caps and
//! deserialised into structs that name only the permitted keys, so prompts, replies,
//! commands and tool results are skipped during tokenisation and never kept. SQLite
//! databases are opened read-only and immutable (no locks, no `-wal`/`-shm` created), with
//! a progress handler that aborts long statements; only named columns are selected.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::detect::{Finding, MAX_FILES, Outcome, Scope, Source, normalize, sanitize_tool};
use super::fsread::{self, Meter};
use super::procscan::Snapshot;

/// Store files read per agent and call, newest first.
const MAX_FILES_PER_AGENT: usize = 20;
/// Project directories of one agent looked at per call.
const MAX_DIRS: usize = 16;
/// A SQLite statement is aborted after this long.
const SQL_LIMIT: Duration = Duration::from_millis(50);
/// Rows fetched by any query.
const SQL_ROWS: u32 = 64;

// ---------------------------------------------------------------------------------------
// Tolerant pieces of JSON

/// Apply-patch file headers found in a string, and nothing else of it.
#[derive(Debug, Default)]
struct PatchHeaders(Vec<String>);

impl<'de> Deserialize<'de> for PatchHeaders {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PatchHeaders;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("anything")
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<PatchHeaders, E> {
                Ok(patch_headers(text))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PatchHeaders, A::Error> {
                // Function-call arguments: `{"input": "<patch>"}` (or a command array).
                let mut found = PatchHeaders::default();
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    if key == "input" || key == "patch" {
                        found.0.extend(map.next_value::<PatchHeaders>()?.0);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(found)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<PatchHeaders, A::Error> {
                let mut found = PatchHeaders::default();
                while let Some(item) = seq.next_element::<PatchHeaders>()? {
                    found.0.extend(item.0);
                }
                Ok(found)
            }
            fn visit_bool<E>(self, _: bool) -> Result<PatchHeaders, E> {
                Ok(PatchHeaders::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<PatchHeaders, E> {
                Ok(PatchHeaders::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<PatchHeaders, E> {
                Ok(PatchHeaders::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<PatchHeaders, E> {
                Ok(PatchHeaders::default())
            }
            fn visit_unit<E>(self) -> Result<PatchHeaders, E> {
                Ok(PatchHeaders::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// The paths named by `*** Add/Update/Delete File:` and `*** Move to:` lines. A function
/// call's arguments arrive as JSON text and are looked into once.
fn patch_headers(text: &str) -> PatchHeaders {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        return serde_json::from_str::<PatchHeaders>(trimmed).unwrap_or_default();
    }
    const HEADERS: [&str; 4] = [
        "*** Add File: ",
        "*** Update File: ",
        "*** Delete File: ",
        "*** Move to: ",
    ];
    let mut paths = Vec::new();
    for line in text.lines() {
        if let Some(path) = HEADERS.iter().find_map(|h| line.strip_prefix(h)) {
            if paths.len() < MAX_FILES {
                paths.push(path.trim().to_owned());
            }
        }
    }
    PatchHeaders(paths)
}

/// Anthropic-style message content: the `tool_use` items of an array, nothing of a string.
#[derive(Debug, Default)]
struct ToolUses(Vec<ToolUse>);

#[derive(Debug, Deserialize)]
struct ToolUse {
    #[serde(rename = "type")]
    kind: Option<String>,
    name: Option<String>,
    input: Option<PathArgs>,
}

/// The path keys of a tool's input; every other key (contents, commands) is skipped.
#[derive(Debug, Default)]
struct PathArgs {
    paths: Vec<String>,
}

const PATH_KEYS: &[&str] = &["file_path", "notebook_path", "filePath", "dir_path"];

impl<'de> Deserialize<'de> for PathArgs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PathArgs;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("anything")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PathArgs, A::Error> {
                let mut args = PathArgs::default();
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    if PATH_KEYS.contains(&key.as_ref()) {
                        if let Some(path) = map.next_value::<Option<String>>().ok().flatten() {
                            args.paths.push(path);
                        }
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(args)
            }
            fn visit_str<E>(self, _: &str) -> Result<PathArgs, E> {
                Ok(PathArgs::default())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<PathArgs, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(PathArgs::default())
            }
            fn visit_bool<E>(self, _: bool) -> Result<PathArgs, E> {
                Ok(PathArgs::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<PathArgs, E> {
                Ok(PathArgs::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<PathArgs, E> {
                Ok(PathArgs::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<PathArgs, E> {
                Ok(PathArgs::default())
            }
            fn visit_unit<E>(self) -> Result<PathArgs, E> {
                Ok(PathArgs::default())
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for ToolUses {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ToolUses;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("message content")
            }
            fn visit_str<E>(self, _: &str) -> Result<ToolUses, E> {
                Ok(ToolUses::default())
            }
            fn visit_unit<E>(self) -> Result<ToolUses, E> {
                Ok(ToolUses::default())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ToolUses, A::Error> {
                let mut uses = Vec::new();
                while let Some(item) = seq.next_element::<ToolUse>()? {
                    if item.kind.as_deref() == Some("tool_use") {
                        uses.push(item);
                    }
                }
                Ok(ToolUses(uses))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ToolUses, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(ToolUses::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// What a session log says about its session, newest values first.
#[derive(Debug, Default, Clone)]
struct Summary {
    cwd: Option<PathBuf>,
    branch: Option<String>,
    last_tool: Option<String>,
    /// Recorded paths with the cwd they are relative to.
    paths: Vec<(Option<PathBuf>, String)>,
    running: bool,
    /// The session said it ended.
    ended: bool,
}

impl Summary {
    fn complete(&self) -> bool {
        self.cwd.is_some()
            && self.branch.is_some()
            && self.last_tool.is_some()
            && self.paths.len() >= MAX_FILES
    }

    fn tool(&mut self, name: Option<&str>) {
        if self.last_tool.is_none() {
            self.last_tool = name.and_then(sanitize_tool);
        }
    }

    fn files(&self, scope: &Scope, cwd: Option<&Path>) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (base, path) in &self.paths {
            let base = base.as_deref().or(cwd);
            if let Some(rel) = scope.relative(base, path)
                && !out.contains(&rel)
                && out.len() < MAX_FILES
            {
                out.push(rel);
            }
        }
        out
    }
}

/// Summaries already computed, keyed by path and validated by size and mtime: a repeated
/// call re-reads no log that did not change. Only permitted values are kept.
type SummaryCache = HashMap<PathBuf, (u64, i64, i64, Summary)>;
static SUMMARIES: Mutex<Option<SummaryCache>> = Mutex::new(None);
/// Cached summaries at most; the cache starts over beyond that.
const SUMMARY_CACHE_MAX: usize = 512;

/// The summary of a log, from the cache or from `read`. A read cut short by the
/// deadline or the byte budget is not cached.
fn summarize(path: &Path, meter: &Meter, read: impl FnOnce() -> Summary) -> Summary {
    use std::os::unix::fs::MetadataExt;
    let key = std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.len(), m.mtime(), m.mtime_nsec()));
    if let Some((len, sec, nsec)) = key {
        let cache = SUMMARIES.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((l, s, n, summary)) = cache.as_ref().and_then(|c| c.get(path))
            && (*l, *s, *n) == (len, sec, nsec)
        {
            return summary.clone();
        }
    }
    let summary = read();
    if let Some((len, sec, nsec)) = key
        && !meter.spent()
    {
        let mut cache = SUMMARIES.lock().unwrap_or_else(|p| p.into_inner());
        let map = cache.get_or_insert_with(HashMap::new);
        if map.len() >= SUMMARY_CACHE_MAX {
            map.clear();
        }
        map.insert(path.to_path_buf(), (len, sec, nsec, summary.clone()));
    }
    summary
}

/// Regular files in `dir` whose names satisfy `keep`, newest first, within the recent
/// window, at most `max`.
fn newest_files(
    scope: &Scope,
    dir: &Path,
    keep: impl Fn(&str) -> bool,
    max: usize,
) -> Vec<(u64, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<(u64, PathBuf)> = entries
        .flatten()
        .take(4096)
        .filter(|e| e.file_name().to_str().is_some_and(&keep))
        .filter_map(|e| {
            let meta = std::fs::symlink_metadata(e.path()).ok()?;
            let mtime = fsread::meta_mtime_ms(&meta);
            (meta.is_file() && scope.recent(mtime)).then(|| (mtime, e.path()))
        })
        .collect();
    files.sort_by_key(|f| std::cmp::Reverse(f.0));
    files.truncate(max);
    files
}

fn env_dir(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

/// `$XDG_DATA_HOME`, else `~/.local/share`.
fn data_home(scope: &Scope) -> Option<PathBuf> {
    env_dir("XDG_DATA_HOME").or_else(|| Some(scope.home.as_ref()?.join(".local/share")))
}

fn deadline_outcome(findings: Vec<Finding>, meter: &Meter) -> Outcome {
    Outcome {
        unavailable: meter.stop_reason(),
        findings,
    }
}

// ---------------------------------------------------------------------------------------
// Claude Code

#[derive(Deserialize)]
struct ClaudeLine {
    cwd: Option<PathBuf>,
    #[serde(rename = "gitBranch")]
    git_branch: Option<String>,
    message: Option<ClaudeMessage>,
}

#[derive(Deserialize)]
struct ClaudeMessage {
    #[serde(default)]
    content: ToolUses,
}

#[derive(Deserialize)]
struct ClaudeLiveSession {
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
}

/// Claude's project directory name for a path: every character outside `[A-Za-z0-9]`
/// becomes `-`, one for one. Lossy, so only ever computed forward and confirmed against
/// the `cwd` recorded inside.
pub fn claude_dir_name(path: &Path) -> String {
    path.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

pub fn claude(scope: &Scope, snap: &Snapshot) -> Outcome {
    let Some(root) =
        env_dir("CLAUDE_CONFIG_DIR").or_else(|| Some(scope.home.as_ref()?.join(".claude")))
    else {
        return Outcome::default();
    };
    // Live sessions: `sessions/<pid>.json` names the session a running process writes.
    let mut pid_of: HashMap<String, u32> = HashMap::new();
    for pid in snap
        .agents
        .iter()
        .filter(|(_, a)| **a == "claude-code")
        .map(|(p, _)| *p)
    {
        let path = root.join("sessions").join(format!("{pid}.json"));
        if let Some(bytes) = fsread::read_small_metered(&path, 64 * 1024, &scope.meter)
            && let Ok(live) = serde_json::from_slice::<ClaudeLiveSession>(&bytes)
            && let Some(id) = live.session_id
        {
            pid_of.insert(id, pid);
        }
    }
    let projects = root.join("projects");
    let wanted: Vec<String> = scope
        .worktrees
        .iter()
        .map(|w| claude_dir_name(&w.path))
        .collect();
    let Ok(entries) = std::fs::read_dir(&projects) else {
        return Outcome::default();
    };
    // Only names: the repository's own directories and those of its subdirectories.
    let dirs: Vec<PathBuf> = entries
        .flatten()
        .take(100_000)
        .filter(|e| {
            e.file_name().to_str().is_some_and(|n| {
                wanted.iter().any(|w| {
                    n == w
                        || n.strip_prefix(w.as_str())
                            .is_some_and(|r| r.starts_with('-'))
                })
            })
        })
        .map(|e| e.path())
        .take(MAX_DIRS)
        .collect();
    let mut files: Vec<(u64, PathBuf)> = dirs
        .iter()
        .flat_map(|d| newest_files(scope, d, |n| n.ends_with(".jsonl"), MAX_FILES_PER_AGENT))
        .collect();
    files.sort_by_key(|f| std::cmp::Reverse(f.0));
    files.truncate(MAX_FILES_PER_AGENT);

    let mut findings = Vec::new();
    for (mtime, path) in files {
        if scope.meter.spent() {
            break;
        }
        let s = summarize(&path, &scope.meter, || {
            let mut s = Summary::default();
            fsread::tail_lines(&path, &scope.meter, |line| {
                let Ok(rec) = serde_json::from_slice::<ClaudeLine>(line) else {
                    return true;
                };
                if s.cwd.is_none() {
                    s.cwd = rec.cwd.clone();
                }
                if s.branch.is_none() {
                    s.branch = rec.git_branch.filter(|b| !b.is_empty() && b != "HEAD");
                }
                for item in rec
                    .message
                    .map(|m| m.content.0)
                    .unwrap_or_default()
                    .into_iter()
                    .rev()
                {
                    s.tool(item.name.as_deref());
                    for p in item.input.map(|i| i.paths).unwrap_or_default() {
                        if s.paths.len() < MAX_FILES * 2 {
                            s.paths.push((rec.cwd.clone(), p));
                        }
                    }
                }
                !s.complete()
            });
            s
        });
        let Some(worktree) = s.cwd.as_deref().and_then(|c| scope.locate(c)) else {
            continue;
        };
        let stem = path
            .file_stem()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_owned();
        let pid = pid_of.get(&stem).copied();
        findings.push(Finding {
            agent: "claude-code".into(),
            source: Some(Source::Session),
            pid,
            session: Some(format!("claude:{stem}")),
            worktree: Some(worktree),
            branch: s.branch.clone(),
            last_tool: s.last_tool.clone(),
            files: s.files(scope, s.cwd.as_deref()),
            last_activity_ms: Some(mtime),
            likely_caller: pid.is_some_and(|p| snap.ancestors.contains(&p)),
            ..Finding::default()
        });
    }
    deadline_outcome(findings, &scope.meter)
}

// ---------------------------------------------------------------------------------------
// Codex

#[derive(Deserialize)]
struct CodexLine {
    #[serde(rename = "type")]
    kind: Option<String>,
    payload: Option<CodexPayload>,
}

#[derive(Deserialize)]
struct CodexPayload {
    #[serde(rename = "type")]
    kind: Option<String>,
    cwd: Option<PathBuf>,
    name: Option<String>,
    git: Option<CodexGit>,
    input: Option<PatchHeaders>,
    arguments: Option<PatchHeaders>,
}

#[derive(Deserialize)]
struct CodexGit {
    branch: Option<String>,
}

pub fn codex(scope: &Scope, snap: &Snapshot) -> Outcome {
    let Some(root) = env_dir("CODEX_HOME").or_else(|| Some(scope.home.as_ref()?.join(".codex")))
    else {
        return Outcome::default();
    };
    let mut files: Vec<(u64, PathBuf)> = Vec::new();
    for day in recent_days() {
        let dir = root.join("sessions").join(day);
        files.extend(newest_files(
            scope,
            &dir,
            |n| n.starts_with("rollout-") && n.ends_with(".jsonl"),
            MAX_FILES_PER_AGENT,
        ));
    }
    // The thread index names rollouts of threads in this repository directly.
    let mut branches: HashMap<String, (Option<String>, u64, usize)> = HashMap::new();
    let mut unavailable = None;
    match codex_threads(scope, &root) {
        Ok(rows) => {
            for row in rows {
                if let Some(path) = row.rollout_path.as_deref().map(PathBuf::from)
                    && normalize(&path).is_some_and(|p| p.starts_with(&root))
                    && let Some(mtime) = fsread::mtime_ms(&path)
                    && scope.recent(mtime)
                    && files.iter().all(|(_, f)| *f != path)
                {
                    files.push((mtime, path));
                }
                branches.insert(row.id, (row.git_branch, row.updated_ms, row.worktree));
            }
        }
        Err(reason) => unavailable = reason,
    }
    // Rollouts held open by running Codex processes, wherever they are dated.
    for path in snap.open_logs.keys() {
        if let Some(mtime) = fsread::mtime_ms(path)
            && files.iter().all(|(_, f)| f != path)
        {
            files.push((mtime, path.clone()));
        }
    }
    files.sort_by_key(|f| std::cmp::Reverse(f.0));
    files.dedup_by(|a, b| a.1 == b.1);
    files.truncate(MAX_FILES_PER_AGENT);

    let mut findings = Vec::new();
    for (mtime, path) in files {
        if scope.meter.spent() {
            break;
        }
        let s = summarize(&path, &scope.meter, || {
            let mut s = Summary::default();
            let mut meta_cwd: Option<PathBuf> = None;
            if let Some(head) = fsread::head_line(&path, fsread::TAIL_STEP, &scope.meter)
                && let Ok(line) = serde_json::from_slice::<CodexLine>(&head)
                && line.kind.as_deref() == Some("session_meta")
                && let Some(p) = line.payload
            {
                meta_cwd = p.cwd;
                s.branch = p.git.and_then(|g| g.branch).filter(|b| !b.is_empty());
            }
            let mut turn_cwd: Option<PathBuf> = None;
            let mut pending: Vec<String> = Vec::new();
            fsread::tail_lines(&path, &scope.meter, |line| {
                let Ok(rec) = serde_json::from_slice::<CodexLine>(line) else {
                    return true;
                };
                let Some(p) = rec.payload else { return true };
                match (rec.kind.as_deref(), p.kind.as_deref()) {
                    (Some("turn_context"), _) if turn_cwd.is_none() => turn_cwd = p.cwd,
                    (Some("response_item"), Some("function_call" | "custom_tool_call")) => {
                        s.tool(p.name.as_deref());
                        if p.name.as_deref() == Some("apply_patch") {
                            let headers = p.input.or(p.arguments).unwrap_or_default();
                            pending.extend(headers.0);
                        }
                    }
                    _ => {}
                }
                // Patch paths are relative to the turn's cwd, known once a turn_context is seen.
                !(turn_cwd.is_some() && s.last_tool.is_some() && pending.len() >= MAX_FILES)
            });
            s.cwd = turn_cwd.or(meta_cwd);
            s.paths = pending.into_iter().map(|p| (s.cwd.clone(), p)).collect();
            s
        });
        let cwd = s.cwd.clone();
        let Some(worktree) = cwd.as_deref().and_then(|c| scope.locate(c)) else {
            continue;
        };
        let id = codex_id(&path);
        let (db_branch, db_updated, _) = branches.remove(&id).unwrap_or((None, 0, 0));
        let pid = snap.open_logs.get(&path).copied().or_else(|| {
            let real = std::fs::canonicalize(&path).ok()?;
            snap.open_logs.get(&real).copied()
        });
        findings.push(Finding {
            agent: "codex".into(),
            source: Some(Source::Session),
            pid,
            session: Some(format!("codex:{id}")),
            worktree: Some(worktree),
            branch: s.branch.clone().or(db_branch),
            last_tool: s.last_tool.clone(),
            files: s.files(scope, cwd.as_deref()),
            last_activity_ms: Some(mtime.max(db_updated)),
            likely_caller: pid.is_some_and(|p| snap.ancestors.contains(&p)),
            ..Finding::default()
        });
    }
    // Threads the index knows whose rollout was not read (not found, or over the caps).
    for (id, (branch, updated, worktree)) in branches {
        findings.push(Finding {
            agent: "codex".into(),
            source: Some(Source::Session),
            session: Some(format!("codex:{id}")),
            worktree: Some(worktree),
            branch,
            last_activity_ms: Some(updated),
            ..Finding::default()
        });
    }
    let mut outcome = deadline_outcome(findings, &scope.meter);
    if outcome.unavailable.is_none() {
        outcome.unavailable = unavailable;
    }
    outcome
}

/// The session id at the end of a rollout file name (`rollout-<time>-<uuid>.jsonl`).
fn codex_id(path: &Path) -> String {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    stem.get(stem.len().saturating_sub(36)..)
        .unwrap_or(stem)
        .to_owned()
}

/// `YYYY/MM/DD` for today and yesterday, in UTC and in local time.
fn recent_days() -> Vec<String> {
    let now = jiff::Timestamp::now();
    let mut days = Vec::new();
    for tz in [jiff::tz::TimeZone::UTC, jiff::tz::TimeZone::system()] {
        let today = now.to_zoned(tz).date();
        for date in [Some(today), today.yesterday().ok()].into_iter().flatten() {
            let day = format!("{:04}/{:02}/{:02}", date.year(), date.month(), date.day());
            if !days.contains(&day) {
                days.push(day);
            }
        }
    }
    days
}

struct ThreadRow {
    id: String,
    rollout_path: Option<String>,
    git_branch: Option<String>,
    updated_ms: u64,
    worktree: usize,
}

/// Recent, non-archived threads whose cwd is in the repository, from the newest
/// `state_<N>.sqlite`.
fn codex_threads(scope: &Scope, root: &Path) -> Result<Vec<ThreadRow>, Option<&'static str>> {
    let sqlite_home = env_dir("CODEX_SQLITE_HOME").unwrap_or_else(|| root.to_path_buf());
    let Ok(entries) = std::fs::read_dir(&sqlite_home) else {
        return Ok(Vec::new());
    };
    let newest = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let n: u32 = name
                .strip_prefix("state_")?
                .strip_suffix(".sqlite")?
                .parse()
                .ok()?;
            Some((n, e.path()))
        })
        .max_by_key(|(n, _)| *n);
    let Some((_, db)) = newest else {
        return Ok(Vec::new());
    };
    let conn = open_sqlite(&db, &scope.meter).ok_or(Some("unreadable"))?;
    let mut stmt = conn
        .prepare(
            "SELECT id, rollout_path, cwd, git_branch, updated_at FROM threads \
             WHERE archived = 0 ORDER BY updated_at DESC LIMIT ?1",
        )
        .map_err(sql_reason)?;
    let rows = stmt
        .query_map([SQL_ROWS], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, Option<i64>>(4)?,
            ))
        })
        .map_err(sql_reason)?;
    let mut out = Vec::new();
    for row in rows {
        let (id, rollout_path, cwd, git_branch, updated) = row.map_err(sql_reason)?;
        let updated_ms = epoch_ms(updated.unwrap_or(0));
        if let Some(worktree) = cwd.and_then(|c| scope.locate(Path::new(&c)))
            && scope.recent(updated_ms)
        {
            out.push(ThreadRow {
                id,
                rollout_path,
                git_branch: git_branch.filter(|b| !b.is_empty()),
                updated_ms,
                worktree,
            });
        }
    }
    Ok(out)
}

/// Seconds or milliseconds since the epoch, told apart by magnitude.
fn epoch_ms(value: i64) -> u64 {
    let v = value.max(0) as u64;
    if v < 100_000_000_000 { v * 1000 } else { v }
}

// ---------------------------------------------------------------------------------------
// SQLite

/// Opens a database read-only and immutable: SQLite takes no lock and never creates the
/// `-wal`/`-shm` files, so a live agent is never disturbed. Rows still in the WAL are
/// invisible; the WAL's mtime stands in for them.
fn open_sqlite(path: &Path, meter: &Meter) -> Option<rusqlite::Connection> {
    use rusqlite::OpenFlags;
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut uri = String::from("file:");
    for ch in path.to_str()?.chars() {
        match ch {
            '%' => uri.push_str("%25"),
            '?' => uri.push_str("%3F"),
            '#' => uri.push_str("%23"),
            c => uri.push(c),
        }
    }
    uri.push_str("?mode=ro&immutable=1");
    let conn = rusqlite::Connection::open_with_flags(
        &uri,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .ok()?;
    conn.pragma_update(None, "query_only", 1).ok()?;
    let limit = (Instant::now() + SQL_LIMIT).min(meter.deadline);
    conn.progress_handler(1000, Some(move || Instant::now() >= limit))
        .ok()?;
    meter
        .files_read
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Some(conn)
}

fn sql_reason(e: rusqlite::Error) -> Option<&'static str> {
    use rusqlite::ErrorCode;
    match e.sqlite_error_code() {
        Some(ErrorCode::OperationInterrupted) => Some("deadline"),
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => Some("corrupt"),
        // A schema we do not know (another version): nothing to say, not an outage.
        _ if matches!(e, rusqlite::Error::SqliteFailure(_, Some(ref m)) if m.contains("no such")) => {
            None
        }
        _ => Some("unreadable"),
    }
}

fn wal_mtime(db: &Path) -> Option<u64> {
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    fsread::mtime_ms(Path::new(&wal))
}

// ---------------------------------------------------------------------------------------
// OpenCode

/// A tool part: tool name, status, `filePath` input, update time.
type ToolPart = (Option<String>, Option<String>, Option<String>, i64);

pub fn opencode(scope: &Scope, _snap: &Snapshot) -> Outcome {
    let Some(db) = env_dir("OPENCODE_DB")
        .or_else(|| Some(data_home(scope)?.join("opencode").join("opencode.db")))
    else {
        return Outcome::default();
    };
    if std::fs::symlink_metadata(&db).is_err() {
        return Outcome::default();
    }
    match opencode_sessions(scope, &db) {
        Ok(findings) => deadline_outcome(findings, &scope.meter),
        Err(reason) => Outcome {
            findings: Vec::new(),
            unavailable: reason,
        },
    }
}

fn opencode_sessions(scope: &Scope, db: &Path) -> Result<Vec<Finding>, Option<&'static str>> {
    let conn = open_sqlite(db, &scope.meter).ok_or(Some("unreadable"))?;
    let mut sessions = conn
        .prepare(
            "SELECT id, directory, time_updated FROM session ORDER BY time_updated DESC LIMIT ?1",
        )
        .map_err(sql_reason)?;
    let rows: Vec<(String, String, i64)> = sessions
        .query_map([SQL_ROWS], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .map_err(sql_reason)?
        .collect::<Result<_, _>>()
        .map_err(sql_reason)?;
    // Tool parts through json_extract, so outputs and metadata never leave SQLite.
    let mut parts = conn
        .prepare(
            "SELECT json_extract(data, '$.tool'), json_extract(data, '$.state.status'), \
                    json_extract(data, '$.state.input.filePath'), time_updated \
             FROM part WHERE session_id = ?1 AND length(data) < 8388608 \
               AND json_extract(data, '$.type') = 'tool' \
             ORDER BY time_updated DESC LIMIT 20",
        )
        .map_err(sql_reason)?;
    let wal = wal_mtime(db);
    let mut findings = Vec::new();
    for (id, directory, updated) in rows {
        let dir = PathBuf::from(&directory);
        let Some(worktree) = scope.locate(&dir) else {
            continue;
        };
        let mut last = epoch_ms(updated);
        if !scope.recent(last) {
            continue;
        }
        let mut s = Summary::default();
        let tools: Vec<ToolPart> = parts
            .query_map([&id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .map_err(sql_reason)?
            .collect::<Result<_, _>>()
            .map_err(sql_reason)?;
        for (tool, status, file, at) in tools {
            s.tool(tool.as_deref());
            s.running |= matches!(status.as_deref(), Some("running" | "pending"));
            if let Some(file) = file {
                s.paths.push((Some(dir.clone()), file));
            }
            last = last.max(epoch_ms(at));
        }
        // The newest session in the repository owns recent WAL writes.
        if findings.is_empty()
            && let Some(w) = wal
        {
            last = last.max(w);
        }
        findings.push(Finding {
            agent: "opencode".into(),
            source: Some(Source::Session),
            session: Some(format!("opencode:{id}")),
            worktree: Some(worktree),
            last_tool: s.last_tool.clone(),
            files: s.files(scope, Some(&dir)),
            last_activity_ms: Some(last),
            busy: s.running && scope.recent(last) && scope.fresh(last),
            ..Finding::default()
        });
        if findings.len() >= 8 {
            break;
        }
    }
    Ok(findings)
}

// ---------------------------------------------------------------------------------------
// Goose

pub fn goose(scope: &Scope, _snap: &Snapshot) -> Outcome {
    let Some(db) = data_home(scope).map(|d| d.join("goose/sessions/sessions.db")) else {
        return Outcome::default();
    };
    if std::fs::symlink_metadata(&db).is_err() {
        return Outcome::default();
    }
    let result = (|| -> Result<Vec<Finding>, Option<&'static str>> {
        let conn = open_sqlite(&db, &scope.meter).ok_or(Some("unreadable"))?;
        let mut stmt = conn
            .prepare("SELECT id, working_dir, updated_at FROM sessions ORDER BY updated_at DESC LIMIT ?1")
            .map_err(sql_reason)?;
        let rows: Vec<(String, Option<String>, rusqlite::types::Value)> = stmt
            .query_map([SQL_ROWS], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(sql_reason)?
            .collect::<Result<_, _>>()
            .map_err(sql_reason)?;
        let wal = wal_mtime(&db);
        let mut findings: Vec<Finding> = Vec::new();
        for (id, dir, updated) in rows {
            let Some(worktree) = dir.as_deref().and_then(|d| scope.locate(Path::new(d))) else {
                continue;
            };
            let mut last = match updated {
                rusqlite::types::Value::Integer(n) => epoch_ms(n),
                rusqlite::types::Value::Real(f) => epoch_ms(f as i64),
                rusqlite::types::Value::Text(t) => text_time_ms(&t).unwrap_or(0),
                _ => 0,
            };
            if findings.is_empty()
                && let Some(w) = wal
            {
                last = last.max(w);
            }
            if !scope.recent(last) {
                continue;
            }
            findings.push(Finding {
                agent: "goose".into(),
                source: Some(Source::Session),
                session: Some(format!("goose:{id}")),
                worktree: Some(worktree),
                last_activity_ms: Some(last),
                ..Finding::default()
            });
        }
        Ok(findings)
    })();
    match result {
        Ok(findings) => deadline_outcome(findings, &scope.meter),
        Err(reason) => Outcome {
            findings: Vec::new(),
            unavailable: reason,
        },
    }
}

/// `YYYY-MM-DD HH:MM:SS` (SQLite's `CURRENT_TIMESTAMP`, UTC) or RFC 3339.
fn text_time_ms(text: &str) -> Option<u64> {
    if let Ok(ts) = text.parse::<jiff::Timestamp>() {
        return u64::try_from(ts.as_millisecond()).ok();
    }
    let civil: jiff::civil::DateTime = text.replace(' ', "T").parse().ok()?;
    let ts = civil.to_zoned(jiff::tz::TimeZone::UTC).ok()?.timestamp();
    u64::try_from(ts.as_millisecond()).ok()
}

// ---------------------------------------------------------------------------------------
// Gemini CLI

#[derive(Deserialize)]
struct GeminiProjects {
    projects: HashMap<String, String>,
}

#[derive(Deserialize)]
struct GeminiLine {
    #[serde(rename = "toolCalls")]
    tool_calls: Option<Vec<GeminiToolCall>>,
}

#[derive(Deserialize)]
struct GeminiToolCall {
    name: Option<String>,
    args: Option<PathArgs>,
    status: Option<String>,
}

pub fn gemini(scope: &Scope, _snap: &Snapshot) -> Outcome {
    let Some(root) = scope.home.as_ref().map(|h| h.join(".gemini")) else {
        return Outcome::default();
    };
    let registry =
        fsread::read_small_metered(&root.join("projects.json"), 1024 * 1024, &scope.meter)
            .and_then(|b| serde_json::from_slice::<GeminiProjects>(&b).ok());
    let mut findings = Vec::new();
    for (index, worktree) in scope.worktrees.iter().enumerate() {
        let key = worktree.path.to_string_lossy().into_owned();
        let mut ids: Vec<String> = Vec::new();
        if let Some(slug) = registry.as_ref().and_then(|r| r.projects.get(&key))
            && !slug.contains('/')
            && !slug.starts_with('.')
        {
            ids.push(slug.clone());
        }
        ids.push(sha256_hex(key.as_bytes()));
        for id in ids {
            let chats = root.join("tmp").join(&id).join("chats");
            // The legacy `.json` chat is rewritten whole: its mtime is all we use.
            let files = newest_files(
                scope,
                &chats,
                |n| n.starts_with("session-") && (n.ends_with(".jsonl") || n.ends_with(".json")),
                MAX_FILES_PER_AGENT,
            );
            for (mtime, path) in files {
                if scope.meter.spent() {
                    break;
                }
                let s = summarize(&path, &scope.meter, || {
                    let mut s = Summary::default();
                    if path.extension().is_some_and(|e| e == "jsonl") {
                        fsread::tail_lines(&path, &scope.meter, |line| {
                            if let Ok(rec) = serde_json::from_slice::<GeminiLine>(line) {
                                for call in rec.tool_calls.unwrap_or_default().into_iter().rev() {
                                    s.tool(call.name.as_deref());
                                    s.running |= call.status.as_deref() == Some("executing");
                                    for p in call.args.map(|a| a.paths).unwrap_or_default() {
                                        if s.paths.len() < MAX_FILES * 2 {
                                            s.paths.push((Some(worktree.path.clone()), p));
                                        }
                                    }
                                }
                            }
                            !(s.last_tool.is_some() && s.paths.len() >= MAX_FILES)
                        });
                    }
                    s
                });
                findings.push(Finding {
                    agent: "gemini-cli".into(),
                    source: Some(Source::Session),
                    session: Some(format!("gemini:{}", path.display())),
                    worktree: Some(index),
                    last_tool: s.last_tool.clone(),
                    files: s.files(scope, Some(&worktree.path)),
                    last_activity_ms: Some(mtime),
                    ..Finding::default()
                });
            }
        }
    }
    deadline_outcome(findings, &scope.meter)
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

// ---------------------------------------------------------------------------------------
// GitHub Copilot CLI

#[derive(Deserialize)]
struct CopilotEvent {
    #[serde(rename = "type")]
    kind: Option<String>,
    data: Option<CopilotData>,
}

#[derive(Deserialize)]
struct CopilotData {
    #[serde(rename = "toolName", alias = "tool_name")]
    tool_name: Option<String>,
}

/// The top-level `key: value` scalars of `workspace.yaml` that map a session: `cwd`,
/// `git_root` and `branch`. Every other line (summaries, names) is skipped.
fn copilot_workspace(text: &str) -> (Vec<PathBuf>, Option<String>) {
    let mut dirs = Vec::new();
    let mut branch = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim().trim_matches(|c| c == '"' || c == '\'');
        match key {
            "cwd" | "git_root" if value.starts_with('/') => dirs.push(PathBuf::from(value)),
            "branch" if !value.is_empty() => branch = Some(value.to_owned()),
            _ => {}
        }
    }
    (dirs, branch)
}

pub fn copilot(scope: &Scope, _snap: &Snapshot) -> Outcome {
    let Some(root) =
        env_dir("COPILOT_HOME").or_else(|| Some(scope.home.as_ref()?.join(".copilot")))
    else {
        return Outcome::default();
    };
    let Ok(entries) = std::fs::read_dir(root.join("session-state")) else {
        return Outcome::default();
    };
    // Newest sessions first, by the mtime of their event log.
    let mut sessions: Vec<(u64, PathBuf)> = entries
        .flatten()
        .take(4096)
        .filter_map(|e| {
            let events = e.path().join("events.jsonl");
            let meta = std::fs::symlink_metadata(&events).ok()?;
            let mtime = fsread::meta_mtime_ms(&meta);
            (meta.is_file() && scope.recent(mtime)).then(|| (mtime, e.path()))
        })
        .collect();
    sessions.sort_by_key(|s| std::cmp::Reverse(s.0));
    sessions.truncate(MAX_FILES_PER_AGENT);
    let mut findings = Vec::new();
    for (mtime, dir) in sessions {
        if scope.meter.spent() {
            break;
        }
        let Some(yaml) =
            fsread::read_small_metered(&dir.join("workspace.yaml"), 64 * 1024, &scope.meter)
        else {
            continue;
        };
        let (dirs, branch) = copilot_workspace(&String::from_utf8_lossy(&yaml));
        let Some(worktree) = dirs.iter().find_map(|d| scope.locate(d)) else {
            continue;
        };
        let events = dir.join("events.jsonl");
        let s = summarize(&events, &scope.meter, || {
            let mut s = Summary::default();
            let mut last_kind: Option<String> = None;
            fsread::tail_lines(&events, &scope.meter, |line| {
                let Ok(event) = serde_json::from_slice::<CopilotEvent>(line) else {
                    return true;
                };
                if last_kind.is_none() {
                    last_kind = event.kind.clone();
                }
                if event.kind.as_deref() == Some("tool.execution_start") {
                    s.tool(event.data.and_then(|d| d.tool_name).as_deref());
                }
                s.last_tool.is_none()
            });
            // The newest event says whether a tool runs now or the session ended.
            s.running = last_kind.as_deref() == Some("tool.execution_start");
            s.ended = last_kind.as_deref() == Some("session.shutdown");
            s
        });
        findings.push(Finding {
            agent: "copilot-cli".into(),
            source: Some(Source::Session),
            session: Some(format!("copilot:{}", dir.display())),
            worktree: Some(worktree),
            branch,
            last_tool: s.last_tool.clone(),
            last_activity_ms: Some(mtime),
            busy: s.running && !s.ended && scope.fresh(mtime),
            ..Finding::default()
        });
    }
    deadline_outcome(findings, &scope.meter)
}

// ---------------------------------------------------------------------------------------
// Amp

#[derive(Deserialize)]
struct AmpThread {
    env: Option<AmpEnv>,
}

#[derive(Deserialize)]
struct AmpEnv {
    initial: Option<AmpInitial>,
}

#[derive(Deserialize)]
struct AmpInitial {
    #[serde(default)]
    trees: Vec<AmpTree>,
}

#[derive(Deserialize)]
struct AmpTree {
    uri: Option<String>,
}

/// Local thread files (`threads/T-*.json`, kept until threads moved server-side): the
/// working directory from `env.initial.trees[0].uri`; messages are skipped unparsed.
pub fn amp(scope: &Scope, _snap: &Snapshot) -> Outcome {
    let Some(dir) = data_home(scope).map(|d| d.join("amp/threads")) else {
        return Outcome::default();
    };
    let files = newest_files(
        scope,
        &dir,
        |n| n.starts_with("T-") && n.ends_with(".json"),
        MAX_FILES_PER_AGENT,
    );
    let mut findings = Vec::new();
    for (mtime, path) in files {
        if scope.meter.spent() {
            break;
        }
        let Some(thread) = fsread::read_small_metered(&path, 8 * 1024 * 1024, &scope.meter)
            .and_then(|b| serde_json::from_slice::<AmpThread>(&b).ok())
        else {
            continue;
        };
        let root = thread
            .env
            .and_then(|e| e.initial)
            .and_then(|i| i.trees.into_iter().next())
            .and_then(|t| t.uri)
            .and_then(|u| super::editors::file_uri_path(&u));
        let Some(worktree) = root.as_deref().and_then(|r| scope.locate(r)) else {
            continue;
        };
        findings.push(Finding {
            agent: "amp".into(),
            source: Some(Source::Session),
            session: Some(format!("amp:{}", path.display())),
            worktree: Some(worktree),
            last_activity_ms: Some(mtime),
            ..Finding::default()
        });
    }
    deadline_outcome(findings, &scope.meter)
}

// ---------------------------------------------------------------------------------------
// Files agents keep in the repository

/// Activity files (mtime only: they hold transcripts) in each worktree's root.
pub fn repo_files(scope: &Scope, _snap: &Snapshot) -> Outcome {
    let mut findings = Vec::new();
    for (index, worktree) in scope.worktrees.iter().enumerate() {
        for detector in super::detect::DETECTORS {
            let newest = detector
                .activity_files
                .iter()
                .filter_map(|name| {
                    let meta = std::fs::symlink_metadata(worktree.path.join(name)).ok()?;
                    meta.is_file().then(|| fsread::meta_mtime_ms(&meta))
                })
                .max();
            if let Some(mtime) = newest.filter(|m| scope.recent(*m)) {
                findings.push(Finding {
                    agent: detector.id.into(),
                    source: Some(Source::RepoFiles),
                    worktree: Some(index),
                    last_activity_ms: Some(mtime),
                    ..Finding::default()
                });
            }
        }
    }
    Outcome {
        findings,
        unavailable: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_directory_names() {
        assert_eq!(
            claude_dir_name(Path::new("/home/u/my_app.v2/x y")),
            "-home-u-my-app-v2-x-y"
        );
        assert_eq!(claude_dir_name(Path::new("/tmp/café")), "-tmp-caf-");
    }

    #[test]
    fn patch_headers_only() {
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-SECRET\n+SECRET\n*** Add File: b.rs\n+body\n*** End Patch\n";
        assert_eq!(patch_headers(patch).0, ["src/a.rs", "b.rs"]);
        let args = serde_json::to_string(&serde_json::json!({ "input": patch })).unwrap();
        assert_eq!(patch_headers(&args).0, ["src/a.rs", "b.rs"]);
        assert!(patch_headers("echo hi").0.is_empty());
    }

    #[test]
    fn tool_uses_skip_text_content() {
        let line = r#"{"cwd":"/r","gitBranch":"b","message":{"content":[{"type":"text","text":"SECRET"},{"type":"tool_use","name":"Edit","input":{"file_path":"/r/x","old_string":"SECRET"}}]}}"#;
        let rec: ClaudeLine = serde_json::from_str(line).unwrap();
        let uses = rec.message.unwrap().content.0;
        assert_eq!(uses.len(), 1);
        assert_eq!(uses[0].name.as_deref(), Some("Edit"));
        assert_eq!(uses[0].input.as_ref().unwrap().paths, ["/r/x"]);
        let user: ClaudeLine =
            serde_json::from_str(r#"{"message":{"content":"SECRET prompt"}}"#).unwrap();
        assert!(user.message.unwrap().content.0.is_empty());
    }

    #[test]
    fn copilot_workspace_keys_only() {
        let (dirs, branch) = copilot_workspace(
            "id: abc\ncwd: /src/app\ngit_root: \"/src/app\"\nsummary: secret words\nbranch: feat/x\n  cwd: /nested\n",
        );
        assert_eq!(dirs, [PathBuf::from("/src/app"), PathBuf::from("/src/app")]);
        assert_eq!(branch.as_deref(), Some("feat/x"));
    }

    #[test]
    fn times() {
        assert_eq!(epoch_ms(1_700_000_000), 1_700_000_000_000);
        assert_eq!(epoch_ms(1_700_000_000_123), 1_700_000_000_123);
        assert_eq!(text_time_ms("1970-01-01 00:00:01"), Some(1000));
        assert_eq!(text_time_ms("1970-01-01T00:00:02Z"), Some(2000));
    }
}
