//! Conflict tools: `repo.conflictPreflight` predicts a merge or rebase without touching
//! the repository; `conflict.read` shows the conflict in progress as data.
//!
//! The prediction runs `git merge-tree --write-tree`, which must write the merged blobs
//! and trees it computes. Those writes go to a temporary object directory (the
//! repository's own objects are reached as an alternate), deleted afterwards, so no file
//! of the repository is created, removed or rewritten. One effect remains, and git has
//! no switch for it: an object the merge computes that the repository already has is
//! "freshened" rather than written (its pack or loose file gets a new modification
//! time). Merge drivers that configuration defines
//! are disarmed: a path they govern is predicted as a content conflict rather than run.

use std::collections::HashMap;
use std::path::Path;

use base64::Engine;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::input::Bounded;
use super::{Annotations, CallCtx, Local, Tool};
use crate::config::Toolset;
use crate::error::ToolError;
use crate::git::merge::Scratch;
use crate::git::{Git, ObjectFormat, Oid, Repo, Rev, repo};
use crate::model::PathText;
use crate::parse::cat_file_batch::{Answer, Batch};
use crate::parse::log::{self, Log};
use crate::parse::ls_files_unmerged::{GITLINK, Stages, Unmerged};
use crate::parse::merge_tree::MergeTree;
use crate::parse::{ParseError, Records};

/// Commits a rebase prediction replays at most.
const MAX_REBASE_COMMITS: usize = 100;

fn parse_failed(e: ParseError) -> ToolError {
    ToolError::internal(e.to_string())
}

// ---------------------------------------------------------------------------------------
// repo.conflictPreflight

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
    /// Most conflicting paths to list; `conflictCount` is always the true total.
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
    const DESCRIPTION: &'static str = "Predicts what merging targetRef into currentRef (mode merge, the default) or rebasing currentRef onto targetRef (mode rebase) would do, without touching the working tree, the index or any ref: unrelated-histories, already-up-to-date, fast-forward, clean-merge or conflicts with each conflicting path, its kind (both-modified, deleted-by-them, …) and git's conflict types. A rebase is replayed commit by commit (up to 100) and the first conflicting commit is reported. Nothing is fetched; the merge itself still needs human approval.";
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
        let base = merge_base(&git, &current_oid, &target_oid).await?;
        // git rebase calls a branch up to date only when its own history since the
        // target is linear; past a merge of the target it still replays the branch.
        let up_to_date = base.as_ref() == Some(&target_oid)
            && (input.mode == Mode::Merge || linear_since(&git, &target_oid, &current_oid).await?);
        let max = input.max_paths.usize();
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
        let verb = match input.mode {
            Mode::Merge => "merge",
            Mode::Rebase => "rebase",
        };
        match base {
            None => {
                data.status = "unrelated-histories";
                data.guidance = format!(
                    "The two histories share no commit; git {verb} would refuse (a merge needs --allow-unrelated-histories). Confirm the target is the intended branch."
                );
            }
            Some(_) if up_to_date => {
                data.status = "already-up-to-date";
                data.guidance = format!(
                    "currentRef already contains targetRef; git {verb} would change nothing."
                );
            }
            Some(b) if b == current_oid => {
                data.status = "fast-forward";
                data.guidance = format!(
                    "currentRef is an ancestor of targetRef; git {verb} would fast-forward without conflicts. Propose it with operation.preview.{verb}."
                );
            }
            Some(_) => {
                let scratch = Scratch::new(&repo)?;
                match input.mode {
                    Mode::Merge => {
                        let merged =
                            merge_tree(&git, &scratch, None, &current_oid, &target_oid, max)
                                .await?;
                        fill(&mut data, &merged);
                        data.guidance = if data.status == "clean-merge" {
                            "git merge would complete without conflicts. Propose it with operation.preview.merge.".into()
                        } else {
                            "git merge would stop with these conflicts. Resolve them after the merge starts (conflict.read shows them), or discuss the approach before proposing operation.preview.merge.".into()
                        };
                    }
                    Mode::Rebase => {
                        rebase(
                            &git,
                            &scratch,
                            &repo,
                            &current_oid,
                            &target_oid,
                            max,
                            &mut data,
                        )
                        .await?;
                    }
                }
            }
        }
        Ok(Local::new::<Self>(&repo, data))
    }
}

