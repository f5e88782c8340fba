//! The git side of an archive: commit the archive's paths, then for a linked proposal
//! fast-forward main (rebasing the proposal first when main moved on), remove the
//! worktree and delete the branch. One function per step; each returns the [`Failure`]
//! that stops the run, and every git command is recorded in `gitOps`.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

use super::steps::{Place, Recovery, Step, Stop, recovery};
use super::{err, rel};
use crate::config::Config;
use crate::git::write::{GitWrite, Ran, Write};
use crate::git::{Git, Repo, head, refs, repo, worktree_state};
use crate::process::CancellationToken;
use crate::progress::Progress;
use crate::specs::openspec;
use crate::specs::target::{Mode, Owner, Target};

/// What the archive needs to finish in git.
pub(super) struct Archived<'a> {
    pub owner: &'a Owner,
    pub target: &'a Target,
    /// The archived change folder (canonical).
    pub folder: &'a Path,
    /// Capabilities with a delta spec.
    pub deltas: &'a [String],
    /// The commit message, already checked.
    pub message: &'a str,
    /// Told each step as it is done.
    pub progress: &'a Progress,
}

/// The steps of a confirmed archive, in order, for its progress: OpenSpec's archive, its
/// spec sync and the metadata, then the commit, and for a linked worktree the merge into
/// main, the worktree's removal and the branch's deletion.
fn total_steps(target: &Target) -> u64 {
    if target.worktree_mode == Mode::Main {
        4
    } else {
        7
    }
}

/// The archive is starting: nothing is done yet.
pub(super) fn started(progress: &Progress, target: &Target) {
    progress.report(0, Some(total_steps(target)), || {
        "archive-change: archiving with OpenSpec".into()
    });
}

/// The `n`th step (`step`) of the archive is done.
fn reached(archived: &Archived<'_>, n: u64, step: Step) {
    let total = total_steps(archived.target);
    archived.progress.report(n, Some(total), || {
        format!("archive-change: {} done", step.name())
    });
}

/// Runs every git step and returns the `finalization` state.
pub(super) async fn finalize(
    config: &Config,
    archived: &Archived<'_>,
    cancel: &CancellationToken,
) -> Value {
    let mut f = Finalizer {
        config,
        cancel,
        place: place(archived.owner, archived.target),
        ops: Vec::new(),
        completed: vec![Step::OpenspecArchive, Step::SpecSync, Step::ArchiveMetadata],
        main_branch: None,
    };
    if !archived.owner.is_git() {
        let mut v = f.done();
        v["skipped"] = "not a git repository".into();
        return v;
    }
    match run_steps(&mut f, archived).await {
        Ok(()) => f.done(),
        Err(failure) => f.failed(failure),
    }
}

async fn run_steps(f: &mut Finalizer<'_>, archived: &Archived<'_>) -> Result<(), Failure> {
    let ws = archived.target.path().to_owned();
    reached(archived, 3, Step::ArchiveMetadata);
    commit(f, archived, &ws).await?;
    f.completed.push(Step::Commit);
    reached(archived, 4, Step::Commit);
    if archived.target.worktree_mode == Mode::Main {
        return Ok(());
    }
    let main = archived.owner.path.clone();
    let branch = f.place.proposal_branch.clone();
    f.main_branch = f.current_branch(&main).await;
    merge_to_main(f, &main, &ws, &branch).await?;
    f.outcome("fast-forward");
    f.completed.push(Step::MergeToMain);
    reached(archived, 5, Step::MergeToMain);
    worktree_remove(f, &main, &ws).await?;
    f.completed.push(Step::WorktreeRemove);
    reached(archived, 6, Step::WorktreeRemove);
    branch_delete(f, &main, &branch).await?;
    f.completed.push(Step::BranchDelete);
    reached(archived, 7, Step::BranchDelete);
    Ok(())
}

pub(super) fn place<'a>(owner: &Owner, target: &'a Target) -> Place<'a> {
    Place {
        main_path: owner.path.display().to_string(),
        workspace_path: &target.worktree_path,
        proposal_branch: super::proposal_branch(&target.proposal_ref.change_id),
    }
}

/// Why the run stopped, and what the agent is told.
struct Failure {
    step: Step,
    kind: Recovery,
    stop: Stop,
    message: String,
    instructions: Vec<String>,
    details: Value,
}

