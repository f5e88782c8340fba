//! Agents that run inside an editor's extension host (Cline, Roo Code and its forks,
//! Continue): no process of their own, so their stores are the only sign.
//!
//! Cline's `taskHistory.json` and Continue's `sessions.json` embed prompts and titles;
//! they are deserialised into structs without those keys, so the values are skipped
//! during tokenisation and never kept. Conversation files are used for their mtime only.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::editors::{file_uri_path, user_dirs};
use super::finding::{Finding, MAX_FILES, Outcome, Scope, Source};
use super::fsread;
use super::procscan::Snapshot;

/// Largest index file parsed (they hold every prompt of every task).
const INDEX_CAP: u64 = 16 * 1024 * 1024;
/// Tasks or sessions looked at per store.
const MAX_TASKS: usize = 20;

/// Extension ids of Cline and the forks that keep its task layout.
const CLINE_FAMILY: &[(&str, &str)] = &[
    ("cline", "saoudrizwan.claude-dev"),
    ("roo-code", "rooveterinaryinc.roo-cline"),
    ("roo-code", "zoocodeorganization.zoo-code"),
    ("kilo-code", "kilocode.kilo-code"),
];

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct HistoryItem {
    id: Option<String>,
    ts: Option<u64>,
    cwd_on_task_initialization: Option<String>,
    workspace_root_on_task_initialization: Option<String>,
    /// Roo's `history_item.json`.
    workspace: Option<String>,
}

#[derive(Deserialize)]
struct TaskMetadata {
    #[serde(default)]
    files_in_context: Vec<FileInContext>,
}

#[derive(Deserialize)]
struct FileInContext {
    path: Option<String>,
}

pub fn cline(scope: &Scope, _snap: &Snapshot) -> Outcome {
    let Some(home) = scope.home.as_ref() else {
        return Outcome::default();
    };
    let mut findings = Vec::new();
    for user in user_dirs(home) {
        for (agent, extension) in CLINE_FAMILY {
            if scope.meter.spent() {
                break;
            }
            let base = user.join("globalStorage").join(extension);
            if std::fs::symlink_metadata(&base).is_err() {
                continue;
            }
            findings.extend(cline_tasks(scope, agent, &base));
        }
    }
    Outcome {
        unavailable: scope.meter.stop_reason(),
        findings,
    }
}

fn cline_tasks(scope: &Scope, agent: &str, base: &Path) -> Vec<Finding> {
    let mut items: Vec<HistoryItem> = fsread::read_small_metered(
        &base.join("state/taskHistory.json"),
        INDEX_CAP,
        &scope.meter,
    )
    .and_then(|b| serde_json::from_slice(&b).ok())
    .unwrap_or_default();
    if items.is_empty() {
        // Roo and newer layouts: one `history_item.json` per task directory.
        let Ok(tasks) = std::fs::read_dir(base.join("tasks")) else {
            return Vec::new();
        };
        let mut dirs: Vec<(u64, PathBuf)> = tasks
            .flatten()
            .take(4096)
            .filter_map(|e| {
                let meta = std::fs::symlink_metadata(e.path()).ok()?;
                let mtime = fsread::meta_mtime_ms(&meta);
                (meta.is_dir() && scope.recent(mtime)).then(|| (mtime, e.path()))
            })
            .collect();
        dirs.sort_by_key(|d| std::cmp::Reverse(d.0));
        for (_, dir) in dirs.into_iter().take(MAX_TASKS) {
            if let Some(item) = fsread::read_small_metered(
                &dir.join("history_item.json"),
                1024 * 1024,
                &scope.meter,
            )
            .and_then(|b| serde_json::from_slice::<HistoryItem>(&b).ok())
            {
                items.push(item);
            }
        }
    }
    items.sort_by_key(|i| std::cmp::Reverse(i.ts));
    let mut findings = Vec::new();
    for item in items.into_iter().take(MAX_TASKS * 4) {
        let Some(id) = item.id.filter(|i| is_plain_name(i)) else {
            continue;
        };
        let cwd = [
            item.cwd_on_task_initialization,
            item.workspace_root_on_task_initialization,
            item.workspace,
        ]
        .into_iter()
        .flatten()
        .map(PathBuf::from)
        .find(|p| p.is_absolute());
        let Some(cwd) = cwd else { continue };
        let Some(worktree) = scope.locate(&cwd) else {
            continue;
        };
        let task = base.join("tasks").join(&id);
        // The conversation files change with every message; only their mtimes are used.
        let activity = ["ui_messages.json", "api_conversation_history.json"]
            .iter()
            .filter_map(|f| fsread::mtime_ms(&task.join(f)))
            .chain(item.ts)
            .max();
        if !activity.is_some_and(|t| scope.recent(t)) {
            continue;
        }
        let mut files = Vec::new();
        if let Some(meta) = fsread::read_small_metered(
            &task.join("task_metadata.json"),
            4 * 1024 * 1024,
            &scope.meter,
        )
        .and_then(|b| serde_json::from_slice::<TaskMetadata>(&b).ok())
        {
            // Newest entries are appended last.
            for entry in meta.files_in_context.iter().rev() {
                if let Some(rel) = entry
                    .path
                    .as_deref()
                    .and_then(|p| scope.relative(Some(&cwd), p))
                    && !files.contains(&rel)
                    && files.len() < MAX_FILES
                {
                    files.push(rel);
                }
            }
        }
        findings.push(Finding {
            agent: agent.into(),
            source: Some(Source::Session),
            session: Some(format!("{agent}:{id}")),
            worktree: Some(worktree),
            files,
            last_activity_ms: activity,
            ..Finding::default()
        });
        if findings.len() >= MAX_TASKS {
            break;
        }
    }
    findings
}

/// A store-chosen id used as a file name: no separators, no dot-names.
fn is_plain_name(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ContinueSession {
    session_id: Option<String>,
    workspace_directory: Option<String>,
}

pub fn continue_dev(scope: &Scope, _snap: &Snapshot) -> Outcome {
    let root = scope
        .dirs
        .continue_global_dir
        .clone()
        .or_else(|| Some(scope.home.as_ref()?.join(".continue")));
    let Some(sessions) = root.map(|r| r.join("sessions")) else {
        return Outcome::default();
    };
    let Some(list) =
        fsread::read_small_metered(&sessions.join("sessions.json"), INDEX_CAP, &scope.meter)
            .and_then(|b| serde_json::from_slice::<Vec<ContinueSession>>(&b).ok())
    else {
        return Outcome::default();
    };
    let mut findings = Vec::new();
    for session in list {
        let Some(id) = session.session_id.filter(|i| is_plain_name(i)) else {
            continue;
        };
        let dir = session.workspace_directory.as_deref().and_then(|w| {
            file_uri_path(w).or_else(|| Some(PathBuf::from(w)).filter(|p| p.is_absolute()))
        });
        let Some(worktree) = dir.as_deref().and_then(|d| scope.locate(d)) else {
            continue;
        };
        // The session file holds the whole conversation: its mtime only.
        let Some(mtime) = fsread::mtime_ms(&sessions.join(format!("{id}.json"))) else {
            continue;
        };
        if !scope.recent(mtime) {
            continue;
        }
        findings.push(Finding {
            agent: "continue".into(),
            source: Some(Source::Session),
            session: Some(format!("continue:{id}")),
            worktree: Some(worktree),
            last_activity_ms: Some(mtime),
            ..Finding::default()
        });
        if findings.len() >= MAX_TASKS {
            break;
        }
    }
    Outcome {
        unavailable: scope.meter.stop_reason(),
        findings,
    }
}
