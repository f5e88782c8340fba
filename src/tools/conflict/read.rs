//! `conflict.read`: the conflict in progress as data, file by file: the operation, the
//! ours/theirs commits, each side's content read through one `cat-file --batch`, and the
//! conflict-marker regions of the working file.

mod markers;
mod sides;

use std::collections::HashMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Toolset;
use crate::error::ToolError;
use crate::git::{Git, Oid, cat_file, diff, log, ls_files, repo};
use crate::model::PathText;
use crate::parse::cat_file_batch::{Answer, Object};
use crate::parse::ls_files_unmerged::{GITLINK, Unmerged};
use crate::tools::input::Bounded;
use crate::tools::{Annotations, CallCtx, Local, Tool};
pub use markers::Region;
pub use sides::SideContent;

/// `conflict.read`: the conflict in progress, file by file.
pub struct Read;

/// Content kept across all sides of all files, so a wide conflict stays bounded.
const CONTENT_BUDGET: usize = 24 * 1024 * 1024;
/// Working files larger than this are not scanned for markers.
const MAX_MARKER_SCAN: u64 = 8 * 1024 * 1024;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReadInput {
    /// Absolute path of the repository (a working tree).
    pub repo_path: String,
    /// FluxGit workspace id; accepted for compatibility and not needed locally.
    #[serde(default)]
    pub repo_id: Option<String>,
    /// Most conflicted files to return
    #[serde(default)]
    pub max_files: Bounded<1, 200, 20>,
    /// Bytes of each side's content to return at most.
    #[serde(default)]
    pub max_bytes_per_side: Bounded<1, 1_048_576, 16384>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadData {
    pub in_conflict: bool,
    /// `merge`, `rebase`, `cherry-pick`, `revert`, `am`, or `unknown` when paths are
    /// unmerged but no operation is recorded; null when nothing is in progress.
    pub operation: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(serialize_with = "crate::model::tool_name::serialize_prose_opt")]
    pub hint: Option<String>,
    /// HEAD: the branch being merged into, or for a rebase the target side so far.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ours: Option<CommitRef>,
    /// The commit being merged, replayed, picked or reverted (null for `am`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theirs: Option<CommitRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflicted_file_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_list_truncated: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_bytes_per_side: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(serialize_with = "crate::model::tool_name::serialize_prose_opt")]
    pub guidance: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<ConflictFile>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommitRef {
    pub sha: String,
    pub subject: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConflictFile {
    #[serde(flatten)]
    pub path: PathText,
    /// `both-modified`, `both-added`, `deleted-by-us`, `deleted-by-them`,
    /// `added-by-us`, `added-by-them` or `both-deleted`.
    pub kind: &'static str,
    pub sides: Sides,
    /// Conflict-marker regions in the working file, 1-based line numbers.
    pub regions: Vec<Region>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub regions_truncated: bool,
    /// Why regions were not read (`missing`, `not a regular file`, `too large`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub working_file: Option<&'static str>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Sides {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base: Option<SideContent>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ours: Option<SideContent>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theirs: Option<SideContent>,
}

impl Tool for Read {
    type Input = ReadInput;
    type Output = Local<ReadData>;

    const NAME: &'static str = "conflict.read";
    const TITLE: &'static str = "Read the active conflict";
    const DESCRIPTION: &'static str = "The conflict in progress as data: the operation, ours/theirs commits and, per conflicted file, its kind, base/ours/theirs contents (capped) and conflict-marker lines.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: ReadInput) -> Result<Self::Output, ToolError> {
        let repo = repo::open(&ctx.config, "repoPath", &input.repo_path, &ctx.cancel).await?;
        let worktree = repo.require_worktree()?.to_path_buf();
        let git = Git::new(&repo, &ctx.cancel);
        let per_side = input.max_bytes_per_side.usize();
        let git_dir = repo.git_dir.clone();
        let (operation, theirs_oid) = crate::safe_file::off_thread(&ctx.cancel, move || {
            match crate::git::operation::in_progress(&git_dir) {
                Some(op) if op.can_conflict() => (Some(op.kind), op.applying(&git_dir)),
                _ => (None, None),
            }
        })
        .await?;
        let stages = ls_files::unmerged(&git, input.max_files.usize()).await?;
        if stages.unmerged_total == 0 {
            let data = nothing_unmerged(&git, operation).await?;
            return Ok(Local::new::<Self>(&repo, data));
        }
        let operation = operation.unwrap_or("unknown");
        let head = git.head().await?;
        let wanted: Vec<&Oid> = head.iter().chain(theirs_oid.iter()).collect();
        let subjects = log::subjects(&git, &wanted).await?;
        let commit_ref = |oid: &Oid| CommitRef {
            sha: oid.to_string(),
            subject: subjects.get(oid).cloned(),
        };
        let contents = contents(&git, &stages.unmerged, per_side).await?;
        let paths: Vec<Vec<u8>> = stages.unmerged.iter().map(|u| u.path.clone()).collect();
        let working = crate::safe_file::off_thread(&ctx.cancel, move || {
            paths
                .iter()
                .map(|p| working_regions(&worktree, p))
                .collect::<Vec<_>>()
        })
        .await?;
        let files = stages
            .unmerged
            .iter()
            .zip(working)
            .map(|(u, working)| conflict_file(u, working, &contents, per_side))
            .collect();
        let data = ReadData {
            in_conflict: true,
            operation: Some(operation),
            hint: None,
            ours: head.as_ref().map(commit_ref),
            theirs: theirs_oid.as_ref().map(commit_ref),
            conflicted_file_count: Some(stages.unmerged_total),
            file_list_truncated: Some(stages.unmerged_truncated()),
            max_bytes_per_side: Some(per_side as u64),
            guidance: Some(guidance(operation).into()),
            files,
        };
        Ok(Local::new::<Self>(&repo, data))
    }
}

/// Which side is which during `operation`.
fn guidance(operation: &str) -> &'static str {
    match operation {
        "rebase" => {
            "During a rebase \"ours\" is the branch being rebased onto (HEAD) and \"theirs\" is the commit being replayed. Resolve each file, stage it, then continue the rebase."
        }
        "merge" => {
            "\"ours\" is the current branch (HEAD), \"theirs\" the branch being merged. Resolve each file and stage it before committing the merge."
        }
        "cherry-pick" | "revert" => {
            "\"ours\" is HEAD, \"theirs\" the commit being applied. Resolve each file, stage it, then continue."
        }
        _ => "Resolve each file and stage it; marker regions give the lines to edit.",
    }
}

