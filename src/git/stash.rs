//! The stash: its entries, or only how many there are.

use super::{Git, GitError};
use crate::parse::Records;
use crate::parse::stash::{self, Stashes};

/// The first `max` stash entries, newest first, and how many there are.
pub async fn list(git: &Git<'_>, max: usize) -> Result<Stashes, GitError> {
    let done = git
        .cmd(["log", "-g", "-z", stash::FORMAT, "refs/stash", "--"])
        .stream(Records::new(Stashes::new(max)))
        .await?;
    Ok(done.sink.finish(true)?)
}

/// How many stash entries exist (0 without a stash).
pub async fn count(git: &Git<'_>) -> Result<u64, GitError> {
    let out = git
        .cmd(["rev-list", "--walk-reflogs", "--count", "refs/stash", "--"])
        .capture_allowing(4096, &[0, 128])
        .await?;
    Ok(String::from_utf8_lossy(&out.sink.bytes)
        .trim()
        .parse()
        .unwrap_or(0))
}
