//! OpenAI Codex CLI: dated rollouts, rollouts held open, and the thread index.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{
    MAX_FILES_PER_AGENT, PatchHeaders, SQL_ROWS, Summary, deadline_outcome, epoch_ms, newest_files,
    open_sqlite, sql_reason, summarize,
};
use crate::presence::finding::{Finding, MAX_FILES, Outcome, Scope, Source, normalize};
use crate::presence::fsread;
use crate::presence::procscan::Snapshot;

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
    let Some(root) = scope
        .dirs
        .codex_home
        .clone()
        .or_else(|| Some(scope.home.as_ref()?.join(".codex")))
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
        let s = summarize(&path, &scope.meter, || read_rollout(&path, scope));
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

/// What one rollout file says: its working directory, branch, last tool and patched paths.
fn read_rollout(path: &Path, scope: &Scope) -> Summary {
    let mut s = Summary::default();
    let mut meta_cwd: Option<PathBuf> = None;
    if let Some(head) = fsread::head_line(path, fsread::TAIL_STEP, &scope.meter)
        && let Ok(line) = serde_json::from_slice::<CodexLine>(&head)
        && line.kind.as_deref() == Some("session_meta")
        && let Some(p) = line.payload
    {
        meta_cwd = p.cwd;
        s.branch = p.git.and_then(|g| g.branch).filter(|b| !b.is_empty());
    }
    let mut turn_cwd: Option<PathBuf> = None;
    let mut pending: Vec<String> = Vec::new();
    fsread::tail_lines(path, &scope.meter, |line| {
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
    let sqlite_home = scope
        .dirs
        .codex_sqlite_home
        .clone()
        .unwrap_or_else(|| root.to_path_buf());
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