impl Failure {
    fn new(step: Step, kind: Recovery, stop: Stop, message: String) -> Self {
        Failure {
            step,
            kind,
            stop,
            message,
            instructions: Vec::new(),
            details: Value::Null,
        }
    }

    fn unknown(step: Step, stop: Stop, message: String) -> Self {
        Failure::new(step, Recovery::UnknownGitError, stop, message)
    }

    fn instruct(mut self, lines: Vec<String>) -> Self {
        self.instructions = lines;
        self
    }

    fn details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }
}

/// Records git steps and builds the finalization state.
struct Finalizer<'a> {
    config: &'a Config,
    cancel: &'a CancellationToken,
    place: Place<'a>,
    ops: Vec<Value>,
    completed: Vec<Step>,
    main_branch: Option<String>,
}

impl Finalizer<'_> {
    async fn git(&mut self, step: Step, dir: &Path, write: Write<'_>) -> Result<Ran, String> {
        match GitWrite::new(dir, self.cancel).exec(write).await {
            Ok(ran) => {
                self.ops.push(json!({
                    "step": step.name(),
                    "cwd": ran.cwd.display().to_string(),
                    "command": ran.command,
                    "exitCode": ran.code,
                    "stdout": openspec::clip(&ran.stdout, 4000),
                    "stderr": openspec::clip(&ran.stderr, 4000),
                    "ok": ran.ok(),
                }));
                Ok(ran)
            }
            Err(e) => {
                self.ops.push(json!({
                    "step": step.name(), "cwd": dir.display().to_string(),
                    "command": write.shown(),
                    "exitCode": null, "stdout": "", "stderr": e.to_string(), "ok": false,
                }));
                Err(e.to_string())
            }
        }
    }

    fn outcome(&mut self, outcome: &str) {
        if let Some(last) = self.ops.last_mut() {
            last["outcome"] = outcome.into();
        }
    }

    /// The branch checked out in the worktree at `dir`, if it can be read.
    async fn current_branch(&self, dir: &Path) -> Option<String> {
        let repo = self.open(dir).await?;
        let full = head::symbolic_text(&Git::new(&repo, self.cancel))
            .await
            .ok()
            .flatten()?;
        // What `git branch --show-current` prints: the name under refs/heads/.
        full.strip_prefix("refs/heads/")
            .filter(|b| !b.is_empty())
            .map(str::to_owned)
    }

    async fn open(&self, dir: &Path) -> Option<Arc<Repo>> {
        repo::open(self.config, "worktree", &dir.to_string_lossy(), self.cancel)
            .await
            .ok()
    }

    async fn tracked(&self, dir: &Path, path: &str) -> bool {
        match self.open(dir).await {
            Some(repo) => worktree_state::is_tracked(&Git::new(&repo, self.cancel), path)
                .await
                .unwrap_or(false),
            None => false,
        }
    }

    async fn staged(&self, dir: &Path) -> Vec<String> {
        match self.open(dir).await {
            Some(repo) => worktree_state::staged_paths(&Git::new(&repo, self.cancel))
                .await
                .unwrap_or_default(),
            None => Vec::new(),
        }
    }

    async fn dirty(&self, dir: &Path) -> Vec<String> {
        super::changed_paths(self.config, dir, None, self.cancel)
            .await
            .unwrap_or_default()
    }

    async fn branch_exists(&self, dir: &Path, branch: &str) -> bool {
        match self.open(dir).await {
            Some(repo) => {
                let full = [format!("refs/heads/{branch}")];
                refs::existing(&Git::new(&repo, self.cancel), &full)
                    .await
                    .is_ok_and(|found| !found.is_empty())
            }
            None => false,
        }
    }

    /// A rebase (or `git am`) stopped in the worktree at `dir`.
    async fn rebasing(&self, dir: &Path) -> bool {
        let Some(repo) = self.open(dir).await else {
            return false;
        };
        let git_dir = repo.git_dir.clone();
        tokio::task::spawn_blocking(move || {
            crate::git::operation::in_progress(&git_dir)
                .is_some_and(|op| matches!(op.kind, "rebase" | "am"))
        })
        .await
        .unwrap_or(false)
    }

    fn done(self) -> Value {
        let rec = recovery(
            Recovery::None,
            &self.place,
            self.main_branch.as_deref(),
            &self.completed,
            &[],
            Vec::new(),
        );
        json!({
            "ok": true, "gitOps": self.ops, "failedStep": null,
            "mainPath": self.place.main_path, "workspacePath": self.place.workspace_path,
            "recovery": rec,
        })
    }

    fn failed(self, failure: Failure) -> Value {
        let mut instructions = failure.instructions;
        instructions.insert(0, "The OpenSpec archive already succeeded and its metadata says archived: never run the OpenSpec archive again.".into());
        let rec = recovery(
            failure.kind,
            &self.place,
            self.main_branch.as_deref(),
            &self.completed,
            &failure.stop.remaining(),
            instructions,
        );
        let step = failure.step.name();
        let mut error = err(
            &format!("git-{step}-failed"),
            failure.message,
            "Follow finalization.recovery, then call archive-change again with confirm: true to finish the remaining steps.",
        );
        if failure.kind == Recovery::MissingBranch {
            error["code"] = "git-missing-branch".into();
        }
        if !failure.details.is_null() {
            error["details"] = failure.details;
        }
        json!({
            "ok": false, "gitOps": self.ops, "failedStep": step,
            "mainPath": self.place.main_path, "workspacePath": self.place.workspace_path,
            "error": error, "recovery": rec,
        })
    }
}

