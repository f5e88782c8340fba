//! The worktrees of a repository (`git worktree list --porcelain -z`), parsed by
//! `crate::parse::worktree`.

use super::{Git, GitError};
use crate::parse::Records;
use crate::parse::worktree::Worktrees;

/// Every worktree, main first, at most `max` kept; the total counts them all.
pub async fn list(git: &Git<'_>, max: usize) -> Result<Worktrees, GitError> {
    let done = git
        .cmd(["worktree", "list", "--porcelain", "-z"])
        .stream(Records::new(Worktrees::new(max)))
        .await?;
    Ok(done.sink.finish(true)?)
}

/// The branches checked out in some worktree (the `branch` records of [`list`], lossily
/// as text), read from the worktrees' `HEAD` files when they can be, else from git.
pub async fn checked_out(git: &Git<'_>, max: usize) -> Result<Vec<String>, GitError> {
    if let Some(branches) = super::ref_file::checked_out(git.repo) {
        return Ok(branches);
    }
    Ok(list(git, max)
        .await?
        .worktrees
        .into_iter()
        .filter_map(|w| w.branch)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .collect())
}
