//! Index entries with their stages (`git ls-files -z`), parsed by
//! `crate::parse::ls_files_unmerged`.

use super::{Git, GitError};
use crate::parse::Records;
use crate::parse::ls_files_unmerged::{GITLINK, Stages};

/// The unmerged entries of the index (`ls-files -u`), at most `max` paths kept; the
/// total counts them all.
pub async fn unmerged(git: &Git<'_>, max: usize) -> Result<Stages, GitError> {
    let done = git
        .cmd(["ls-files", "-u", "-z"])
        .stream(Records::new(Stages::new(max)))
        .await?;
    Ok(done.sink.finish(true)?)
}

/// The gitlinks (submodule commits) of the index (`ls-files -s`), merged ones and
/// those in a conflict, at most `max` of each kept.
pub async fn gitlinks(git: &Git<'_>, max: usize) -> Result<Stages, GitError> {
    let done = git
        .cmd(["ls-files", "-s", "-z"])
        .stream(Records::new(Stages::new(max).only_mode(GITLINK)))
        .await?;
    Ok(done.sink.finish(true)?)
}

/// Every index entry (`ls-files --stage -z`) exactly as git prints it: mode, object,
/// stage and path of each, for a digest of the whole index.
pub async fn stages_raw(git: &Git<'_>) -> Result<Vec<u8>, GitError> {
    let out = git
        .cmd(["ls-files", "--stage", "-z"])
        .capture(super::DEFAULT_CAP * 16)
        .await?;
    Ok(out.sink.bytes)
}
