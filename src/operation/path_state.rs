//! The state of the paths a proposal names, read without asking git to load the whole
//! index: each path's index entries come from the index file ([`crate::git::index_named`]),
//! its worktree side from the file itself, and whether the worktree differs from the
//! index is decided the way git decides it — stat data first, then the content's object
//! id. Git is asked only for what this reading cannot decide (directories, submodules,
//! conflicts of types, content git would convert, ignore rules), with the same
//! `status --porcelain=v2` the whole reading used to be.
//!
//! A path's record names its index entries, what its worktree holds beside them, and a
//! digest of that content: it identifies everything a commit or a discard of the path
//! depends on, and the same function reads it again under the repository lock.

use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::{OpError, pins};
use crate::git::index_named::{Named, NamedEntry};
use crate::git::{Git, ObjectFormat, index_named};

const REGULAR: u32 = 0o100644;
const EXECUTABLE: u32 = 0o100755;
const SYMLINK: u32 = 0o120000;

/// What the worktree holds at a path beside its index entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Worktree {
    /// The file is what the index holds.
    Clean,
    /// The file differs from the index entry.
    Modified,
    /// The index has the file, the worktree does not.
    Deleted,
    /// The worktree has a file the index does not (not yet checked against ignore rules).
    Untracked,
    /// Neither the index nor the worktree has the path.
    Absent,
    /// Ignored by `.gitignore` and not in the index.
    Ignored,
    /// The index holds conflict stages for the path.
    Conflicted,
}

impl Worktree {
    pub fn name(self) -> &'static str {
        match self {
            Worktree::Clean => "clean",
            Worktree::Modified => "modified",
            Worktree::Deleted => "deleted",
            Worktree::Untracked => "untracked",
            Worktree::Absent => "absent",
            Worktree::Ignored => "ignored",
            Worktree::Conflicted => "conflicted",
        }
    }

    /// The worktree holds a change of its own (what `status` shows in its second column,
    /// or `??`).
    pub fn changed(self) -> bool {
        matches!(
            self,
            Worktree::Modified | Worktree::Deleted | Worktree::Untracked | Worktree::Conflicted
        )
    }
}

/// Which states a caller can act on without git's full answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// Only a worktree change decides: a path without one may still differ from HEAD in
    /// the index, which only `status` tells.
    WorktreeChange,
    /// Every state decides: only the worktree against the index matters.
    AnyState,
}

/// The index digest (when asked for) and the record of every changed path under
/// `paths`: the decided ones keyed by the path as named, the rest as `status` lists them.
pub struct Reading {
    pub index: Option<String>,
    pub changes: Map<String, Value>,
}

/// Reads `paths` (already checked by `RepoRelPath`) as described in the module docs,
/// with `digest` the digest of the whole index too.
pub async fn read(
    git: &Git<'_>,
    top: &Path,
    paths: &[String],
    want: Want,
    digest: bool,
) -> Result<Reading, OpError> {
    let names: Vec<String> = paths.iter().map(|p| normal(p)).collect();
    let index_path = git.repo.git_dir.join("index");
    let info_attributes = git.repo.common_dir.join("info").join("attributes");
    let (format, top_owned, names_owned) = (git.repo.object_format, top.to_owned(), names.clone());
    let converts = git.repo.converts_files;
    let looked = crate::safe_file::off_thread(git.cancel(), move || {
        look_all(
            &index_path,
            &info_attributes,
            converts,
            format,
            &top_owned,
            &names_owned,
            digest,
        )
    })
    .await
    .map_err(|e| OpError::Internal(e.to_string()))?;
    let Some((index, looked)) = looked else {
        let index = async {
            match digest {
                true => pins::index_digest(git).await.map(Some),
                false => Ok(None),
            }
        };
        let (index, changes) = tokio::join!(index, status_of(git, top, &names));
        return Ok(Reading {
            index: index?,
            changes: changes?,
        });
    };
    let candidates: Vec<String> = names
        .iter()
        .zip(&looked)
        .filter(|(_, l)| l.state == Some(Worktree::Untracked))
        .map(|(n, _)| n.clone())
        .collect();
    let ignored = crate::git::check_ignore::ignored(git, &candidates).await?;
    let mut undecided: Vec<String> = Vec::new();
    let mut decided: Vec<(String, Worktree, Value)> = Vec::new();
    for (name, l) in names.into_iter().zip(looked) {
        let state = match l.state {
            Some(Worktree::Untracked) if ignored.contains(&name) => Some(Worktree::Ignored),
            other => other,
        };
        match state {
            Some(s) if s.changed() || want == Want::AnyState => decided.push((name, s, l.record)),
            _ => undecided.push(name),
        }
    }
    let mut changes = Map::new();
    for (name, state, mut record) in decided {
        let covered = undecided.iter().any(|u| {
            name == *u
                || name
                    .strip_prefix(u.as_str())
                    .is_some_and(|r| r.starts_with('/'))
        });
        if covered {
            undecided.push(name);
        } else if state.changed() {
            record["worktree"] = json!(state.name());
            changes.insert(name, record);
        }
    }
    if !undecided.is_empty() {
        changes.extend(status_of(git, top, &undecided).await?);
    }
    Ok(Reading { index, changes })
}

