//! `worktree.list`: the main worktree and every linked one.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Toolset;
use crate::error::ToolError;
use crate::git::{Git, Oid, repo, worktree};
use crate::model::{PathText, opt_name_text};
use crate::tools::{Annotations, CallCtx, Local, Tool};

/// `worktree.list`: the main worktree and every linked one.
pub struct WorktreeList;

/// Most worktrees listed.
const MAX_WORKTREES: usize = 1000;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListInput {
    /// Absolute path of the repository (any of its worktrees, or a bare repository).
    pub repo_path: String,
    /// FluxGit workspace id; accepted for compatibility and not needed locally.
    #[serde(default)]
    pub repo_id: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListData {
    pub total: u64,
    /// The main worktree first, then linked ones.
    pub worktrees: Vec<WorktreeEntry>,
    pub worktrees_truncated: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorktreeEntry {
    #[serde(flatten)]
    pub path: PathText,
    pub is_main: bool,
    /// The worktree `repoPath` points into.
    pub is_current: bool,
    /// Checked-out branch name (without `refs/heads/`); null when detached or bare.
    /// Not valid UTF-8: shown with U+FFFD, and `branchBytesB64` holds the exact name.
    pub branch: Option<String>,
    /// Base64 of the branch name, present only when it is not valid UTF-8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch_bytes_b64: Option<String>,
    pub detached: bool,
    /// Full commit id of its HEAD; null when unborn or bare.
    pub head_oid: Option<Oid>,
    pub unborn: bool,
    pub locked: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locked_reason: Option<String>,
    pub prunable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prunable_reason: Option<String>,
    pub bare: bool,
}

fn reason(raw: Option<&Vec<u8>>) -> Option<String> {
    raw.filter(|r| !r.is_empty())
        .map(|r| String::from_utf8_lossy(r).into_owned())
}

impl Tool for WorktreeList {
    type Input = ListInput;
    type Output = Local<ListData>;

    const NAME: &'static str = "worktree.list";
    const TITLE: &'static str = "Worktrees";
    const DESCRIPTION: &'static str = "All worktrees, main first: path, branch or detached, HEAD, locked and prunable with reasons, and which one repoPath is in. Bare repositories too.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: ListInput) -> Result<Self::Output, ToolError> {
        let repo = repo::open(&ctx.config, "repoPath", &input.repo_path, &ctx.cancel).await?;
        let git = Git::new(&repo, &ctx.cancel);
        let parsed = worktree::list(&git, MAX_WORKTREES).await?;
        let current = std::fs::canonicalize(&repo.path).unwrap_or_else(|_| repo.path.clone());
        let worktrees: Vec<WorktreeEntry> = parsed
            .worktrees
            .into_iter()
            .enumerate()
            .map(|(i, wt)| {
                use std::os::unix::ffi::OsStrExt;
                let path = std::path::Path::new(std::ffi::OsStr::from_bytes(&wt.path));
                let is_current = std::fs::canonicalize(path).is_ok_and(|p| p == current);
                let unborn = wt.head.as_ref().is_some_and(Oid::is_zero);
                let (branch, branch_bytes_b64) = opt_name_text(
                    wt.branch
                        .as_deref()
                        .map(|b| b.strip_prefix(b"refs/heads/").unwrap_or(b)),
                );
                WorktreeEntry {
                    path: PathText::from_bytes(&wt.path),
                    is_main: i == 0,
                    is_current,
                    branch,
                    branch_bytes_b64,
                    detached: wt.detached,
                    head_oid: wt.head.filter(|h| !h.is_zero()),
                    unborn,
                    locked: wt.locked.is_some(),
                    locked_reason: reason(wt.locked.as_ref()),
                    prunable: wt.prunable.is_some(),
                    prunable_reason: reason(wt.prunable.as_ref()),
                    bare: wt.bare,
                }
            })
            .collect();
        let data = ListData {
            total: parsed.total,
            worktrees_truncated: parsed.total > worktrees.len() as u64,
            worktrees,
        };
        Ok(Local::new::<Self>(&repo, data))
    }
}
