//! The worktree side of a restore point: the paths that may differ from the index, what
//! each is on disk, and the commit that holds them.
//!
//! Only what `diff-files` and `ls-files -o` report is stored, in a commit whose tree holds
//! each stored file and link under `worktree/` at its own path and, in `removed`, the
//! paths that are gone (or were left out) — the index's own tree, kept by the point
//! already, is the rest. Unchanged tracked files are never re-hashed, and no directory of
//! the index's tree is rewritten: with 100 changes spread over 100 directories of 200
//! entries, rewriting them made the point a third slower. The whole worktree tree is made
//! from the two when a restore needs it ([`whole_tree`]). Contents are stored raw (no
//! filter runs), because a restore must put back the bytes that were on disk. When the
//! index has no tree (a conflict), the changes are entered in a private index copy and
//! git writes the whole tree instead.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Value, json};

use super::capture::zero;
use super::files::{MODE_EXEC, MODE_FILE, MODE_LINK};
use super::{Caps, Steps};
use crate::git::cat_file;
use crate::git::fast_import::{Change, Content, Import, NewCommit};
use crate::git::index_copy::{IndexCopy, IndexRead};
use crate::git::{Git, Oid, Repo, path_text};
use crate::git::{objects, on_copy};
use crate::operation::OpError;
use crate::operation::pins;
use crate::parse::cat_file_batch::Answer;
use crate::safe_file::Refusal;

mod unlisted;

pub use unlisted::converted;

/// The most bytes of changed files read into memory for one point; beyond it git reads
/// them itself (`hash-object`), one process for all.
const INLINE_BYTES: u64 = 64 * 1024 * 1024;

/// What a changed path is on disk now.
enum OnDisk {
    Missing,
    Link(Vec<u8>),
    File {
        exec: bool,
        len: u64,
    },
    /// A directory (a submodule or nested repository): left as the index has it.
    Dir,
    Skipped(String),
}

fn too_large(caps: &Caps) -> String {
    let cap = caps.max_file_bytes;
    if cap >= 1024 * 1024 && cap % (1024 * 1024) == 0 {
        format!("larger than {} MiB", cap / (1024 * 1024))
    } else {
        format!("larger than {cap} bytes")
    }
}

fn on_disk(top: &Path, rel: &[u8], caps: &Caps) -> OnDisk {
    let rel = rel.strip_suffix(b"/").unwrap_or(rel);
    let path = top.join(std::ffi::OsStr::from_bytes(rel));
    let Ok(meta) = std::fs::symlink_metadata(&path) else {
        return OnDisk::Missing;
    };
    if meta.file_type().is_symlink() {
        return match std::fs::read_link(&path) {
            Ok(t) => OnDisk::Link(t.as_os_str().as_bytes().to_vec()),
            Err(e) => OnDisk::Skipped(format!("unreadable link: {e}")),
        };
    }
    if meta.is_dir() {
        return OnDisk::Dir;
    }
    if !meta.is_file() {
        return OnDisk::Skipped("not a regular file".into());
    }
    if meta.len() > caps.max_file_bytes {
        return OnDisk::Skipped(too_large(caps));
    }
    OnDisk::File {
        exec: meta.permissions().mode() & 0o111 != 0,
        len: meta.len(),
    }
}

/// A path that may differ between the worktree and the index.
struct Candidate {
    /// The path's bytes, as git lists it (a name need not be UTF-8).
    path: Vec<u8>,
    untracked: bool,
    /// Named by the operation (a patch target, say) rather than listed by git: taken
    /// whatever its ignore status, and a directory there is left alone.
    named: bool,
    /// Its index entry (mode, object), when it has one.
    entry: Option<(u32, Oid)>,
}

/// The paths to store: what may differ between the worktree and the index, and the paths
/// the operation will touch (`named`) that git did not list — an ignored file a patch
/// changes is captured like any other, and one absent is recorded as absent. Only the
/// worktree side matters (the index is kept whole), so `diff-files` serves instead of a
/// `status`, which would also compare HEAD with the index.
async fn candidates(git: &Git<'_>, named: &[Vec<u8>]) -> Result<Vec<Candidate>, OpError> {
    let listed = crate::git::ls_files::worktree_changes(git, pins::MAX_CHANGES)
        .await?
        .filter(|l| l.len() <= pins::MAX_CHANGES)
        .ok_or_else(|| {
            OpError::Unsupported(format!(
                "more than {} changed paths: too many for a restore point",
                pins::MAX_CHANGES
            ))
        })?;
    let mut out: Vec<Candidate> = listed
        .into_iter()
        .map(|c| Candidate {
            path: c.path,
            untracked: c.untracked,
            named: false,
            entry: c.entry,
        })
        .collect();
    if named.is_empty() {
        return Ok(out);
    }
    let seen: std::collections::HashSet<&[u8]> = out.iter().map(|c| c.path.as_slice()).collect();
    let more: Vec<Candidate> = named
        .iter()
        .filter(|p| !seen.contains(p.as_slice()))
        .map(|p| Candidate {
            path: p.clone(),
            untracked: true,
            named: true,
            entry: None,
        })
        .collect();
    out.extend(more);
    Ok(out)
}

