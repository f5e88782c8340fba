//! The commits `git rebase <upstream>` would pick, in the order it would apply them.

use super::{Git, GitError, Oid};
use crate::parse::Records;
use crate::parse::log::{self, Log};

impl Git<'_> {
    /// Non-merge commits of `branch` not already in `upstream` (compared by patch id), in
    /// the sequencer's order (graph order, oldest first); at most `max` kept, every one
    /// counted in `seen`.
    pub async fn rebase_picks(
        &self,
        upstream: &Oid,
        branch: &Oid,
        max: usize,
    ) -> Result<Log, GitError> {
        let range = format!("{upstream}...{branch}");
        let done = self
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
            .stream(Records::new(Log::new(max)))
            .await?;
        Ok(done.sink.finish(true)?)
    }
}
