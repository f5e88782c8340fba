//! The safety stash taken before a discard: a commit in git's own stash layout, so
//! `git stash list` shows it and `git stash apply` brings the discarded work back.
//!
//! ```text
//! W  (worktree: the index plus the tracked paths' worktree contents)
//! ├─ B  (the index as it is, on HEAD)
//! ├─ I  (the index as it is, on HEAD)
//! └─ U  (the untracked files, when there are any; no parent)
//! ```
//!
//! Unlike `git stash push`, whose base is HEAD, the base here is the index: a discard
//! keeps staged changes, so what the stash holds — `git stash show -p --include-untracked`
//! — is exactly what was lost, and `git stash apply` puts it back onto the kept index
//! without a conflict.
//!
//! Everything is built on private copies of the index, so the user's index and worktree
//! stay untouched until the discard itself; the stash ref is written afterwards by
//! `git stash store` on the write door. Contents are stored as the worktree holds them
//! (the copy's `add` runs with the repository's filter drivers disarmed).

use super::index_copy::IndexCopy;
use super::{Git, GitError, Oid, Repo, on_copy};

/// The stash commit for `tracked` and `untracked` (repository-relative file paths) on
/// top of `head`; the caller stores it.
pub async fn build(
    git: &Git<'_>,
    repo: &Repo,
    head: &Oid,
    tracked: &[String],
    untracked: &[String],
    message: &str,
) -> Result<Oid, GitError> {
    let index = IndexCopy::new(repo).await?;
    let index_tree = tree_of(git, &index).await?;
    let b = commit(git, &index_tree, &[head], &format!("base of {message}")).await?;
    let i = commit(git, &index_tree, &[head], &format!("index on {message}")).await?;
    if !tracked.is_empty() {
        on_copy::add(git, &index, Some(tracked)).await?;
    }
    let work_tree = tree_of(git, &index).await?;
    let mut parents = vec![&b, &i];
    let u;
    if !untracked.is_empty() {
        let loose = IndexCopy::new(repo).await?;
        on_copy::read_tree(git, &loose, None).await?;
        on_copy::add(git, &loose, Some(untracked)).await?;
        let loose_tree = tree_of(git, &loose).await?;
        u = commit(
            git,
            &loose_tree,
            &[],
            &format!("untracked files on {message}"),
        )
        .await?;
        parents.push(&u);
    }
    commit(git, &work_tree, &parents, message).await
}

async fn tree_of(git: &Git<'_>, index: &IndexCopy) -> Result<Oid, GitError> {
    on_copy::write_tree(git, index)
        .await?
        .ok_or_else(|| GitError::unsupported("the index holds a conflict: resolve it first"))
}

/// `commit-tree` with `parents` under gitward's identity (so a missing or signing
/// identity cannot stop the safety net), never signed.
async fn commit(
    git: &Git<'_>,
    tree: &Oid,
    parents: &[&Oid],
    message: &str,
) -> Result<Oid, GitError> {
    let mut argv: Vec<String> = vec!["commit-tree".into(), "--no-gpg-sign".into()];
    for p in parents {
        argv.extend(["-p".into(), p.as_str().to_owned()]);
    }
    argv.extend(["-m".into(), message.to_owned(), tree.as_str().to_owned()]);
    let out = git
        .cmd(argv)
        .env("GIT_AUTHOR_NAME", "gitward")
        .env("GIT_AUTHOR_EMAIL", "gitward@localhost")
        .env("GIT_COMMITTER_NAME", "gitward")
        .env("GIT_COMMITTER_EMAIL", "gitward@localhost")
        .capture(256)
        .await?;
    let text = String::from_utf8_lossy(&out.sink.bytes);
    Oid::parse(text.trim())
        .ok_or_else(|| GitError::internal(format!("commit-tree answered {text:?}")))
}
