//! Paths are literal pathspecs. A `path` with glob characters that names nothing gets a
//! warning, so an empty answer does not read as "no changes".

use std::path::Path;

use crate::error::ToolError;
use crate::git::{Git, Oid, RepoRelPath, head_tree};

/// Whether `path` holds a character a glob pattern would use.
pub fn looks_like_glob(path: &str) -> bool {
    path.contains(['*', '?', '['])
}

/// A warning when `path` reads like a glob and no file or directory has that literal name:
/// not in the working tree, in HEAD, nor in any of `commits`.
pub async fn glob_warning(
    git: &Git<'_>,
    worktree: Option<&Path>,
    commits: &[&Oid],
    path: &RepoRelPath,
) -> Result<Option<String>, ToolError> {
    if !looks_like_glob(path.as_str()) {
        return Ok(None);
    }
    if worktree.is_some_and(|top| std::fs::symlink_metadata(top.join(path.as_str())).is_ok()) {
        return Ok(None);
    }
    let mut revs = vec!["HEAD"];
    revs.extend(commits.iter().map(|c| c.as_str()));
    for rev in revs {
        if head_tree::object_type_at(git, rev, path).await?.is_some() {
            return Ok(None);
        }
    }
    Ok(Some(format!(
        "path \"{}\" is taken literally and names no file or directory; glob patterns are not expanded",
        path.as_str()
    )))
}

#[cfg(test)]
mod tests {
    use super::looks_like_glob;

    #[test]
    fn glob_characters() {
        assert!(looks_like_glob("*.md"));
        assert!(looks_like_glob("crates/*/Cargo.toml"));
        assert!(looks_like_glob("a?b"));
        assert!(looks_like_glob("[ab]"));
        assert!(!looks_like_glob("src/main.rs"));
    }
}
