//! The entries of an index and the trees git already knows for its directories, read from
//! index bytes without a git process, so a restore point can build only the trees that
//! changed (`git mktree`) instead of rewriting a copy of the whole index twice.
//!
//! Only what `git write-tree` would store is kept: stage-0 entries that are not
//! intent-to-add, plus the paths in conflict (git refuses to write a tree of those) and
//! the valid nodes of the cache tree (`TREE` extension), which git itself reuses when it
//! writes a tree. Nothing is hashed here. A split index, a sparse index or anything this
//! reader does not understand yields `None`, and callers take git's own path.

use std::collections::HashMap;

use super::{ObjectFormat, Oid};

/// Stat data before each entry's mode: ctime, mtime (seconds and nanoseconds), dev, ino.
const STAT_BEFORE_MODE: usize = 24;
/// uid, gid and size after the mode.
const STAT_AFTER_MODE: usize = 12;
const EXTENDED: u16 = 0x4000;
const INTENT_TO_ADD: u16 = 0x2000;
const MODE_DIR: u32 = 0o040000;

/// One entry `write-tree` stores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: Vec<u8>,
    pub mode: u32,
    pub oid: Oid,
}

/// What [`parse`] read.
#[derive(Debug, Default)]
pub struct IndexEntries {
    /// Stage-0 entries that are not intent-to-add, in index order.
    pub files: Vec<Entry>,
    /// Paths with a conflict stage, once each.
    pub conflicted: Vec<Vec<u8>>,
    /// The cache tree's valid nodes: directory (`""` for the top) → its tree.
    pub cached: HashMap<Vec<u8>, Oid>,
}

/// A cursor over the index bytes that never reads past the end.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let out = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(out)
    }

    fn u32(&mut self) -> Option<u32> {
        let b = self.take(4)?;
        Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u16(&mut self) -> Option<u16> {
        let b = self.take(2)?;
        Some(u16::from_be_bytes([b[0], b[1]]))
    }

    /// Bytes up to the next `end` byte, which is consumed.
    fn until(&mut self, end: u8) -> Option<&'a [u8]> {
        let rest = self.bytes.get(self.at..)?;
        let len = rest.iter().position(|b| *b == end)?;
        self.at += len + 1;
        Some(&rest[..len])
    }

    /// Git's offset varint (index v4 path prefixes).
    fn varint(&mut self) -> Option<usize> {
        let mut c = *self.take(1)?.first()?;
        let mut value = usize::from(c & 0x7f);
        while c & 0x80 != 0 {
            value = value.checked_add(1)?.checked_mul(128)?;
            c = *self.take(1)?.first()?;
            value = value.checked_add(usize::from(c & 0x7f))?;
        }
        Some(value)
    }

    fn oid(&mut self, len: usize) -> Option<Oid> {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let raw = self.take(len)?;
        let mut hex = Vec::with_capacity(len * 2);
        for b in raw {
            hex.push(HEX[usize::from(b >> 4)]);
            hex.push(HEX[usize::from(b & 0xf)]);
        }
        Oid::from_bytes(&hex)
    }
}

fn oid_len(format: ObjectFormat) -> usize {
    match format {
        ObjectFormat::Sha1 => 20,
        ObjectFormat::Sha256 => 32,
    }
}

/// The entries and cache tree of the index `bytes` (non-empty), `None` when this reader
/// does not understand them.
pub fn parse(bytes: &[u8], format: ObjectFormat) -> Option<IndexEntries> {
    let oid_len = oid_len(format);
    let mut cur = Cursor { bytes, at: 0 };
    if cur.take(4)? != b"DIRC" {
        return None;
    }
    let version = cur.u32()?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = cur.u32()?;
    let mut out = IndexEntries::default();
    let mut path: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = cur.at;
        cur.take(STAT_BEFORE_MODE)?;
        let mode = cur.u32()?;
        cur.take(STAT_AFTER_MODE)?;
        let oid = cur.oid(oid_len)?;
        let flags = cur.u16()?;
        let extended = if flags & EXTENDED != 0 {
            if version < 3 {
                return None;
            }
            cur.u16()?
        } else {
            0
        };
        if version == 4 {
            let strip = cur.varint()?;
            path.truncate(path.len().checked_sub(strip)?);
            path.extend_from_slice(cur.until(0)?);
        } else {
            path.clear();
            path.extend_from_slice(cur.until(0)?);
            // Entries are NUL-padded to a multiple of eight bytes.
            let len = cur.at - start;
            cur.take((8 - len % 8) % 8)?;
        }
        if mode == MODE_DIR || path.is_empty() {
            // A sparse directory entry: git expands it when it writes a tree.
            return None;
        }
        let stage = (flags >> 12) & 3;
        if stage != 0 {
            if out.conflicted.last() != Some(&path) {
                out.conflicted.push(path.clone());
            }
        } else if extended & INTENT_TO_ADD == 0 {
            out.files.push(Entry {
                path: path.clone(),
                mode,
                oid,
            });
        }
    }
    extensions(&mut cur, oid_len, &mut out)?;
    Some(out)
}

