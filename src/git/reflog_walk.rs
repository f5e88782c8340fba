//! Reflogs read through git (`git reflog list`, `git log -g`), for repositories whose refs
//! live in a reftable; parsed by `crate::parse::reflog_walk`.

use super::{Git, GitError};
use crate::parse::Records;
use crate::parse::reflog_walk::{self, Walk};

/// Largest `git reflog list` output read.
const LIST_CAP: usize = 4 * 1024 * 1024;

impl Git<'_> {
    /// The refs that have a reflog, as `git reflog list` names them.
    pub async fn reflog_refs(&self) -> Result<Vec<String>, GitError> {
        let listed = self.cmd(["reflog", "list"]).capture(LIST_CAP).await?;
        Ok(String::from_utf8_lossy(&listed.sink.bytes)
            .lines()
            .map(str::to_owned)
            .collect())
    }

    /// The entries of the reflogs of `refs`, interleaved by time, newest first within each
    /// ref; git is stopped after `max` entries (`truncated` then says so).
    pub async fn walk_reflogs(&self, refs: &[String], max: usize) -> Result<Walk, GitError> {
        let walked = self
            .cmd([
                "log",
                "-g",
                "-z",
                "--date=raw",
                &reflog_walk::format(),
                "--end-of-options",
            ])
            .args(refs.iter())
            .stream(Records::new(Walk::new(max)))
            .await?;
        Ok(walked.sink.finish(!walked.stopped_early)?)
    }
}