/// `{path: {"index": [entries], "content": digest}}` for exactly `paths` (files a patch
/// names), from the index file and the files; `None` when the index is not one this
/// reader follows.
pub async fn records(
    git: &Git<'_>,
    top: &Path,
    paths: &[String],
) -> Result<Option<Map<String, Value>>, OpError> {
    let names: Vec<String> = paths.iter().map(|p| normal(p)).collect();
    let index_path = git.repo.git_dir.join("index");
    let (format, top) = (git.repo.object_format, top.to_owned());
    crate::safe_file::off_thread(git.cancel(), move || {
        let bytes: Vec<&[u8]> = names.iter().map(|n| n.as_bytes()).collect();
        let reading = index_named::read(&index_path, format, &bytes, false)?;
        let records = names.iter().zip(&reading.named).map(|(name, named)| {
            let labels: Vec<String> = named.entries.iter().map(NamedEntry::label).collect();
            let content = File::read(&top, name, format).content;
            (name.clone(), json!({"index": labels, "content": content}))
        });
        Some(records.collect())
    })
    .await
    .map_err(|e| OpError::Internal(e.to_string()))
}

/// The path as git names it in the index: no `./` in front, no `/` behind.
fn normal(p: &str) -> String {
    p.trim_end_matches('/').trim_start_matches("./").to_owned()
}

/// Today's reading of `paths` through `status`, for what the index file cannot answer.
async fn status_of(
    git: &Git<'_>,
    top: &Path,
    paths: &[String],
) -> Result<Map<String, Value>, OpError> {
    let changes = pins::changes(git, Some(paths)).await?;
    match pins::change_states(git, top, changes).await? {
        Value::Object(map) => Ok(map),
        _ => Ok(Map::new()),
    }
}

/// One path as read: its record (index entries and content) and its state, `None` when
/// git must decide.
struct Looked {
    record: Value,
    state: Option<Worktree>,
}

/// Reads the index once and every path's worktree side. `None` when the index is not
/// one this reader follows.
fn look_all(
    index: &Path,
    info_attributes: &Path,
    converts: bool,
    format: ObjectFormat,
    top: &Path,
    names: &[String],
    digest: bool,
) -> Option<(Option<String>, Vec<Looked>)> {
    let bytes: Vec<&[u8]> = names.iter().map(|n| n.as_bytes()).collect();
    let reading = index_named::read(index, format, &bytes, digest)?;
    let attributes = reading.attributes || std::fs::symlink_metadata(info_attributes).is_ok();
    let looked = names
        .iter()
        .zip(&reading.named)
        .map(|(name, named)| {
            let file = File::read(top, name, format);
            let labels: Vec<String> = named.entries.iter().map(NamedEntry::label).collect();
            let convertible = attributes || file.attributes || file.cr;
            // Conversions, case folding or ignored modes configured: git judges every path.
            let state = (!converts && canonical(name))
                .then(|| classify(named, &file, reading.mtime, convertible))
                .flatten();
            Looked {
                record: json!({"index": labels, "content": file.content}),
                state,
            }
        })
        .collect();
    Some((reading.digest, looked))
}

