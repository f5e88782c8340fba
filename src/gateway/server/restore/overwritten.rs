//! The untracked files a write's checkout may overwrite or delete: git's checkout (a
//! switch, a hard reset, a merge, a rebase) treats an ignored file as expendable where
//! the tree it checks out tracks that path, and replaces it (a directory of ignored files
//! too; a file where the tree has a directory). The restore point taken before the write
//! captures each such file whatever its ignore status, as it does a patch's targets, so
//! a restore puts back the bytes that were there.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::git::{Git, tree_paths};
use crate::operation::{Checkout, OpError};

/// The files on disk, outside the index, that checking out `checkouts` may replace: each
/// path a tree tracks that is a file or a link on disk, the files under it when it is a
/// directory, and a file that stands where the tree has a directory. At most `max`.
pub async fn paths(
    git: &Git<'_>,
    top: &Path,
    checkouts: &[Checkout],
    max: usize,
) -> Result<Vec<Vec<u8>>, OpError> {
    let mut tracked = Vec::new();
    for c in checkouts {
        tracked.extend(tree_paths::beyond_index(git, &c.commit, c.since.as_deref()).await?);
    }
    if tracked.is_empty() {
        return Ok(Vec::new());
    }
    let top = top.to_owned();
    crate::safe_file::off_thread(git.cancel(), move || on_disk(&top, &tracked, max))
        .await
        .map_err(|e| OpError::Internal(e.to_string()))
}

fn on_disk(top: &Path, tracked: &[Vec<u8>], max: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for rel in tracked {
        if out.len() >= max {
            break;
        }
        match std::fs::symlink_metadata(top.join(OsStr::from_bytes(rel))) {
            Ok(meta) if meta.is_dir() => files_under(top, rel, max, &mut out),
            Ok(_) => out.push(rel.clone()),
            // Absent, or a file stands where the tree has a directory: that file goes.
            Err(_) => out.extend(file_above(top, rel)),
        }
    }
    out.sort();
    out.dedup();
    out.truncate(max);
    out
}

/// The first leading part of `rel` that is a file or a link on disk.
fn file_above(top: &Path, rel: &[u8]) -> Option<Vec<u8>> {
    let ends = rel.iter().enumerate().filter(|(_, b)| **b == b'/');
    for (at, _) in ends {
        let part = &rel[..at];
        match std::fs::symlink_metadata(top.join(OsStr::from_bytes(part))) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Some(part.to_vec()),
            Err(_) => return None,
        }
    }
    None
}

/// Every file and link under the directory `rel` (links never followed).
fn files_under(top: &Path, rel: &[u8], max: usize, out: &mut Vec<Vec<u8>>) {
    let mut pending = vec![rel.to_vec()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(top.join(OsStr::from_bytes(&dir))) else {
            continue;
        };
        for entry in entries.flatten() {
            if out.len() >= max {
                return;
            }
            let mut path = dir.clone();
            path.push(b'/');
            path.extend_from_slice(entry.file_name().as_bytes());
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => pending.push(path),
                Ok(_) => out.push(path),
                Err(_) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn tmp() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("gw-overwritten-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn files_links_directories_and_files_in_the_way_are_found() {
        let top = tmp();
        std::fs::write(top.join(".env"), "x").unwrap();
        std::fs::create_dir_all(top.join("cache/deep")).unwrap();
        std::fs::write(top.join("cache/deep/a"), "a").unwrap();
        std::fs::write(top.join("build"), "b").unwrap();
        std::os::unix::fs::symlink("nowhere", top.join("link")).unwrap();
        let tracked: Vec<Vec<u8>> = [".env", "cache", "build/out.o", "link", "absent/x"]
            .iter()
            .map(|p| p.as_bytes().to_vec())
            .collect();
        let found = on_disk(&top, &tracked, 100);
        let want: Vec<Vec<u8>> = [".env", "build", "cache/deep/a", "link"]
            .iter()
            .map(|p| p.as_bytes().to_vec())
            .collect();
        assert_eq!(found, want);
        assert_eq!(on_disk(&top, &tracked, 2).len(), 2);
        std::fs::remove_dir_all(&top).unwrap();
    }
}
