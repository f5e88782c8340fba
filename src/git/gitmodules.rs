//! The submodules a `.gitmodules` file declares, read with `git config --file` (which
//! runs no program) and parsed by `crate::parse::submodule`.

use std::path::Path;

use super::{Git, GitError};
use crate::parse::Records;
use crate::parse::submodule::Gitmodules;

/// The `submodule.*` entries of `file`, at most `max` kept; `None` when the file has
/// no submodule section or git cannot parse it.
pub async fn declared(
    git: &Git<'_>,
    file: &Path,
    max: usize,
) -> Result<Option<Gitmodules>, GitError> {
    let done = git
        .cmd(["config", "-z", "--file"])
        .arg(file.as_os_str())
        .args(["--get-regexp", r"^submodule\."])
        .stream_allowing(Records::new(Gitmodules::new(max)), &[0, 1])
        .await?;
    if done.code != Some(0) {
        return Ok(None);
    }
    Ok(done.sink.finish(true).ok())
}
