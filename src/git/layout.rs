//! Where a repository's files are, found the way git finds them but without running git,
//! for readers that only read files (many repositories at once, where a process each
//! would cost more than the reading). Callers still check every directory against the
//! allowed roots (`super::reach`) before reading anything in it.

use std::path::{Path, PathBuf};

/// Where a repository's files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The working tree, or the git directory of a bare repository.
    pub top: PathBuf,
    pub git_dir: PathBuf,
    /// Where refs, logs and objects shared by all worktrees live.
    pub common_dir: PathBuf,
}

/// Finds the repository containing `dir` the way git does (a `.git` directory or
/// `gitdir:` file in it or a parent, or a git directory itself), without running git.
pub fn locate(dir: &Path) -> Option<Layout> {
    let mut at = Some(dir);
    while let Some(d) = at {
        let dotgit = d.join(".git");
        if let Ok(meta) = std::fs::metadata(&dotgit) {
            let git_dir = if meta.is_dir() {
                std::fs::canonicalize(&dotgit).ok()?
            } else {
                let text = crate::safe_file::read(&dotgit, 4096).ok()?;
                let text = String::from_utf8(text).ok()?;
                let target = text.trim_end().strip_prefix("gitdir: ")?;
                std::fs::canonicalize(d.join(target)).ok()?
            };
            if is_git_dir(&git_dir) {
                return Some(layout(d.to_path_buf(), git_dir));
            }
        }
        if is_git_dir(d) {
            // Inside the `.git` of a working tree the repository is that working tree.
            return Some(match (d.file_name(), d.parent()) {
                (Some(name), Some(parent)) if name == ".git" => {
                    layout(parent.to_path_buf(), d.to_path_buf())
                }
                _ => layout(d.to_path_buf(), d.to_path_buf()),
            });
        }
        at = d.parent();
    }
    None
}

fn is_git_dir(dir: &Path) -> bool {
    dir.join("HEAD").is_file()
        && (dir.join("objects").is_dir() || dir.join("commondir").is_file())
        && (dir.join("refs").exists() || dir.join("commondir").is_file())
}

fn layout(top: PathBuf, git_dir: PathBuf) -> Layout {
    let common_dir = crate::safe_file::read_in(&git_dir, "commondir", 4096)
        .ok()
        .and_then(|rel| String::from_utf8(rel).ok())
        .and_then(|rel| std::fs::canonicalize(git_dir.join(rel.trim_end())).ok())
        .unwrap_or_else(|| git_dir.clone());
    Layout {
        top,
        git_dir,
        common_dir,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git_dir(at: &Path) {
        std::fs::create_dir_all(at.join("objects")).unwrap();
        std::fs::create_dir_all(at.join("refs")).unwrap();
        std::fs::write(at.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    }

    #[test]
    fn a_working_tree_its_subdirectories_and_its_git_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(tmp.path()).unwrap();
        git_dir(&top.join(".git"));
        std::fs::create_dir_all(top.join("src/deep")).unwrap();
        let expected = Layout {
            top: top.clone(),
            git_dir: top.join(".git"),
            common_dir: top.join(".git"),
        };
        assert_eq!(locate(&top.join("src/deep")), Some(expected.clone()));
        assert_eq!(locate(&top.join(".git")), Some(expected));
    }

    #[test]
    fn a_linked_worktree_reaches_its_common_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        git_dir(&base.join("main/.git"));
        let own = base.join("main/.git/worktrees/wt");
        std::fs::create_dir_all(&own).unwrap();
        std::fs::write(own.join("HEAD"), "ref: refs/heads/wt\n").unwrap();
        std::fs::write(own.join("commondir"), "../..\n").unwrap();
        std::fs::create_dir_all(base.join("wt")).unwrap();
        std::fs::write(base.join("wt/.git"), format!("gitdir: {}\n", own.display())).unwrap();
        let found = locate(&base.join("wt")).unwrap();
        assert_eq!(found.top, base.join("wt"));
        assert_eq!(found.git_dir, own);
        assert_eq!(found.common_dir, base.join("main/.git"));
    }

    #[test]
    fn a_bare_repository_is_its_own_top_and_nothing_is_none() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        git_dir(&base.join("bare.git"));
        let found = locate(&base.join("bare.git")).unwrap();
        assert_eq!(
            (found.top.clone(), found.git_dir),
            (base.join("bare.git"), base.join("bare.git"))
        );
        std::fs::create_dir_all(base.join("plain")).unwrap();
        // The temporary directory may itself sit inside a repository; only a miss
        // within it is checked.
        assert!(locate(&base.join("plain")).is_none_or(|l| !l.top.starts_with(&base)));
    }
}
