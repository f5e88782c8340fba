//! How two commits relate in history: their merge base, whether one contains the other,
//! and whether a first-parent line crosses a merge.

use super::{Git, GitError, Oid};

/// `git merge-base <a> <b>`: the best common ancestor, `None` when the histories
/// share no commit.
pub async fn of(git: &Git<'_>, a: &Oid, b: &Oid) -> Result<Option<Oid>, GitError> {
    let out = git
        .cmd(["merge-base", a.as_str(), b.as_str()])
        .capture_allowing(4096, &[0, 1])
        .await?;
    Ok(Oid::from_bytes(out.sink.bytes.trim_ascii()))
}

/// `git merge-base --is-ancestor`: whether `old` is an ancestor of (or is) `new`;
/// `None` when git stopped without saying.
pub async fn is_ancestor(git: &Git<'_>, old: &Oid, new: &Oid) -> Result<Option<bool>, GitError> {
    let done = git
        .cmd(["merge-base", "--is-ancestor", "--end-of-options"])
        .args([old.as_str(), new.as_str()])
        .capture_allowing(1024, &[0, 1])
        .await?;
    Ok(match done.code {
        Some(0) => Some(true),
        Some(1) => Some(false),
        _ => None,
    })
}

/// True when no merge lies on the first-parent line from `tip` back to `base`
/// (`is_linear_history` in git's `builtin/rebase.c`).
pub async fn linear_since(git: &Git<'_>, base: &Oid, tip: &Oid) -> Result<bool, GitError> {
    let range = format!("{base}..{tip}");
    let out = git
        .cmd([
            "rev-list",
            "--first-parent",
            "--min-parents=2",
            "--max-count=1",
            &range,
            "--",
        ])
        .capture(4096)
        .await?;
    Ok(out.sink.bytes.trim_ascii().is_empty())
}
