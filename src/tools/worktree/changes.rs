//! Working-tree read tools: `worktree.changes`, `worktree.list`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::input::Bounded;
use super::{Annotations, CallCtx, Local, Tool};
use crate::config::Toolset;
use crate::error::ToolError;
use crate::git::{Git, Oid, RepoRelPath, repo};
use crate::model::{OrigPathText, PathText, opt_name_text};
use crate::parse::status_v2::{self, Kind};
use crate::parse::{ParseError, RecordParser, Records, worktree};
use crate::process::Flow;

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
    /// Most entries kept in each list; `*Total` always counts every entry.
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

#[derive(Debug, Default)]
struct List {
    entries: Vec<ChangeEntry>,
    total: u64,
}

/// Sorts status entries into the four lists as they stream in.
struct Sorter {
    status: status_v2::Status,
    max: usize,
    staged: List,
    unstaged: List,
    untracked: List,
    conflicted: List,
}

fn conflict_kind(xy: [u8; 2]) -> &'static str {
    match &xy {
        b"UU" => "both-modified",
        b"AA" => "both-added",
        b"DD" => "both-deleted",
        b"AU" => "added-by-us",
        b"UA" => "added-by-them",
        b"DU" => "deleted-by-us",
        b"UD" => "deleted-by-them",
        _ => "unmerged",
    }
}

fn letter_kind(letter: u8) -> &'static str {
    match letter {
        b'M' => "modified",
        b'A' => "added",
        b'D' => "deleted",
        b'R' => "renamed",
        b'C' => "copied",
        b'T' => "typechange",
        _ => "changed",
    }
}

impl Sorter {
    fn add(list: &mut List, max: usize, entry: &status_v2::Entry, kind: &'static str) {
        list.total += 1;
        if list.entries.len() < max {
            list.entries.push(ChangeEntry {
                path: PathText::from_bytes(&entry.path),
                orig_path: entry.orig_path.as_deref().map(OrigPathText::from_bytes),
                index: char::from(entry.xy[0]).to_string(),
                worktree: char::from(entry.xy[1]).to_string(),
                kind,
                submodule: entry.submodule.map(|s| SubmoduleFlags {
                    commit_changed: s.commit_changed,
                    modified: s.modified,
                    untracked: s.untracked,
                }),
            });
        }
    }

    fn sort(&mut self, entry: status_v2::Entry) {
        let max = self.max;
        match entry.kind {
            Kind::Unmerged => Self::add(&mut self.conflicted, max, &entry, conflict_kind(entry.xy)),
            Kind::Untracked => Self::add(&mut self.untracked, max, &entry, "untracked"),
            Kind::Ignored => {}
            Kind::Changed | Kind::Renamed => {
                if entry.xy[0] != b'.' {
                    Self::add(&mut self.staged, max, &entry, letter_kind(entry.xy[0]));
                }
                if entry.xy[1] != b'.' {
                    Self::add(&mut self.unstaged, max, &entry, letter_kind(entry.xy[1]));
                }
            }
        }
    }
}

impl RecordParser for Sorter {
    fn record(&mut self, record: &[u8], offset: usize) -> Result<Flow, ParseError> {
        let flow = self.status.record(record, offset)?;
        // Entries are taken as soon as the status parser completes them, so it never
        // holds more than one.
        for entry in std::mem::take(&mut self.status.entries) {
            self.sort(entry);
        }
        Ok(flow)
    }

    fn finish(&mut self, rest: &[u8], offset: usize) -> Result<(), ParseError> {
        self.status.finish(rest, offset)?;
        for entry in std::mem::take(&mut self.status.entries) {
            self.sort(entry);
        }
        Ok(())
    }
}

impl Tool for Changes {
    type Input = ChangesInput;
    type Output = Local<ChangesData>;

    const NAME: &'static str = "worktree.changes";
    const TITLE: &'static str = "Working tree changes";
    const DESCRIPTION: &'static str = "Changed paths of the working tree in four lists: staged (index vs HEAD), unstaged (working tree vs index), untracked, and conflicted (only there). Each entry has its path, rename source, index and worktree letters, a kind and submodule flags. Optional `path` limits the listing to a subtree. Each list is capped by maxPerList with a *Truncated flag and a true *Total.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: ChangesInput) -> Result<Self::Output, ToolError> {
        let path = RepoRelPath::parse_opt("path", input.path.as_deref())?;
        let repo = repo::open(&ctx.config, "repoPath", &input.repo_path, &ctx.cancel).await?;
        repo.require_worktree()?;
        let git = Git::new(&repo, &ctx.cancel);
        let max = input.max_per_list.usize();
        let mut args: Vec<String> = [
            "--literal-pathspecs",
            "status",
            "--porcelain=v2",
            "-z",
            "--",
        ]
        .map(str::to_owned)
        .to_vec();
        if let Some(path) = &path {
            args.push(path.as_str().to_owned());
        }
        let sorter = Sorter {
            status: status_v2::Status::new(usize::MAX),
            max,
            staged: List::default(),
            unstaged: List::default(),
            untracked: List::default(),
            conflicted: List::default(),
        };
        let done = git.cmd(args).stream(Records::new(sorter)).await?;
        let s = done
            .sink
            .finish(true)
            .map_err(|e| ToolError::internal(e.to_string()))?;
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
    const DESCRIPTION: &'static str = "All worktrees of the repository, main first: path, branch or detached, full HEAD id (unborn flagged), locked and prunable with their reasons, bare, and which one repoPath points into. Works on bare repositories.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: ListInput) -> Result<Self::Output, ToolError> {
        let repo = repo::open(&ctx.config, "repoPath", &input.repo_path, &ctx.cancel).await?;
        let git = Git::new(&repo, &ctx.cancel);
        let done = git
            .cmd(["worktree", "list", "--porcelain", "-z"])
            .stream(Records::new(worktree::Worktrees::new(MAX_WORKTREES)))
            .await?;
        let parsed = done
            .sink
            .finish(true)
            .map_err(|e| ToolError::internal(e.to_string()))?;
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
