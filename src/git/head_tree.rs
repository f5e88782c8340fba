//! Files as a commit's tree holds them: HEAD's for a bare repository, which has no
//! working tree to read from, and any commit's to tell which paths it tracks.

use super::{Git, GitError, Oid, RepoRelPath};

/// The tree of `commit`; `None` when it is not a commit git has.
pub async fn tree_of(git: &Git<'_>, commit: &Oid) -> Result<Option<Oid>, GitError> {
    let spec = format!("{commit}^{{tree}}");
    let out = git
        .cmd([
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &spec,
        ])
        .capture_allowing(4096, &[0, 1, 128])
        .await?;
    Ok(out
        .success()
        .then(|| Oid::parse(String::from_utf8_lossy(&out.sink.bytes).trim()))
        .flatten())
}

/// Which of `names` (repository-relative paths) exist in HEAD's tree. Empty on an
/// unborn HEAD.
pub async fn present(git: &Git<'_>, names: &[&str]) -> Result<Vec<String>, GitError> {
    let listed = git
        .cmd([
            "--literal-pathspecs",
            "ls-tree",
            "-z",
            "--name-only",
            "HEAD",
            "--",
        ])
        .args(names.iter().copied())
        .capture_allowing(64 * 1024, &[0, 128])
        .await?;
    Ok(listed
        .sink
        .bytes
        .split(|b| *b == 0)
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect())
}

/// Which of `paths` (or files below them) the tree of `commit` holds, walking subtrees
/// (`ls-tree -r --name-only`). The paths are names, never pathspec magic: a file called
/// `:!x` would otherwise make ls-tree refuse the whole listing.
pub async fn tracked_of(
    git: &Git<'_>,
    commit: &Oid,
    paths: &[String],
) -> Result<Vec<Vec<u8>>, GitError> {
    let out = git
        .cmd([
            "--literal-pathspecs",
            "ls-tree",
            "-r",
            "-z",
            "--name-only",
            "--end-of-options",
        ])
        .args([commit.as_str(), "--"])
        .args(paths)
        .capture(super::DEFAULT_CAP)
        .await?;
    Ok(out
        .sink
        .bytes
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(<[u8]>::to_vec)
        .collect())
}

/// The first `cap` bytes of the blob at `path` in HEAD, and whether that is all of it;
/// `None` when HEAD has no such file.
pub async fn blob(
    git: &Git<'_>,
    path: &str,
    cap: usize,
) -> Result<Option<(Vec<u8>, bool)>, GitError> {
    let out = git
        .cmd(["cat-file", "blob", &format!("HEAD:{path}")])
        .capture_allowing(cap, &[0, 128])
        .await?;
    if !out.success() && !out.stopped_early {
        return Ok(None);
    }
    let complete = out.success();
    Ok(Some((out.sink.bytes, complete)))
}

/// `tree`, `blob` or `commit` (a submodule) for `path` in HEAD; `None` when absent.
pub async fn object_type(git: &Git<'_>, path: &RepoRelPath) -> Result<Option<String>, GitError> {
    object_type_at(git, "HEAD", path).await
}

/// [`object_type`] in the tree of `commit` (`HEAD` or a commit id) instead of HEAD's.
pub async fn object_type_at(
    git: &Git<'_>,
    commit: &str,
    path: &RepoRelPath,
) -> Result<Option<String>, GitError> {
    let out = git
        .cmd([
            "--literal-pathspecs",
            "ls-tree",
            "-z",
            "--format=%(objecttype)",
            "--end-of-options",
            commit,
            "--",
            path.as_str(),
        ])
        .capture_allowing(4096, &[0, 128])
        .await?;
    let text = String::from_utf8_lossy(&out.sink.bytes);
    Ok(text
        .split('\0')
        .next()
        .filter(|t| !t.is_empty())
        .map(str::to_owned))
}