/// Reads the cache tree; a split index or a sparse one is refused.
fn extensions(cur: &mut Cursor<'_>, oid_len: usize, out: &mut IndexEntries) -> Option<()> {
    let end = cur.bytes.len().checked_sub(oid_len)?;
    while cur.at < end {
        let signature = cur.take(4)?;
        let size = usize::try_from(cur.u32()?).ok()?;
        let data = cur.take(size)?;
        match signature {
            b"link" | b"sdir" => return None,
            b"TREE" => out.cached = cache_tree(data, oid_len)?,
            _ => {}
        }
    }
    (cur.at == end).then_some(())
}

/// The valid nodes of a `TREE` extension: each node is its name, its entry count (`-1`
/// when invalid), its number of subtrees, then its tree when valid; subtrees follow their
/// parent depth first.
fn cache_tree(data: &[u8], oid_len: usize) -> Option<HashMap<Vec<u8>, Oid>> {
    let mut cur = Cursor { bytes: data, at: 0 };
    let mut out = HashMap::new();
    // (directory, subtrees still to read under it)
    let mut open: Vec<(Vec<u8>, usize)> = Vec::new();
    let mut first = true;
    while cur.at < data.len() {
        let name = cur.until(0)?;
        let count: i64 = std::str::from_utf8(cur.until(b' ')?).ok()?.parse().ok()?;
        let subtrees: usize = std::str::from_utf8(cur.until(b'\n')?).ok()?.parse().ok()?;
        let parent = match open.last_mut() {
            Some((dir, left)) if *left > 0 => {
                *left -= 1;
                Some(dir.clone())
            }
            _ if first => None,
            _ => return None,
        };
        first = false;
        let dir = match parent {
            Some(p) if p.is_empty() => name.to_vec(),
            Some(p) => [p.as_slice(), b"/", name].concat(),
            None => Vec::new(),
        };
        if count >= 0 {
            out.insert(dir.clone(), cur.oid(oid_len)?);
        }
        open.push((dir, subtrees));
        while open.last().is_some_and(|(_, left)| *left == 0) {
            open.pop();
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_and_split_indexes_are_not_read() {
        for bytes in [
            &b"DIRX\0\0\0\x02\0\0\0\0"[..],
            b"DIRC\0\0\0\x09\0\0\0\0",
            b"DIRC\0\0\0\x02\0\0\0\x05",
            b"DIRC",
        ] {
            assert!(parse(bytes, ObjectFormat::Sha1).is_none(), "{bytes:?}");
        }
    }

    #[test]
    fn cache_tree_nodes_get_their_full_paths() {
        let oid = [0xabu8; 20];
        let mut data = Vec::new();
        for (name, count, subs) in [("", 3, 2), ("a", 1, 1), ("b", -1, 0), ("c", 1, 0)] {
            data.extend_from_slice(format!("{name}\0{count} {subs}\n").as_bytes());
            if count >= 0 {
                data.extend_from_slice(&oid);
            }
        }
        let nodes = cache_tree(&data, 20).unwrap();
        let mut dirs: Vec<&[u8]> = nodes.keys().map(Vec::as_slice).collect();
        dirs.sort();
        assert_eq!(dirs, [&b""[..], b"a", b"c"]);
        assert!(
            cache_tree(b"\x000 0\n", 20).is_none(),
            "a valid node needs its tree"
        );
    }
}
