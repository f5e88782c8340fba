//! The identity of an index's content, read from the index file itself without a git
//! process: a digest over every entry's mode, object id, flags (stage, skip-worktree,
//! intent-to-add, assume-valid) and path, plus the split-index link, in file order.
//!
//! Stat data (times, inode, size) and the derived extensions (cache tree, untracked
//! cache, resolve-undo, offsets) are left out: git rewrites them when it merely refreshes
//! the index, which changes nothing a commit or a restore depends on. Equal digests mean
//! equal entries; a digest that differs may still name the same entries written another
//! way (a split index against a full one), which only ever errs towards "moved"; the
//! index version (2, 3 or 4) is only an encoding and does not change the digest.
//!
//! Git replaces the index by renaming a finished file over it, so one read is one
//! consistent version. A file this parser does not understand yields `None`, and callers
//! fall back to asking git.

use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::{ObjectFormat, Oid};

/// The largest index read; the same bound as an index copy.
const MAX_INDEX: u64 = 1 << 30;
/// Stat data before each entry's mode: ctime, mtime (seconds and nanoseconds), dev, ino.
const STAT_BEFORE_MODE: usize = 24;
const EXTENDED: u16 = 0x4000;

/// The digest of the entries of the index at `path` (`sha256:…`), the digest of an empty
/// index when there is none, `None` when the file is not an index this parser reads.
pub fn digest(path: &Path, format: ObjectFormat) -> Option<String> {
    let bytes = match read(path) {
        Ok((bytes, _)) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(_) => return None,
    };
    digest_of(&bytes, format)
}

/// A file's modification time: seconds and nanoseconds.
pub(crate) type Mtime = (i64, i64);

