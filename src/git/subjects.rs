//! The subject lines of commits named by id, and the time of the last commit.

use std::collections::HashMap;

use super::{Git, GitError, Oid};
use crate::parse::Records;
use crate::parse::log::{self, Log};

impl Git<'_> {
    /// Each commit's subject, by id; no process runs for an empty list.
    pub async fn subjects(&self, oids: &[&Oid]) -> Result<HashMap<Oid, String>, GitError> {
        if oids.is_empty() {
            return Ok(HashMap::new());
        }
        let done = self
            .cmd(["log", "-z", "--no-walk=unsorted", &log::format()])
            .args(oids.iter().map(|o| o.as_str()))
            .stream(Records::new(Log::new(oids.len())))
            .await?;
        let log = done.sink.finish(true)?;
        Ok(log
            .commits
            .into_iter()
            .map(|c| (c.oid, c.subject))
            .collect())
    }

    /// HEAD's committer time in Unix seconds; `None` on an unborn branch.
    pub async fn head_commit_time(&self) -> Result<Option<i64>, GitError> {
        // An unborn branch has no commit: exit 128, no output.
        let last = self
            .cmd(["log", "-1", "--format=%ct"])
            .capture_allowing(64, &[0, 128])
            .await?;
        Ok(last
            .success()
            .then(|| {
                String::from_utf8_lossy(&last.sink.bytes)
                    .trim()
                    .parse()
                    .ok()
            })
            .flatten())
    }
}
