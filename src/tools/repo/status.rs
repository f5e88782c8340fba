//! `repo.status`: branch, upstream, and the changed paths of the working tree.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Toolset;
use crate::error::ToolError;
use crate::git::status::{StatusQuery, Untracked};
use crate::git::{Git, repo};
use crate::model::{OrigPathText, PathText, opt_name_text};
use crate::parse::status_v2::{self, Kind};
use crate::tools::input::Bounded;
use crate::tools::{Annotations, CallCtx, Local, Tool};

/// Entries stop being kept once their JSON would pass this many bytes, so a result stays
/// within 64 KiB however long the paths are (the rest of it, names included, stays under
/// 8 KiB).
const ENTRY_BYTES_BUDGET: usize = 56 * 1024;

/// `repo.status`: branch, upstream, and the changed paths of the working tree.
pub struct Status;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StatusInput {
    /// Absolute path of the repository (any directory inside a working tree works).
    pub repo_path: String,
    /// FluxGit workspace id; accepted for compatibility and not needed locally.
    #[serde(default)]
    pub repo_id: Option<String>,
    /// Most entries to return
    #[serde(default)]
    pub max_entries: Bounded<1, 5000, 500>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusData {
    /// Current branch name; null when detached. Not valid UTF-8: shown with U+FFFD,
    /// and `branchBytesB64` holds the exact name.
    pub branch: Option<String>,
    /// Base64 of the branch name, present only when it is not valid UTF-8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch_bytes_b64: Option<String>,
    pub detached: bool,
    /// True on a branch with no commits yet.
    pub unborn: bool,
    /// The commit HEAD points at; null when unborn.
    pub head_oid: Option<String>,
    pub upstream: Option<String>,
    /// Base64 of the upstream name, present only when it is not valid UTF-8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream_bytes_b64: Option<String>,
    /// Commits ahead of / behind the upstream; null without an upstream.
    pub ahead: Option<u64>,
    pub behind: Option<u64>,
    /// No changes, untracked files included.
    pub clean: bool,
    /// True number of changed paths (every entry, kept or not).
    pub changed_files: u64,
    pub counts: StatusCounts,
    pub entries: Vec<StatusEntry>,
    pub entries_truncated: bool,
    pub max_entries: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusCounts {
    pub staged: u64,
    pub unstaged: u64,
    /// `-unormal`: an untracked directory counts once (`dir/`).
    pub untracked: u64,
    pub conflicted: u64,
    pub renamed: u64,
    pub submodules: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusEntry {
    /// Two-letter code: index then worktree (`.` unchanged, `M`, `A`, `D`, `R`, `C`, `T`,
    /// `U`; `??` untracked).
    pub status: String,
    /// `changed`, `renamed`, `copied`, `unmerged` or `untracked`.
    pub kind: &'static str,
    #[serde(flatten)]
    pub path: PathText,
    /// The source of a rename or copy.
    #[serde(flatten)]
    pub orig_path: Option<OrigPathText>,
    /// Similarity score of a rename or copy (0–100).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<u8>,
    /// Present for submodules.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub submodule: Option<SubmoduleState>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubmoduleState {
    pub commit_changed: bool,
    pub modified: bool,
    pub untracked: bool,
}

impl From<status_v2::Entry> for StatusEntry {
    fn from(e: status_v2::Entry) -> Self {
        let kind = match (e.kind, e.score.as_deref().and_then(|s| s.chars().next())) {
            (Kind::Renamed, Some('C')) => "copied",
            (Kind::Renamed, _) => "renamed",
            (Kind::Changed, _) => "changed",
            (Kind::Unmerged, _) => "unmerged",
            (Kind::Untracked, _) => "untracked",
            (Kind::Ignored, _) => "ignored",
        };
        StatusEntry {
            status: String::from_utf8_lossy(&e.xy).into_owned(),
            kind,
            path: PathText::from_bytes(&e.path),
            orig_path: e.orig_path.as_deref().map(OrigPathText::from_bytes),
            similarity: e.score.as_deref().and_then(|s| s.get(1..)?.parse().ok()),
            submodule: e.submodule.map(|s| SubmoduleState {
                commit_changed: s.commit_changed,
                modified: s.modified,
                untracked: s.untracked,
            }),
        }
    }
}

impl Tool for Status {
    type Input = StatusInput;
    type Output = Local<StatusData>;

    const NAME: &'static str = "repo.status";
    const TITLE: &'static str = "Repository status";
    const DESCRIPTION: &'static str = "Working-tree status: branch, upstream ahead/behind, counts of staged, unstaged, untracked and conflicted paths, and the changed paths.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: StatusInput) -> Result<Self::Output, ToolError> {
        let repo = repo::open(&ctx.config, "repoPath", &input.repo_path, &ctx.cancel).await?;
        repo.require_worktree()?;
        let git = Git::new(&repo, &ctx.cancel);
        let max = input.max_entries.usize();
        let status = StatusQuery {
            untracked: Some(Untracked::Normal),
            ..StatusQuery::with_branch()
        }
        .read(&git, max)
        .await?;
        Ok(Local::new::<Self>(&repo, status_data(status, max)))
    }
}

fn status_data(status: status_v2::Status, max: usize) -> StatusData {
    let mut truncated = status.truncated();
    let mut budget = ENTRY_BYTES_BUDGET;
    let mut entries = Vec::with_capacity(status.entries.len());
    for entry in status.entries {
        let entry = StatusEntry::from(entry);
        // The exact size, escapes and base64 of odd names included, plus its comma.
        let cost = json_len(&entry).saturating_add(1);
        if cost > budget {
            truncated = true;
            break;
        }
        budget -= cost;
        entries.push(entry);
    }
    let b = status.branch;
    let c = status.counts;
    let (branch, branch_bytes_b64) = opt_name_text(b.head.as_deref());
    let (upstream, upstream_bytes_b64) = opt_name_text(b.upstream.as_deref());
    StatusData {
        detached: b.head.is_none(),
        unborn: b.oid.is_none(),
        head_oid: b.oid.map(|o| o.to_string()),
        branch,
        branch_bytes_b64,
        upstream,
        upstream_bytes_b64,
        ahead: b.ahead_behind.map(|(a, _)| a),
        behind: b.ahead_behind.map(|(_, b)| b),
        clean: c.entries == 0,
        changed_files: c.entries,
        counts: StatusCounts {
            staged: c.staged,
            unstaged: c.unstaged,
            untracked: c.untracked,
            conflicted: c.conflicted,
            renamed: c.renamed,
            submodules: c.submodules,
        },
        entries,
        entries_truncated: truncated,
        max_entries: max as u64,
    }
}

/// The length of `value` as compact JSON, counted without building the text.
fn json_len<T: Serialize>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => usize::MAX,
    }
}
