//! Typed commands on a private copy of the index ([`IndexCopy`]): staging as a commit
//! would stage, entering prepared entries, writing its tree, and reading what it holds
//! beyond HEAD. The user's index and worktree are never written.

use super::index_copy::IndexCopy;
use super::{Git, GitError, Oid};
use crate::process::Capped;

/// The staged-side diff, with the security flags built in (no external diff, no textconv).
const STAGED: &[&str] = &[
    "diff",
    "--cached",
    "--no-renames",
    "--no-ext-diff",
    "--no-textconv",
    "--ignore-submodules=none",
];

/// Resets the copy to `tree` (`None`: empty).
pub async fn read_tree(
    git: &Git<'_>,
    copy: &IndexCopy,
    tree: Option<&str>,
) -> Result<(), GitError> {
    let args: &[&str] = match tree {
        Some(tree) => &["read-tree", "--end-of-options", tree],
        None => &["read-tree", "--empty"],
    };
    git.cmd_on_copy(copy, args).capture(4096).await?;
    Ok(())
}

/// `add -A` of exactly `paths` (literal), or of everything when `None`.
pub async fn add(
    git: &Git<'_>,
    copy: &IndexCopy,
    paths: Option<&[String]>,
) -> Result<(), GitError> {
    match paths {
        Some(paths) => {
            git.cmd_on_copy(copy, ["add", "-A", "--"])
                .args(paths)
                .env("GIT_LITERAL_PATHSPECS", "1")
                .capture(64 * 1024)
                .await?
        }
        None => {
            git.cmd_on_copy(copy, ["add", "-A"])
                .capture(64 * 1024)
                .await?
        }
    };
    Ok(())
}

/// Enters `info` (`update-index -z --index-info` records) in the copy.
pub async fn enter(git: &Git<'_>, copy: &IndexCopy, info: Vec<u8>) -> Result<(), GitError> {
    if info.is_empty() {
        return Ok(());
    }
    git.cmd_on_copy(copy, ["update-index", "-z", "--index-info"])
        .stdin(info)
        .capture(64 * 1024)
        .await?;
    Ok(())
}

/// The copy's tree, `None` when it holds a conflict (git refuses to write one).
pub async fn write_tree(git: &Git<'_>, copy: &IndexCopy) -> Result<Option<Oid>, GitError> {
    let out = git
        .cmd_on_copy(copy, ["write-tree"])
        .capture_allowing(256, &[0, 128])
        .await?;
    if !out.success() {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&out.sink.bytes);
    Oid::parse(text.trim())
        .map(Some)
        .ok_or_else(|| GitError::internal(format!("write-tree answered {text:?}")))
}

/// A listing of what the copy holds beyond HEAD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    /// `--name-status`, read by `crate::parse::diff_tree::NameStatus`.
    NameStatus,
    /// `--numstat`, read by `crate::parse::diff_tree::Numstat`.
    Numstat,
}

/// `diff --cached -z` on the copy, as `listing`.
pub async fn staged_listing(
    git: &Git<'_>,
    copy: &IndexCopy,
    listing: Listing,
) -> Result<Vec<u8>, GitError> {
    let format = match listing {
        Listing::NameStatus => "--name-status",
        Listing::Numstat => "--numstat",
    };
    let out = git
        .cmd_on_copy(copy, STAGED)
        .args(["-z", format])
        .capture(super::DEFAULT_CAP)
        .await?;
    Ok(out.sink.bytes)
}

/// The staged unified diff, as the user's git prints it, cut after `cap` bytes.
pub async fn staged_patch(git: &Git<'_>, copy: &IndexCopy, cap: usize) -> Result<Capped, GitError> {
    Ok(git
        .cmd_on_copy_as_user(copy, STAGED)
        .capture(cap)
        .await?
        .sink)
}

/// The worktree against the copy for exactly `paths` (literal), as the user's git prints
/// it with the security flags built in, cut after `cap` bytes.
pub async fn worktree_patch(
    git: &Git<'_>,
    copy: &IndexCopy,
    paths: &[String],
    cap: usize,
) -> Result<Capped, GitError> {
    let args = ["--literal-pathspecs", "diff"]
        .into_iter()
        .chain(super::diff::SAFE_DIFF)
        .chain(["--submodule=short", "--"])
        .map(str::to_owned)
        .chain(paths.iter().cloned());
    Ok(git.cmd_on_copy_as_user(copy, args).capture(cap).await?.sink)
}
