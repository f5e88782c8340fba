//! Object contents through one `git cat-file --batch`, parsed by
//! `crate::parse::cat_file_batch`.

use super::{Git, GitError, Oid};
use crate::parse::cat_file_batch::{Answer, Batch};

/// The first `keep` bytes of each object in `oids` (in that order), `budget` bytes
/// across all of them. No process runs for an empty list.
pub async fn objects(
    git: &Git<'_>,
    oids: &[&Oid],
    keep: usize,
    budget: usize,
) -> Result<Vec<Answer>, GitError> {
    if oids.is_empty() {
        return Ok(Vec::new());
    }
    let stdin: Vec<u8> = oids
        .iter()
        .flat_map(|o| format!("{o}\n").into_bytes())
        .collect();
    let done = git
        .cmd(["cat-file", "--batch"])
        .stdin(stdin)
        .stream(Batch::new(keep, budget))
        .await?;
    Ok(done.sink.finish(true)?)
}

/// git's failure to give an object it listed itself (`missing`, `ambiguous`, …): a
/// caller that needs the object reports it as git's error, never as absent content.
pub fn unreadable(name: &str, reason: &str) -> GitError {
    GitError::failed(
        &["git", "cat-file", "--batch"].map(str::to_owned),
        None,
        &format!("fatal: blob {name} is {reason}"),
    )
}