/// `git am` that stopped with nothing staged never got to a conflict: the patch did not
/// apply (or was empty), and nothing in the files awaits resolution.
const AM_STOPPED_CLEAN: &str = "git am stopped on a patch without any conflict: the patch did not apply (or was empty), so no file was changed and nothing is unmerged. Look at it with `git am --show-current-patch=diff`; apply it by hand and `git add` the result before `git am --continue`, or skip it (`git am --skip`) or abort (`git am --abort`).";

/// The answer when no path is unmerged, with what to do about the operation, if any.
async fn nothing_unmerged(
    git: &Git<'_>,
    operation: Option<&'static str>,
) -> Result<ReadData, ToolError> {
    let hint = match operation {
        Some("am") if !diff::index_differs_from_head(git).await? => AM_STOPPED_CLEAN.to_owned(),
        Some(op) => format!(
            "A {op} is in progress but no path is unmerged: every conflict is resolved. Review and continue it (git {op} --continue) or abort it."
        ),
        None => "No merge, rebase, cherry-pick, revert or am is in progress and no path is unmerged. Use repo.conflictPreflight to predict conflicts before an operation.".into(),
    };
    Ok(ReadData {
        in_conflict: false,
        operation,
        hint: Some(hint),
        ours: None,
        theirs: None,
        conflicted_file_count: None,
        file_list_truncated: None,
        max_bytes_per_side: None,
        guidance: None,
        files: Vec::new(),
    })
}

/// The first bytes of every non-gitlink side, read through one `cat-file --batch`.
async fn contents(
    git: &Git<'_>,
    files: &[Unmerged],
    per_side: usize,
) -> Result<HashMap<Oid, Object>, ToolError> {
    let mut wanted: Vec<&Oid> = files
        .iter()
        .flat_map(|u| u.stages.iter().flatten())
        .filter(|(mode, _)| *mode != GITLINK)
        .map(|(_, oid)| oid)
        .collect();
    wanted.sort_unstable();
    wanted.dedup();
    let answers = cat_file::objects(
        git,
        &wanted,
        per_side.max(sides::BINARY_SNIFF),
        CONTENT_BUDGET,
    )
    .await?;
    Ok(answers
        .into_iter()
        .filter_map(|a| match a {
            Answer::Found(o) => Some((o.oid.clone(), o)),
            Answer::Absent { .. } => None,
        })
        .collect())
}

/// The marker regions of a working file, or why it could not be read.
type Working = Result<(Vec<Region>, bool), &'static str>;

fn working_regions(worktree: &Path, path: &[u8]) -> Working {
    read_working(worktree, path).map(|bytes| markers::marker_regions(&bytes))
}

fn conflict_file(
    u: &Unmerged,
    working: Working,
    contents: &HashMap<Oid, Object>,
    per_side: usize,
) -> ConflictFile {
    let side = |slot: usize| {
        u.stages[slot]
            .as_ref()
            .map(|(mode, oid)| sides::side_content(*mode, oid, contents.get(oid), per_side))
    };
    let (regions, regions_truncated, working_file) = match working {
        Ok((regions, truncated)) => (regions, truncated, None),
        Err(reason) => (Vec::new(), false, Some(reason)),
    };
    ConflictFile {
        path: PathText::from_bytes(&u.path),
        kind: u.kind(),
        sides: Sides {
            base: side(0),
            ours: side(1),
            theirs: side(2),
        },
        regions,
        regions_truncated,
        working_file,
    }
}

/// The working file's bytes, if it is a regular file reached inside the working tree
/// without a symlink (a directory on the way could lead out of it).
fn read_working(worktree: &Path, path: &[u8]) -> Result<Vec<u8>, &'static str> {
    use crate::safe_file::Refusal;
    use std::os::unix::ffi::OsStrExt;
    let rel = std::ffi::OsStr::from_bytes(path);
    crate::safe_file::read_in(worktree, rel, MAX_MARKER_SCAN).map_err(|why| match why {
        Refusal::TooLarge => "too large",
        Refusal::NotRegular | Refusal::Escapes => "not a regular file",
        Refusal::Missing | Refusal::Unreadable => "missing",
    })
}
