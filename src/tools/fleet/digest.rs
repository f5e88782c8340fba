//! `fleet.digest`: HEAD and local-branch moves of many repositories since a time, newest
//! first, read from the reflog files themselves.
//!
//! Reading files is what keeps a hundred repositories well under a second: locating the
//! git directory, listing `logs/refs/heads/**` and reading each reflog backwards from its
//! end (stopping at the first entry older than `since`) needs no process. Processes run
//! only for what files cannot answer: repositories whose refs live in a reftable (read
//! with `git reflog list` and `git log -g`), and whether a returned move dropped the
//! previous tip when its action alone does not say (`git merge-base --is-ancestor`, a
//! bounded number per call). No symlink inside the git directory is followed, so a
//! repository cannot point us at files outside it.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::{Fleet, bounded, check_paths, reason};
use crate::config::{Config, Toolset};
use crate::error::ToolError;
use crate::git::{Git, Oid, Repo, repo};
use crate::parse::reflog_file;
use crate::parse::reflog_walk::{self, Walk};
use crate::parse::{ParseError, Records};
use crate::tools::input::Bounded;
use crate::tools::{Annotations, CallCtx, Tool};

/// Most repositories one call may name (or take from the registered list).
const MAX_REPOS: usize = 200;
/// Repositories read at once; file reads are short, so this mostly bounds open files.
const PARALLEL_REPOS: usize = 8;
/// Ancestry checks (one `git merge-base` each) per call; moves past this use their action.
const MAX_ANCESTRY_CHECKS: usize = 64;
const PARALLEL_CHECKS: usize = 4;
/// Reflog bytes read per repository before we stop and mark it `partial`.
const BYTES_PER_REPO: u64 = 64 * 1024 * 1024;
/// Branch reflog files looked at per repository.
const MAX_BRANCH_LOGS: usize = 5000;
/// Entries taken from one `git log -g` walk of a reftable repository.
const MAX_WALK_ENTRIES: usize = 50_000;
/// Messages longer than this are cut (at a character boundary) and end with `…`.
const MESSAGE_CAP: usize = 1024;
const CHUNK: usize = 64 * 1024;

/// `fleet.digest`: what changed across many repositories since a time.
pub struct Digest;

/// A point in time: an RFC 3339 / ISO-8601 string or milliseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moment(pub i64);

impl<'de> Deserialize<'de> for Moment {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(de)?;
        parse_moment(&value)
            .map(Moment)
            .map_err(serde::de::Error::custom)
    }
}

const MOMENT_HELP: &str = "must be an RFC 3339 / ISO-8601 time with a zone (2026-01-31T09:00:00Z, 2026-01-31T10:00:00+01:00), a date (2026-01-31, midnight UTC), or epoch milliseconds";

fn parse_moment(value: &Value) -> Result<i64, String> {
    match value {
        Value::Number(n) => n
            .as_i64()
            .filter(|ms| jiff::Timestamp::from_millisecond(*ms).is_ok_and(|_| *ms >= 0))
            .ok_or_else(|| format!("{MOMENT_HELP}; got {n}")),
        Value::String(s) => {
            let text = s.trim();
            if let Ok(ts) = text.parse::<jiff::Timestamp>() {
                return Ok(ts.as_millisecond());
            }
            if let Ok(date) = text.parse::<jiff::civil::Date>()
                && text.len() == 10
                && let Ok(zoned) = date.to_zoned(jiff::tz::TimeZone::UTC)
            {
                return Ok(zoned.timestamp().as_millisecond());
            }
            Err(format!("{MOMENT_HELP}; got {s:?}"))
        }
        other => Err(format!("{MOMENT_HELP}; got {other}")),
    }
}

impl JsonSchema for Moment {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Moment".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "anyOf": [
                { "type": "string", "description": "RFC 3339 / ISO-8601 time with a zone, or a date (midnight UTC)" },
                { "type": "integer", "minimum": 0, "description": "milliseconds since the Unix epoch" },
            ]
        })
    }

    fn inline_schema() -> bool {
        true
    }
}

/// Which reflogs to read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RefScope {
    /// `HEAD` only.
    Head,
    /// Local branches (`refs/heads/*`) only.
    Branches,
    /// Both.
    #[default]
    All,
}

impl RefScope {
    fn head(self) -> bool {
        matches!(self, RefScope::Head | RefScope::All)
    }