/// A file or link to store, with its mode on disk.
struct Found {
    candidate: Candidate,
    mode: u32,
    /// A link's target; a file's bytes once read.
    bytes: Option<Vec<u8>>,
    len: u64,
}

/// What [`changes`] found: paths gone from the worktree, files and links to store, and
/// what was left out.
pub struct Listed {
    removed: Vec<Vec<u8>>,
    found: Vec<Found>,
    pub skipped: Vec<Value>,
}

/// The worktree's changes against the index, and what each changed path is on disk.
/// Reads only the real index, so it runs beside the index's own capture.
pub async fn changes(
    git: &Git<'_>,
    top: &Path,
    caps: &Caps,
    named: &[Vec<u8>],
    steps: &Steps,
) -> Result<Listed, OpError> {
    let candidates = steps.time("list changes", candidates(git, named)).await?;
    let (top_owned, caps_owned) = (top.to_owned(), caps.clone());
    let disk = steps
        .time(
            "stat changes",
            crate::safe_file::off_thread(git.cancel(), move || {
                candidates
                    .into_iter()
                    .map(|c| {
                        let d = on_disk(&top_owned, &c.path, &caps_owned);
                        (c, d)
                    })
                    .collect::<Vec<_>>()
            }),
        )
        .await
        .map_err(|e| OpError::Internal(e.to_string()))?;
    let mut listed = Listed {
        removed: Vec::new(),
        found: Vec::new(),
        skipped: Vec::new(),
    };
    for (c, d) in disk {
        let (mode, bytes, len) = match d {
            OnDisk::Missing => {
                listed.removed.push(c.path);
                continue;
            }
            OnDisk::Dir if c.untracked && !c.named => {
                listed.skip(c.path, "nested repository".into());
                continue;
            }
            OnDisk::Dir => continue,
            OnDisk::Skipped(reason) => {
                listed.skip(c.path, reason);
                continue;
            }
            OnDisk::Link(target) => (MODE_LINK, Some(target), 0),
            OnDisk::File { exec, len } => (if exec { MODE_EXEC } else { MODE_FILE }, None, len),
        };
        listed.found.push(Found {
            candidate: c,
            mode,
            bytes,
            len,
        });
    }
    Ok(listed)
}

impl Listed {
    /// Leaves `path` out of the point: listed as skipped, and removed from the tree so
    /// no stale entry stands for it.
    fn skip(&mut self, path: Vec<u8>, reason: String) {
        self.skipped
            .push(json!({"path": path_text::encode(&path), "reason": reason}));
        self.removed.push(path);
    }

    /// Reads every file's bytes (off the async workers) when the cap on the number of
    /// files cannot leave any out and they fit in [`INLINE_BYTES`]; `false`, with nothing
    /// read, otherwise. A file that changed since it was examined is taken as it is now:
    /// gone, grown past the cap, or no longer a regular file (skipped).
    async fn read(&mut self, git: &Git<'_>, top: &Path, caps: &Caps) -> Result<bool, OpError> {
        let total: u64 = self.found.iter().map(|f| f.len).sum();
        if self.found.len() > caps.max_files || total > INLINE_BYTES {
            return Ok(false);
        }
        let found = std::mem::take(&mut self.found);
        let (top, cap) = (top.to_owned(), caps.max_file_bytes);
        let read = crate::safe_file::off_thread(git.cancel(), move || {
            found
                .into_iter()
                .map(|mut f| {
                    let mut refused = None;
                    if f.bytes.is_none() {
                        let rel = std::ffi::OsStr::from_bytes(&f.candidate.path);
                        match crate::safe_file::read_in(&top, rel, cap) {
                            Ok(bytes) => f.bytes = Some(bytes),
                            Err(why) => refused = Some(why),
                        }
                    }
                    (f, refused)
                })
                .collect::<Vec<_>>()
        })
        .await
        .map_err(|e| OpError::Internal(e.to_string()))?;
        for (f, refused) in read {
            let path = f.candidate.path.clone();
            match refused {
                None => self.found.push(f),
                Some(Refusal::Missing) => self.removed.push(path),
                Some(Refusal::TooLarge) => self.skip(path, too_large(caps)),
                Some(why) => self.skip(path, format!("unreadable: {why}")),
            }
        }
        Ok(true)
    }
}

