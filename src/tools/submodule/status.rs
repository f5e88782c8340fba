//! `submodule.status`: every submodule at any depth, with the commit its parent records,
//! the commit checked out, and whether it drifted or has local changes.
//!
//! Declarations come from `.gitmodules` read with `git config --file` (no program
//! runs), recorded commits from the parent's index (gitlinks), the rest from each
//! initialized submodule itself. Each submodule is opened as a repository of its own, so
//! its `status` runs with the same disarmed configuration as any other read (a parent's
//! `status` would recurse into submodules with their own filter drivers armed).
//! Submodules of one parent are inspected concurrently, a few at a time.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::task::JoinSet;

use crate::config::{Config, Toolset};
use crate::error::ToolError;
use crate::git::status::{IgnoreSubmodules, StatusQuery};
use crate::git::{Git, Oid, Repo, RepoRelPath, gitmodules, ls_files, remote, repo};
use crate::model::{PathText, opt_name_text};
use crate::parse::ls_files_unmerged::GITLINK;
use crate::parse::submodule::Gitmodules;
use crate::process::CancellationToken;
use crate::tools::{Annotations, CallCtx, Local, Tool};

/// Submodules reported at most.
const MAX_SUBMODULES: usize = 200;
/// Nesting followed at most (top-level submodules are depth 1).
const MAX_DEPTH: u32 = 5;
/// Submodules inspected at once.
const CONCURRENCY: usize = 4;
/// Largest `.gitmodules` we read.
const MAX_GITMODULES: u64 = 1024 * 1024;

