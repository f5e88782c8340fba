//! The checked-out submodules a parent `status` or `diff` recurses into: every gitlink
//! in the index whose directory holds a `.git`, registered in `.gitmodules` or not.
//!
//! Listing the index costs a full `ls-files`, so the repository's own index is first
//! scanned for the bytes every gitlink entry carries (its mode, `0o160000`, as a
//! big-endian 32-bit field); an index without them holds no gitlink and needs no list.

use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

use tokio_util::sync::CancellationToken;

use super::error::GitError;
use crate::process::{Invocation, Program};

/// A gitlink's mode as an index entry stores it.
const GITLINK_MODE: [u8; 4] = [0, 0, 0xe0, 0];
/// Past this size the index is not scanned; the list is asked for instead.
const MAX_SCAN: u64 = 256 << 20;
/// How much `ls-files` output is read before the repository is refused.
const LIST_CAP: usize = 256 << 20;

/// False only when the index in `git_dir` certainly holds no gitlink.
pub(crate) async fn may_hold_gitlinks(git_dir: &Path) -> bool {
    let git_dir = git_dir.to_path_buf();
    tokio::task::spawn_blocking(move || scan(&git_dir))
        .await
        .unwrap_or(true)
}

fn scan(git_dir: &Path) -> bool {
    // A split index keeps most entries in a shared file: let git list them.
    let split = std::fs::read_dir(git_dir).map_or(true, |entries| {
        entries
            .flatten()
            .any(|e| e.file_name().as_bytes().starts_with(b"sharedindex."))
    });
    if split {
        return true;
    }
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(git_dir.join("index"))
    {
        Ok(file) => file,
        Err(e) => return e.kind() != std::io::ErrorKind::NotFound,
    };
    match file.metadata() {
        Ok(meta) if meta.is_file() && meta.len() <= MAX_SCAN => {}
        _ => return true,
    }
    let mut reader = file.take(MAX_SCAN);
    let mut buf = vec![0u8; 256 * 1024];
    let finder = memchr::memmem::Finder::new(&GITLINK_MODE);
    // The last three bytes of each chunk are kept, so a match across chunks is seen.
    let mut kept = 0usize;
    loop {
        let n = match reader.read(&mut buf[kept..]) {
            Ok(0) => return false,
            Ok(n) => n,
            Err(_) => return true,
        };
        let end = kept + n;
        if finder.find(&buf[..end]).is_some() {
            return true;
        }
        let tail = end.saturating_sub(3);
        buf.copy_within(tail..end, 0);
        kept = end - tail;
    }
}

/// The working trees of the checked-out gitlinks in the index of the repository at `top`.
pub(crate) async fn checked_out(
    top: &Path,
    cancel: &CancellationToken,
) -> Result<Vec<PathBuf>, GitError> {
    let shown = || vec!["git".to_owned(), "ls-files".to_owned()];
    let out = Invocation::new(Program::Git)
        .dir(top)
        .args(["--no-optional-locks", "ls-files", "-s", "-z", "--full-name"])
        .capture(LIST_CAP, cancel)
        .await
        .map_err(|e| GitError::run(&shown(), e))?;
    if out.sink.truncated {
        return Err(GitError::failed(
            &shown(),
            None,
            "the index is too large to check for submodules",
        ));
    }
    if !out.success() {
        return Ok(Vec::new());
    }
    let mut subs: Vec<PathBuf> = out
        .sink
        .bytes
        .split(|b| *b == 0)
        .filter_map(|record| record.strip_prefix(b"160000 "))
        .filter_map(|rest| {
            rest.iter()
                .position(|b| *b == b'\t')
                .map(|t| &rest[t + 1..])
        })
        .map(|rel| Path::new(OsStr::from_bytes(rel)))
        .filter(|rel| {
            !rel.as_os_str().is_empty()
                && rel.components().all(|c| matches!(c, Component::Normal(_)))
                && is_real_dir(top, rel)
                && std::fs::symlink_metadata(top.join(rel).join(".git")).is_ok()
        })
        .map(|rel| top.join(rel))
        .collect();
    // A conflicted gitlink is listed once per stage.
    subs.dedup();
    Ok(subs)
}

/// True when every component of `rel` under `top` is a directory, not a symlink.
fn is_real_dir(top: &Path, rel: &Path) -> bool {
    let mut at = top.to_path_buf();
    rel.components().all(|c| {
        at.push(c);
        std::fs::symlink_metadata(&at).is_ok_and(|m| m.is_dir())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scan_finds_a_gitlink_mode_across_chunk_edges_and_only_then() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("index");
        assert!(!scan(dir.path()), "no index, no gitlink");
        let mut bytes = vec![0x11u8; 256 * 1024 - 2];
        std::fs::write(&index, &bytes).unwrap();
        assert!(!scan(dir.path()));
        bytes.extend_from_slice(&GITLINK_MODE);
        bytes.extend_from_slice(&[0x11; 100]);
        std::fs::write(&index, &bytes).unwrap();
        assert!(scan(dir.path()));
        std::fs::write(&index, b"").unwrap();
        std::fs::write(dir.path().join("sharedindex.abc"), b"").unwrap();
        assert!(scan(dir.path()), "a split index is always listed");
    }
}