fn first_line(ran: &Ran) -> String {
    let text = if ran.stderr.trim().is_empty() {
        &ran.stdout
    } else {
        &ran.stderr
    };
    first_nonblank(text, "git failed").trim().to_owned()
}

fn first_nonblank<'t>(text: &'t str, otherwise: &'t str) -> &'t str {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(otherwise)
}

/// The paths this archive touched, relative to the workspace: the archived folder, the
/// old change folder if git tracks it, each synced spec, and OpenSpec's config when the
/// proposal bootstrapped it.
async fn archive_paths(f: &Finalizer<'_>, archived: &Archived<'_>, ws: &Path) -> Vec<String> {
    let name = &archived.target.proposal_ref.change_id;
    let mut paths: Vec<String> = vec![rel(ws, archived.folder)];
    let old = format!("openspec/changes/{name}");
    if f.tracked(ws, &old).await {
        paths.push(old);
    }
    for cap in archived.deltas {
        let p = format!("openspec/specs/{cap}");
        if ws.join(&p).exists() || f.tracked(ws, &p).await {
            paths.push(p);
        }
    }
    let own = "openspec/config.yaml";
    if ws.join(own).exists() && !f.tracked(ws, own).await {
        paths.push(own.to_owned());
    }
    paths
}

/// Staged paths that are not ours and would be swept into the commit.
fn others(staged: Vec<String>, ours: &[String]) -> Vec<String> {
    staged
        .into_iter()
        .filter(|p| {
            !ours
                .iter()
                .any(|o| p == o || p.starts_with(&format!("{o}/")))
        })
        .collect()
}

/// Step `commit`. Staging belongs to it: one `commit` entry in gitOps, which is the
/// staging command when that fails or leaves nothing to commit, else the commit itself.
async fn commit(f: &mut Finalizer<'_>, archived: &Archived<'_>, ws: &Path) -> Result<(), Failure> {
    let paths = archive_paths(f, archived, ws).await;
    let staged_other = others(f.staged(ws).await, &paths);
    if !staged_other.is_empty() {
        let shown = staged_other.join(", ");
        return Err(Failure::new(
            Step::Commit,
            Recovery::DirtyWorkspace,
            Stop::StagedOther,
            format!("other changes are already staged and would be swept into the archive commit: {shown}"),
        )
        .instruct(vec![format!("Unstage or commit these paths yourself first (ask the user): {shown}.")])
        .details(json!({ "paths": staged_other })));
    }
    match f.git(Step::Commit, ws, Write::AddAll(&paths)).await {
        Ok(r) if r.ok() => {}
        Ok(r) => {
            return Err(
                Failure::unknown(Step::Commit, Stop::Commit, first_line(&r)).instruct(vec![
                    "Inspect `git status` in the workspace and stage the archive paths.".into(),
                ]),
            );
        }
        Err(e) => return Err(Failure::unknown(Step::Commit, Stop::Commit, e)),
    }
    if f.staged(ws).await.is_empty() {
        f.outcome("noop");
        return Ok(());
    }
    f.ops.pop();
    match f
        .git(Step::Commit, ws, Write::Commit(archived.message))
        .await
    {
        Ok(r) if r.ok() => {
            f.outcome("created");
            Ok(())
        }
        Ok(r) => {
            f.outcome("failed");
            Err(
                Failure::unknown(Step::Commit, Stop::Commit, first_line(&r)).instruct(vec![
                    "Fix what blocked the commit (a hook, identity, a lock) and call again.".into(),
                ]),
            )
        }
        Err(e) => Err(Failure::unknown(Step::Commit, Stop::Commit, e)),
    }
}

