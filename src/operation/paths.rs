//! Checks of the paths and branch names an operation's fields carry, pure (no git), so
//! the sidecar and the gateway refuse the same values. Git itself checks branch names
//! again (`check-ref-format --branch`) when the gateway pins them.

use crate::gateway::api::FieldError;
use crate::git::RepoRelPath;

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

/// A repository-relative path, as `git::RepoRelPath` accepts it.
pub fn check_rel_path(field: &'static str, path: &str) -> Result<RepoRelPath, FieldError> {
    RepoRelPath::parse(field, path).map_err(|e| FieldError {
        field,
        reason: match e {
            crate::git::GitError::Invalid { reason, .. } => reason,
            other => other.to_string(),
        },
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
        assert!(check_branch("name", &"a".repeat(256)).is_err());
    }
}