/// `submodule.status`.
pub struct Status;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubmoduleInput {
    /// Absolute path of the repository (a working tree).
    pub repo_path: String,
    /// FluxGit workspace id; accepted for compatibility and not needed locally.
    #[serde(default)]
    pub repo_id: Option<String>,
    /// Only submodules at or under this repository-relative path.
    #[serde(default)]
    pub path: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubmoduleData {
    pub submodules: Vec<Submodule>,
    /// Number found (after the `path` filter), including those past the cap.
    pub total: u64,
    pub submodules_truncated: bool,
    pub max_depth: u32,
    /// Counts by state.
    pub drifted: u64,
    pub dirty: u64,
    pub uninitialized: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Submodule {
    /// Path from the top of the repository.
    #[serde(flatten)]
    pub path: PathText,
    /// The repository that records it, relative to the top; empty for the top itself.
    pub parent_path: String,
    /// Path inside its parent.
    pub relative_path: String,
    /// Name in the parent's `.gitmodules`; null when undeclared. Not valid UTF-8: shown
    /// with U+FFFD, and `nameBytesB64` holds the exact name.
    pub name: Option<String>,
    /// Base64 of the name, present only when it is not valid UTF-8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_bytes_b64: Option<String>,
    /// URL from `.gitmodules`, with any credentials replaced by `***`.
    pub url: Option<String>,
    /// The commit the parent's index records (null for a conflicted pointer).
    pub recorded_oid: Option<String>,
    /// The commit checked out in the submodule; null when not initialized.
    pub checked_out_oid: Option<String>,
    /// `clean`, `drifted` (checked out ≠ recorded), `dirty` (local changes),
    /// `uninitialized`, `missing` (directory gone) or `conflict` (unmerged pointer).
    pub state: &'static str,
    /// Tracked changes or untracked files inside the submodule.
    pub dirty: bool,
    /// 1 for a submodule of the top repository.
    pub depth: u32,
}

impl Tool for Status {
    type Input = SubmoduleInput;
    type Output = Local<SubmoduleData>;

    const NAME: &'static str = "submodule.status";
    const TITLE: &'static str = "Submodule status";
    const DESCRIPTION: &'static str = "Every submodule at any depth: path, URL, state (clean, drifted, dirty, uninitialized, missing, conflict), recordedOid and checkedOutOid.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: SubmoduleInput) -> Result<Self::Output, ToolError> {
        let filter = RepoRelPath::parse_opt("path", input.path.as_deref())?;
        let top = repo::open(&ctx.config, "repoPath", &input.repo_path, &ctx.cancel).await?;
        top.require_worktree()?;
        let mut found: Vec<Submodule> = Vec::new();
        let mut total = 0u64;
        let mut level = vec![(Arc::clone(&top), String::new())];
        for depth in 1..=MAX_DEPTH {
            let mut next = Vec::new();
            for (parent, prefix) in level {
                let subs = list(&ctx, &parent, &prefix, depth).await?;
                for (sub, opened) in subs {
                    let wanted = filter
                        .as_ref()
                        .is_none_or(|f| under(&sub.path.path, f.as_str()));
                    let on_the_way = filter
                        .as_ref()
                        .is_none_or(|f| wanted || under(f.as_str(), &sub.path.path));
                    if let Some(child) = opened.filter(|_| on_the_way) {
                        next.push((child, sub.path.path.clone()));
                    }
                    if wanted {
                        total += 1;
                        if found.len() < MAX_SUBMODULES {
                            found.push(sub);
                        }
                    }
                }
            }
            // Past the cap, nothing deeper could be shown.
            if next.is_empty() || total >= MAX_SUBMODULES as u64 {
                break;
            }
            level = next;
        }
        let count = |state: &str| found.iter().filter(|s| s.state == state).count() as u64;
        let data = SubmoduleData {
            total,
            submodules_truncated: total > found.len() as u64,
            max_depth: MAX_DEPTH,
            drifted: count("drifted"),
            dirty: found.iter().filter(|s| s.dirty).count() as u64,
            uninitialized: count("uninitialized"),
            submodules: found,
        };
        Ok(Local::new::<Self>(&top, data))
    }
}

/// True when `path` is `base` or inside it.
fn under(path: &str, base: &str) -> bool {
    path == base
        || path
            .strip_prefix(base)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The submodules `parent` records, each with the opened repository when initialized.
async fn list(
    ctx: &CallCtx,
    parent: &Repo,
    prefix: &str,
    depth: u32,
) -> Result<Vec<(Submodule, Option<Arc<Repo>>)>, ToolError> {
    let worktree = parent.require_worktree()?.to_path_buf();
    let git = Git::new(parent, &ctx.cancel);
    let (declared, index) = tokio::join!(
        gitmodules(&git, &worktree),
        ls_files::gitlinks(&git, MAX_SUBMODULES)
    );
    let (declared, index) = (declared?, index?);

    let mut entries: Vec<(Vec<u8>, Option<Oid>)> = index
        .merged
        .into_iter()
        .map(|e| (e.path, Some(e.oid)))
        .collect();
    entries.extend(
        index
            .unmerged
            .into_iter()
            .filter(|u| u.stages.iter().flatten().any(|(mode, _)| *mode == GITLINK))
            .map(|u| (u.path, None)),
    );
    entries.sort();

    let limit = Arc::new(tokio::sync::Semaphore::new(CONCURRENCY));
    let mut tasks = JoinSet::new();
    for (i, (rel, recorded)) in entries.iter().enumerate() {
        let dir = worktree.join(std::ffi::OsStr::from_bytes(rel));
        let (config, cancel, limit) = (
            Arc::clone(&ctx.config),
            ctx.cancel.clone(),
            Arc::clone(&limit),
        );
        let conflicted = recorded.is_none();
        tasks.spawn(async move {
            let _permit = limit.acquire_owned().await;
            (i, inspect(&config, &cancel, dir, conflicted).await)
        });
    }
    let mut inspected: Vec<Option<Inspection>> = (0..entries.len()).map(|_| None).collect();
    while let Some(joined) = tasks.join_next().await {
        let (i, result) = joined.map_err(|e| ToolError::internal(e.to_string()))?;
        inspected[i] = Some(result?);
    }

    let mut out = Vec::with_capacity(entries.len());
    for ((rel, recorded), seen) in entries.into_iter().zip(inspected) {
        let seen =
            seen.ok_or_else(|| ToolError::internal("a submodule inspection did not report"))?;
        let decl = declared.as_ref().and_then(|d| d.by_path(&rel));
        let relative = String::from_utf8_lossy(&rel).into_owned();
        let mut full = prefix.as_bytes().to_vec();
        if !full.is_empty() {
            full.push(b'/');
        }
        full.extend_from_slice(&rel);
        let state = match (&recorded, &seen) {
            (None, _) => "conflict",
            (_, Inspection::Missing) => "missing",
            (_, Inspection::Uninitialized) => "uninitialized",
            (Some(r), Inspection::Open { head, .. }) if head.as_ref() != Some(r) => "drifted",
            (_, Inspection::Open { dirty: true, .. }) => "dirty",
            _ => "clean",
        };
        let (name, name_bytes_b64) = opt_name_text(decl.map(|d| d.name.as_slice()));
        let (checked_out, dirty, repo) = match seen {
            Inspection::Open { head, dirty, repo } => (head, dirty, Some(repo)),
            _ => (None, false, None),
        };
        out.push((
            Submodule {
                path: PathText::from_bytes(&full),
                parent_path: prefix.to_owned(),
                relative_path: relative,
                name,
                name_bytes_b64,
                url: decl
                    .and_then(|d| d.url.as_deref())
                    .map(|u| remote::redact_url(u).0),
                recorded_oid: recorded.map(|o| o.to_string()),
                checked_out_oid: checked_out.map(|o| o.to_string()),
                state,
                dirty,
                depth,
            },
            repo,
        ));
    }
    Ok(out)
}

/// `.gitmodules` of a working tree, when it is a regular file.
async fn gitmodules(git: &Git<'_>, worktree: &Path) -> Result<Option<Gitmodules>, ToolError> {
    let file = worktree.join(".gitmodules");
    match std::fs::symlink_metadata(&file) {
        Ok(meta) if meta.is_file() && meta.len() <= MAX_GITMODULES => {}
        _ => return Ok(None),
    }
    // No submodule section or a file git cannot parse: nothing is declared.
    Ok(gitmodules::declared(git, &file, MAX_SUBMODULES * 4).await?)
}

enum Inspection {
    Missing,
    Uninitialized,
    Open {
        head: Option<Oid>,
        dirty: bool,
        repo: Arc<Repo>,
    },
}

async fn inspect(
    config: &Config,
    cancel: &CancellationToken,
    dir: PathBuf,
    conflicted: bool,
) -> Result<Inspection, ToolError> {
    if !dir.is_dir() {
        return Ok(if dir.exists() || conflicted {
            Inspection::Uninitialized
        } else {
            Inspection::Missing
        });
    }
    // Without its own `.git`, the directory belongs to the parent's working tree.
    if std::fs::symlink_metadata(dir.join(".git")).is_err() {
        return Ok(Inspection::Uninitialized);
    }
    let Ok(sub) = repo::open_path(config, "path", &dir, cancel).await else {
        return Ok(Inspection::Uninitialized);
    };
    let canonical = std::fs::canonicalize(&dir).unwrap_or(dir);
    if sub.worktree.as_deref() != Some(canonical.as_path()) {
        return Ok(Inspection::Uninitialized);
    }
    let git = Git::new(&sub, cancel);
    let status = StatusQuery {
        ignore_submodules: Some(IgnoreSubmodules::Dirty),
        ..StatusQuery::default()
    };
    let (head, status) = tokio::join!(git.head(), status.read(&git, 0));
    let status = status?;
    Ok(Inspection::Open {
        head: head?,
        dirty: status.counts.entries > 0,
        repo: sub,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_containment() {
        assert!(under("libs/a", "libs"));
        assert!(under("libs", "libs"));
        assert!(!under("libsx", "libs"));
    }
}
