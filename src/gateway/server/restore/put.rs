//! Putting a point's worktree back: only the paths that differ between the worktree tree
//! just captured (the restore's own point) and the point's, and never a file that neither
//! point saved.
//!
//! - A path the restore writes and its own point did not save (ignored now, or over the
//!   caps) is overwritten only when it already holds the bytes to write; otherwise the
//!   restore stops before writing anything and names each such file
//!   ([`RestoreError::Uncaptured`]), as git would have to overwrite it.
//! - A path the point does not hold is removed when the point recorded it as absent (its
//!   `removed` list), when the index tracks it now (git removes a tracked file a checkout
//!   leaves behind), or when the point's ignore rules would have listed it. An untracked
//!   file those rules ignore may have been there, ignored, when the point was taken: it
//!   is left alone (and listed as `kept`), since the point never saw it.
//! - Paths the point skipped are never removed.
//!
//! The ignore rules are the point's own: its `.gitignore` files are written back before
//! git is asked (`check-ignore`), and the removals follow.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use serde_json::{Value, json};

use super::apply::blobs;
use super::files::{self, MODE_LINK, rel_path};
use super::{RestoreError, Whole};
use crate::git::{Git, check_ignore, diff_tree, path_text};
use crate::operation::OpError;

const GITLINK: u32 = 0o160000;

/// One path to put back: `(mode, object, status, path)` as `diff-tree --raw` tells it.
type Entry = (u32, String, u8, Vec<u8>);

/// What the target point says of paths beyond its tree.
pub struct Left<'a> {
    /// The paths it left out (over the caps): never removed.
    pub skipped: &'a BTreeSet<Vec<u8>>,
    /// The paths it captured whatever their ignore status (`touched`): a file there that
    /// it did not store is removed, never kept as one it may not have seen.
    pub looked: &'a BTreeSet<Vec<u8>>,
}

/// Makes the worktree at `top` match `target`, given `current` (the restore's own point,
/// just taken).
pub async fn worktree(
    git: &Git<'_>,
    top: &Path,
    current: &Whole,
    target: &Whole,
    left: Left<'_>,
) -> Result<Value, RestoreError> {
    let Left { skipped, looked } = left;
    let entries = diff_tree::trees_raw_bytes(git, current.tree.as_str(), target.tree.as_str())
        .await
        .map_err(OpError::from)?;
    let (removals, writes): (Vec<Entry>, Vec<Entry>) = entries
        .into_iter()
        .filter(|(mode, _, status, path)| {
            *status == b'D' && !skipped.contains(path) || *status != b'D' && *mode != GITLINK
        })
        .partition(|e| e.2 == b'D');
    let wanted: Vec<String> = writes
        .iter()
        .map(|e| e.1.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let contents = blobs(git, &wanted).await?;
    let going: HashSet<Vec<u8>> = removals.iter().map(|e| e.3.clone()).collect();
    let (found, contents) = {
        let (top, writes, going) = (top.to_owned(), writes.clone(), going);
        tokio::task::spawn_blocking(move || {
            let found = uncaptured(&top, &writes, &contents, &going);
            (found, contents)
        })
        .await
        .map_err(|e| OpError::Internal(format!("checking files stopped: {e}")))?
    };
    if !found.is_empty() {
        return Err(RestoreError::Uncaptured { files: found });
    }
    let may_keep: Vec<Vec<u8>> = maybe_ignored(git, current, target, &removals)
        .await?
        .into_iter()
        .filter(|p| !looked.contains(p))
        .collect();
    let top = top.to_owned();
    // A restore must finish once started: no read deadline on the writes.
    let (first, blocked) = tokio::task::spawn_blocking({
        let top = top.clone();
        let going: HashSet<Vec<u8>> = removals.iter().map(|e| e.3.clone()).collect();
        move || {
            let mut done = Done::default();
            let mut blocked = Vec::new();
            for e in writes {
                if blocked_by(&top, &e.3, &going) {
                    blocked.push(e);
                } else {
                    done.write(&top, &e, &contents);
                }
            }
            (done, (blocked, contents))
        }
    })
    .await
    .map_err(|e| OpError::Internal(format!("restoring files stopped: {e}")))?;
    // With the point's `.gitignore` files back, git tells which untracked files its rules
    // ignore: those may have been there unseen, and stay.
    let kept: HashSet<Vec<u8>> = check_ignore::ignored_bytes(git, &may_keep)
        .await
        .map_err(OpError::from)?
        .into_iter()
        .collect();
    let mut done = tokio::task::spawn_blocking(move || {
        let mut done = first;
        for (_, _, _, path) in removals {
            if kept.contains(&path) {
                done.kept.push(path_text::encode(&path));
                continue;
            }
            match files::remove(&top, &path) {
                Ok(()) => done.removed += 1,
                Err(e) => done.failed.push(e),
            }
        }
        let (blocked, contents) = blocked;
        for e in blocked {
            done.write(&top, &e, &contents);
        }
        done
    })
    .await
    .map_err(|e| OpError::Internal(format!("restoring files stopped: {e}")))?;
    if !done.failed.is_empty() {
        return Err(OpError::git(format!(
            "could not restore every file: {}",
            done.failed.join("; ")
        ))
        .into());
    }
    done.kept.sort();
    Ok(json!({"written": done.written, "removed": done.removed, "kept": done.kept}))
}

/// What the writes and removals did.
#[derive(Default)]
struct Done {
    written: u64,
    removed: u64,
    kept: Vec<String>,
    failed: Vec<String>,
}

impl Done {
    fn write(&mut self, top: &Path, e: &Entry, contents: &HashMap<String, Vec<u8>>) {
        let (mode, oid, _, path) = e;
        let done = match contents.get(oid) {
            Some(bytes) => files::write(top, path, *mode, bytes),
            None => Err(format!(
                "{}: object {oid} not fetched",
                rel_path(path).display()
            )),
        };
        match done {
            Ok(()) => self.written += 1,
            Err(e) => self.failed.push(e),
        }
    }
}

/// Whether a directory above `path` is now a file or link that the restore removes, or
/// `path` itself is now a directory (whose files the restore removes): the write waits
/// until it is gone.
fn blocked_by(top: &Path, path: &[u8], going: &HashSet<Vec<u8>>) -> bool {
    std::fs::symlink_metadata(top.join(rel_path(path))).is_ok_and(|m| m.is_dir())
        || ancestors(path).any(|dir| {
            going.contains(dir)
                && std::fs::symlink_metadata(top.join(rel_path(dir))).is_ok_and(|m| !m.is_dir())
        })
}

/// Whether every file and link under the directory `dir` is one the restore removes, so
/// that removing them leaves no directory in the way of a file.
fn emptied(top: &Path, dir: &[u8], going: &HashSet<Vec<u8>>) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let mut pending = vec![dir.to_vec()];
    while let Some(at) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(top.join(rel_path(&at))) else {
            return false;
        };
        for entry in entries.flatten() {
            let mut path = at.clone();
            path.push(b'/');
            path.extend_from_slice(entry.file_name().as_bytes());
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => pending.push(path),
                _ if going.contains(&path) => {}
                _ => return false,
            }
        }
    }
    true
}