async fn merge_base(git: &Git<'_>, a: &Oid, b: &Oid) -> Result<Option<Oid>, ToolError> {
    let out = git
        .cmd(["merge-base", a.as_str(), b.as_str()])
        .capture_allowing(4096, &[0, 1])
        .await?;
    Ok(Oid::from_bytes(out.sink.bytes.trim_ascii()))
}

/// True when no merge lies on the first-parent line from `tip` back to `base`
/// (`is_linear_history` in git's `builtin/rebase.c`).
async fn linear_since(git: &Git<'_>, base: &Oid, tip: &Oid) -> Result<bool, ToolError> {
    let range = format!("{base}..{tip}");
    let out = git
        .cmd([
            "rev-list",
            "--first-parent",
            "--min-parents=2",
            "--max-count=1",
            &range,
            "--",
        ])
        .capture(4096)
        .await?;
    Ok(out.sink.bytes.trim_ascii().is_empty())
}

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

async fn rebase(
    git: &Git<'_>,
    scratch: &Scratch,
    repo: &Repo,
    current: &Oid,
    target: &Oid,
    max: usize,
    data: &mut PreflightData,
) -> Result<(), ToolError> {
    // What `git rebase` replays: non-merge commits of current not already in target
    // (by patch id), in the sequencer's order (graph order, oldest first).
    let range = format!("{target}...{current}");
    let done = git
        .cmd([
            "log",
            "-z",
            "--reverse",
            "--topo-order",
            "--no-merges",
            "--right-only",
            "--cherry-pick",
            &log::format(),
            &range,
        ])
        .stream(Records::new(Log::new(MAX_REBASE_COMMITS)))
        .await?;
    let log = done.sink.finish(true).map_err(parse_failed)?;
    let empty = empty_tree(repo.object_format);
    let mut onto = target.clone();
    let mut report = RebaseReport {
        commits_total: log.seen,
        commits_replayed: 0,
        commits_truncated: log.seen > log.commits.len() as u64,
        first_conflict: None,
    };
    for (i, commit) in log.commits.iter().enumerate() {
        let parent = commit.parents.first().map_or(empty.as_str(), Oid::as_str);
        let merged = merge_tree(git, scratch, Some(parent), &onto, &commit.oid, max).await?;
        report.commits_replayed += 1;
        fill(data, &merged);
        if data.status == "conflicts" {
            report.first_conflict = Some(ConflictCommit {
                oid: commit.oid.to_string(),
                subject: commit.subject.clone(),
                position: i as u64 + 1,
            });
            break;
        }
        onto = merged
            .tree
            .tree
            .clone()
            .ok_or_else(|| ToolError::internal("merge-tree printed no tree"))?;
    }
    data.guidance = match (&report.first_conflict, report.commits_truncated) {
        (Some(c), _) => format!(
            "git rebase would stop at commit {} of {} (\"{}\") with these conflicts. During the rebase, \"ours\" is the target side and \"theirs\" the replayed commit.",
            c.position, report.commits_total, c.subject
        ),
        (None, true) => {
            data.status = "undetermined";
            format!(
                "The first {} of {} commits replay cleanly; the rest were not checked. The rebase may still stop on a later commit.",
                report.commits_replayed, report.commits_total
            )
        }
        (None, false) => format!(
            "All {} commits would replay without conflicts. Propose it with operation.preview.rebase.",
            report.commits_total
        ),
    };
    data.rebase = Some(report);
    Ok(())
}

/// The id of the empty tree, which git knows without storing it.
fn empty_tree(format: ObjectFormat) -> String {
    match format {
        ObjectFormat::Sha1 => "4b825dc642cb6eb9a060e54bf8d69288fbee4904".into(),
        ObjectFormat::Sha256 => {
            "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321".into()
        }
    }
}

/// What `merge-tree` said: its parsed output and its verdict (exit 0 or 1).
struct Merged {
    tree: MergeTree,
    clean: bool,
}

