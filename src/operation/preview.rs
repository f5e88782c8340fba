//! Previews computed by real git for the approval card, without touching the user's index
//! or worktree: staging happens on a private copy of the index (`GIT_INDEX_FILE`), through
//! the read door (hooks, fsmonitor and the repository's filter drivers disarmed — a
//! preview runs before anyone approved anything).

use serde_json::{Value, json};

use super::commit::CommitFields;
use super::{Ctx, OpError};
use crate::git::Git;
use crate::git::index_copy::IndexCopy;
use crate::git::on_copy::{self, Listing};
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
        let base = git.head().await?;
        on_copy::read_tree(&git, &index, base.as_ref().map(|_| "HEAD")).await?;
        on_copy::add(&git, &index, Some(paths)).await?;
    } else if f.stage_all {
        on_copy::add(&git, &index, None).await?;
    }
    staged(&git, &index).await
}

pub(crate) fn status_word(letter: u8) -> &'static str {
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
    let names = on_copy::staged_listing(git, index, Listing::NameStatus).await?;
    let names = Records::parse_all(NameStatus::new(MAX_FILES), &names)
        .map_err(|e| OpError::Internal(format!("name-status output: {}", e.reason)))?;
    let stats = on_copy::staged_listing(git, index, Listing::Numstat).await?;
    let stats = Records::parse_all(Numstat::new(MAX_FILES), &stats)
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
    let diff = on_copy::staged_patch(git, index, DIFF_CAP).await?;
    Ok(json!({
        "files": files,
        "filesTotal": names.total,
        "diff": String::from_utf8_lossy(&diff.bytes),
        "diffTruncated": diff.truncated,
    }))
}
