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

use super::finding::{Finding, MAX_FILES, Outcome, Scope, Source, sanitize_tool};
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

mod amp;
mod claude;
mod codex;
mod copilot;
mod gemini;
mod goose;
mod opencode;

pub use amp::amp;
pub use claude::claude;
pub use codex::codex;
pub use copilot::copilot;
pub use gemini::gemini;
pub use goose::goose;
pub use opencode::opencode;

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

/// `$XDG_DATA_HOME`, else `~/.local/share`.
fn data_home(scope: &Scope) -> Option<PathBuf> {
    scope
        .dirs
        .xdg_data_home
        .clone()
        .or_else(|| Some(scope.home.as_ref()?.join(".local/share")))
}

fn deadline_outcome(findings: Vec<Finding>, meter: &Meter) -> Outcome {
    Outcome {
        unavailable: meter.stop_reason(),
        findings,
    }
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

/// Seconds or milliseconds since the epoch, told apart by magnitude.
fn epoch_ms(value: i64) -> u64 {
    let v = value.max(0) as u64;
    if v < 100_000_000_000 { v * 1000 } else { v }
}

// ---------------------------------------------------------------------------------------
// Files agents keep in the repository

/// Activity files (mtime only: they hold transcripts) in each worktree's root.
pub fn repo_files(scope: &Scope, _snap: &Snapshot) -> Outcome {
    let mut findings = Vec::new();
    for (index, worktree) in scope.worktrees.iter().enumerate() {
        for detector in super::kinds::DETECTORS {
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

// ---------------------------------------------------------------------------------------
// Commits agents mark as theirs

/// Committer-name suffixes agents add to their commits, and the agent each stands for.
const COMMIT_MARKS: &[(&str, &str)] = &[(" (aider)", "aider")];

/// Recent `HEAD` reflog entries whose committer carries an agent's mark (Aider commits as
/// `Name (aider)`). Read from each worktree's reflog tail, newest first, without running
/// git; messages are never looked at and identities never returned.
pub fn git_commits(scope: &Scope, _snap: &Snapshot) -> Outcome {
    let mut findings: Vec<Finding> = Vec::new();
    for (index, worktree) in scope.worktrees.iter().enumerate() {
        let log = worktree.git_dir.join("logs").join("HEAD");
        fsread::tail_lines(&log, &scope.meter, |line| {
            let Some((when, committer)) = reflog_identity(line) else {
                return true;
            };
            if !scope.recent(when) {
                return false;
            }
            if let Some((_, agent)) = COMMIT_MARKS.iter().find(|(m, _)| committer.ends_with(m))
                && !findings
                    .iter()
                    .any(|f| f.agent == *agent && f.worktree == Some(index))
            {
                findings.push(Finding {
                    agent: (*agent).into(),
                    source: Some(Source::GitCommits),
                    worktree: Some(index),
                    last_activity_ms: Some(when),
                    ..Finding::default()
                });
            }
            true
        });
    }
    deadline_outcome(findings, &scope.meter)
}

/// The time (ms) and committer name of one reflog line:
/// `<old> <new> <name> <<email>> <unix seconds> <tz>\t<message>`.
fn reflog_identity(line: &[u8]) -> Option<(u64, String)> {
    let head = line.split(|b| *b == b'\t').next()?;
    let head = std::str::from_utf8(head).ok()?;
    let mut parts = head.splitn(3, ' ');
    let (_old, _new, rest) = (parts.next()?, parts.next()?, parts.next()?);
    let (name, after) = rest.split_once(" <")?;
    let (_, stamp) = after.rsplit_once("> ")?;
    let secs: u64 = stamp.split(' ').next()?.parse().ok()?;
    Some((secs * 1000, name.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_headers_only() {
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-SECRET\n+SECRET\n*** Add File: b.rs\n+body\n*** End Patch\n";
        assert_eq!(patch_headers(patch).0, ["src/a.rs", "b.rs"]);
        let args = serde_json::to_string(&serde_json::json!({ "input": patch })).unwrap();
        assert_eq!(patch_headers(&args).0, ["src/a.rs", "b.rs"]);
        assert!(patch_headers("echo hi").0.is_empty());
    }

    #[test]
    fn reflog_identities() {
        let line = b"0000000000000000000000000000000000000000 1111111111111111111111111111111111111111 Dev Name (aider) <dev@example.com> 1767225600 +0100\tcommit: SECRET message";
        assert_eq!(
            reflog_identity(line),
            Some((1_767_225_600_000, "Dev Name (aider)".to_owned()))
        );
        assert_eq!(reflog_identity(b"garbage"), None);
        assert_eq!(reflog_identity(b"a b name <e> notanumber +0000\tx"), None);
    }

    #[test]
    fn times() {
        assert_eq!(epoch_ms(1_700_000_000), 1_700_000_000_000);
        assert_eq!(epoch_ms(1_700_000_000_123), 1_700_000_000_123);
    }
}
