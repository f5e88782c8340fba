//! What a worktree holds that its HEAD does not: whether a path is in the index, what is
//! staged, and which paths have changed (through [`super::status`]).

use super::status::{StatusQuery, Untracked};
use super::{Git, GitError, RepoRelPath};
use crate::parse::status_v2::Status;

/// Output kept from one of these listings; a worktree's path list, not file contents.
const CAP: usize = 4 * 1024 * 1024;

/// Whether the index holds `path` or anything under it (`ls-files -z -- <path>`).
pub async fn is_tracked(git: &Git<'_>, path: &str) -> Result<bool, GitError> {
    let out = git.cmd(["ls-files", "-z", "--", path]).capture(CAP).await?;
    Ok(!out.sink.bytes.is_empty())
}

/// Paths staged in the index against HEAD (everything on an unborn branch); renames are
/// not paired, so both sides of one are listed.
pub async fn staged_paths(git: &Git<'_>) -> Result<Vec<String>, GitError> {
    let out = git
        .cmd(["diff", "--cached", "--name-only", "-z", "--no-renames"])
        .capture(CAP)
        .await?;
    Ok(nul_records(&out.sink.bytes))
}

/// Changed paths (untracked ones each listed, a rename's source too), limited to `paths`
/// when given.
pub async fn changed_paths(
    git: &Git<'_>,
    paths: Option<&[RepoRelPath]>,
) -> Result<Vec<String>, GitError> {
    let query = StatusQuery {
        untracked: Some(Untracked::All),
        paths,
        ..StatusQuery::default()
    };
    Ok(entry_paths(&query.read(git, MAX_CHANGED).await?))
}

/// Changed paths listed at most; they end up in a message to the agent.
const MAX_CHANGED: usize = 100_000;

/// Every entry's path, each followed by its rename or copy source.
fn entry_paths(status: &Status) -> Vec<String> {
    let text = |p: &[u8]| String::from_utf8_lossy(p).into_owned();
    status
        .entries
        .iter()
        .flat_map(|e| std::iter::once(text(&e.path)).chain(e.orig_path.as_deref().map(text)))
        .collect()
}

fn nul_records(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|b| *b == 0)
        .filter(|r| !r.is_empty())
        .map(|r| String::from_utf8_lossy(r).into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rename_lists_its_source_after_it() {
        use crate::parse::status_v2::{Entry, Kind};
        let entry = |kind, path: &str, orig: Option<&str>| Entry {
            kind,
            xy: *b"R.",
            submodule: None,
            path: path.as_bytes().to_vec(),
            orig_path: orig.map(|o| o.as_bytes().to_vec()),
            score: None,
        };
        let mut status = Status::new(10);
        status.entries = vec![
            entry(Kind::Renamed, "new name.txt", Some("old name.txt")),
            entry(Kind::Changed, "a.txt", None),
            entry(Kind::Untracked, "dir/b.txt", None),
        ];
        assert_eq!(
            entry_paths(&status),
            ["new name.txt", "old name.txt", "a.txt", "dir/b.txt"]
        );
    }

    #[test]
    fn empty_records_are_skipped() {
        assert_eq!(nul_records(b"a\0\0b c\0"), ["a", "b c"]);
        assert!(nul_records(b"").is_empty());
    }
}
