//! Writing worktree files back from captured blobs, and removing those that were not
//! there, without following a symlink anywhere on the way: a restore writes exactly the
//! repository-relative path it captured, never somewhere a link now points.

use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

/// Git's modes for the entries a restore writes.
pub const MODE_FILE: u32 = 0o100644;
pub const MODE_EXEC: u32 = 0o100755;
pub const MODE_LINK: u32 = 0o120000;

/// `rel` (a repository path's bytes) as a relative path.
pub fn rel_path(rel: &[u8]) -> &Path {
    Path::new(OsStr::from_bytes(rel))
}

/// `top/rel`, refused when `rel` could leave `top` or passes through a symlink or a
/// non-directory on the way.
fn inside(top: &Path, rel: &[u8]) -> Result<PathBuf, String> {
    let rel = rel_path(rel);
    let mut path = top.to_owned();
    let parts: Vec<_> = rel.components().collect();
    for (i, c) in parts.iter().enumerate() {
        let Component::Normal(name) = c else {
            return Err(format!("{} is not a plain relative path", rel.display()));
        };
        if *name == ".git" {
            return Err(format!("{} is inside .git", rel.display()));
        }
        path.push(name);
        if i + 1 < parts.len() {
            if let Ok(meta) = std::fs::symlink_metadata(&path) {
                if !meta.is_dir() {
                    return Err(format!(
                        "{} passes through {}, which is no longer a directory",
                        rel.display(),
                        path.display()
                    ));
                }
            }
        }
    }
    Ok(path)
}

/// Writes `bytes` at `top/rel` with git mode `mode` (a symlink's bytes are its target),
/// replacing whatever file or link is there. An existing regular file is rewritten in
/// place (see [`overwrite`]); a new one is written to a temporary name and renamed.
pub fn write(top: &Path, rel: &[u8], mode: u32, bytes: &[u8]) -> Result<(), String> {
    let path = inside(top, rel)?;
    let fail = |e: std::io::Error| format!("{}: {e}", path.display());
    let parent = path
        .parent()
        .ok_or_else(|| format!("{} has no parent", rel_path(rel).display()))?;
    std::fs::create_dir_all(parent).map_err(fail)?;
    if let Ok(meta) = std::fs::symlink_metadata(&path) {
        if meta.is_dir() {
            // A directory where the file was: only an empty one is replaced.
            std::fs::remove_dir(&path).map_err(fail)?;
        }
    }
    if mode != MODE_LINK && overwrite(&path, mode, bytes).map_err(fail)? {
        return Ok(());
    }
    if mode == MODE_LINK {
        let _ = std::fs::remove_file(&path);
        return std::os::unix::fs::symlink(OsStr::from_bytes(bytes), &path).map_err(fail);
    }
    let mut tmp = tempfile::Builder::new()
        .prefix(".gitward-restore-")
        .tempfile_in(parent)
        .map_err(fail)?;
    tmp.write_all(bytes).map_err(fail)?;
    let perm = if mode == MODE_EXEC { 0o755 } else { 0o644 };
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(perm))
        .map_err(fail)?;
    tmp.persist(&path).map_err(|e| fail(e.error))?;
    Ok(())
}

/// Rewrites an existing regular file with a single link in place (write, then cut to
/// length); `false` when there is none to rewrite. Replacing a file (new inode, rename
/// or unlink) frees its blocks, which is two orders of magnitude slower on a file system
/// that discards freed blocks online; rewriting in place keeps the blocks.
fn overwrite(path: &Path, mode: u32, bytes: &[u8]) -> std::io::Result<bool> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(false);
    };
    if !meta.is_file() || meta.nlink() != 1 {
        return Ok(false);
    }
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(flags.bits() as i32)
        .open(path)?;
    file.write_all(bytes)?;
    file.set_len(bytes.len() as u64)?;
    let perm = if mode == MODE_EXEC { 0o755 } else { 0o644 };
    file.set_permissions(std::fs::Permissions::from_mode(perm))?;
    Ok(true)
}

/// Removes the file or link at `top/rel` (absent is fine), then every directory above it
/// that became empty, up to `top`.
pub fn remove(top: &Path, rel: &[u8]) -> Result<(), String> {
    let path = inside(top, rel)?;
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(_) => std::fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?,
        Err(_) => return Ok(()),
    }
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d == top || std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
    Ok(())
}

/// Writes `bytes` as `dir/name` through `name.lock` (created exclusively, as git does),
/// then renames it into place, with modification time `mtime` when given.
pub fn replace_locked(
    dir: &Path,
    name: &str,
    bytes: &[u8],
    mtime: Option<std::time::SystemTime>,
) -> Result<(), String> {
    let target = dir.join(name);
    let lock = dir.join(format!("{name}.lock"));
    let fail = |e: std::io::Error| format!("{}: {e}", lock.display());
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&lock)
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                format!(
                    "{} exists: another git process is running in this repository",
                    lock.display()
                )
            } else {
                fail(e)
            }
        })?;
    let written = file
        .write_all(bytes)
        .and_then(|_| mtime.map_or(Ok(()), |t| file.set_modified(t)))
        .and_then(|_| file.sync_all())
        .and_then(|_| std::fs::rename(&lock, &target));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&lock);
        return Err(fail(e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_leave_or_pass_a_link_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path();
        std::fs::create_dir(top.join("real")).unwrap();
        std::os::unix::fs::symlink("/tmp", top.join("link")).unwrap();
        assert!(write(top, b"link/x", MODE_FILE, b"x").is_err());
        assert!(write(top, b"../x", MODE_FILE, b"x").is_err());
        assert!(write(top, b"/etc/x", MODE_FILE, b"x").is_err());
        assert!(write(top, b".git/config", MODE_FILE, b"x").is_err());
        write(top, b"real/a/b", MODE_EXEC, b"hi").unwrap();
        assert_eq!(std::fs::read(top.join("real/a/b")).unwrap(), b"hi");
        remove(top, b"real/a/b").unwrap();
        assert!(!top.join("real").exists());
        write(top, b"l", MODE_LINK, b"target").unwrap();
        assert_eq!(
            std::fs::read_link(top.join("l")).unwrap(),
            Path::new("target")
        );
    }
}
