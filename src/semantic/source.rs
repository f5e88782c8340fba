//! The two sides' contents: blobs through one `cat-file --batch` for every side the cache
//! does not already hold, and working-tree files read from disk.

use std::collections::HashMap;
use std::path::Path;

use crate::git::cat_file::{objects, unreadable};
use crate::git::{Git, GitError, Oid};
use crate::parse::cat_file_batch::Answer;

/// Largest side parsed; a bigger file is read as text.
pub const MAX_FILE_BYTES: usize = 1024 * 1024;
/// Source bytes one call reads at most, which bounds its memory with the trees.
pub const CALL_BYTES: usize = 48 * 1024 * 1024;

/// One side's bytes, or why there are none.
#[derive(Debug)]
pub enum Side {
    Bytes(Vec<u8>),
    TooLarge(u64),
    /// The call's byte budget was spent before this side.
    OverBudget,
    Unreadable(String),
}

/// The contents of `oids`, keyed by id.
pub async fn blobs(git: &Git<'_>, oids: &[String]) -> Result<HashMap<String, Side>, GitError> {
    let parsed: Vec<Oid> = oids.iter().filter_map(|o| Oid::parse(o)).collect();
    let refs: Vec<&Oid> = parsed.iter().collect();
    let answers = objects(git, &refs, MAX_FILE_BYTES + 1, CALL_BYTES).await?;
    let mut out = HashMap::new();
    for (oid, answer) in parsed.iter().zip(answers) {
        let side = match answer {
            Answer::Found(object) if object.size > MAX_FILE_BYTES as u64 => {
                Side::TooLarge(object.size)
            }
            Answer::Found(object) if object.truncated() => Side::OverBudget,
            Answer::Found(object) => Side::Bytes(object.bytes),
            // git listed the blob in its own diff: failing to read it is git's failure,
            // never a file to quietly answer as text.
            Answer::Absent { name, reason } => return Err(unreadable(&name, &reason)),
        };
        out.insert(oid.to_string(), side);
    }
    Ok(out)
}

/// Whether `bytes` are exactly blob `oid`: git's object id of them (SHA-1, or SHA-256
/// in a repository of that format) equals it.
pub fn is_blob(oid: &str, bytes: &[u8]) -> bool {
    fn hex<D: sha2::Digest>(bytes: &[u8]) -> String {
        let mut hasher = D::new();
        hasher.update(format!("blob {}\0", bytes.len()));
        hasher.update(bytes);
        hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
    match oid.len() {
        40 => hex::<sha1::Sha1>(bytes) == oid,
        64 => hex::<sha2::Sha256>(bytes) == oid,
        _ => false,
    }
}

/// A working-tree file: a regular file only (never through a symlink), at most
/// [`MAX_FILE_BYTES`].
pub fn worktree_file(root: &Path, path: &[u8]) -> Side {
    let Ok(rel) = std::str::from_utf8(path) else {
        return Side::Unreadable("the path is not UTF-8".into());
    };
    let full = root.join(rel);
    let meta = match std::fs::symlink_metadata(&full) {
        Ok(meta) => meta,
        Err(e) => return Side::Unreadable(e.kind().to_string()),
    };
    if !meta.is_file() {
        return Side::Unreadable("not a regular file".into());
    }
    if meta.len() > MAX_FILE_BYTES as u64 {
        return Side::TooLarge(meta.len());
    }
    match std::fs::read(&full) {
        Ok(bytes) if bytes.len() <= MAX_FILE_BYTES => Side::Bytes(bytes),
        Ok(bytes) => Side::TooLarge(bytes.len() as u64),
        Err(e) => Side::Unreadable(e.kind().to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_ids_are_checked_with_the_repository_hash() {
        // `git hash-object` of "hi\n", in both object formats.
        assert!(is_blob("45b983be36b73c0788dc9cbcb76cbb80fc7bb057", b"hi\n"));
        assert!(!is_blob("45b983be36b73c0788dc9cbcb76cbb80fc7bb057", b"hi"));
        assert!(is_blob(
            "96c18f0297e38d01f4b2dacddea4259aea6b2961eb0822bd2c0c3f6029030045",
            b"hi\n"
        ));
        assert!(!is_blob("45b983be", b"hi\n"));
    }

    #[tokio::test]
    async fn a_blob_git_cannot_read_is_gits_failure_not_a_fallback() {
        let dir = tempfile::tempdir().unwrap();
        #[allow(clippy::disallowed_methods)]
        let init = std::process::Command::new("git")
            .args(["init", "-q"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(init.success());
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let config = crate::config::Config {
            allowed_roots: vec![root.clone()],
            ..crate::config::Config::default()
        };
        let cancel = tokio_util::sync::CancellationToken::new();
        let repo = crate::git::repo::open(&config, "repo", root.to_str().unwrap(), &cancel)
            .await
            .unwrap();
        let git = Git::new(&repo, &cancel);
        let absent = "1".repeat(40);
        let err = blobs(&git, std::slice::from_ref(&absent))
            .await
            .unwrap_err();
        let GitError::Failed { stderr, .. } = &err else {
            panic!("{err:?}");
        };
        assert!(
            stderr.contains(&absent) && stderr.contains("missing"),
            "{stderr}"
        );
    }
}
