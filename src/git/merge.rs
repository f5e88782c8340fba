//! `git merge-tree --write-tree` without writing to the repository.
//!
//! merge-tree stores the merged blobs and trees it computes. Pointing
//! `GIT_OBJECT_DIRECTORY` at a private temporary directory, with the repository's own
//! objects as the only alternate, lets it read everything and write nothing we keep.
//!
//! What git still does to the repository: before writing an object it checks whether the
//! object exists anywhere, alternates included, and if so "freshens" it (`utime` on the
//! pack file or loose object file that holds it) instead of writing. There is no option
//! to turn that off, so a merge whose result contains a tree or blob the repository
//! already has moves that file's modification time; contents never change.
//! Merge drivers are disarmed for every command by [`super::repo`].

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

use super::error::GitError;
use super::{Command, Git, Oid, Repo};
use crate::parse::Records;
use crate::parse::merge_tree::MergeTree;

/// A temporary object directory for `merge-tree` to write into, removed on drop.
pub struct Scratch {
    dir: tempfile::TempDir,
    alternates: OsString,
}

impl Scratch {
    pub fn new(repo: &Repo) -> Result<Scratch, GitError> {
        let dir = tempfile::Builder::new()
            .prefix("gitward-merge-")
            .tempdir()
            .map_err(|e| GitError::internal(format!("cannot create a scratch directory: {e}")))?;
        Ok(Scratch {
            dir,
            alternates: alternate_entry(&repo.common_dir.join("objects")),
        })
    }
}

/// One `merge-tree` run: merge `theirs` into `ours`.
#[derive(Debug, Clone, Copy)]
pub struct MergeQuery<'a> {
    /// A merge base to use instead of the one git would compute (`--merge-base`): the
    /// parent of a commit being replayed, for a rebase step.
    pub base: Option<&'a str>,
    /// Revisions or object ids, placed after `--end-of-options`.
    pub ours: &'a str,
    pub theirs: &'a str,
    /// Keep git's informational messages (the conflict types of each path).
    pub messages: bool,
    /// Unmerged paths kept at most; the total counts them all.
    pub max_paths: usize,
}

/// What `merge-tree` said: its parsed output and its verdict.
#[derive(Debug)]
pub struct Merged {
    pub tree: MergeTree,
    /// Exit 0: the merge is clean.
    pub clean: bool,
}

impl Merged {
    /// The merged tree, which git prints for clean and conflicted merges alike.
    pub fn tree_oid(&self) -> Result<&Oid, GitError> {
        self.tree
            .tree
            .as_ref()
            .ok_or_else(|| GitError::internal("merge-tree printed no tree"))
    }
}

impl MergeQuery<'_> {
    /// The arguments after `merge-tree --write-tree`.
    fn argv(&self) -> Vec<String> {
        let mut argv: Vec<String> = Vec::with_capacity(6);
        if !self.messages {
            argv.push("--no-messages".into());
        }
        argv.push("-z".into());
        if let Some(base) = self.base {
            argv.push(format!("--merge-base={base}"));
        }
        argv.extend(["--end-of-options", self.ours, self.theirs].map(String::from));
        argv
    }

    /// Runs the merge in `scratch`, so nothing is written into the repository.
    pub async fn run(&self, git: &Git<'_>, scratch: &Scratch) -> Result<Merged, GitError> {
        let done = git
            .merge_tree(scratch, self.argv())
            .stream_allowing(Records::new(MergeTree::new(self.max_paths)), &[0, 1])
            .await?;
        let clean = done.code == Some(0);
        let tree = done.sink.finish(!done.stopped_early)?;
        Ok(Merged { tree, clean })
    }
}

impl Git<'_> {
    /// `git merge-tree --write-tree <args>`, writing into `scratch` only.
    fn merge_tree<I, S>(&self, scratch: &Scratch, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        let argv: Vec<OsString> = ["merge-tree".into(), "--write-tree".into()]
            .into_iter()
            .chain(args.into_iter().map(Into::into))
            .collect();
        self.cmd(argv)
            .env("GIT_OBJECT_DIRECTORY", scratch.dir.path())
            .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", &scratch.alternates)
    }
}

/// One entry of `GIT_ALTERNATE_OBJECT_DIRECTORIES`, C-quoted when it holds the list
/// separator or starts with a quote (git unquotes entries that start with `"`).
fn alternate_entry(path: &Path) -> OsString {
    let bytes = path.as_os_str().as_bytes();
    if !bytes.contains(&b':') && bytes.first() != Some(&b'"') {
        return path.as_os_str().to_owned();
    }
    let mut out = vec![b'"'];
    for b in bytes {
        match b {
            b'"' | b'\\' => out.extend_from_slice(&[b'\\', *b]),
            _ => out.push(*b),
        }
    }
    out.push(b'"');
    OsString::from_vec(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_for_a_prediction_and_a_rebase_step() {
        let upstream = MergeQuery {
            base: None,
            ours: "HEAD",
            theirs: "@{upstream}",
            messages: false,
            max_paths: 10,
        };
        assert_eq!(
            upstream.argv().join(" "),
            "--no-messages -z --end-of-options HEAD @{upstream}"
        );
        let step = MergeQuery {
            base: Some("b"),
            ours: "o",
            theirs: "t",
            messages: true,
            ..upstream
        };
        assert_eq!(
            step.argv().join(" "),
            "-z --merge-base=b --end-of-options o t"
        );
    }

    #[test]
    fn alternates_are_quoted_only_when_needed() {
        assert_eq!(
            alternate_entry(Path::new("/r/.git/objects")),
            "/r/.git/objects"
        );
        assert_eq!(
            alternate_entry(Path::new("/a:b/\"q\\/objects")),
            "\"/a:b/\\\"q\\\\/objects\""
        );
    }
}
