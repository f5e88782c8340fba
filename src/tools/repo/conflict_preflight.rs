//! `repo.conflictPreflight`: predicts a merge or rebase without touching the repository.
//!
//! The prediction runs `git merge-tree --write-tree`, which must write the merged blobs
//! and trees it computes. Those writes go to a temporary object directory (the
//! repository's own objects are reached as an alternate), deleted afterwards, so no file
//! of the repository is created, removed or rewritten. One effect remains, and git has
//! no switch for it: an object the merge computes that the repository already has is
//! "freshened" rather than written (its pack or loose file gets a new modification
//! time). Merge drivers that configuration defines
//! are disarmed: a path they govern is predicted as a content conflict rather than run.

mod rebase;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Toolset;
use crate::error::ToolError;
use crate::git::merge::{MergeQuery, Merged, Scratch};
use crate::git::{Git, Oid, Repo, Rev, merge_base, repo};
use crate::model::PathText;
use crate::tools::input::Bounded;
use crate::tools::{Annotations, CallCtx, Local, Tool};

/// `repo.conflictPreflight`: would merging or rebasing conflict?
pub struct Preflight;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// `git merge <targetRef>` while on `currentRef`.
    #[default]
    Merge,
    /// `git rebase <targetRef>` while on `currentRef`: its commits replayed onto the target.
    Rebase,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PreflightInput {
    /// Absolute path of the repository.
    pub repo_path: String,
    /// FluxGit workspace id; accepted for compatibility and not needed locally.
    #[serde(default)]
    pub repo_id: Option<String>,
    /// The branch or revision to merge in (merge) or to rebase onto (rebase).
    #[serde(alias = "target", alias = "mergeTarget")]
    pub target_ref: String,
    /// The branch that would receive the merge or be rebased; default HEAD.
    #[serde(default, alias = "current", alias = "sourceRef")]
    pub current_ref: Option<String>,
    /// `merge` (default) or `rebase`.
    #[serde(default)]
    pub mode: Mode,
    /// Most conflicting paths to list
    #[serde(default)]
    pub max_paths: Bounded<1, 1000, 200>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PreflightData {
    pub mode: Mode,
    pub current_ref: String,
    pub target_ref: String,
    pub current_oid: String,
    pub target_oid: String,
    /// Null when the histories share no commit.
    pub merge_base_oid: Option<String>,
    /// `unrelated-histories`, `already-up-to-date`, `fast-forward`, `clean-merge`, `conflicts`,
    /// or (rebase only) `undetermined` when more commits exist than were replayed and
    /// none of those conflicted.
    pub status: &'static str,
    /// Paths the operation would leave unmerged, as `git status` would list them (for a
    /// rebase, those of the first conflicting commit).
    pub conflicting_paths: Vec<ConflictPath>,
    /// True number of unmerged paths.
    pub conflict_count: u64,
    pub conflicting_paths_truncated: bool,
    /// Paths a conflict message names that would not be unmerged themselves (the
    /// directory in the way of a file, say).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub related_paths: Vec<ConflictPath>,
    /// Present in rebase mode once commits had to be replayed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rebase: Option<RebaseReport>,
    pub read_only: bool,
    pub network_fetch_performed: bool,
    pub working_tree_mutated: bool,
    pub approval_required_for_merge: bool,
    #[serde(serialize_with = "crate::model::tool_name::serialize_prose")]
    pub guidance: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConflictPath {
    #[serde(flatten)]
    pub path: PathText,
    /// From the stages the merge would leave: `both-modified`, `both-added`,
    /// `deleted-by-us`, `deleted-by-them`, `added-by-us`, `added-by-them`,
    /// `both-deleted`; `other` in `relatedPaths`.
    pub kind: &'static str,
    /// git's conflict types for the path: `contents`, `modify/delete`,
    /// `rename/delete`, `file/directory`, `binary`, `submodule`, …
    pub conflict_types: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RebaseReport {
    /// Commits the rebase would replay (merges and commits already upstream excluded).
    pub commits_total: u64,
    /// Commits replayed by the prediction.
    pub commits_replayed: u64,
    pub commits_truncated: bool,
    /// The first commit that would stop the rebase.
    pub first_conflict: Option<ConflictCommit>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConflictCommit {
    pub oid: String,
    pub subject: String,
    /// 1-based position in the replay order.
    pub position: u64,
}

impl Tool for Preflight {
    type Input = PreflightInput;
    type Output = Local<PreflightData>;

    const NAME: &'static str = "repo.conflictPreflight";
    const TITLE: &'static str = "Conflict preflight";
    const DESCRIPTION: &'static str = "Predicts merging targetRef into currentRef, or rebasing onto it, without touching the repository: up to date, fast-forward, clean, or the conflicting paths.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: PreflightInput) -> Result<Self::Output, ToolError> {
        let target = Rev::parse("targetRef", &input.target_ref)?;
        let current_text = input.current_ref.clone().unwrap_or_else(|| "HEAD".into());
        let current = Rev::parse("currentRef", &current_text)?;
        let repo = repo::open(&ctx.config, "repoPath", &input.repo_path, &ctx.cancel).await?;
        let git = Git::new(&repo, &ctx.cancel);
        let (target_oid, current_oid) = tokio::join!(
            git.resolve_commit("targetRef", &target),
            git.resolve_commit("currentRef", &current)
        );
        let (target_oid, current_oid) = (target_oid?, current_oid?);
        let base = merge_base::of(&git, &current_oid, &target_oid).await?;
        // git rebase calls a branch up to date only when its own history since the
        // target is linear; past a merge of the target it still replays the branch.
        let up_to_date = base.as_ref() == Some(&target_oid)
            && (input.mode == Mode::Merge
                || merge_base::linear_since(&git, &target_oid, &current_oid).await?);
        let mut data = PreflightData {
            mode: input.mode,
            current_ref: current_text,
            target_ref: input.target_ref.clone(),
            current_oid: current_oid.to_string(),
            target_oid: target_oid.to_string(),
            merge_base_oid: base.as_ref().map(Oid::to_string),
            status: "clean-merge",
            conflicting_paths: Vec::new(),
            conflict_count: 0,
            conflicting_paths_truncated: false,
            related_paths: Vec::new(),
            rebase: None,
            read_only: true,
            network_fetch_performed: false,
            working_tree_mutated: false,
            approval_required_for_merge: true,
            guidance: String::new(),
        };
        let sides = Sides {
            current: &current_oid,
            target: &target_oid,
            max: input.max_paths.usize(),
        };
        match base {
            None => unrelated(&mut data),
            Some(_) if up_to_date => {
                data.status = "already-up-to-date";
                data.guidance = format!(
                    "currentRef already contains targetRef; git {} would change nothing.",
                    data.mode.verb()
                );
            }
            Some(b) if b == current_oid => {
                let verb = data.mode.verb();
                data.status = "fast-forward";
                data.guidance = format!(
                    "currentRef is an ancestor of targetRef; git {verb} would fast-forward without conflicts. Propose it with operation.preview.{verb}."
                );
            }
            Some(_) => replay(&git, &repo, sides, &mut data).await?,
        }
        Ok(Local::new::<Self>(&repo, data))
    }
}

impl Mode {
    fn verb(self) -> &'static str {
        match self {
            Mode::Merge => "merge",
            Mode::Rebase => "rebase",
        }
    }
}

/// The two commits compared and how many paths to list.
#[derive(Clone, Copy)]
struct Sides<'a> {
    current: &'a Oid,
    target: &'a Oid,
    max: usize,
}

fn unrelated(data: &mut PreflightData) {
    data.status = "unrelated-histories";
    data.guidance = format!(
        "The two histories share no commit; git {} would refuse (a merge needs --allow-unrelated-histories). Confirm the target is the intended branch.",
        data.mode.verb()
    );
}

/// Runs the merge, or the rebase commit by commit, in a scratch object directory.
async fn replay(
    git: &Git<'_>,
    repo: &Repo,
    sides: Sides<'_>,
    data: &mut PreflightData,
) -> Result<(), ToolError> {
    let scratch = Scratch::new(repo)?;
    match data.mode {
        Mode::Merge => {
            let merged = merge(git, &scratch, None, sides.current, sides.target, sides.max).await?;
            fill(data, &merged);
            data.guidance = if data.status == "clean-merge" {
                "git merge would complete without conflicts. Propose it with operation.preview.merge.".into()
            } else {
                "git merge would stop with these conflicts. Resolve them after the merge starts (conflict.read shows them), or discuss the approach before proposing operation.preview.merge.".into()
            };
            Ok(())
        }
        Mode::Rebase => rebase::rebase(git, &scratch, repo, sides, data).await,
    }
}

/// Merges `theirs` into `ours` (from `base` when given) in the scratch object directory.
async fn merge(
    git: &Git<'_>,
    scratch: &Scratch,
    base: Option<&str>,
    ours: &Oid,
    theirs: &Oid,
    max: usize,
) -> Result<Merged, ToolError> {
    let merged = MergeQuery {
        base,
        ours: ours.as_str(),
        theirs: theirs.as_str(),
        messages: true,
        max_paths: max,
    }
    .run(git, scratch)
    .await?;
    merged.tree_oid()?;
    Ok(merged)
}

/// The paths and verdict of one merge.
fn fill(data: &mut PreflightData, merged: &Merged) {
    let tree = &merged.tree;
    data.conflicting_paths = tree
        .conflicts()
        .map(|(u, types)| ConflictPath {
            path: PathText::from_bytes(&u.path),
            kind: u.kind(),
            conflict_types: types.to_vec(),
        })
        .collect();
    data.related_paths = tree
        .other
        .iter()
        .map(|(p, types)| ConflictPath {
            path: PathText::from_bytes(p),
            kind: "other",
            conflict_types: types.clone(),
        })
        .collect();
    data.conflict_count = tree.stages.unmerged_total;
    data.conflicting_paths_truncated = tree.stages.unmerged_truncated();
    data.status = if merged.clean {
        "clean-merge"
    } else {
        "conflicts"
    };
}
