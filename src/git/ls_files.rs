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

/// The index entries of exactly `paths` (literal pathspecs), as `ls-files -s -z` prints
/// them, for a digest of what the index holds there.
pub async fn stages_raw_of(git: &Git<'_>, paths: &[String]) -> Result<Vec<u8>, GitError> {
    let out = git
        .cmd(["--literal-pathspecs", "ls-files", "-s", "-z", "--"])
        .args(paths)
        .capture(super::DEFAULT_CAP)
        .await?;
    Ok(out.sink.bytes)
}

/// A path whose worktree side may differ from its index entry, as [`worktree_changes`]
/// lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeChange {
    pub path: Vec<u8>,
    /// Not in the index (and not ignored).
    pub untracked: bool,
}

/// The most output [`worktree_changes`] reads; a worktree with more is refused.
const MAX_LISTING: usize = super::DEFAULT_CAP * 4;

/// The paths whose worktree side differs from the index, each once, never reading HEAD:
/// changed or deleted (`-m -d`; git reads a file's bytes only when its stat data no longer
/// vouch for it, and leaves it out when they match) and every path in a conflict (`-u`),
/// beside every untracked non-ignored file (`-o --exclude-standard`, each file listed).
/// The two walks are independent and run side by side. `None` when a listing is larger
/// than gitward reads.
pub async fn worktree_changes(git: &Git<'_>) -> Result<Option<Vec<WorktreeChange>>, GitError> {
    let tracked = git
        .cmd(["ls-files", "-z", "-t", "-m", "-d", "-u"])
        .capture(MAX_LISTING);
    let untracked = git
        .cmd(["ls-files", "-z", "-o", "--exclude-standard"])
        .capture(MAX_LISTING);
    let (tracked, untracked) = tokio::join!(tracked, untracked);
    let (tracked, untracked) = (tracked?, untracked?);
    if [&tracked, &untracked]
        .iter()
        .any(|out| out.stopped_early || out.sink.truncated)
    {
        return Ok(None);
    }
    let mut out = parse_tracked(&tracked.sink.bytes);
    out.extend(
        untracked
            .sink
            .bytes
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| WorktreeChange {
                path: p.to_vec(),
                untracked: true,
            }),
    );
    Ok(Some(out))
}

/// `-t` records of index entries: a tag, a space, `mode object stage<TAB>` (`-u` turns on
/// the stage format), the path. A path in a conflict or both changed and deleted comes
/// more than once and is kept once.
fn parse_tracked(bytes: &[u8]) -> Vec<WorktreeChange> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for record in bytes.split(|b| *b == 0).filter(|r| r.len() > 2) {
        let rest = &record[2..];
        let path = match rest.iter().position(|b| *b == b'\t') {
            Some(tab) => &rest[tab + 1..],
            None => rest,
        };
        if seen.insert(path) {
            out.push(WorktreeChange {
                path: path.to_vec(),
                untracked: false,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_records_parse_once_per_path() {
        let oid = "a".repeat(40);
        let raw = format!(
            "C 100644 {oid} 0\ta.txt\0R 100644 {oid} 0\tgone\0C 100644 {oid} 0\tgone\0\
             M 100644 {oid} 1\tboth\tx\0M 100644 {oid} 2\tboth\tx\0"
        );
        let got: Vec<String> = parse_tracked(raw.as_bytes())
            .iter()
            .map(|c| String::from_utf8_lossy(&c.path).into_owned())
            .collect();
        assert_eq!(got, ["a.txt", "gone", "both\tx"]);
    }
}
