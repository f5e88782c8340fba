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
    /// `git merge --no-edit -m message <oid>` (fast-forwards when git would).
    pub async fn merge(&self, oid: &str, message: &str) -> Result<Ran, RunError> {
        self.run(["merge", "--no-edit", "-m", message, "--end-of-options", oid])
            .await
    }

    /// `git merge --squash <oid>`: the changes staged, nothing committed.
    pub async fn merge_squash(&self, oid: &str) -> Result<Ran, RunError> {
        self.run(["merge", "--squash", "--end-of-options", oid])
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
    /// `upstream`, ending detached on the result (both are object ids).
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

    /// Moves `refname` from `old` to `new` (both object ids), guarded on `old`.
    pub async fn move_ref(
        &self,
        refname: &str,
        new: &str,
        old: &str,
        message: &str,
    ) -> Result<Ran, RunError> {
        self.run(["update-ref", "-m", message, refname, new, old])
            .await
    }

    /// Points `HEAD` at the branch `refname`.
    pub async fn head_to(&self, refname: &str, message: &str) -> Result<Ran, RunError> {
        self.run(["symbolic-ref", "-m", message, "HEAD", refname])
            .await
    }

    /// `git reset --soft|--mixed|--hard <oid>`.
    pub async fn reset(&self, mode: ResetMode, oid: &str) -> Result<Ran, RunError> {
        self.run(["reset", "-q", mode.flag(), "--end-of-options", oid])
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
