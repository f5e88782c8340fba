//! Spec tools act only inside their workspace folder.
//!
//! A repository decides much of what a spec tool would touch: it can register any
//! directory as a worktree, and `openspec/`, `openspec/changes/<name>`, `.worktrees/` or
//! the archive directory can be symlinks into another project. Every path a spec tool
//! reads or writes is therefore resolved (symlinks followed, as the file system would
//! follow them) and must still be inside the folder; otherwise the tool refuses it with
//! the path it led to.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::SpecError;

/// The code of a refusal.
pub const OUTSIDE: &str = "MCP_PATH_OUTSIDE_FOLDER";

/// Where `path` leads: the nearest existing ancestor resolved, the rest appended (a path
/// about to be created leads where its parent does). `None` when that cannot be told (a
/// `..` below a missing directory, say).
pub fn resolve(path: &Path) -> Option<PathBuf> {
    let mut rest = Vec::new();
    let mut at = path;
    loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            return Some(rest.iter().rev().fold(real, |p, name| p.join(name)));
        }
        // `file_name` is `None` for a path ending in `..`: nothing is appended blindly.
        rest.push(at.file_name()?.to_owned());
        at = at.parent()?;
    }
}

/// `path` resolved, if it stays inside `folder` (canonical); a refusal otherwise.
pub fn inside(folder: &Path, path: &Path) -> Result<PathBuf, SpecError> {
    let resolved = resolve(path);
    if let Some(resolved) = resolved.as_ref().filter(|r| r.starts_with(folder)) {
        return Ok(resolved.clone());
    }
    let resolved = resolved.unwrap_or_else(|| path.to_path_buf());
    Err(SpecError::new(
        "WorkspaceError",
        OUTSIDE,
        format!(
            "{} leads to {}, outside the workspace folder {}; spec tools act only inside their folder",
            path.display(),
            resolved.display(),
            folder.display()
        ),
    )
    .with(json!({
        "path": path.display().to_string(),
        "resolvedPath": resolved.display().to_string(),
        "folderPath": folder.display().to_string(),
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symlinks_are_judged_by_where_they_lead() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let folder = root.join("folder");
        let other = root.join("other");
        std::fs::create_dir_all(folder.join("openspec")).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        std::os::unix::fs::symlink(&other, folder.join("link")).unwrap();

        assert_eq!(
            inside(&folder, &folder.join("openspec/changes/x")).unwrap(),
            folder.join("openspec/changes/x")
        );
        let err = inside(&folder, &folder.join("link/changes")).unwrap_err();
        assert_eq!(err.code.as_deref(), Some(OUTSIDE));
        assert!(
            err.message.contains(&other.display().to_string()),
            "{err:?}"
        );
        assert!(inside(&folder, &folder.join("../other")).is_err());
        assert!(inside(&folder, &folder.join("missing/../../other/x")).is_err());
    }
}
