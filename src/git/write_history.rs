//! The writes that move a checked-out branch through its history — merge, squash,
//! rebase, reset — and the ones that take a path's changes away (discard), each a fixed
//! argv around checked values: revisions after `--end-of-options` or as object ids read
//! from git, branch names validated beforehand, paths after `--` as literal pathspecs.
//! They run through [`GitWrite`], so hooks and signing apply as to a manual command.

use std::ffi::OsString;

use super::write::{GitWrite, Ran};
use crate::process::RunError;

/// How `git reset` moves the index and the worktree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetMode {
    Soft,
    Mixed,
    Hard,
}

impl ResetMode {
    pub fn flag(self) -> &'static str {
        match self {
            ResetMode::Soft => "--soft",
            ResetMode::Mixed => "--mixed",
            ResetMode::Hard => "--hard",
        }
    }
}

fn literal(words: &[&str], paths: &[String]) -> Vec<OsString> {
    std::iter::once("--literal-pathspecs")
        .chain(words.iter().copied())
        .map(OsString::from)
        .chain(std::iter::once(OsString::from("--")))
        .chain(paths.iter().map(OsString::from))
        .collect()
}

impl GitWrite<'_> {
    /// `git merge --no-edit <source>` (fast-forwards when git would). `source` is the
    /// name the user gave (validated, never an option), so the merge commit's message
    /// (`Merge branch 'x' into y`) and the reflog entries (`merge x: Fast-forward`) are
    /// git's own words, as after the same command typed by hand.
    pub async fn merge(&self, source: &str) -> Result<Ran, RunError> {
        self.run(["merge", "--no-edit", "--end-of-options", source])
            .await
    }

    /// `git merge --ff-only <oid>`: the checked-out branch fast-forwarded to `oid`, the
    /// `post-merge` hook run as after a manual fast-forward.
    pub async fn merge_ff_only(&self, oid: &str) -> Result<Ran, RunError> {
        self.run(["merge", "--ff-only", "--end-of-options", oid])
            .await
    }

    /// `git merge --squash <source>` (the user's name, as for [`GitWrite::merge`]): the
    /// changes staged, nothing committed.
    pub async fn merge_squash(&self, source: &str) -> Result<Ran, RunError> {
        self.run(["merge", "--squash", "--end-of-options", source])
            .await
    }

    /// `git commit --no-edit`: commits the index with the message git prepared
    /// (`SQUASH_MSG`), hooks and signing as configured.
    pub async fn commit_prepared(&self) -> Result<Ran, RunError> {
        self.run(["commit", "--no-edit"]).await
    }

    /// `git merge --abort`.
    pub async fn merge_abort(&self) -> Result<Ran, RunError> {
        self.run(["merge", "--abort"]).await
    }

    /// `git <kind> --abort` for an operation git stopped in the middle of (`rebase`, `am`,
    /// `merge`, `cherry-pick`, `revert`): back to where it started. `None` for a kind
    /// that has no `--abort`.
    pub async fn abort_in_progress(&self, kind: &str) -> Option<Result<Ran, RunError>> {
        let kind = ["rebase", "am", "merge", "cherry-pick", "revert"]
            .into_iter()
            .find(|k| *k == kind)?;
        Some(self.run([kind, "--abort"]).await)
    }

    /// `git rebase --continue` of a rebase that has nothing left to replay: it only
    /// moves the branch to the rebased commits and checks it out again.
    pub async fn rebase_continue(&self) -> Result<Ran, RunError> {
        self.run(["rebase", "--continue"]).await
    }

    /// `git reset --merge`: undoes a merge that left no `MERGE_HEAD` (a squash),
    /// keeping unrelated local changes.
    pub async fn reset_merge(&self) -> Result<Ran, RunError> {
        self.run(["reset", "--merge"]).await
    }

    /// `git rebase --no-autostash <upstream> <tip>`: replays `upstream..tip` on
    /// `upstream`, ending detached on the result. `upstream` is the user's branch name
    /// (the `pre-rebase` hook and the reflog see it as after a manual rebase), `tip` an
    /// object id, so that no branch but the one checked out ever moves.
    pub async fn rebase_detached(&self, upstream: &str, tip: &str) -> Result<Ran, RunError> {
        self.run([
            "rebase",
            "--no-autostash",
            "--no-update-refs",
            "--end-of-options",
            upstream,
            tip,
        ])
        .await
    }

    /// `git switch --no-guess <branch>` (a validated branch name).
    pub async fn switch(&self, branch: &str) -> Result<Ran, RunError> {
        self.run(["switch", "--no-guess", branch]).await
    }

    /// `git reset --soft|--mixed|--hard <target>`, `target` as the user named it (a
    /// validated revision), so the reflog reads `reset: moving to HEAD~1` as after the
    /// same command typed by hand; git sets `ORIG_HEAD` as it always does.
    pub async fn reset(&self, mode: ResetMode, target: &str) -> Result<Ran, RunError> {
        self.run(["reset", "-q", mode.flag(), "--end-of-options", target])
            .await
    }

    /// `git stash store -m message <commit>`: records a stash commit built beforehand.
    pub async fn stash_store(&self, commit: &str, message: &str) -> Result<Ran, RunError> {
        self.run(["stash", "store", "-m", message, commit]).await
    }

    /// `git restore --worktree -- <paths>`: the paths' files back to their staged state.
    pub async fn restore_worktree(&self, paths: &[String]) -> Result<Ran, RunError> {
        self.run(literal(&["restore", "--worktree"], paths)).await
    }

    /// `git clean -f -- <paths>`: the untracked, non-ignored files among exactly these
    /// paths removed (never `-x`, never `-d`: only the files named).
    pub async fn clean_files(&self, paths: &[String]) -> Result<Ran, RunError> {
        self.run(literal(&["clean", "-f", "-q"], paths)).await
    }
}
