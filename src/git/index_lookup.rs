//! Two questions answered from the index file itself, without a git process: the
//! gitlink recorded at one path, and the tree the whole index amounts to when its cache
//! tree says so.
//!
//! Git replaces the index by renaming a finished file over it, so one read is one
//! consistent version. Anything this reader cannot answer with certainty yields `None`
//! and the caller asks git: a file it does not parse, a split index (entries live in
//! another file), a sparse index (directories stand for their files), a conflict or an
//! intent-to-add entry (which the cache tree leaves out).

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::{ObjectFormat, Oid};

/// The largest index read; the same bound as the index digest.
const MAX_INDEX: u64 = 1 << 30;
/// Stat data before each entry's mode: ctime, mtime (seconds and nanoseconds), dev, ino.
const STAT_BEFORE_MODE: usize = 24;
/// uid, gid and size after the mode.
const STAT_AFTER_MODE: usize = 12;
const EXTENDED: u16 = 0x4000;
const STAGE_MASK: u16 = 0x3000;
const INTENT_TO_ADD: u16 = 0x2000;
const GITLINK: u32 = 0o160000;

/// One index entry as this reader needs it, borrowed from the file's bytes.
struct Entry<'a> {
    mode: u32,
    oid: &'a [u8],
    stage: u16,
    intent_to_add: bool,
    path: &'a [u8],
}

/// The commit the index records as a gitlink (a submodule) at `rel`, unconflicted;
/// `Some(None)` when it records none there, `None` when git must be asked.
pub fn gitlink(index: &Path, format: ObjectFormat, rel: &[u8]) -> Option<Option<Oid>> {
    let bytes = read(index)?;
    let mut found = None;
    parse(&bytes, format, |e| {
        if e.path == rel && e.stage == 0 && e.mode == GITLINK {
            found = Some(e.oid.to_vec());
        }
    })?;
    match found {
        Some(raw) => hex(&raw).map(Some),
        None => Some(None),
    }
}

/// The tree the index amounts to, from a valid cache tree, when every entry is an
/// ordinary unconflicted one; `None` when git must be asked.
pub fn tree(index: &Path, format: ObjectFormat) -> Option<Oid> {
    let bytes = read(index)?;
    let mut plain = true;
    let root = parse(&bytes, format, |e| {
        plain &= e.stage == 0 && !e.intent_to_add;
    })?;
    if plain { root } else { None }
}

fn read(path: &Path) -> Option<Vec<u8>> {
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_INDEX {
        return None;
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(MAX_INDEX).read_to_end(&mut bytes).ok()?;
    Some(bytes)
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

    fn until_nul(&mut self) -> Option<&'a [u8]> {
        let rest = self.bytes.get(self.at..)?;
        let len = rest.iter().position(|b| *b == 0)?;
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
}

fn oid_len(format: ObjectFormat) -> usize {
    match format {
        ObjectFormat::Sha1 => 20,
        ObjectFormat::Sha256 => 32,
    }
}

fn hex(bytes: &[u8]) -> Option<Oid> {
    let text: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Oid::parse(&text)
}

/// Hands every entry to `visit` in file order; the valid cache-tree root, if any.
fn parse(
    bytes: &[u8],
    format: ObjectFormat,
    mut visit: impl FnMut(Entry<'_>),
) -> Option<Option<Oid>> {
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
    let mut path: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = cur.at;
        cur.take(STAT_BEFORE_MODE)?;
        let mode = cur.u32()?;
        cur.take(STAT_AFTER_MODE)?;
        let oid = cur.take(oid_len)?;
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
            path.extend_from_slice(cur.until_nul()?);
        } else {
            path.clear();
            path.extend_from_slice(cur.until_nul()?);
            let len = cur.at - start;
            cur.take((8 - len % 8) % 8)?;
        }
        visit(Entry {
            mode,
            oid,
            stage: (flags & STAGE_MASK) >> 12,
            intent_to_add: extended & INTENT_TO_ADD != 0,
            path: &path,
        });
    }
    extensions(&mut cur, oid_len)
}

/// Walks the extensions: the valid cache-tree root if there is one; `None` for an index
/// whose entries are not all in this file (split) or not all files (sparse).
fn extensions(cur: &mut Cursor<'_>, oid_len: usize) -> Option<Option<Oid>> {
    let end = cur.bytes.len().checked_sub(oid_len)?;
    let mut root = None;
    while cur.at < end {
        let signature = cur.take(4)?;
        let size = usize::try_from(cur.u32()?).ok()?;
        let data = cur.take(size)?;
        match signature {
            b"link" | b"sdir" => return None,
            b"TREE" => root = cache_tree_root(data, oid_len),
            _ => {}
        }
    }
    (cur.at == end).then_some(root)
}

/// The first cache-tree record is the root (empty path): `<entries> <subtrees>\n` then
/// its tree id, absent when `<entries>` is -1 (invalidated).
fn cache_tree_root(data: &[u8], oid_len: usize) -> Option<Oid> {
    let mut cur = Cursor { bytes: data, at: 0 };
    if !cur.until_nul()?.is_empty() {
        return None;
    }
    let rest = cur.bytes.get(cur.at..)?;
    let line_len = rest.iter().position(|b| *b == b'\n')?;
    let line = std::str::from_utf8(&rest[..line_len]).ok()?;
    let (entries, _) = line.split_once(' ')?;
    if entries.parse::<i64>().ok()? < 0 {
        return None;
    }
    cur.at += line_len + 1;
    hex(cur.take(oid_len)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_left_to_git() {
        for bytes in [&b"DIRX\0\0\0\x02\0\0\0\0"[..], b"DIRC\0\0\0\x09", b"DIRC"] {
            assert!(
                parse(bytes, ObjectFormat::Sha1, |_| {}).is_none(),
                "{bytes:?}"
            );
        }
    }

    #[test]
    fn the_cache_tree_root_is_read_only_when_valid() {
        let oid = [0xabu8; 20];
        let mut valid = b"\x0012 3\n".to_vec();
        valid.extend_from_slice(&oid);
        assert_eq!(
            cache_tree_root(&valid, 20).map(|o| o.as_str().to_owned()),
            Some("ab".repeat(20))
        );
        assert_eq!(cache_tree_root(b"\0-1 3\n", 20), None);
        assert_eq!(cache_tree_root(b"sub\x001 0\n", 20), None);
    }
}
