//! Previews computed by real git for the approval card, without touching the user's index
//! or worktree: staging happens on a private copy of the index (`GIT_INDEX_FILE`), through
//! the read door (hooks, fsmonitor and the repository's filter drivers disarmed — a
//! preview runs before anyone approved anything).

use serde_json::{Value, json};

use super::commit::CommitFields;
use super::{Ctx, OpError};
use crate::git::Git;
use crate::git::index_copy::IndexCopy;
use crate::parse::Records;
use crate::parse::diff_tree::{NameStatus, Numstat};

/// The unified diff shown on a card is cut after this many bytes (`diffTruncated`).
pub const DIFF_CAP: usize = 1024 * 1024;
/// Files listed on a card at most.
pub const MAX_FILES: usize = 5000;

/// The files a commit would record, with status and line counts, and the diff.
pub async fn commit(ctx: Ctx<'_>, f: &CommitFields) -> Result<Value, OpError> {
    let git = Git::new(ctx.repo, ctx.cancel);
    let index = IndexCopy::new(ctx.repo).await?;
    if let Some(paths) = &f.paths {
        // `commit --only`: HEAD's tree plus exactly these paths from the worktree.
        let base: &[&str] = match git.head().await? {
            Some(_) => &["read-tree", "HEAD"],
            None => &["read-tree", "--empty"],
        };
        git.cmd_on_copy(&index, base).capture(4096).await?;
        git.cmd_on_copy(&index, ["add", "-A", "--"])
            .args(paths)
            .env("GIT_LITERAL_PATHSPECS", "1")
            .capture(64 * 1024)
            .await?;
    } else if f.stage_all {
        git.cmd_on_copy(&index, ["add", "-A"])
            .capture(64 * 1024)
            .await?;
    }
    staged(&git, &index).await
}

const DIFF: &[&str] = &[
    "diff",
    "--cached",
    "--no-renames",
    "--no-ext-diff",
    "--no-textconv",
    "--ignore-submodules=none",
];

fn status_word(letter: u8) -> &'static str {
    match letter {
        b'A' => "added",
        b'D' => "deleted",
        b'M' => "modified",
        b'T' => "typeChanged",
        b'U' => "unmerged",
        _ => "changed",
    }
}

/// What the index copy holds beyond HEAD: `{files, diff, diffTruncated}`.
async fn staged(git: &Git<'_>, index: &IndexCopy) -> Result<Value, OpError> {
    let names = git
        .cmd_on_copy(index, DIFF)
        .args(["-z", "--name-status"])
        .capture(crate::git::DEFAULT_CAP)
        .await?;
    let names = Records::parse_all(NameStatus::new(MAX_FILES), &names.sink.bytes)
        .map_err(|e| OpError::Internal(format!("name-status output: {}", e.reason)))?;
    let stats = git
        .cmd_on_copy(index, DIFF)
        .args(["-z", "--numstat"])
        .capture(crate::git::DEFAULT_CAP)
        .await?;
    let stats = Records::parse_all(Numstat::new(MAX_FILES), &stats.sink.bytes)
        .map_err(|e| OpError::Internal(format!("numstat output: {}", e.reason)))?;
    let files: Vec<Value> = names
        .changes
        .iter()
        .map(|c| {
            let lines = stats
                .stats
                .iter()
                .find(|s| s.path == c.path)
                .and_then(|s| s.lines);
            json!({
                "path": String::from_utf8_lossy(&c.path),
                "status": status_word(c.status),
                "additions": lines.map(|l| l.0),
                "deletions": lines.map(|l| l.1),
            })
        })
        .collect();
    let diff = git
        .cmd_on_copy_as_user(index, DIFF)
        .capture(DIFF_CAP)
        .await?;
    Ok(json!({
        "files": files,
        "filesTotal": names.total,
        "diff": String::from_utf8_lossy(&diff.sink.bytes),
        "diffTruncated": diff.sink.truncated,
    }))
}
