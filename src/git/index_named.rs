//! The index entries of a few named paths, read from the index file in the same pass
//! that digests it ([`super::index_file`]), without a git process: git itself would
//! load all the entries of a large index to answer for one path.
//!
//! For each name: its own entries (every stage), whether entries lie below it (it is a
//! directory in the index) and whether an entry is one of its parent directories (it
//! lies inside a submodule or beyond a tracked file). A split index, a sparse index
//! (directory entries) or a file this parser does not read yields `None`: the caller
//! asks git instead.

use std::collections::HashMap;
use std::path::Path;

use super::ObjectFormat;
use super::index_file::{Entry, read_with_mtime, walk};

const ASSUME_VALID: u16 = 0x8000;
const SKIP_WORKTREE: u16 = 0x4000;
const INTENT_TO_ADD: u16 = 0x2000;
const DIRECTORY: u32 = 0o040000;

/// One index entry of a named path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedEntry {
    pub mode: u32,
    /// The object id, hex.
    pub oid: String,
    pub stage: u16,
    /// assume-valid, skip-worktree or intent-to-add: git does not compare this entry's
    /// file as usual.
    pub special: bool,
    /// ctime s, ns, mtime s, ns, dev, ino, uid, gid, size, as the index recorded them.
    pub stat: [u32; 9],
}

impl NamedEntry {
    /// `mode oid stage` plus a mark for the special flags: the identity of the entry.
    pub fn label(&self) -> String {
        let special = if self.special { " special" } else { "" };
        format!("{:o} {} {}{special}", self.mode, self.oid, self.stage)
    }
}

/// What the index holds for one name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Named {
    pub entries: Vec<NamedEntry>,
    /// Entries lie below the name: it is a directory in the index.
    pub below: bool,
    /// An entry is a parent directory of the name (a submodule, or a file).
    pub above: bool,
}

/// One reading of the index for `names`.
#[derive(Debug, Clone)]
pub struct Reading {
    /// The digest of every entry, as [`super::index_file::digest`] gives it, when asked.
    pub digest: Option<String>,
    /// The index file's modification time, `None` without an index.
    pub mtime: Option<(i64, i64)>,
    /// One per name, in order.
    pub named: Vec<Named>,
    /// A `.gitattributes` file is tracked somewhere: content may be converted on the
    /// way into the index.
    pub attributes: bool,
}

/// Reads the index at `path` once for `names` (repository-relative, `/`-separated, no
/// trailing slash), digesting it too with `digest`. `None` when the file cannot be read
/// this way.
pub fn read(path: &Path, format: ObjectFormat, names: &[&[u8]], digest: bool) -> Option<Reading> {
    let (bytes, mtime) = read_with_mtime(path).ok()?;
    let mut matcher = Matcher::new(names);
    let mut named = vec![Named::default(); names.len()];
    let mut attributes = false;
    let mut sparse = false;
    let walked = walk(&bytes, format, digest, &mut |e: &Entry<'_>| {
        sparse |= e.mode == DIRECTORY;
        attributes |= e.path == b".gitattributes" || e.path.ends_with(b"/.gitattributes");
        matcher.visit(e, &mut named);
    })?;
    if walked.split || sparse {
        return None;
    }
    Some(Reading {
        digest: walked.digest,
        mtime,
        named,
        attributes,
    })
}

/// Finds the names among the entries: by comparing with each name when they are few,
/// through maps when they are many.
enum Matcher<'a> {
    Few(&'a [&'a [u8]]),
    Many {
        exact: HashMap<&'a [u8], usize>,
        parents: HashMap<&'a [u8], Vec<usize>>,
    },
}

impl<'a> Matcher<'a> {
    const FEW: usize = 16;

    fn new(names: &'a [&'a [u8]]) -> Matcher<'a> {
        if names.len() <= Self::FEW {
            return Matcher::Few(names);
        }
        let exact = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        let mut parents: HashMap<&[u8], Vec<usize>> = HashMap::new();
        for (i, name) in names.iter().enumerate() {
            for (at, _) in name.iter().enumerate().filter(|(_, b)| **b == b'/') {
                parents.entry(&name[..at]).or_default().push(i);
            }
        }
        Matcher::Many { exact, parents }
    }

    fn visit(&mut self, e: &Entry<'_>, named: &mut [Named]) {
        let path = e.path;
        match self {
            Matcher::Few(names) => {
                for (name, n) in names.iter().zip(named.iter_mut()) {
                    let (short, long) = if path.len() <= name.len() {
                        (path, *name)
                    } else {
                        (*name, path)
                    };
                    if !long.starts_with(short) {
                        continue;
                    }
                    match long.get(short.len()) {
                        None => n.entries.push(entry(e)),
                        Some(b'/') if short.len() == path.len() => n.above = true,
                        Some(b'/') => n.below = true,
                        Some(_) => {}
                    }
                }
            }
            Matcher::Many { exact, parents } => {
                if let Some(i) = exact.get(path) {
                    named[*i].entries.push(entry(e));
                }
                if let Some(is) = parents.get(path) {
                    for i in is {
                        named[*i].above = true;
                    }
                }
                for (at, _) in path.iter().enumerate().filter(|(_, b)| **b == b'/') {
                    if let Some(i) = exact.get(&path[..at]) {
                        named[*i].below = true;
                    }
                }
            }
        }
    }
}

fn entry(e: &Entry<'_>) -> NamedEntry {
    NamedEntry {
        mode: e.mode,
        oid: e.oid.iter().map(|b| format!("{b:02x}")).collect(),
        stage: e.stage(),
        special: e.flags & ASSUME_VALID != 0 || e.extended & (SKIP_WORKTREE | INTENT_TO_ADD) != 0,
        stat: e.stat,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_index_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let r = read(&dir.path().join("index"), ObjectFormat::Sha1, &[b"a"], true).unwrap();
        assert_eq!(r.named, [Named::default()]);
        assert_eq!(r.mtime, None);
        assert!(!r.attributes);
    }
}
