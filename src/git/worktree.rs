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
