//! Submodules below the top level. The top repository's `status` says a submodule has
//! changes inside it, never which of its own submodules drifted, so each checked-out
//! submodule that declares submodules is read as a repository of its own (with the same
//! disarmed configuration as any read), level by level, as `submodule.status` does.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::Submodules;
use super::status::{count_uninitialized, push_attention, read_submodules, submodule_paths};
use crate::config::Config;
use crate::error::ToolError;
use crate::git::{Git, repo};
use crate::process::CancellationToken;

/// Nesting followed at most (top-level submodules are depth 1), as `submodule.status`.
const MAX_DEPTH: u32 = 5;
/// Nested repositories read at most; past it `attentionTruncated` says counts are partial.
const MAX_REPOS: usize = 64;

/// Adds every submodule below the top-level ones (`paths`, from the top `.gitmodules`)
/// to `subs`.
pub(super) async fn add_nested(
    config: &Config,
    cancel: &CancellationToken,
    top: &Path,
    paths: &[Vec<u8>],
    subs: &mut Submodules,
) -> Result<(), ToolError> {
    let mut level: Vec<(PathBuf, Vec<u8>)> = paths
        .iter()
        .map(|p| (top.join(std::ffi::OsStr::from_bytes(p)), p.clone()))
        .collect();
    let mut read = 0;
    for _ in 2..=MAX_DEPTH {
        let mut next = Vec::new();
        for (dir, rel) in level {
            // Only a checked-out submodule (its own `.git`) with a `.gitmodules` of its
            // own can hold more; neither is followed through a symlink.
            let own = |name: &str| std::fs::symlink_metadata(dir.join(name)).is_ok();
            if !own(".git")
                || !std::fs::symlink_metadata(dir.join(".gitmodules")).is_ok_and(|m| m.is_file())
            {
                continue;
            }
            if read == MAX_REPOS {
                subs.attention_truncated = true;
                return Ok(());
            }
            read += 1;
            let Ok(sub) = repo::open_path(config, "repoPath", &dir, cancel).await else {
                continue;
            };
            let canonical = std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone());
            if sub.worktree.as_deref() != Some(canonical.as_path()) {
                continue;
            }
            let git = Git::new(&sub, cancel);
            let prefix = [rel.as_slice(), b"/"].concat();
            let (found, declared) = tokio::try_join!(
                read_submodules(&git, &prefix),
                submodule_paths(&git, sub.worktree.as_deref()),
            )?;
            merge(subs, found);
            count_uninitialized(subs, sub.worktree.as_deref(), &prefix, &declared);
            next.extend(declared.into_iter().map(|p| {
                let path = dir.join(std::ffi::OsStr::from_bytes(&p));
                (path, [prefix.as_slice(), &p].concat())
            }));
        }
        if next.is_empty() {
            break;
        }
        level = next;
    }
    Ok(())
}

/// Adds the counts and named submodules of a nested repository.
fn merge(subs: &mut Submodules, found: Submodules) {
    subs.drifted += found.drifted;
    subs.modified += found.modified;
    subs.untracked += found.untracked;
    subs.conflicts += found.conflicts;
    subs.attention_truncated |= found.attention_truncated;
    for a in found.attention {
        push_attention(subs, a.path, a.state);
    }
}
