//! `git diff-tree`: what one commit changed, against its first parent (or the empty tree
//! for a root commit), with renames found and every diff program of the repository off.

use super::{Git, GitError, Oid};
use crate::parse::Records;
use crate::parse::diff_tree::{NameStatus, Numstat};

/// Flags on every diff-tree run; the format, renames (`-M`) and
/// [`super::diff::SAFE_DIFF`] (no external diff, textconv or colour, whatever the
/// repository configures) follow.
const DIFF_TREE: [&str; 4] = ["diff-tree", "-r", "-z", "--no-commit-id"];

/// What a commit's files are compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Against {
    /// Its only parent.
    Parent,
    /// No parent: everything is added.
    Root,
    /// A merge: its first parent.
    FirstParent,
}

impl Against {
    pub fn name(self) -> &'static str {
        match self {
            Against::Parent => "parent",
            Against::Root => "root",
            Against::FirstParent => "first-parent",
        }
    }
}

/// The changed files of `commit` (whose parents are `parents`): each path with its status
/// (`--name-status`) and its line counts (`--numstat`), the first `max` of each kept and
/// all counted.
pub struct CommitChanges {
    pub against: Against,
    pub names: NameStatus,
    pub stats: Numstat,
}

fn argv(format: &str, sides: &[String]) -> Vec<String> {
    DIFF_TREE
        .iter()
        .chain([&format, &"-M"])
        .chain(super::diff::SAFE_DIFF.iter())
        .map(|s| (*s).to_owned())
        .chain(sides.iter().cloned())
        .collect()
}

pub async fn commit_changes(
    git: &Git<'_>,
    commit: &Oid,
    parents: &[Oid],
    max: usize,
) -> Result<CommitChanges, GitError> {
    let (against, sides) = match parents.first() {
        None => (
            Against::Root,
            vec![
                "--root".to_owned(),
                "--end-of-options".to_owned(),
                commit.to_string(),
            ],
        ),
        Some(first) if parents.len() > 1 => (
            Against::FirstParent,
            vec![first.to_string(), commit.to_string()],
        ),
        Some(_) => (Against::Parent, vec![commit.to_string()]),
    };
    let names = git
        .cmd(argv("--name-status", &sides))
        .stream(Records::new(NameStatus::new(max)));
    let stats = git
        .cmd(argv("--numstat", &sides))
        .stream(Records::new(Numstat::new(max)));
    let (names, stats) = tokio::try_join!(names, stats)?;
    Ok(CommitChanges {
        against,
        names: names.sink.finish(true)?,
        stats: stats.sink.finish(true)?,
    })
}

/// One entry of `diff-tree -r -z --raw` between two trees: `(new mode, new object id,
/// status letter, path)`.
pub type RawChange = (u32, String, u8, String);

/// Every path that differs between the trees `from` and `to`, renames as deletion plus
/// addition.
pub async fn trees_raw(git: &Git<'_>, from: &str, to: &str) -> Result<Vec<RawChange>, GitError> {
    Ok(trees_raw_bytes(git, from, to)
        .await?
        .into_iter()
        .map(|(mode, oid, status, path)| {
            (
                mode,
                oid,
                status,
                String::from_utf8_lossy(&path).into_owned(),
            )
        })
        .collect())
}

/// [`trees_raw`] with each path as git wrote it, byte for byte (a name need not be
/// UTF-8).
pub async fn trees_raw_bytes(
    git: &Git<'_>,
    from: &str,
    to: &str,
) -> Result<Vec<(u32, String, u8, Vec<u8>)>, GitError> {
    let out = git
        .cmd([
            "diff-tree",
            "-r",
            "-z",
            "--no-renames",
            "--raw",
            "--end-of-options",
            from,
            to,
        ])
        .capture(super::DEFAULT_CAP * 4)
        .await?;
    Ok(raw_diff(&out.sink.bytes))
}

fn raw_diff(bytes: &[u8]) -> Vec<(u32, String, u8, Vec<u8>)> {
    let mut out = Vec::new();
    let mut records = bytes.split(|b| *b == 0);
    while let (Some(meta), Some(path)) = (records.next(), records.next()) {
        let meta = String::from_utf8_lossy(meta);
        let fields: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        if let [_, mode_b, _, oid_b, status] = fields.as_slice() {
            let mode = u32::from_str_radix(mode_b, 8).unwrap_or(0);
            let status = status.bytes().next().unwrap_or(b'?');
            out.push((mode, (*oid_b).to_owned(), status, path.to_vec()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_programs_are_always_off() {
        let args = argv("--numstat", &["x".to_owned()]).join(" ");
        assert_eq!(
            args,
            "diff-tree -r -z --no-commit-id --numstat -M --no-ext-diff --no-textconv --no-color x"
        );
    }
}