/// `git merge-tree --write-tree` into the scratch object directory.
async fn merge_tree(
    git: &Git<'_>,
    scratch: &Scratch,
    base: Option<&str>,
    ours: &Oid,
    theirs: &Oid,
    max: usize,
) -> Result<Merged, ToolError> {
    let mut argv: Vec<String> = vec!["-z".into()];
    if let Some(base) = base {
        argv.push(format!("--merge-base={base}"));
    }
    argv.extend([ours.to_string(), theirs.to_string()]);
    let done = git
        .merge_tree(scratch, argv)
        .stream_allowing(Records::new(MergeTree::new(max)), &[0, 1])
        .await?;
    let complete = !done.stopped_early;
    let clean = done.code == Some(0);
    let tree = done.sink.finish(complete).map_err(parse_failed)?;
    if tree.tree.is_none() {
        return Err(ToolError::internal("merge-tree printed no tree"));
    }
    Ok(Merged { tree, clean })
}

// ---------------------------------------------------------------------------------------
// conflict.read

/// `conflict.read`: the conflict in progress, file by file.
pub struct Read;

/// Bytes of a blob looked at to decide whether it is binary (git's own heuristic).
const BINARY_SNIFF: usize = 8000;
/// Content kept across all sides of all files, so a wide conflict stays bounded.
const CONTENT_BUDGET: usize = 24 * 1024 * 1024;
/// Working files larger than this are not scanned for markers.
const MAX_MARKER_SCAN: u64 = 8 * 1024 * 1024;
/// Marker regions listed per file.
const MAX_REGIONS: usize = 200;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReadInput {
    /// Absolute path of the repository (a working tree).
    pub repo_path: String,
    /// FluxGit workspace id; accepted for compatibility and not needed locally.
    #[serde(default)]
    pub repo_id: Option<String>,
    /// Most conflicted files to return; `conflictedFileCount` is the true total.
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

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SideContent {
    pub sha: String,
    /// Octal file mode (`100644`, `100755`, `120000` symlink, `160000` submodule).
    pub mode: String,
    /// Full size in bytes; absent for a submodule commit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    pub binary: bool,
    /// True when content was cut at `maxBytesPerSide` (or the overall budget).
    pub truncated: bool,
    /// UTF-8 content; absent when binary or not UTF-8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Base64 of the raw content when it is not UTF-8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_base64: Option<String>,
    /// `"non-utf8"` when the content is given as base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<&'static str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub submodule: bool,
}

#[derive(Debug, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Region {
    /// The `<<<<<<<` line.
    pub start_line: u64,
    /// The `|||||||` line of diff3/zdiff3 style markers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_line: Option<u64>,
    /// The `=======` line.
    pub sep_line: Option<u64>,
    /// The `>>>>>>>` line; null when the region is never closed.
    pub end_line: Option<u64>,
}

impl Tool for Read {
    type Input = ReadInput;
    type Output = Local<ReadData>;

    const NAME: &'static str = "conflict.read";
    const TITLE: &'static str = "Read the active conflict";
    const DESCRIPTION: &'static str = "The conflict in progress as data: the operation (merge, rebase, cherry-pick, revert, am), the ours/theirs commits with subjects, and per conflicted file its kind (both-modified, deleted-by-us, …), the base/ours/theirs contents (capped by maxBytesPerSide, binary flagged, non-UTF-8 as base64) and the line ranges of conflict-marker regions in the working file. Answers inConflict:false when nothing is unmerged.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: ReadInput) -> Result<Self::Output, ToolError> {
        let repo = repo::open(&ctx.config, "repoPath", &input.repo_path, &ctx.cancel).await?;
        let worktree = repo.require_worktree()?.to_path_buf();
        let git = Git::new(&repo, &ctx.cancel);
        let max_files = input.max_files.usize();
        let per_side = input.max_bytes_per_side.usize();
        let git_dir = repo.git_dir.clone();
        let (operation, theirs_oid) = crate::safe_file::off_thread(&ctx.cancel, move || {
            let (operation, theirs_file) = operation(&git_dir);
            (operation, theirs_file.and_then(|f| first_oid(&git_dir, f)))
        })
        .await?;
        let done = git
            .cmd(["ls-files", "-u", "-z"])
            .stream(Records::new(Stages::new(max_files)))
            .await?;
        let stages = done.sink.finish(true).map_err(parse_failed)?;
        if stages.unmerged_total == 0 {
            let hint = match operation {
                Some("am") if !staged_changes(&git).await? => AM_STOPPED_CLEAN.to_owned(),
                Some(op) => format!(
                    "A {op} is in progress but no path is unmerged: every conflict is resolved. Review and continue it (git {op} --continue) or abort it."
                ),
                None => "No merge, rebase, cherry-pick, revert or am is in progress and no path is unmerged. Use repo.conflictPreflight to predict conflicts before an operation.".into(),
            };
            let data = ReadData {
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
            };
            return Ok(Local::new::<Self>(&repo, data));
        }
        let operation = operation.unwrap_or("unknown");
        let head = git.head().await?;
        let subjects = subjects(&git, head.iter().chain(theirs_oid.iter())).await?;
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
        let guidance = match operation {
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
        };
        let data = ReadData {
            in_conflict: true,
            operation: Some(operation),
            hint: None,
            ours: head.as_ref().map(commit_ref),
            theirs: theirs_oid.as_ref().map(commit_ref),
            conflicted_file_count: Some(stages.unmerged_total),
            file_list_truncated: Some(stages.unmerged_truncated()),
            max_bytes_per_side: Some(per_side as u64),
            guidance: Some(guidance.into()),
            files,
        };
        Ok(Local::new::<Self>(&repo, data))
    }
}