/// The worktree commit to write, what tells how many of its files were stored, and the
/// index tree its changes apply to (`None`: the commit's tree is the whole worktree).
pub struct Planned {
    pub commit: NewCommit,
    pub counter: Counter,
    pub base: Option<Oid>,
}

/// Counts the files and links a point stored: those git hashed first, and the inline
/// blobs whose object differs from their index entry (the others were listed for their
/// stat data only).
pub struct Counter {
    /// Each inline blob's mode and index entry, in order.
    inline: Vec<(u32, Option<(u32, Oid)>)>,
    stored: usize,
}

impl Counter {
    /// How many files and links the point stored, given the objects of the inline blobs.
    pub fn hashed(&self, blobs: &[Oid]) -> usize {
        let changed = self
            .inline
            .iter()
            .zip(blobs)
            .filter(|((mode, entry), oid)| {
                entry
                    .as_ref()
                    .is_none_or(|(m, o)| m != mode || o.as_str() != oid.as_str())
            })
            .count();
        self.stored + changed
    }
}

/// The worktree commit, at `ref_name` with `message`: the changes in `listed` against
/// the index's tree (`index_tree`). Files go to fast-import inline when they may;
/// otherwise git hashes them first. When the index has no tree, they are entered in `copy`
/// (a private copy of the index, made empty when there is none) and the commit holds the
/// tree git writes of it.
#[allow(clippy::too_many_arguments)]
pub async fn plan(
    git: &Git<'_>,
    copy: Option<IndexCopy>,
    top: &Path,
    mut listed: Listed,
    index_tree: Option<&Oid>,
    caps: &Caps,
    (ref_name, message): (String, String),
    steps: &Steps,
) -> Result<(Planned, Vec<Value>), OpError> {
    let mut commit = NewCommit {
        ref_name,
        message,
        root: None,
        changes: Vec::new(),
    };
    let base = index_tree.cloned();
    let inline = base.is_some()
        && steps
            .time("read files", listed.read(git, top, caps))
            .await?;
    let counter = if inline {
        let mut inline = Vec::with_capacity(listed.found.len());
        let mut puts = Vec::with_capacity(listed.found.len());
        for f in std::mem::take(&mut listed.found) {
            inline.push((f.mode, f.candidate.entry));
            let content = Content::Bytes(f.bytes.unwrap_or_default());
            puts.push((f.candidate.path, f.mode, content));
        }
        commit.changes = stored_changes(&mut listed.removed, puts);
        Counter { inline, stored: 0 }
    } else {
        let puts = steps.time("store files", listed.hash(git, caps)).await?;
        let counter = Counter {
            inline: Vec::new(),
            stored: puts.len(),
        };
        if base.is_some() {
            let puts = puts
                .into_iter()
                .map(|(path, mode, oid)| (path, mode, Content::Object(oid)))
                .collect();
            commit.changes = stored_changes(&mut listed.removed, puts);
        } else {
            let copy = match copy {
                Some(copy) => copy,
                None => IndexCopy::of(&IndexRead::none()).await?,
            };
            let info = index_info(git.repo, &listed.removed, &puts);
            steps
                .time("enter changes", on_copy::enter(git, &copy, info))
                .await?;
            let tree = steps
                .time("worktree tree", on_copy::write_tree(git, &copy))
                .await?
                .ok_or_else(|| {
                    OpError::Internal("the worktree tree could not be written".into())
                })?;
            commit.root = Some(tree);
        }
        counter
    };
    let planned = Planned {
        commit,
        counter,
        base,
    };
    Ok((planned, listed.skipped))
}

/// Where the stored files and links sit in a worktree commit's tree.
const STORED_DIR: &str = "worktree/";
/// The blob of a worktree commit's tree that lists the removed paths, each ended by NUL.
const REMOVED: &[u8] = b"removed";

/// The entries of a worktree commit's tree: `puts` under [`STORED_DIR`], and `removed`
/// in [`REMOVED`] when there are any.
fn stored_changes(
    removed: &mut Vec<Vec<u8>>,
    puts: Vec<(Vec<u8>, u32, Content)>,
) -> Vec<(Vec<u8>, Change)> {
    let mut changes: Vec<(Vec<u8>, Change)> = puts
        .into_iter()
        .map(|(path, mode, content)| {
            let stored = [STORED_DIR.as_bytes(), &path].concat();
            (stored, Change::Put { mode, content })
        })
        .collect();
    let removed = std::mem::take(removed);
    if !removed.is_empty() {
        let mut list = Vec::with_capacity(removed.iter().map(|p| p.len() + 1).sum());
        for path in removed {
            list.extend_from_slice(&path);
            list.push(0);
        }
        let content = Content::Bytes(list);
        changes.push((
            REMOVED.to_vec(),
            Change::Put {
                mode: MODE_FILE,
                content,
            },
        ));
    }
    changes
}

