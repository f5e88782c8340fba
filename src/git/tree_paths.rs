//! The paths a commit's tree tracks that the index does not: where checking that tree
//! out writes a file (or a directory) over whatever untracked file is on disk. Git treats
//! an ignored file there as expendable and overwrites it without a word.

use super::{Git, GitError};

/// Every path the tree of `commit` tracks and the index does not (`diff-index --cached`:
/// the entries the index lacks), and with `since` every path a commit of
/// `since..commit` names (`log --name-only`: a rebase writes each replayed commit's
/// files, even one a later commit removes again). Each path as git wrote it, byte for
/// byte; some may be tracked, absent or listed twice.
pub async fn beyond_index(
    git: &Git<'_>,
    commit: &str,
    since: Option<&str>,
) -> Result<Vec<Vec<u8>>, GitError> {
    let missing = git
        .cmd([
            "diff-index",
            "--cached",
            "-z",
            "--name-only",
            "--no-renames",
            "--diff-filter=D",
            "--end-of-options",
            commit,
            "--",
        ])
        .capture(super::DEFAULT_CAP * 4)
        .await?;
    let mut out = names(&missing.sink.bytes);
    if let Some(since) = since {
        let range = format!("{since}..{commit}");
        let replayed = git
            .cmd([
                "log",
                "--format=",
                "--name-only",
                "-z",
                "--no-renames",
                "--end-of-options",
                range.as_str(),
                "--",
            ])
            .capture(super::DEFAULT_CAP * 4)
            .await?;
        out.extend(names(&replayed.sink.bytes));
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn names(bytes: &[u8]) -> Vec<Vec<u8>> {
    bytes
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}