/// The directories above `path`, nearest last.
fn ancestors(path: &[u8]) -> impl Iterator<Item = &[u8]> {
    path.iter()
        .enumerate()
        .filter(|(_, b)| **b == b'/')
        .map(move |(i, _)| &path[..i])
}

/// The files the writes would overwrite although the restore's own point does not hold
/// them: a path the current tree lacks (`A`) with something on disk that is not already
/// the bytes to write, or a file or link standing where a directory must be made.
fn uncaptured(
    top: &Path,
    writes: &[Entry],
    contents: &HashMap<String, Vec<u8>>,
    going: &HashSet<Vec<u8>>,
) -> Vec<Value> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    // Each directory is looked at once, however many files go below it.
    let mut dirs: HashSet<&[u8]> = HashSet::new();
    for (mode, oid, status, path) in writes {
        for dir in ancestors(path) {
            if going.contains(dir) || !dirs.insert(dir) {
                continue;
            }
            let on_disk = std::fs::symlink_metadata(top.join(rel_path(dir)));
            if on_disk.is_ok_and(|m| !m.is_dir()) && seen.insert(dir) {
                out.push(json!({
                    "path": path_text::encode(dir),
                    "reason": "not saved by the restore (ignored, or over the caps), and a directory of the restore point must take its place",
                }));
            }
        }
        if *status != b'A' {
            continue;
        }
        let same = contents
            .get(oid)
            .is_some_and(|want| holds(top, path, *mode, want));
        // A directory there goes with the files the restore removes from it, when it
        // holds nothing else.
        let present = match std::fs::symlink_metadata(top.join(rel_path(path))) {
            Ok(meta) if meta.is_dir() => !emptied(top, path, going),
            Ok(_) => true,
            Err(_) => false,
        };
        if present && !same && seen.insert(path) {
            out.push(json!({
                "path": path_text::encode(path),
                "reason": "not saved by the restore (ignored, or over the caps), and the restore point has other content there",
            }));
        }
    }
    out
}

/// Whether `top/path` already holds `want` as `mode` says (a link's target, or a file's
/// bytes).
fn holds(top: &Path, path: &[u8], mode: u32, want: &[u8]) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let full = top.join(rel_path(path));
    let Ok(meta) = std::fs::symlink_metadata(&full) else {
        return false;
    };
    if mode == MODE_LINK {
        return meta.file_type().is_symlink()
            && std::fs::read_link(&full).is_ok_and(|t| t.as_os_str().as_bytes() == want);
    }
    meta.is_file()
        && meta.len() == want.len() as u64
        && crate::safe_file::read_in(top, rel_path(path), meta.len()).is_ok_and(|b| b == want)
}

/// The removals that may be files the target point never saw: not recorded by it as
/// absent, and untracked now (the current tree has them beyond its index tree). Which of
/// them the point's rules ignore is asked once its `.gitignore` files are back.
async fn maybe_ignored(
    git: &Git<'_>,
    current: &Whole,
    target: &Whole,
    removals: &[Entry],
) -> Result<Vec<Vec<u8>>, RestoreError> {
    let absent: HashSet<&[u8]> = target.removed.iter().map(Vec::as_slice).collect();
    let open: Vec<&[u8]> = removals
        .iter()
        .map(|e| e.3.as_slice())
        .filter(|p| !absent.contains(p))
        .collect();
    if open.is_empty() {
        return Ok(Vec::new());
    }
    // Without an index tree (a conflict) every such path counts as untracked.
    let tracked: HashSet<Vec<u8>> = match &current.base {
        Some(base) => {
            let added = diff_tree::trees_raw_bytes(git, base.as_str(), current.tree.as_str())
                .await
                .map_err(OpError::from)?;
            let untracked: HashSet<Vec<u8>> = added
                .into_iter()
                .filter(|e| e.2 == b'A')
                .map(|e| e.3)
                .collect();
            open.iter()
                .filter(|p| !untracked.contains(**p))
                .map(|p| p.to_vec())
                .collect()
        }
        None => HashSet::new(),
    };
    Ok(open
        .into_iter()
        .filter(|p| !tracked.contains(*p))
        .map(<[u8]>::to_vec)
        .collect())
}