/// Plain `a/b/c`: what the index could hold under that exact name.
fn canonical(name: &str) -> bool {
    !name.is_empty()
        && name
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
}

/// What the worktree holds at a path against its index entries, as `status` would say
/// it, or `None` when only git can tell.
fn classify(
    named: &Named,
    file: &File,
    index_mtime: Option<(i64, i64)>,
    convertible: bool,
) -> Option<Worktree> {
    if named.above || named.below || named.entries.iter().any(|e| e.special) {
        return None;
    }
    if named.entries.iter().any(|e| e.stage != 0) {
        return Some(Worktree::Conflicted);
    }
    let Some(entry) = named.entries.first() else {
        return match file.kind {
            Kind::Absent => Some(Worktree::Absent),
            Kind::File { .. } | Kind::Link => Some(Worktree::Untracked),
            _ => None,
        };
    };
    let same = file.blob.as_deref() == Some(entry.oid.as_str());
    match (entry.mode, file.kind) {
        (_, Kind::Absent) if entry.mode != 0o160000 => Some(Worktree::Deleted),
        (REGULAR | EXECUTABLE, Kind::File { exec }) => {
            if (entry.mode == EXECUTABLE) != exec {
                return None;
            }
            if file.stat == Some(entry_stat(entry)) && !racy(entry, index_mtime) {
                return Some(Worktree::Clean);
            }
            if convertible {
                return None;
            }
            Some(if same {
                Worktree::Clean
            } else {
                Worktree::Modified
            })
        }
        (SYMLINK, Kind::Link) => Some(if same {
            Worktree::Clean
        } else {
            Worktree::Modified
        }),
        (REGULAR | EXECUTABLE, Kind::Link) => Some(Worktree::Modified),
        _ => None,
    }
}

/// The stat fields git compares by default (ctime, mtime, inode, owner, size; not the
/// device).
fn entry_stat(e: &NamedEntry) -> [u32; 8] {
    let s = e.stat;
    [s[0], s[1], s[2], s[3], s[5], s[6], s[7], s[8]]
}

/// The file may have changed in the same instant the index was written: its stat data
/// cannot vouch for it (git compares the content of such an entry).
fn racy(e: &NamedEntry, index_mtime: Option<(i64, i64)>) -> bool {
    let entry = (i64::from(e.stat[2]), i64::from(e.stat[3]));
    index_mtime.is_none_or(|index| entry >= index)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Absent,
    File {
        exec: bool,
    },
    Link,
    Dir,
    /// Anything else, or a path reached through a symlink or a file.
    Other,
}

/// The worktree side of one path.
struct File {
    kind: Kind,
    /// The digest a pin records: as `pins::change_states` writes it.
    content: Value,
    /// The object id git would give the content, unconverted.
    blob: Option<String>,
    /// The stat fields [`entry_stat`] compares, truncated as the index stores them.
    stat: Option<[u32; 8]>,
    /// A carriage return: line-ending conversion could apply.
    cr: bool,
    /// A `.gitattributes` in the worktree on the way to the path.
    attributes: bool,
}

