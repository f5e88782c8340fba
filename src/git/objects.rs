//! Objects written into the repository's database on the read door: blobs stored raw
//! (`hash-object -w --no-filters`, so the bytes on disk are what is kept), commits of a
//! tree under gitward's own identity (`commit-tree`), and object sizes
//! (`cat-file --batch-check`), and a tree's entries (`ls-tree`). Nothing here touches a
//! ref, the index or the worktree.

use std::ffi::OsStr;

use super::{Git, GitError, Oid};

fn oid_of(bytes: &[u8]) -> Result<Oid, GitError> {
    let text = String::from_utf8_lossy(bytes);
    Oid::parse(text.trim())
        .ok_or_else(|| GitError::internal(format!("expected an object id, got {text:?}")))
}

/// Stores `bytes` as a blob, raw.
pub async fn store_bytes(git: &Git<'_>, bytes: Vec<u8>) -> Result<Oid, GitError> {
    let out = git
        .cmd(["hash-object", "-w", "--no-filters", "--stdin"])
        .stdin(bytes)
        .capture(256)
        .await?;
    oid_of(&out.sink.bytes)
}

/// Stores the file at `path` (relative to the worktree, or absolute) as a blob, raw.
pub async fn store_file(git: &Git<'_>, path: &OsStr) -> Result<Oid, GitError> {
    let out = git
        .cmd(["hash-object", "-w", "--no-filters", "--"])
        .arg(path)
        .capture(256)
        .await?;
    oid_of(&out.sink.bytes)
}

/// Stores each file raw, in order: one `hash-object --stdin-paths` for every name
/// without a newline (the input is line-based) and not starting with `"` (git would
/// unquote it), one process each for the rest. Names are bytes: they need not be UTF-8.
pub async fn store_files(git: &Git<'_>, paths: &[&[u8]]) -> Result<Vec<Oid>, GitError> {
    let mut out: Vec<Option<Oid>> = vec![None; paths.len()];
    let plain: Vec<usize> = (0..paths.len())
        .filter(|i| !paths[*i].contains(&b'\n') && paths[*i].first() != Some(&b'"'))
        .collect();
    if !plain.is_empty() {
        let mut input = Vec::new();
        for i in &plain {
            input.extend_from_slice(paths[*i]);
            input.push(b'\n');
        }
        let done = git
            .cmd(["hash-object", "-w", "--no-filters", "--stdin-paths"])
            .stdin(input)
            .capture(super::DEFAULT_CAP * 4)
            .await?;
        let lines: Vec<&[u8]> = done
            .sink
            .bytes
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        if lines.len() != plain.len() {
            return Err(GitError::internal(
                "hash-object answered a different number of objects",
            ));
        }
        for (i, line) in plain.iter().zip(lines) {
            out[*i] = Some(oid_of(line)?);
        }
    }
    for (i, path) in paths.iter().enumerate() {
        if out[i].is_none() {
            use std::os::unix::ffi::OsStrExt;
            out[i] = Some(store_file(git, OsStr::from_bytes(path)).await?);
        }
    }
    Ok(out.into_iter().flatten().collect())
}

/// A parentless commit of `tree` with `message`, authored and committed by gitward, so
/// the user's identity and signing settings play no part.
pub async fn commit_tree(git: &Git<'_>, tree: &Oid, message: &str) -> Result<Oid, GitError> {
    let out = git
        .cmd(["commit-tree", "-m", message, tree.as_str()])
        .env("GIT_AUTHOR_NAME", "gitward")
        .env("GIT_AUTHOR_EMAIL", "gitward@localhost")
        .env("GIT_COMMITTER_NAME", "gitward")
        .env("GIT_COMMITTER_EMAIL", "gitward@localhost")
        .capture(256)
        .await?;
    oid_of(&out.sink.bytes)
}

/// The size of each object in `oids` (in order), `None` for one that is missing. No
/// process runs for an empty list.
pub async fn sizes(git: &Git<'_>, oids: &[String]) -> Result<Vec<Option<u64>>, GitError> {
    if oids.is_empty() {
        return Ok(Vec::new());
    }
    let input: Vec<u8> = oids
        .iter()
        .flat_map(|o| format!("{o}\n").into_bytes())
        .collect();
    let out = git
        .cmd(["cat-file", "--batch-check=%(objectname) %(objectsize)"])
        .stdin(input)
        .capture(super::DEFAULT_CAP * 4)
        .await?;
    let text = String::from_utf8_lossy(&out.sink.bytes);
    let mut sizes: Vec<Option<u64>> = text
        .lines()
        .map(|line| line.rsplit(' ').next().and_then(|s| s.parse().ok()))
        .collect();
    sizes.resize(oids.len(), None);
    Ok(sizes)
}

/// Every file, link and gitlink below `tree` (`ls-tree -r`), in git's order. An error
/// when the listing passes `cap` bytes.
pub async fn tree_entries(
    git: &Git<'_>,
    tree: &Oid,
    cap: usize,
) -> Result<Vec<crate::parse::ls_tree::TreeEntry>, GitError> {
    let out = git
        .cmd(["ls-tree", "-r", "-z", "--full-tree", "--end-of-options"])
        .arg(tree.as_str())
        .capture(cap)
        .await?;
    if out.stopped_early {
        return Err(GitError::internal(format!(
            "the entries of tree {tree} pass {cap} bytes"
        )));
    }
    Ok(crate::parse::ls_tree::entries(&out.sink.bytes)?)
}
