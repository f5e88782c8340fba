//! Two questions answered from the index file itself, without a git process: the
//! gitlink recorded at one path, and the tree the whole index amounts to when its cache
//! tree says so.
//!
//! Git replaces the index by renaming a finished file over it, so one read is one
//! consistent version. Anything this reader cannot answer with certainty yields `None`
//! and the caller asks git: a file it does not parse, a split index (entries live in
//! another file), a sparse index (directories stand for their files), a conflict or an
//! intent-to-add entry (which the cache tree leaves out).

use std::path::Path;

use super::index_file::{self, Entry};
use super::{ObjectFormat, Oid};

const INTENT_TO_ADD: u16 = 0x2000;
const SKIP_WORKTREE: u16 = 0x4000;
const GITLINK: u32 = 0o160000;

/// The commit the index records as a gitlink (a submodule) at `rel`, unconflicted;
/// `Some(None)` when it records none there, `None` when git must be asked.
pub fn gitlink(index: &Path, format: ObjectFormat, rel: &[u8]) -> Option<Option<Oid>> {
    let mut found = None;
    walk(index, format, &mut |e| {
        if e.path == rel && e.stage() == 0 && e.mode == GITLINK {
            found = Some(e.oid.to_vec());
        }
    })?;
    match found {
        Some(raw) => index_file::oid_of(&raw).map(Some),
        None => Some(None),
    }
}

/// The tree the index amounts to, from a valid cache tree, when every entry is an
/// ordinary unconflicted one; `None` when git must be asked.
pub fn tree(index: &Path, format: ObjectFormat) -> Option<Oid> {
    let mut plain = true;
    let root = walk(index, format, &mut |e| {
        plain &= e.stage() == 0 && e.extended & INTENT_TO_ADD == 0;
    })?;
    if plain { root } else { None }
}

/// [`tree`] of an index file's bytes, already read.
pub fn tree_of(bytes: &[u8], format: ObjectFormat) -> Option<Oid> {
    tree_and_skipped(bytes, format).tree
}

/// What [`tree_and_skipped`] found in one pass over an index.
#[derive(Default)]
pub struct Found {
    /// [`tree_of`] the index.
    pub tree: Option<Oid>,
    /// The unconflicted skip-worktree entries.
    pub skipped: Vec<Skipped>,
    /// The index tracks a `.gitattributes` file (which may ask for line-ending conversion
    /// or a filter).
    pub attributes: bool,
    /// Every entry of the index is in this file and was read: not a split index (whose
    /// shared part holds entries this file does not), not one this reader cannot parse.
    pub whole: bool,
}

/// An entry git keeps out of the worktree on purpose (skip-worktree: a sparse checkout,
/// or `update-index --skip-worktree`). A sparse index's directory entry has the mode of a
/// tree and a path ending in `/`.
pub struct Skipped {
    pub path: Vec<u8>,
    pub mode: u32,
    pub oid: Option<Oid>,
}

/// [`tree_of`], and from the same pass the unconflicted skip-worktree entries and whether
/// a `.gitattributes` file is tracked. A split index lists only the entries this file
/// holds.
pub fn tree_and_skipped(bytes: &[u8], format: ObjectFormat) -> Found {
    let mut plain = true;
    let mut skipped = Vec::new();
    let mut attributes = false;
    let walked = index_file::walk(bytes, format, false, &mut |e| {
        plain &= e.stage() == 0 && e.extended & INTENT_TO_ADD == 0;
        attributes |= e.path == b".gitattributes" || e.path.ends_with(b"/.gitattributes");
        if e.extended & SKIP_WORKTREE != 0 && e.stage() == 0 {
            skipped.push(Skipped {
                path: e.path.to_vec(),
                mode: e.mode,
                oid: index_file::oid_of(e.oid),
            });
        }
    });
    let Some(walked) = walked else {
        return Found::default();
    };
    let tree = walked
        .tree
        .filter(|_| plain && !walked.split && !walked.sparse);
    Found {
        tree,
        skipped,
        attributes,
        whole: !walked.split,
    }
}

/// Every entry of the index file at `index` to `visit`; the valid cache-tree root, if
/// any. `None` for a missing or unreadable file, and for an index whose entries are not
/// all in this file (split) or not all files (sparse).
fn walk(
    index: &Path,
    format: ObjectFormat,
    visit: &mut dyn FnMut(&Entry<'_>),
) -> Option<Option<Oid>> {
    let (bytes, mtime) = index_file::read_with_mtime(index).ok()?;
    mtime?;
    let walked = index_file::walk(&bytes, format, false, visit)?;
    (!walked.split && !walked.sparse).then_some(walked.tree)
}

/// [`index_file::digest`] and [`tree`] from one read of the index at `index`, so both
/// describe the same version of it: the digest (`None` when the file is not an index
/// this parser reads) and the tree (`None` when git must be asked).
pub fn digest_and_tree(index: &Path, format: ObjectFormat) -> (Option<String>, Option<Oid>) {
    let (bytes, mtime) = match index_file::read_with_mtime(index) {
        Ok(read) => read,
        Err(_) => return (None, None),
    };
    let mut plain = true;
    let Some(walked) = index_file::walk(&bytes, format, true, &mut |e| {
        plain &= e.stage() == 0 && e.extended & INTENT_TO_ADD == 0;
    }) else {
        return (None, None);
    };
    let whole = mtime.is_some() && plain && !walked.split && !walked.sparse;
    (walked.digest, walked.tree.filter(|_| whole))
}
