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
use super::{Command, Git, Repo};

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

impl Git<'_> {
    /// `git merge-tree --write-tree <args>`, writing into `scratch` only.
    pub fn merge_tree<I, S>(&self, scratch: &Scratch, args: I) -> Command
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
