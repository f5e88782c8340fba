//! `worktree.changes`: the working tree's changed paths in four capped lists.

mod lists;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Toolset;
use crate::error::ToolError;
use crate::git::status::StatusQuery;
use crate::git::{Git, RepoRelPath, repo};
use crate::model::{OrigPathText, PathText};
use crate::tools::input::Bounded;
use crate::tools::{Annotations, CallCtx, Local, Tool};
use lists::{List, Sorter};

/// `worktree.changes`: changed paths split into staged, unstaged, untracked, conflicted.
pub struct Changes;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChangesInput {
    /// Absolute path of the repository (any directory inside a working tree works).
    pub repo_path: String,
    /// FluxGit workspace id; accepted for compatibility and not needed locally.
    #[serde(default)]
    pub repo_id: Option<String>,
    /// Only paths under this repository-relative path.
    #[serde(default)]
    pub path: Option<String>,
    /// Most entries kept in each list
    #[serde(default)]
    pub max_per_list: Bounded<1, 5000, 500>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangesData {
    /// Changes in the index relative to HEAD.
    pub staged: Vec<ChangeEntry>,
    pub staged_truncated: bool,
    pub staged_total: u64,
    /// Changes in the working tree relative to the index.
    pub unstaged: Vec<ChangeEntry>,
    pub unstaged_truncated: bool,
    pub unstaged_total: u64,
    pub untracked: Vec<ChangeEntry>,
    pub untracked_truncated: bool,
    pub untracked_total: u64,
    /// Paths with unresolved merge conflicts (listed only here).
    pub conflicted: Vec<ChangeEntry>,
    pub conflicted_truncated: bool,
    pub conflicted_total: u64,
    pub clean: bool,
    /// The path filter, as applied.
    pub path: Option<String>,
    pub max_per_list: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeEntry {
    #[serde(flatten)]
    pub path: PathText,
    /// The source of a rename or copy.
    #[serde(flatten)]
    pub orig_path: Option<OrigPathText>,
    /// Index status letter (`.` unchanged, `M`, `A`, `D`, `R`, `C`, `T`, `U`; `?` untracked).
    pub index: String,
    /// Working-tree status letter (`.` unchanged, `M`, `D`, `T`, `A`, `U`; `?` untracked).
    pub worktree: String,
    /// What this list's change is: `modified`, `added`, `deleted`, `renamed`, `copied`,
    /// `typechange`, `untracked`; for conflicts `both-modified`, `both-added`,
    /// `both-deleted`, `added-by-us`, `added-by-them`, `deleted-by-us`, `deleted-by-them`.
    pub kind: &'static str,
    /// Present for submodules.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub submodule: Option<SubmoduleFlags>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubmoduleFlags {
    pub commit_changed: bool,
    pub modified: bool,
    pub untracked: bool,
}

impl Tool for Changes {
    type Input = ChangesInput;
    type Output = Local<ChangesData>;

    const NAME: &'static str = "worktree.changes";
    const TITLE: &'static str = "Working tree changes";
    const DESCRIPTION: &'static str = "Changed paths in four lists (staged, unstaged, untracked, conflicted), each entry with its index and worktree letters and kind; optional path filter.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: ChangesInput) -> Result<Self::Output, ToolError> {
        let path = RepoRelPath::parse_opt("path", input.path.as_deref())?;
        let repo = repo::open(&ctx.config, "repoPath", &input.repo_path, &ctx.cancel).await?;
        repo.require_worktree()?;
        let git = Git::new(&repo, &ctx.cancel);
        let max = input.max_per_list.usize();
        let paths: Vec<RepoRelPath> = path.iter().cloned().collect();
        let query = StatusQuery {
            paths: Some(&paths),
            ..StatusQuery::default()
        };
        let s = query.stream(&git, Sorter::new(max)).await?;
        let truncated = |l: &List| l.total > l.entries.len() as u64;
        let data = ChangesData {
            clean: s.staged.total + s.unstaged.total + s.untracked.total + s.conflicted.total == 0,
            staged_truncated: truncated(&s.staged),
            staged_total: s.staged.total,
            staged: s.staged.entries,
            unstaged_truncated: truncated(&s.unstaged),
            unstaged_total: s.unstaged.total,
            unstaged: s.unstaged.entries,
            untracked_truncated: truncated(&s.untracked),
            untracked_total: s.untracked.total,
            untracked: s.untracked.entries,
            conflicted_truncated: truncated(&s.conflicted),
            conflicted_total: s.conflicted.total,
            conflicted: s.conflicted.entries,
            path: path.map(|p| p.as_str().to_owned()),
            max_per_list: max as u64,
        };
        Ok(Local::new::<Self>(&repo, data))
    }
}