/// The whole worktree tree of a point whose `worktree` record names `base` and `changes`
/// (the index tree and the worktree commit's tree): the index tree with the removed paths
/// taken out and the stored files put in, written by fast-import as a commit at
/// `ref_name` dated `when`. The same point always gives the same commit, so making it
/// again (a restore that stopped halfway) finds the ref where it would put it. Returned
/// with the removed paths, which the point recorded as absent.
pub async fn whole_from_changes(
    git: &Git<'_>,
    base: &Oid,
    changes: &Oid,
    (ref_name, message): (String, String),
    when: i64,
) -> Result<(Oid, Vec<Vec<u8>>), OpError> {
    let entries = objects::tree_entries(git, changes, crate::git::DEFAULT_CAP * 4).await?;
    let mut removals = Vec::new();
    let mut puts = Vec::new();
    for e in entries {
        if e.path == REMOVED {
            let cap = crate::git::DEFAULT_CAP * 4;
            let blob = cat_file::objects(git, &[&e.oid], cap, cap).await?;
            match blob.into_iter().next() {
                Some(Answer::Found(obj)) if !obj.truncated() => removals = obj.bytes,
                _ => {
                    return Err(OpError::Internal(format!(
                        "the removed paths of a restore point ({}) cannot be read",
                        e.oid
                    )));
                }
            }
        } else if let Some(path) = e.path.strip_prefix(STORED_DIR.as_bytes()) {
            let path = path.to_vec();
            let content = Content::Object(e.oid);
            puts.push((
                path,
                Change::Put {
                    mode: e.mode,
                    content,
                },
            ));
        }
    }
    let removed: Vec<Vec<u8>> = removals
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    if removed.is_empty() && puts.is_empty() {
        return Ok((base.clone(), removed));
    }
    let mut commit = NewCommit {
        ref_name,
        message,
        root: Some(base.clone()),
        changes: removed
            .iter()
            .map(|p| (p.clone(), Change::Remove))
            .collect(),
    };
    commit.changes.extend(puts);
    let mut import = Import::new(git, when, false);
    let marks = import.commit(commit);
    let written = import.finish().await?;
    Ok((written.tree(marks.commit)?, removed))
}

impl Listed {
    /// Has git store every file and link (`hash-object`), then keeps those whose object
    /// differs from their index entry, within the cap on the number of files: `(path,
    /// mode, object)` for each, the rest skipped.
    async fn hash(
        &mut self,
        git: &Git<'_>,
        caps: &Caps,
    ) -> Result<Vec<(Vec<u8>, u32, Oid)>, OpError> {
        let oids = store(git, &self.found).await?;
        let mut puts: Vec<(Vec<u8>, u32, Oid)> = Vec::new();
        for (f, oid) in std::mem::take(&mut self.found).into_iter().zip(oids) {
            // Listed for its stat data only: the index entry already holds these bytes.
            if f.candidate.entry.as_ref() == Some(&(f.mode, oid.clone())) {
                continue;
            }
            if f.mode != MODE_LINK && puts.len() >= caps.max_files {
                let reason = format!("over the {} file cap", caps.max_files);
                self.skip(f.candidate.path, reason);
                continue;
            }
            puts.push((f.candidate.path, f.mode, oid));
        }
        Ok(puts)
    }
}

/// `update-index -z --index-info` records that remove `removed` and put `puts` in place
/// of every stage of their paths.
fn index_info(repo: &Repo, removed: &[Vec<u8>], puts: &[(Vec<u8>, u32, Oid)]) -> Vec<u8> {
    let zero = zero(repo.object_format);
    let mut info = Vec::new();
    for p in removed.iter().chain(puts.iter().map(|(p, _, _)| p)) {
        info.extend_from_slice(format!("0 {zero}\t").as_bytes());
        info.extend_from_slice(p);
        info.push(0);
    }
    for (p, mode, oid) in puts {
        info.extend_from_slice(format!("{mode:o} {oid}\t").as_bytes());
        info.extend_from_slice(p);
        info.push(0);
    }
    info
}

/// Stores each file's bytes (one process for all) and each link's target, in order.
async fn store(git: &Git<'_>, found: &[Found]) -> Result<Vec<Oid>, OpError> {
    let names: Vec<&[u8]> = found
        .iter()
        .filter(|f| f.mode != MODE_LINK)
        .map(|f| f.candidate.path.as_slice())
        .collect();
    let mut files = objects::store_files(git, &names).await?.into_iter();
    let mut out = Vec::with_capacity(found.len());
    for f in found {
        let oid = match (f.mode, &f.bytes) {
            (MODE_LINK, Some(target)) => objects::store_bytes(git, target.clone()).await?,
            _ => files
                .next()
                .ok_or_else(|| OpError::Internal("a stored file has no object".into()))?,
        };
        out.push(oid);
    }
    Ok(out)
}