/// The index file's bytes and modification time (`None` when there is no index). An
/// entry whose file changed in the same instant the index was written is "racily clean":
/// its stat data cannot vouch for its content.
pub(crate) fn read_with_mtime(path: &Path) -> std::io::Result<(Vec<u8>, Option<Mtime>)> {
    match read(path) {
        Ok((bytes, meta)) => {
            use std::os::unix::fs::MetadataExt;
            Ok((bytes, Some((meta.mtime(), meta.mtime_nsec()))))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((Vec::new(), None)),
        Err(e) => Err(e),
    }
}

fn read(path: &Path) -> std::io::Result<(Vec<u8>, std::fs::Metadata)> {
    use std::io::Read;
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() || meta.len() > MAX_INDEX {
        return Err(std::io::Error::other(
            "not a regular file of a readable size",
        ));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(MAX_INDEX).read_to_end(&mut bytes)?;
    Ok((bytes, meta))
}

/// [`digest`] of index bytes already read; empty bytes are an empty index.
pub fn digest_of(bytes: &[u8], format: ObjectFormat) -> Option<String> {
    walk(bytes, format, true, &mut |_| {}).and_then(|w| w.digest)
}

/// What one pass over an index found besides its entries.
pub(crate) struct Walked {
    /// [`digest_of`] the index, when asked for.
    pub digest: Option<String>,
    /// The file is a split index: its entries are only the changes on a shared one.
    pub split: bool,
    /// The file is a sparse index: some entries are directories standing for their files.
    pub sparse: bool,
    /// The tree the index amounts to, from a valid cache-tree root.
    pub tree: Option<Oid>,
}

/// Every entry handed to `visit` in file order, and with `digest` [`digest_of`] the
/// index on the way.
pub(crate) fn walk(
    bytes: &[u8],
    format: ObjectFormat,
    digest: bool,
    visit: &mut dyn FnMut(&Entry<'_>),
) -> Option<Walked> {
    let mut feed = Feed {
        hasher: digest.then(Sha256::new),
        buf: Vec::new(),
    };
    let mut found = Extensions::default();
    if !bytes.is_empty() {
        found = entries(bytes, format, &mut feed, visit)?;
    }
    Some(Walked {
        digest: feed.finish(),
        split: found.split,
        sparse: found.sparse,
        tree: found.tree,
    })
}

/// What the digest covers, gathered in large pieces: one hash update per entry field
/// costs more than the hashing itself.
struct Feed {
    hasher: Option<Sha256>,
    buf: Vec<u8>,
}

impl Feed {
    const CHUNK: usize = 64 * 1024;

    fn update(&mut self, bytes: &[u8]) {
        if let Some(hasher) = &mut self.hasher {
            self.buf.extend_from_slice(bytes);
            if self.buf.len() >= Self::CHUNK {
                hasher.update(&self.buf);
                self.buf.clear();
            }
        }
    }

    fn finish(self) -> Option<String> {
        let mut hasher = self.hasher?;
        hasher.update(&self.buf);
        Some(format!("sha256:{:x}", hasher.finalize()))
    }
}

/// One index entry as the file holds it.
pub(crate) struct Entry<'a> {
    pub path: &'a [u8],
    pub mode: u32,
    pub oid: &'a [u8],
    /// The 16-bit flags: assume-valid, extended, stage and the name length.
    pub flags: u16,
    /// The extended flags (skip-worktree, intent-to-add), 0 without them.
    pub extended: u16,
    /// ctime s, ns, mtime s, ns, dev, ino, then (after the mode) uid, gid, size.
    pub stat: [u32; 9],
}

impl Entry<'_> {
    pub fn stage(&self) -> u16 {
        (self.flags >> 12) & 3
    }
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

    /// Bytes up to the next NUL, which is consumed.
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

fn entries(
    bytes: &[u8],
    format: ObjectFormat,
    hasher: &mut Feed,
    visit: &mut dyn FnMut(&Entry<'_>),
) -> Option<Extensions> {
    let oid_len = match format {
        ObjectFormat::Sha1 => 20,
        ObjectFormat::Sha256 => 32,
    };
    let mut cur = Cursor { bytes, at: 0 };
    if cur.take(4)? != b"DIRC" {
        return None;
    }
    let version = cur.u32()?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = cur.u32()?;
    hasher.update(&count.to_be_bytes());
    let mut path: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = cur.at;
        let mut stat = [0u32; 9];
        for slot in stat.iter_mut().take(STAT_BEFORE_MODE / 4) {
            *slot = cur.u32()?;
        }
        let mode_bytes = cur.take(4)?;
        hasher.update(mode_bytes);
        for slot in stat.iter_mut().skip(STAT_BEFORE_MODE / 4) {
            *slot = cur.u32()?;
        }
        let oid = cur.take(oid_len)?;
        hasher.update(oid);
        let flags = cur.u16()?;
        hasher.update(&flags.to_be_bytes());
        let mut extended = 0;
        if flags & EXTENDED != 0 {
            if version < 3 {
                return None;
            }
            extended = cur.u16()?;
            hasher.update(&extended.to_be_bytes());
        }
        if version == 4 {
            let strip = cur.varint()?;
            path.truncate(path.len().checked_sub(strip)?);
            path.extend_from_slice(cur.until_nul()?);
        } else {
            path.clear();
            path.extend_from_slice(cur.until_nul()?);
            // Entries are NUL-padded to a multiple of eight bytes.
            let len = cur.at - start;
            let pad = (8 - len % 8) % 8;
            cur.take(pad)?;
        }
        hasher.update(path.as_slice());
        hasher.update(&[0]);
        visit(&Entry {
            path: &path,
            mode: u32::from_be_bytes([mode_bytes[0], mode_bytes[1], mode_bytes[2], mode_bytes[3]]),
            oid,
            flags,
            extended,
            stat,
        });
    }
    extensions(&mut cur, oid_len, hasher)
}

/// What the extensions say about the entries.
#[derive(Default)]
struct Extensions {
    split: bool,
    sparse: bool,
    tree: Option<Oid>,
}

/// Walks the extensions; only the split-index link belongs to the entries' content.
fn extensions(cur: &mut Cursor<'_>, oid_len: usize, hasher: &mut Feed) -> Option<Extensions> {
    let end = cur.bytes.len().checked_sub(oid_len)?;
    let mut found = Extensions::default();
    while cur.at < end {
        let signature = cur.take(4)?;
        let size = usize::try_from(cur.u32()?).ok()?;
        let data = cur.take(size)?;
        match signature {
            b"link" => {
                found.split = true;
                hasher.update(b"link");
                hasher.update(data);
            }
            b"sdir" => found.sparse = true,
            b"TREE" => found.tree = cache_tree_root(data, oid_len),
            _ => {}
        }
    }
    (cur.at == end).then_some(found)
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
    oid_of(cur.take(oid_len)?)
}

/// An object id as the index stores it (raw bytes).
pub(crate) fn oid_of(raw: &[u8]) -> Option<Oid> {
    let text: String = raw.iter().map(|b| format!("{b:02x}")).collect();
    Oid::parse(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_not_an_index() {
        for bytes in [
            &b"DIRX\0\0\0\x02\0\0\0\0"[..],
            b"DIRC\0\0\0\x09\0\0\0\0",
            b"DIRC\0\0\0\x02\0\0\0\x05",
            b"DIRC",
        ] {
            assert_eq!(digest_of(bytes, ObjectFormat::Sha1), None, "{bytes:?}");
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

    #[test]
    fn an_empty_file_is_an_empty_index() {
        assert!(digest_of(b"", ObjectFormat::Sha1).is_some());
    }

    #[test]
    fn varints_decode_as_git_writes_them() {
        for (bytes, value) in [
            (&[0x05u8][..], 5),
            (&[0x80, 0x00], 128),
            (&[0x81, 0x7f], 383),
        ] {
            let mut cur = Cursor { bytes, at: 0 };
            assert_eq!(cur.varint(), Some(value), "{bytes:?}");
        }
        let mut overlong = Cursor {
            bytes: &[0xff; 20],
            at: 0,
        };
        assert_eq!(overlong.varint(), None);
    }
}
