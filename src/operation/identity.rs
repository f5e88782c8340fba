//! Which repository a proposal was made for: its canonical top level, this worktree's
//! git directory and the common one, each with the device and inode it had. Read when
//! the proposal arrives and compared right before the write, so that a folder replaced
//! by a symbolic link to (or a move of) another repository in the same state is refused
//! rather than written.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde_json::{Value, json};

use super::{Moved, OpError};
use crate::git::Repo;

/// One directory as found: its canonical path, device and inode.
fn entry(path: &Path) -> Result<Value, OpError> {
    let canonical = std::fs::canonicalize(path)
        .map_err(|e| OpError::Internal(format!("{}: {e}", path.display())))?;
    let meta = std::fs::metadata(&canonical)
        .map_err(|e| OpError::Internal(format!("{}: {e}", canonical.display())))?;
    Ok(json!({
        "path": canonical.to_string_lossy(),
        "dev": meta.dev(),
        "ino": meta.ino(),
    }))
}

/// The identity of `repo` as it is now.
pub fn read(repo: &Repo) -> Result<Value, OpError> {
    Ok(json!({
        "top": entry(&repo.path)?,
        "gitDir": entry(&repo.git_dir)?,
        "commonDir": entry(&repo.common_dir)?,
    }))
}

/// [`OpError::Stale`] unless `repo` is the repository `pinned` was read from.
pub fn check(pinned: &Value, repo: &Repo) -> Result<(), OpError> {
    let now = read(repo).unwrap_or(Value::Null);
    if &now == pinned {
        return Ok(());
    }
    Err(OpError::Stale {
        moved: vec![Moved {
            what: "repository (not the one the proposal was made for)".into(),
            expected: pinned.clone(),
            found: now,
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_names_the_directory_by_device_and_inode() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir(&a).unwrap();
        std::fs::create_dir(&b).unwrap();
        let first = entry(&a).unwrap();
        assert_eq!(entry(&a).unwrap(), first);
        // The same path over another directory is another identity.
        std::fs::remove_dir(&a).unwrap();
        std::fs::rename(&b, &a).unwrap();
        let now = entry(&a).unwrap();
        assert_eq!(now["path"], first["path"]);
        assert_ne!(now, first);
    }
}