/// Step `merge-to-main`: a fast-forward; when main moved on (and both worktrees are
/// clean), the proposal is rebased onto it and the fast-forward tried again.
async fn merge_to_main(
    f: &mut Finalizer<'_>,
    main: &Path,
    ws: &Path,
    branch: &str,
) -> Result<(), Failure> {
    let merged = f
        .git(Step::MergeToMain, main, Write::MergeFfOnly(branch))
        .await;
    let output = match &merged {
        Ok(r) if r.ok() => return Ok(()),
        Ok(r) => r.combined(),
        Err(e) => e.clone(),
    };
    let dirty_main = f.dirty(main).await;
    let dirty_ws = f.dirty(ws).await;
    if !dirty_main.is_empty() || !dirty_ws.is_empty() {
        return Err(Failure::new(
            Step::MergeToMain,
            Recovery::DirtyWorkspace,
            Stop::MergeDirty,
            format!("the fast-forward failed and uncommitted changes are present (main: {}; workspace: {})", dirty_main.join(", "), dirty_ws.join(", ")),
        )
        .instruct(vec![
            "Ask the user how to protect the listed uncommitted changes (commit or stash them); never discard them.".into(),
            "Then call archive-change again with confirm: true; it rebases the proposal branch if needed, merges and cleans up.".into(),
        ])
        .details(json!({ "main": dirty_main, "workspace": dirty_ws })));
    }
    if !f.branch_exists(main, branch).await {
        return Err(Failure::new(
            Step::MergeToMain,
            Recovery::MissingBranch,
            Stop::MissingBranch,
            format!("the proposal branch {branch} does not exist"),
        )
        .instruct(vec![format!(
            "Find where the proposal's commits are (the worktree {} or the reflog) and restore {branch}.",
            ws.display()
        )]));
    }
    let rebasing = f.rebasing(ws).await;
    let Some(main_branch) = f
        .main_branch
        .clone()
        .filter(|_| not_fast_forward(&output) && !rebasing)
    else {
        return Err(Failure::unknown(
            Step::MergeToMain,
            Stop::MergeUnknown,
            first_nonblank(&output, "merge failed").to_owned(),
        )
        .instruct(vec![
            "Inspect the git state of both worktrees before retrying.".into(),
        ]));
    };
    rebase_onto_main(f, ws, branch, &main_branch).await?;
    f.completed.push(Step::RebaseOntoMain);
    merge_retry(f, main, branch).await
}

fn not_fast_forward(output: &str) -> bool {
    output.contains("Not possible to fast-forward")
        || output.contains("not possible to fast-forward")
        || output.contains("non-fast-forward")
}

/// Step `rebase-onto-main`.
async fn rebase_onto_main(
    f: &mut Finalizer<'_>,
    ws: &Path,
    branch: &str,
    main_branch: &str,
) -> Result<(), Failure> {
    let text = match f
        .git(Step::RebaseOntoMain, ws, Write::Rebase(main_branch))
        .await
    {
        Ok(r) if r.ok() => {
            f.outcome("rebased");
            return Ok(());
        }
        Ok(r) => r.combined(),
        Err(e) => e,
    };
    if rebase_conflict(&text) || f.rebasing(ws).await {
        return Err(Failure::new(
            Step::RebaseOntoMain,
            Recovery::RebaseConflict,
            Stop::RebaseConflict,
            format!("rebasing {branch} onto {main_branch} stopped on a conflict"),
        )
        .instruct(vec![
            format!("In {}, resolve the conflicts and run `git rebase --continue`, or run `git rebase --abort` (ask the user which).", ws.display()),
            "Then call archive-change again with confirm: true to merge and clean up.".into(),
        ]));
    }
    Err(Failure::unknown(
        Step::RebaseOntoMain,
        Stop::RebaseUnknown,
        first_nonblank(&text, "rebase failed").to_owned(),
    ))
}