    fn branches(self) -> bool {
        matches!(self, RefScope::Branches | RefScope::All)
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DigestInput {
    /// Report moves at or after this time (RFC 3339 / ISO-8601, or epoch milliseconds).
    pub since: Moment,
    /// Report moves at or before this time; default: now.
    #[serde(default)]
    pub until: Option<Moment>,
    /// Absolute repository paths (at most 200). Default: FluxGit's registered
    /// repositories (`<runDir>/repos/*.path`) inside the allowed roots.
    #[serde(default)]
    #[schemars(length(min = 1, max = 200))]
    pub repo_paths: Option<Vec<String>>,
    /// Most events to return, newest first; `eventsTotal` counts them all.
    #[serde(default)]
    pub max_events: Bounded<1, 1000, 200>,
    /// `head`, `branches` or `all` (default).
    #[serde(default)]
    pub refs: RefScope,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DigestData {
    /// The window, as RFC 3339 text and as epoch milliseconds.
    pub since: String,
    pub since_ms: i64,
    pub until: Option<String>,
    pub until_ms: Option<i64>,
    pub refs: RefScope,
    /// `repoPaths` when the caller named the repositories, `registered` otherwise.
    pub repo_source: &'static str,
    /// Newest first.
    pub events: Vec<Event>,
    pub event_count: u64,
    /// Every move in the window, returned or not (a lower bound if a repository is `partial`).
    pub events_total: u64,
    pub truncated: bool,
    pub max_events: u64,
    pub repos: Vec<RepoDigest>,
    /// True when more registered repositories exist than one call reads (200).
    pub repos_truncated: bool,
    /// Events whose `rewrote` comes from their action alone, because the ancestry check
    /// budget was spent or an object is gone.
    pub rewrote_unchecked: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub repo_path: String,
    /// `HEAD` or `refs/heads/<name>`.
    #[serde(rename = "ref")]
    pub ref_name: String,
    /// Null when the move created the ref (or, in a reftable repository, for its oldest
    /// entry, whose previous value git does not show).
    pub old_oid: Option<String>,
    /// Null when the move deleted the ref.
    pub new_oid: Option<String>,
    /// When the move was recorded, epoch milliseconds.
    pub at_ms: i64,
    /// The recorder's UTC offset (`+0100`).
    pub tz: String,
    /// The identity git recorded for the move: the configured identity, not proof of a
    /// person or an agent.
    pub identity: Identity,
    pub message: String,
    /// `commit`, `amend`, `reset`, `rebase`, `merge`, `checkout`, `pull`, `branch`,
    /// `cherry-pick`, `revert` or `other`.
    pub action: Action,
    /// The move dropped the previous tip: it is not an ancestor of the new one (reset,
    /// amend, rebase, forced moves). A checkout only moves HEAD and never counts.
    pub rewrote: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Identity {
    pub name: String,
    pub email: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    Commit,
    Amend,
    Reset,
    Rebase,
    Merge,
    Checkout,
    Pull,
    Branch,
    CherryPick,
    Revert,
    Other,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RepoDigest {
    /// The canonical top level (or the path as given when it could not be resolved).
    pub repo_path: String,
    /// Moves of this repository in the window (returned or not).
    pub events: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// True when reading stopped early (very long reflogs); `events` is then a lower bound.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

impl Tool for Digest {
    type Input = DigestInput;
    type Output = Fleet<DigestData>;

    const NAME: &'static str = "fleet.digest";
    const TITLE: &'static str = "Fleet digest";
    const DESCRIPTION: &'static str = "What changed across many repositories since a time: HEAD and local-branch reflog moves, newest first, bounded by maxEvents (default 200, max 1000). repoPaths (up to 200), or FluxGit's registered repositories inside the allowed roots when omitted. Each event has the ref, old and new commit, time, the identity exactly as git recorded it (the configured identity, not proof of a person or an agent), the reflog message, an action (commit, amend, reset, rebase, merge, checkout, pull, branch, cherry-pick, revert, other) and rewrote (the move dropped the previous tip). Reads reflog files only; nothing is fetched or written.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: DigestInput) -> Result<Self::Output, ToolError> {
        let since = input.since.0;
        let until = input.until.map(|m| m.0);
        if let Some(until) = until
            && until < since
        {
            return Err(ToolError::invalid("until", "must not be before `since`"));
        }
        let (paths, repo_source, repos_truncated) = match input.repo_paths {
            Some(paths) => {
                check_paths("repoPaths", paths.iter().map(String::as_str), MAX_REPOS)?;
                if paths.is_empty() {
                    return Err(ToolError::invalid(
                        "repoPaths",
                        "must not be empty; omit it to use the registered repositories",
                    ));
                }
                (dedup(paths), "repoPaths", false)
            }
            None => {
                let (paths, more) = registered(&ctx.config);
                (paths, "registered", more)
            }
        };
        let window = Window {
            since,
            until: until.unwrap_or(i64::MAX),
            scope: input.refs,
            keep: input.max_events.usize(),
        };
        let max = input.max_events.usize();

        let config = Arc::clone(&ctx.config);
        let cancel = ctx.cancel.clone();
        let scans = bounded(paths.clone(), PARALLEL_REPOS, move |path| {
            let config = Arc::clone(&config);
            let cancel = cancel.clone();
            async move {
                crate::safe_file::off_thread(&cancel, move || scan_files(&config, &path, window))
                    .await
                    .ok()
            }
        })
        .await;
        let mut scans: Vec<Scan> = scans
            .into_iter()
            .zip(&paths)
            .map(|(scan, path)| {
                scan.flatten()
                    .unwrap_or_else(|| Scan::failed(path, "could not be read".into()))
            })
            .collect();

        // Reftable repositories need git to read their reflogs.
        let reftable: Vec<usize> = (0..scans.len())
            .filter(|i| scans[*i].reftable && scans[*i].error.is_none())
            .collect();
        let walked = bounded(reftable.clone(), PARALLEL_CHECKS, |i| {
            let ctx = ctx.clone();
            let path = scans[i].display.clone();
            async move { scan_with_git(&ctx, &path, window).await }
        })
        .await;
        for (i, walked) in reftable.into_iter().zip(walked) {
            match walked {
                Some(Ok((events, total, partial))) => {
                    scans[i].events = events;
                    scans[i].total = total;
                    scans[i].partial |= partial;
                }
                Some(Err(why)) => scans[i].error = Some(why),
                None => scans[i].error = Some("could not be read".into()),
            }
        }

        let events_total: u64 = scans.iter().map(|s| s.total).sum();
        let mut order: Vec<(usize, usize)> = scans
            .iter()
            .enumerate()
            .flat_map(|(r, s)| (0..s.events.len()).map(move |e| (r, e)))
            .collect();
        order.sort_by_key(|&(r, e)| {
            let ev = &scans[r].events[e];
            (Reverse(ev.time), r, ev.ref_rank, ev.seq)
        });
        order.truncate(max);

        let mut chosen: Vec<(usize, Raw)> = Vec::with_capacity(order.len());
        let mut taken: Vec<Vec<Option<Raw>>> = scans
            .iter_mut()
            .map(|s| {
                std::mem::take(&mut s.events)
                    .into_iter()
                    .map(Some)
                    .collect()
            })
            .collect();
        for (r, e) in order {
            if let Some(raw) = taken[r][e].take() {
                chosen.push((r, raw));
            }
        }
        let (rewrote, unchecked) = rewrites(&ctx, &scans, &chosen).await;

        let events: Vec<Event> = chosen
            .into_iter()
            .zip(rewrote)
            .map(|((r, raw), rewrote)| raw.into_event(scans[r].display.clone(), rewrote))
            .collect();
        let repos = scans
            .iter()
            .map(|s| RepoDigest {
                repo_path: s.display.clone(),
                events: s.total,
                error: s.error.clone(),
                partial: s.partial,
            })
            .collect();
        Ok(Fleet::new(
            Self::NAME,
            DigestData {
                since: rfc3339(since),
                since_ms: since,
                until: until.map(rfc3339),
                until_ms: until,
                refs: input.refs,
                repo_source,
                event_count: events.len() as u64,
                truncated: events_total > events.len() as u64,
                events,
                events_total,
                max_events: max as u64,
                repos,
                repos_truncated,
                rewrote_unchecked: unchecked,
            },
        ))
    }
}

fn rfc3339(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// Drops repeated paths, keeping the first.
fn dedup(paths: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    paths
        .into_iter()
        .filter(|p| seen.insert(p.clone()))
        .collect()
}

/// FluxGit's registered repositories inside the allowed roots, sorted, at most
/// [`MAX_REPOS`]; the flag says whether more were left out.
fn registered(config: &Config) -> (Vec<String>, bool) {
    let Some(run_dir) = config.run_dir.as_deref() else {
        return (Vec::new(), false);
    };
    let mut paths: Vec<String> = crate::registry::entries(run_dir)
        .into_iter()
        .map(|r| r.path)
        .filter(|p| {
            // Registered paths are canonical when written; resolving again judges the
            // roots by where they lead today.
            std::fs::canonicalize(p).map_or(config.allowed_roots.is_empty(), |c| config.allows(&c))
        })
        .collect();
    paths.sort();
    paths.dedup();
    let more = paths.len() > MAX_REPOS;
    paths.truncate(MAX_REPOS);
    (paths, more)
}

#[derive(Debug, Clone, Copy)]
struct Window {
    since: i64,
    until: i64,
    scope: RefScope,
    /// Most events worth keeping from one reflog (no more can be returned).
    keep: usize,
}

impl Window {
    fn contains(&self, ms: i64) -> bool {
        ms >= self.since && ms <= self.until
    }
}

/// One move as read, before it is chosen and checked.
#[derive(Debug)]
struct Raw {
    ref_name: String,
    /// 0 for HEAD, then branches in name order: ties in time list HEAD first.
    ref_rank: usize,
    /// Position in its reflog counting from the newest (0).
    seq: usize,
    old: Option<Oid>,
    new: Option<Oid>,
    time: i64,
    tz: String,
    name: Vec<u8>,
    email: Vec<u8>,
    message: Vec<u8>,
}

impl Raw {
    fn at_ms(&self) -> i64 {
        self.time.saturating_mul(1000)
    }

    fn into_event(self, repo_path: String, rewrote: bool) -> Event {
        let message = String::from_utf8_lossy(&self.message);
        Event {
            repo_path,
            action: classify(&message).0,
            at_ms: self.at_ms(),
            ref_name: self.ref_name,
            old_oid: self.old.map(|o| o.as_str().to_owned()),
            new_oid: self.new.map(|o| o.as_str().to_owned()),
            tz: self.tz,
            identity: Identity {
                name: String::from_utf8_lossy(&self.name).into_owned(),
                email: String::from_utf8_lossy(&self.email).into_owned(),
            },
            message: cap(&message),
            rewrote,
        }
    }
}

fn cap(text: &str) -> String {
    if text.len() <= MESSAGE_CAP {
        return text.to_owned();
    }
    let mut end = MESSAGE_CAP;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// What one repository gave.
#[derive(Debug, Default)]
struct Scan {
    display: String,
    layout: Option<Layout>,
    reftable: bool,
    events: Vec<Raw>,
    total: u64,
    partial: bool,
    error: Option<String>,
}

impl Scan {
    fn failed(display: &str, why: String) -> Scan {
        Scan {
            display: display.to_owned(),
            error: Some(why),
            ..Scan::default()
        }
    }
}

/// Where a repository's files are.
#[derive(Debug, Clone)]
struct Layout {
    top: PathBuf,
    git_dir: PathBuf,
    common_dir: PathBuf,
}

/// Finds the repository containing `dir` the way git does (a `.git` directory or
/// `gitdir:` file in it or a parent, or a git directory itself), without running git.
fn locate(dir: &Path) -> Option<Layout> {
    let mut at = Some(dir);
    while let Some(d) = at {
        let dotgit = d.join(".git");
        if let Ok(meta) = std::fs::metadata(&dotgit) {
            let git_dir = if meta.is_dir() {
                std::fs::canonicalize(&dotgit).ok()?
            } else {
                let text = crate::safe_file::read(&dotgit, 4096).ok()?;
                let text = String::from_utf8(text).ok()?;
                let target = text.trim_end().strip_prefix("gitdir: ")?;
                std::fs::canonicalize(d.join(target)).ok()?
            };
            if is_git_dir(&git_dir) {
                return Some(layout(d.to_path_buf(), git_dir));
            }
        }
        if is_git_dir(d) {
            // Inside the `.git` of a working tree the repository is that working tree.
            return Some(match (d.file_name(), d.parent()) {
                (Some(name), Some(parent)) if name == ".git" => {
                    layout(parent.to_path_buf(), d.to_path_buf())
                }
                _ => layout(d.to_path_buf(), d.to_path_buf()),
            });
        }
        at = d.parent();
    }
    None
}

fn is_git_dir(dir: &Path) -> bool {
    dir.join("HEAD").is_file()
        && (dir.join("objects").is_dir() || dir.join("commondir").is_file())
        && (dir.join("refs").exists() || dir.join("commondir").is_file())
}

fn layout(top: PathBuf, git_dir: PathBuf) -> Layout {
    let common_dir = crate::safe_file::read_in(&git_dir, "commondir", 4096)
        .ok()
        .and_then(|rel| String::from_utf8(rel).ok())
        .and_then(|rel| std::fs::canonicalize(git_dir.join(rel.trim_end())).ok())
        .unwrap_or_else(|| git_dir.clone());
    Layout {
        top,
        git_dir,
        common_dir,
    }
}

/// Reads one repository's reflog files (or notes that it needs git).
fn scan_files(config: &Config, path: &str, window: Window) -> Scan {
    let canonical = match repo::canonical_dir(config, "repoPaths", path) {
        Ok(c) => c,
        Err(err) => return Scan::failed(path, reason(err)),
    };
    let Some(layout) = locate(&canonical) else {
        return Scan::failed(
            &canonical.to_string_lossy(),
            "is not inside a git repository".into(),
        );
    };
    let display = layout.top.to_string_lossy().into_owned();
    if !config.allows(&layout.top) {
        return Scan::failed(&display, "is outside the allowed roots".into());
    }
    if let Err(outside) =
        crate::git::reach::check(&config.allowed_roots, &layout.git_dir, &layout.common_dir)
    {
        return Scan::failed(&display, outside.0);
    }
    let mut scan = Scan {
        display,
        reftable: layout.common_dir.join("reftable").is_dir(),
        layout: Some(layout.clone()),
        ..Scan::default()
    };
    if scan.reftable {
        return scan;
    }
    let mut logs: Vec<(String, PathBuf)> = Vec::new();
    if window.scope.head() && real_dir(&layout.git_dir.join("logs")) {
        logs.push(("HEAD".into(), layout.git_dir.join("logs/HEAD")));
    }
    if window.scope.branches() {
        let logs_dir = layout.common_dir.join("logs");
        let refs = logs_dir.join("refs");
        let heads = refs.join("heads");
        if real_dir(&logs_dir) && real_dir(&refs) && real_dir(&heads) {
            let mut found = Vec::new();
            scan.partial |= !branch_logs(&heads, "refs/heads", 0, &mut found);
            found.sort();
            logs.extend(found);
        }
    }
    let mut budget = BYTES_PER_REPO;
    for (rank, (name, file)) in logs.into_iter().enumerate() {
        match read_reflog(&file, &name, rank, window, &mut budget, &mut scan) {
            Ok(()) => {}
            Err(why) => {
                scan.error = Some(why);
                scan.events.clear();
                scan.total = 0;
                break;
            }
        }
        if budget == 0 {
            scan.partial = true;
            break;
        }
    }
    scan
}

/// A directory that is not a symlink.
fn real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// Collects branch reflog files under `dir`, never through a symlink. Returns false when
/// the listing stopped at [`MAX_BRANCH_LOGS`].
fn branch_logs(dir: &Path, prefix: &str, depth: usize, out: &mut Vec<(String, PathBuf)>) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return true;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let name = format!("{prefix}/{}", entry.file_name().to_string_lossy());
        if kind.is_dir() && depth < 64 {
            if !branch_logs(&entry.path(), &name, depth + 1, out) {
                return false;
            }
        } else if kind.is_file() {
            if out.len() == MAX_BRANCH_LOGS {
                return false;
            }
            out.push((name, entry.path()));
        }
    }
    true
}

/// Reads one reflog from its end, adding the moves inside the window to `scan`.
fn read_reflog(
    file: &Path,
    name: &str,
    rank: usize,
    window: Window,
    budget: &mut u64,
    scan: &mut Scan,
) -> Result<(), String> {
    let file = match crate::safe_file::open_regular(file) {
        Ok((f, _)) => f,
        // No reflog (never written, or a symlink, FIFO or device we refuse to read): no moves.
        Err(_) => return Ok(()),
    };
    let mut lines = BackLines::new(file).map_err(|e| format!("{name} reflog: {e}"))?;
    let mut seq = 0;
    while let Some((offset, line)) = lines
        .next(budget)
        .map_err(|e| format!("{name} reflog: {e}"))?
    {
        let entry = reflog_file::parse_line(&line, offset as usize)
            .map_err(|e: ParseError| format!("{name} reflog: {e}"))?;
        let ms = entry.time.saturating_mul(1000);
        if ms < window.since {
            break;
        }
        if !window.contains(ms) {
            continue;
        }
        scan.total += 1;
        if seq < window.keep {
            scan.events.push(Raw {
                ref_name: name.to_owned(),
                ref_rank: rank,
                seq,
                old: (!entry.old.is_zero()).then_some(entry.old),
                new: (!entry.new.is_zero()).then_some(entry.new),
                time: entry.time,
                tz: entry.tz,
                name: entry.name,
                email: entry.email,
                message: entry.message,
            });
        }
        seq += 1;
    }
    scan.partial |= lines.stopped;
    Ok(())
}

/// Lines of a file, last first, read in chunks from the end.
struct BackLines {
    file: File,
    /// File offset of `buf[0]`.
    pos: u64,
    /// Unread bytes from `pos` up to the end of the newest line not yet returned.
    buf: Vec<u8>,
    /// True when the byte budget ran out before the start of the file.
    stopped: bool,
}

impl BackLines {
    fn new(mut file: File) -> std::io::Result<BackLines> {
        let len = file.seek(SeekFrom::End(0))?;
        Ok(BackLines {
            file,
            pos: len,
            buf: Vec::new(),
            stopped: false,
        })
    }

    /// The next older line and its file offset, without its newline.
    fn next(&mut self, budget: &mut u64) -> std::io::Result<Option<(u64, Vec<u8>)>> {
        loop {
            if self.buf.last() == Some(&b'\n') {
                // Search for the newline that ends the line before the last one.
                let body = &self.buf[..self.buf.len() - 1];
                if let Some(nl) = body.iter().rposition(|b| *b == b'\n') {
                    let line = body[nl + 1..].to_vec();
                    self.buf.truncate(nl + 1);
                    return Ok(Some((self.pos + nl as u64 + 1, line)));
                }
            } else if let Some(nl) = self.buf.iter().rposition(|b| *b == b'\n') {
                // A last line without its newline.
                let line = self.buf[nl + 1..].to_vec();
                self.buf.truncate(nl + 1);
                return Ok(Some((self.pos + nl as u64 + 1, line)));
            }
            if self.pos == 0 {
                if self.buf.is_empty() {
                    return Ok(None);
                }
                let mut line = std::mem::take(&mut self.buf);
                if line.last() == Some(&b'\n') {
                    line.pop();
                }
                return Ok(Some((0, line)));
            }
            if *budget == 0 {
                self.stopped = true;
                return Ok(None);
            }
            let want = (CHUNK as u64).min(self.pos).min(*budget);
            *budget -= want;
            self.pos -= want;
            self.file.seek(SeekFrom::Start(self.pos))?;
            let mut chunk = vec![0u8; want as usize];
            self.file.read_exact(&mut chunk)?;
            chunk.extend_from_slice(&self.buf);
            self.buf = chunk;
        }
    }
}

/// Reads a reftable repository's reflogs through git: `reflog list`, then one `log -g`.
async fn scan_with_git(
    ctx: &CallCtx,
    path: &str,
    window: Window,
) -> Result<(Vec<Raw>, u64, bool), String> {
    let repo = repo::open(&ctx.config, "repoPaths", path, &ctx.cancel)
        .await
        .map_err(reason)?;
    let git = Git::new(&repo, &ctx.cancel).with_timeout(crate::process::DEFAULT_TIMEOUT * 3);
    let listed = git
        .cmd(["reflog", "list"])
        .capture(4 * 1024 * 1024)
        .await
        .map_err(|e| ToolError::from(e).message)?;
    let mut refs: Vec<String> = String::from_utf8_lossy(&listed.sink.bytes)
        .lines()
        .filter(|r| {
            (*r == "HEAD" && window.scope.head())
                || (r.starts_with("refs/heads/") && window.scope.branches())
        })
        .map(str::to_owned)
        .collect();
    refs.sort_by_key(|r| (r != "HEAD", r.clone()));
    refs.truncate(MAX_BRANCH_LOGS);
    if refs.is_empty() {
        return Ok((Vec::new(), 0, false));
    }
    let walked = git
        .cmd([
            "log",
            "-g",
            "-z",
            "--date=raw",
            &reflog_walk::format(),
            "--end-of-options",
        ])
        .args(refs.iter())
        .stream(Records::new(Walk::new(MAX_WALK_ENTRIES)))
        .await
        .map_err(|e| ToolError::from(e).message)?;
    let walk = walked
        .sink
        .finish(!walked.stopped_early)
        .map_err(|e| format!("reflog: {e}"))?;
    let rank: HashMap<&str, usize> = refs
        .iter()
        .enumerate()
        .map(|(i, r)| (r.as_str(), i))
        .collect();
    // Within one ref entries come newest first, so an entry's old value is the new value
    // of the next entry of the same ref.
    let mut per_ref: HashMap<String, Vec<reflog_walk::Entry>> = HashMap::new();
    for entry in walk.entries {
        per_ref
            .entry(entry.refname.clone())
            .or_default()
            .push(entry);
    }
    let mut events = Vec::new();
    let mut total = 0;
    for (name, entries) in per_ref {
        let olds: Vec<Option<Oid>> = entries
            .iter()
            .skip(1)
            .map(|e| Some(e.new.clone()))
            .chain(std::iter::once(None))
            .collect();
        let mut seq = 0;
        for (entry, old) in entries.into_iter().zip(olds) {
            let ms = entry.time.saturating_mul(1000);
            if !window.contains(ms) {
                continue;
            }
            total += 1;
            if seq < window.keep {
                events.push(Raw {
                    ref_rank: rank.get(name.as_str()).copied().unwrap_or(usize::MAX),
                    ref_name: name.clone(),
                    seq,
                    old: old.filter(|o| !o.is_zero()),
                    new: (!entry.new.is_zero()).then_some(entry.new),
                    time: entry.time,
                    tz: entry.tz,
                    name: entry.name,
                    email: entry.email,
                    message: entry.message,
                });
            }
            seq += 1;
        }
    }
    Ok((events, total, walk.truncated))
}

/// What a move's action says about `rewrote` before looking at the commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Known {
    /// Decided by the action.
    Is(bool),
    /// Needs an ancestry check; the value is the fallback when none can be run.
    Check(bool),
}

/// The action of a reflog message, and what it tells about `rewrote`.
fn classify(message: &str) -> (Action, Known) {
    let starts = |p: &str| message.starts_with(p);
    if starts("commit (amend)") {
        (Action::Amend, Known::Is(true))
    } else if starts("commit (merge)") {
        (Action::Merge, Known::Is(false))
    } else if starts("commit") {
        (Action::Commit, Known::Is(false))
    } else if starts("reset") {
        (Action::Reset, Known::Check(true))
    } else if starts("rebase") {
        // A pick puts a new commit on top of HEAD; everything else may replace history.
        if message.contains("(pick)") {
            (Action::Rebase, Known::Is(false))
        } else {
            (Action::Rebase, Known::Check(true))
        }
    } else if starts("merge") {
        (Action::Merge, Known::Is(false))
    } else if starts("checkout") || starts("switch") {
        (Action::Checkout, Known::Is(false))
    } else if starts("pull") {
        (Action::Pull, Known::Check(message.contains("rebase")))
    } else if starts("branch") || starts("Branch") {
        (Action::Branch, Known::Check(message.contains("Reset")))
    } else if starts("cherry-pick") {
        (Action::CherryPick, Known::Is(false))
    } else if starts("revert") {
        (Action::Revert, Known::Is(false))
    } else {
        (Action::Other, Known::Check(false))
    }
}

/// `rewrote` for each chosen event, and how many came from the action alone.
async fn rewrites(ctx: &CallCtx, scans: &[Scan], chosen: &[(usize, Raw)]) -> (Vec<bool>, u64) {
    let mut answers: Vec<Known> = Vec::with_capacity(chosen.len());
    let mut checks: Vec<(usize, Oid, Oid)> = Vec::new();
    for (r, raw) in chosen {
        let known = match (&raw.old, &raw.new) {
            (Some(old), Some(new)) if old != new => {
                classify(&String::from_utf8_lossy(&raw.message)).1
            }
            // Creation, deletion or no move at all drops nothing.
            _ => Known::Is(false),
        };
        if let (Known::Check(_), Some(old), Some(new)) = (known, &raw.old, &raw.new) {
            let key = (*r, old.clone(), new.clone());
            if !checks.contains(&key) && checks.len() < MAX_ANCESTRY_CHECKS {
                checks.push(key);
            }
        }
        answers.push(known);
    }
    // Each repository is opened the one checked way (driver disarming included) before
    // any command runs in it; one that cannot be opened leaves its checks undecided.
    let mut tops: Vec<(usize, PathBuf)> = Vec::new();
    for (r, ..) in &checks {
        if let Some(layout) = &scans[*r].layout
            && !tops.iter().any(|(seen, _)| seen == r)
        {
            tops.push((*r, layout.top.clone()));
        }
    }
    let (config, cancel) = (Arc::clone(&ctx.config), ctx.cancel.clone());
    let opened = bounded(tops, PARALLEL_CHECKS, move |(r, top)| {
        let (config, cancel) = (Arc::clone(&config), cancel.clone());
        async move {
            let repo = repo::open_path(&config, "repoPaths", &top, &cancel).await;
            repo.ok().map(|repo| (r, repo))
        }
    })
    .await;
    let repos: HashMap<usize, Arc<Repo>> = opened.into_iter().flatten().flatten().collect();
    let jobs: Vec<(usize, Oid, Oid, Option<Arc<Repo>>)> = checks
        .iter()
        .map(|(r, o, n)| (*r, o.clone(), n.clone(), repos.get(r).cloned()))
        .collect();
    let cancel = ctx.cancel.clone();
    let results = bounded(jobs, PARALLEL_CHECKS, move |(_, old, new, repo)| {
        let cancel = cancel.clone();
        async move {
            let repo = repo?;
            let git = Git::new(&repo, &cancel);
            let done = git
                .cmd(["merge-base", "--is-ancestor", "--end-of-options"])
                .args([old.as_str(), new.as_str()])
                .capture_allowing(1024, &[0, 1])
                .await
                .ok()?;
            match done.code {
                Some(0) => Some(false),
                Some(1) => Some(true),
                _ => None,
            }
        }
    })
    .await;
    let decided: HashMap<(usize, Oid, Oid), bool> = checks
        .into_iter()
        .zip(results)
        .filter_map(|(key, result)| Some((key, result??)))
        .collect();
    let mut unchecked = 0;
    let values = answers
        .into_iter()
        .zip(chosen)
        .map(|(known, (r, raw))| match known {
            Known::Is(v) => v,
            Known::Check(fallback) => {
                let decision = match (&raw.old, &raw.new) {
                    (Some(old), Some(new)) => decided.get(&(*r, old.clone(), new.clone())).copied(),
                    _ => None,
                };
                decision.unwrap_or_else(|| {
                    unchecked += 1;
                    fallback
                })
            }
        })
        .collect();
    (values, unchecked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn moments() {
        let ok = |v: Value| parse_moment(&v).unwrap();
        assert_eq!(ok(json!("2026-01-01T00:00:00Z")), 1_767_225_600_000);
        assert_eq!(ok(json!("2026-01-01T01:00:00+01:00")), 1_767_225_600_000);
        assert_eq!(ok(json!("2026-01-01")), 1_767_225_600_000);
        assert_eq!(ok(json!(1_767_225_600_000_i64)), 1_767_225_600_000);
        for bad in [
            json!("2026-01-01T00:00:00"),
            json!("yesterday"),
            json!(-1),
            json!(1.5),
            json!(i64::MAX),
            json!(true),
        ] {
            assert!(parse_moment(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn actions_from_real_messages() {
        let cases = [
            "commit (initial): first",
            "commit: second",
            "commit (amend): second, amended",
            "commit (merge): Merge branch 'topic'",
            "reset: moving to HEAD~1",
            "rebase (start): checkout main",
            "rebase (pick): add feature",
            "rebase (finish): returning to refs/heads/topic",
            "rebase (finish): refs/heads/topic onto 4f3a614c06acda773c323ef3e208f09782f8b101",
            "merge topic: Fast-forward",
            "checkout: moving from main to topic",
            "pull: Fast-forward",
            "pull --rebase (finish): refs/heads/main onto 4f3a614c",
            "branch: Created from HEAD",
            "branch: Reset to main",
            "Branch: renamed refs/heads/a to refs/heads/b",
            "cherry-pick: fix",
            "revert: Revert \"fix\"",
            "update by push",
            "",
        ];
        let shown: Vec<String> = cases
            .iter()
            .map(|m| {
                let (action, known) = classify(m);
                format!("{m:?} -> {action:?} {known:?}")
            })
            .collect();
        insta::assert_debug_snapshot!(shown, @r#"
        [
            "\"commit (initial): first\" -> Commit Is(false)",
            "\"commit: second\" -> Commit Is(false)",
            "\"commit (amend): second, amended\" -> Amend Is(true)",
            "\"commit (merge): Merge branch 'topic'\" -> Merge Is(false)",
            "\"reset: moving to HEAD~1\" -> Reset Check(true)",
            "\"rebase (start): checkout main\" -> Rebase Check(true)",
            "\"rebase (pick): add feature\" -> Rebase Is(false)",
            "\"rebase (finish): returning to refs/heads/topic\" -> Rebase Check(true)",
            "\"rebase (finish): refs/heads/topic onto 4f3a614c06acda773c323ef3e208f09782f8b101\" -> Rebase Check(true)",
            "\"merge topic: Fast-forward\" -> Merge Is(false)",
            "\"checkout: moving from main to topic\" -> Checkout Is(false)",
            "\"pull: Fast-forward\" -> Pull Check(false)",
            "\"pull --rebase (finish): refs/heads/main onto 4f3a614c\" -> Pull Check(true)",
            "\"branch: Created from HEAD\" -> Branch Check(false)",
            "\"branch: Reset to main\" -> Branch Check(true)",
            "\"Branch: renamed refs/heads/a to refs/heads/b\" -> Branch Check(false)",
            "\"cherry-pick: fix\" -> CherryPick Is(false)",
            "\"revert: Revert \\\"fix\\\"\" -> Revert Is(false)",
            "\"update by push\" -> Other Check(false)",
            "\"\" -> Other Check(false)",
        ]
        "#);
    }

    #[test]
    fn lines_are_read_from_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let mut text = String::new();
        for i in 0..5000 {
            text.push_str(&format!("line {i}\n"));
        }
        text.push_str("last without newline");
        std::fs::write(&path, &text).unwrap();
        let mut lines = BackLines::new(File::open(&path).unwrap()).unwrap();
        let mut budget = u64::MAX;
        let mut got = Vec::new();
        while let Some((offset, line)) = lines.next(&mut budget).unwrap() {
            assert!(text.as_bytes()[offset as usize..].starts_with(&line));
            got.push(String::from_utf8(line).unwrap());
        }
        assert_eq!(got.len(), 5001);
        assert_eq!(got[0], "last without newline");
        assert_eq!(got[1], "line 4999");
        assert_eq!(got[5000], "line 0");

        let mut small = 100;
        let mut lines = BackLines::new(File::open(&path).unwrap()).unwrap();
        let mut count = 0;
        while lines.next(&mut small).unwrap().is_some() {
            count += 1;
        }
        assert!(lines.stopped);
        assert!(count < 20);
    }
}