impl File {
    fn read(top: &Path, rel: &str, format: ObjectFormat) -> File {
        let mut file = File {
            kind: Kind::Absent,
            content: Value::Null,
            blob: None,
            stat: None,
            cr: false,
            attributes: false,
        };
        let mut dir: PathBuf = top.to_owned();
        let parts: Vec<&str> = rel.split('/').collect();
        let Some((last, parents)) = parts.split_last() else {
            file.kind = Kind::Other;
            return file;
        };
        for part in parents {
            file.attributes |= std::fs::symlink_metadata(dir.join(".gitattributes")).is_ok();
            dir.push(part);
            match std::fs::symlink_metadata(&dir) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    file.kind = Kind::Other;
                    return file;
                }
                Err(_) => return file,
            }
        }
        file.attributes |= std::fs::symlink_metadata(dir.join(".gitattributes")).is_ok();
        let path = dir.join(last);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            return file;
        };
        if meta.file_type().is_symlink() {
            file.kind = Kind::Other;
            if let Ok(target) = std::fs::read_link(&path) {
                let bytes = target.as_os_str().as_bytes();
                file.kind = Kind::Link;
                file.content = json!(format!("link:{}", pins::sha256(bytes)));
                let mut blob = Blob::new(format, bytes.len() as u64);
                blob.update(bytes);
                file.blob = Some(blob.hex());
            }
        } else if meta.is_dir() {
            file.kind = Kind::Dir;
            file.content = json!("dir");
        } else if meta.is_file() {
            file.read_regular(top, rel, format);
        } else {
            file.kind = Kind::Other;
            file.content = json!("unreadable");
        }
        file
    }

    /// Hashes the file once for both digests; a file that changes length while read is
    /// left for git to judge.
    fn read_regular(&mut self, top: &Path, rel: &str, format: ObjectFormat) {
        self.kind = Kind::Other;
        self.content = json!("unreadable");
        let Ok((mut handle, meta)) = crate::safe_file::open_in(top, Path::new(rel)) else {
            return;
        };
        let mut sha = Sha256::new();
        let mut blob = Blob::new(format, meta.len());
        let mut buf = vec![0u8; 64 * 1024];
        let mut total = 0u64;
        loop {
            match handle.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    sha.update(&buf[..n]);
                    blob.update(&buf[..n]);
                    self.cr |= buf[..n].contains(&b'\r');
                    total += n as u64;
                }
                Err(_) => return,
            }
        }
        let exec = meta.mode() & 0o111 != 0;
        let plus = if exec { "+x" } else { "" };
        self.content = json!(format!("sha256:{:x}{plus}", sha.finalize()));
        if total != meta.len() {
            return;
        }
        self.kind = Kind::File { exec };
        self.blob = Some(blob.hex());
        // The index keeps the low 32 bits of each field.
        let t = |v: i64| v as u32;
        self.stat = Some([
            t(meta.ctime()),
            t(meta.ctime_nsec()),
            t(meta.mtime()),
            t(meta.mtime_nsec()),
            meta.ino() as u32,
            meta.uid(),
            meta.gid(),
            meta.size() as u32,
        ]);
    }
}

/// Git's object id of a blob, in the repository's object format.
enum Blob {
    Sha1(sha1::Sha1),
    Sha256(Sha256),
}

impl Blob {
    fn new(format: ObjectFormat, len: u64) -> Blob {
        let header = format!("blob {len}\0");
        match format {
            ObjectFormat::Sha1 => Blob::Sha1(sha1::Sha1::new_with_prefix(header)),
            ObjectFormat::Sha256 => Blob::Sha256(Sha256::new_with_prefix(header)),
        }
    }

    fn update(&mut self, bytes: &[u8]) {
        match self {
            Blob::Sha1(h) => h.update(bytes),
            Blob::Sha256(h) => h.update(bytes),
        }
    }

    fn hex(self) -> String {
        match self {
            Blob::Sha1(h) => format!("{:x}", h.finalize()),
            Blob::Sha256(h) => format!("{:x}", h.finalize()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_names_only() {
        for good in ["a", "a/b", "dir/x.txt", ":x", "-x"] {
            assert!(canonical(good), "{good}");
        }
        for bad in ["", "a//b", "a/./b", "./a", "a/", "a/../b"] {
            assert!(!canonical(bad), "{bad}");
        }
    }

    #[test]
    fn blob_ids_are_gits() {
        let mut b = Blob::new(ObjectFormat::Sha1, 6);
        b.update(b"hello\n");
        assert_eq!(b.hex(), "ce013625030ba8dba906f756967f9e9ca394464a");
        assert_eq!(
            Blob::new(ObjectFormat::Sha1, 0).hex(),
            "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
        );
    }
}