fn rebase_conflict(text: &str) -> bool {
    text.contains("CONFLICT")
        || text.contains("conflict")
        || text.contains("could not apply")
        || text.contains("resolve all conflicts")
}

/// Step `merge-to-main-retry`: the fast-forward after the rebase.
async fn merge_retry(f: &mut Finalizer<'_>, main: &Path, branch: &str) -> Result<(), Failure> {
    let step = Step::MergeToMainRetry;
    match f.git(step, main, Write::MergeFfOnly(branch)).await {
        Ok(r) if r.ok() => Ok(()),
        Ok(r) => Err(Failure::unknown(step, Stop::MergeRetry, first_line(&r))),
        Err(e) => Err(Failure::unknown(step, Stop::MergeRetry, e)),
    }
}

/// Step `worktree-remove`; uncommitted work left in the worktree stops it.
async fn worktree_remove(f: &mut Finalizer<'_>, main: &Path, ws: &Path) -> Result<(), Failure> {
    let step = Step::WorktreeRemove;
    let message = match f.git(step, main, Write::WorktreeRemove(ws)).await {
        Ok(r) if r.ok() => return Ok(()),
        Ok(r) => first_line(&r),
        Err(e) => e,
    };
    let dirty = f.dirty(ws).await;
    if dirty.is_empty() {
        return Err(Failure::unknown(step, Stop::Cleanup, message));
    }
    let shown = dirty.join(", ");
    Err(Failure::new(
        step,
        Recovery::DirtyWorkspace,
        Stop::Cleanup,
        format!("the linked worktree still has uncommitted changes that are not part of the archive: {shown}"),
    )
    .instruct(vec![
        format!("The archive is merged. Ask the user what to do with these files in {}: {shown}. Never discard them unasked.", ws.display()),
        "Then call archive-change again with confirm: true to remove the worktree and delete the branch.".into(),
    ])
    .details(json!({ "workspace": dirty })))
}

/// Step `branch-delete`.
async fn branch_delete(f: &mut Finalizer<'_>, main: &Path, branch: &str) -> Result<(), Failure> {
    let step = Step::BranchDelete;
    match f.git(step, main, Write::BranchDelete(branch)).await {
        Ok(r) if r.ok() => Ok(()),
        Ok(r) => Err(Failure::unknown(step, Stop::Cleanup, first_line(&r))),
        Err(e) => Err(Failure::unknown(step, Stop::Cleanup, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn staged_paths_under_ours_are_ours() {
        let ours = ["openspec/specs/auth".to_owned(), "a".to_owned()];
        let staged = [
            "openspec/specs/auth/spec.md",
            "openspec/specs/authz/x",
            "a",
            "ab",
            "b",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(others(staged, &ours), ["openspec/specs/authz/x", "ab", "b"]);
    }

    #[test]
    fn gits_refusals_are_read_by_their_words() {
        assert!(not_fast_forward(
            "fatal: Not possible to fast-forward, aborting."
        ));
        assert!(not_fast_forward("hint: ... non-fast-forward"));
        assert!(!not_fast_forward(
            "fatal: refusing to merge unrelated histories"
        ));
        assert!(rebase_conflict(
            "CONFLICT (content): Merge conflict in a.txt"
        ));
        assert!(rebase_conflict("error: could not apply 1234abc... x"));
        assert!(!rebase_conflict("fatal: invalid upstream 'main'"));
    }

    #[test]
    fn the_first_line_prefers_stderr() {
        let ran = |stdout: &str, stderr: &str| Ran {
            command: Vec::new(),
            cwd: PathBuf::new(),
            code: Some(1),
            stdout: stdout.into(),
            stderr: stderr.into(),
        };
        assert_eq!(first_line(&ran("out", "\n  err line \nmore")), "err line");
        assert_eq!(first_line(&ran("out\n", " \n")), "out");
        assert_eq!(first_line(&ran("", "")), "git failed");
    }
}