/// `git am` that stopped with nothing staged never got to a conflict: the patch did not
/// apply (or was empty), and nothing in the files awaits resolution.
const AM_STOPPED_CLEAN: &str = "git am stopped on a patch without any conflict: the patch did not apply (or was empty), so no file was changed and nothing is unmerged. Look at it with `git am --show-current-patch=diff`; apply it by hand and `git add` the result before `git am --continue`, or skip it (`git am --skip`) or abort (`git am --abort`).";

/// Whether the index differs from HEAD (compared without looking at the working tree).
async fn staged_changes(git: &Git<'_>) -> Result<bool, ToolError> {
    let out = git
        .cmd(["diff-index", "--cached", "--quiet", "HEAD", "--"])
        .capture_allowing(4096, &[0, 1])
        .await?;
    Ok(out.code == Some(1))
}

/// The operation that can stop on a conflict and the file naming the commit it applies.
fn operation(git_dir: &Path) -> (Option<&'static str>, Option<&'static str>) {
    match crate::git::operation::in_progress(git_dir) {
        Some(op) if op.can_conflict() => (Some(op.kind), op.head_file()),
        _ => (None, None),
    }
}

/// The first object id in a `*_HEAD` file (an octopus merge lists several).
fn first_oid(git_dir: &Path, file: &str) -> Option<Oid> {
    let bytes = crate::safe_file::read_prefix_in(git_dir, file, 4096).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    Oid::parse(text.lines().next()?.split_whitespace().next()?)
}

async fn subjects<'o>(
    git: &Git<'_>,
    oids: impl Iterator<Item = &'o Oid>,
) -> Result<HashMap<Oid, String>, ToolError> {
    let oids: Vec<String> = oids.map(Oid::to_string).collect();
    if oids.is_empty() {
        return Ok(HashMap::new());
    }
    let done = git
        .cmd(["log", "-z", "--no-walk=unsorted", &log::format()])
        .args(oids.iter())
        .stream(Records::new(Log::new(oids.len())))
        .await?;
    let log = done.sink.finish(true).map_err(parse_failed)?;
    Ok(log
        .commits
        .into_iter()
        .map(|c| (c.oid, c.subject))
        .collect())
}

/// The first bytes of every non-gitlink side, read through one `cat-file --batch`.
async fn contents(
    git: &Git<'_>,
    files: &[Unmerged],
    per_side: usize,
) -> Result<HashMap<Oid, crate::parse::cat_file_batch::Object>, ToolError> {
    let mut wanted: Vec<&Oid> = files
        .iter()
        .flat_map(|u| u.stages.iter().flatten())
        .filter(|(mode, _)| *mode != GITLINK)
        .map(|(_, oid)| oid)
        .collect();
    wanted.sort_unstable();
    wanted.dedup();
    if wanted.is_empty() {
        return Ok(HashMap::new());
    }
    let stdin: Vec<u8> = wanted
        .iter()
        .flat_map(|o| format!("{o}\n").into_bytes())
        .collect();
    let done = git
        .cmd(["cat-file", "--batch"])
        .stdin(stdin)
        .stream(Batch::new(per_side.max(BINARY_SNIFF), CONTENT_BUDGET))
        .await?;
    let answers = done.sink.finish(true).map_err(parse_failed)?;
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
    read_working(worktree, path).map(|bytes| marker_regions(&bytes))
}

