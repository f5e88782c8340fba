//! Checks of the paths and branch names an operation's fields carry, pure (no git), so
//! the sidecar and the gateway refuse the same values. Git itself checks branch names
//! again (`check-ref-format --branch`) when the gateway pins them.
//!
//! No write ever reaches into a git directory: a path with a `.git` component is refused
//! with the fields, and [`inside_git_dir`] refuses the locations that only resolve there
//! (through a symbolic link, or a git directory under another name).

use std::path::{Component, Path, PathBuf};

use crate::gateway::api::FieldError;
use crate::git::{Repo, RepoRelPath};

/// Longest branch name accepted.
pub const MAX_BRANCH_LEN: usize = 255;
/// Most paths a commit may list.
pub const MAX_PATHS: usize = 1000;

fn refuse(field: &'static str, reason: impl Into<String>) -> Result<(), FieldError> {
    Err(FieldError {
        field,
        reason: reason.into(),
    })
}

/// A short branch name (`feature/x`, not `refs/heads/feature/x`), by git's
/// `check-ref-format` rules plus: never `HEAD`, never starting with `-`.
pub fn check_branch(field: &'static str, name: &str) -> Result<(), FieldError> {
    if name.is_empty() || name.len() > MAX_BRANCH_LEN {
        return refuse(field, format!("expected 1-{MAX_BRANCH_LEN} bytes"));
    }
    if name.starts_with('-') {
        return refuse(field, "must not start with '-'");
    }
    if name == "HEAD" || name == "@" || name.starts_with("refs/") {
        return refuse(field, "give a plain branch name such as feature/x");
    }
    let bad_char = |c: char| c.is_control() || " ~^:?*[\\".contains(c);
    if name.chars().any(bad_char) {
        return refuse(
            field,
            "must not contain spaces, control characters or any of ~^:?*[\\",
        );
    }
    if name.contains("..") || name.contains("@{") || name.contains("//") {
        return refuse(field, "must not contain '..', '@{' or '//'");
    }
    if name.ends_with('/') || name.ends_with('.') || name.ends_with(".lock") {
        return refuse(field, "must not end with '/', '.' or '.lock'");
    }
    if name
        .split('/')
        .any(|c| c.starts_with('.') || c.ends_with(".lock"))
    {
        return refuse(field, "no component may start with '.' or end with '.lock'");
    }
    Ok(())
}

/// A repository-relative path, as `git::RepoRelPath` accepts it, and never inside a
/// `.git` (in any case: git refuses such paths the same way on case-folding filesystems).
pub fn check_rel_path(field: &'static str, path: &str) -> Result<RepoRelPath, FieldError> {
    if path
        .split('/')
        .any(|c| c.trim_end_matches(['.', ' ']).eq_ignore_ascii_case(".git"))
    {
        return Err(FieldError {
            field,
            reason: format!("`{path}` is inside a git directory, which no write touches"),
        });
    }
    RepoRelPath::parse(field, path).map_err(|e| FieldError {
        field,
        reason: match e {
            crate::git::GitError::Invalid { reason, .. } => reason,
            other => other.to_string(),
        },
    })
}

/// `path` with its deepest existing ancestor made canonical (the rest does not exist).
pub fn canonical_prefix(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut cursor = path.to_path_buf();
    loop {
        if let Ok(canonical) = std::fs::canonicalize(&cursor) {
            return rest.iter().rev().fold(canonical, |p, c| p.join(c));
        }
        match (cursor.file_name().map(|n| n.to_owned()), cursor.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                cursor = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// True when the absolute `path`, resolved through its existing part, lies in a git
/// directory: `repo`'s own (this worktree's or the common one), any directory named
/// `.git`, or any existing directory that git would take for one (`HEAD` beside
/// `objects` and `refs`), so another repository's git directory inside the roots counts
/// too.
pub fn inside_git_dir(repo: &Repo, path: &Path) -> bool {
    let resolved = canonical_prefix(path);
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    if [&repo.git_dir, &repo.common_dir]
        .iter()
        .any(|dir| resolved.starts_with(canonical(dir)))
    {
        return true;
    }
    for candidate in [path, resolved.as_path()] {
        let named = candidate.components().any(|c| match c {
            Component::Normal(name) => name
                .to_str()
                .is_some_and(|n| n.trim_end_matches(['.', ' ']).eq_ignore_ascii_case(".git")),
            _ => false,
        });
        if named {
            return true;
        }
    }
    resolved.ancestors().any(|dir| {
        dir.join("HEAD").is_file() && dir.join("objects").is_dir() && dir.join("refs").is_dir()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_names_follow_check_ref_format() {
        for good in ["main", "feature/x", "agent/fix-1", "v1.2", "a.b/c_d"] {
            assert!(check_branch("name", good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "-x",
            "--force",
            "HEAD",
            "a..b",
            "a b",
            "a~1",
            "a^",
            "a:b",
            "a?",
            "a*",
            "a[",
            "a\\b",
            "a@{1}",
            "a//b",
            "a/",
            "a.",
            "a.lock",
            ".x",
            "a/.b",
            "refs/heads/x",
            "a\nb",
            "@",
        ] {
            assert!(check_branch("name", bad).is_err(), "{bad:?}");
        }
        for bad in [".git/config", "a/.GIT/hooks/x", ".git", "sub/.git./HEAD"] {
            assert!(check_rel_path("paths", bad).is_err(), "{bad:?}");
        }
        assert!(check_rel_path("paths", "a/.gitignore").is_ok());
        assert!(check_branch("name", &"a".repeat(256)).is_err());
    }
}