fn conflict_file(
    u: &Unmerged,
    working: Working,
    contents: &HashMap<Oid, crate::parse::cat_file_batch::Object>,
    per_side: usize,
) -> ConflictFile {
    let side = |slot: usize| {
        u.stages[slot]
            .as_ref()
            .map(|(mode, oid)| side_content(*mode, oid, contents.get(oid), per_side))
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

fn side_content(
    mode: u32,
    oid: &Oid,
    object: Option<&crate::parse::cat_file_batch::Object>,
    per_side: usize,
) -> SideContent {
    let mut side = SideContent {
        sha: oid.to_string(),
        mode: format!("{mode:06o}"),
        size: None,
        binary: false,
        truncated: false,
        content: None,
        content_base64: None,
        encoding: None,
        submodule: mode == GITLINK,
    };
    let Some(object) = object else {
        return side;
    };
    side.size = Some(object.size);
    let sniff = &object.bytes[..object.bytes.len().min(BINARY_SNIFF)];
    if sniff.contains(&0) {
        side.binary = true;
        return side;
    }
    let mut kept = &object.bytes[..object.bytes.len().min(per_side)];
    side.truncated = (kept.len() as u64) < object.size;
    match std::str::from_utf8(kept) {
        Ok(text) => side.content = Some(text.to_owned()),
        // A cut through the middle of a character: drop the partial character.
        Err(e) if side.truncated && e.error_len().is_none() => {
            kept = &kept[..e.valid_up_to()];
            side.content = Some(String::from_utf8_lossy(kept).into_owned());
        }
        Err(_) => {
            side.content_base64 = Some(base64::engine::general_purpose::STANDARD.encode(kept));
            side.encoding = Some("non-utf8");
        }
    }
    side
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

/// Conflict-marker regions: a line starting with exactly seven `<`, `|`, `=`, `>`
/// (followed by a space or the end of the line) opens, splits or closes a region.
fn marker_regions(bytes: &[u8]) -> (Vec<Region>, bool) {
    fn marker(line: &[u8], ch: u8) -> bool {
        line.len() >= 7
            && line[..7].iter().all(|b| *b == ch)
            && matches!(line.get(7), None | Some(b' ') | Some(b'\r'))
    }
    let mut regions = Vec::new();
    let mut open: Option<Region> = None;
    let mut truncated = false;
    for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
        let n = i as u64 + 1;
        if marker(line, b'<') {
            if let Some(unclosed) = open.take() {
                regions.push(unclosed);
            }
            open = Some(Region {
                start_line: n,
                base_line: None,
                sep_line: None,
                end_line: None,
            });
        } else if let Some(region) = open.as_mut() {
            if marker(line, b'|') && region.sep_line.is_none() && region.base_line.is_none() {
                region.base_line = Some(n);
            } else if marker(line, b'=') && region.sep_line.is_none() {
                region.sep_line = Some(n);
            } else if marker(line, b'>') && region.sep_line.is_some() {
                region.end_line = Some(n);
                regions.extend(open.take());
            }
        }
        if regions.len() >= MAX_REGIONS {
            truncated = true;
            break;
        }
    }
    regions.extend(open);
    (regions, truncated)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_regions_two_way_and_diff3() {
        let text = b"a\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> feat\nb\n\
<<<<<<< HEAD\nx\n||||||| base\ny\n=======\nz\n>>>>>>> feat\n=======\n<<<<<<<\n";
        let (regions, truncated) = marker_regions(text);
        assert!(!truncated);
        insta::assert_debug_snapshot!(regions, @"
        [
            Region {
                start_line: 2,
                base_line: None,
                sep_line: Some(
                    4,
                ),
                end_line: Some(
                    6,
                ),
            },
            Region {
                start_line: 8,
                base_line: Some(
                    10,
                ),
                sep_line: Some(
                    12,
                ),
                end_line: Some(
                    14,
                ),
            },
            Region {
                start_line: 16,
                base_line: None,
                sep_line: None,
                end_line: None,
            },
        ]
        ");
    }

    #[test]
    fn lookalikes_are_not_markers() {
        let (regions, _) = marker_regions(b"<<<<<<<< eight\n======= x\n<<<<<<x\n");
        assert!(regions.is_empty());
    }
}
