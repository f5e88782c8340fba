//! Putting a restore point back: the index file byte for byte, the refs (in one guarded
//! transaction) and git's state files; the worktree is [`super::put`]'s.
//!
//! Files are written raw from their blobs, as captured: no filter or line-ending
//! conversion runs in either direction, so the bytes on disk come back exactly.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use serde_json::Value;

use super::capture::{STATE_DIRS, STATE_FILES, zero};
use super::files;
use crate::git::update_ref::{self, Transaction};
use crate::git::{Git, Oid, Repo, cat_file, objects, worktree};
use crate::operation::OpError;
use crate::parse::cat_file_batch::Answer;

/// Bytes of object contents held at once: objects are fetched in runs of about this much.
const BATCH_BYTES: u64 = 256 * 1024 * 1024;
/// The reflog message of every ref a restore moves.
const RESTORE_MESSAGE: &str = "gitward: restore";
/// Largest blob a restore writes.
const MAX_BLOB: usize = 1 << 30;

/// `oids` in runs whose sizes (from one `cat-file --batch-check`) add up to about
/// [`BATCH_BYTES`], so a restore of many files starts few processes and never holds much.
async fn runs(git: &Git<'_>, oids: &[String]) -> Result<Vec<Vec<String>>, OpError> {
    let sizes = objects::sizes(git, oids).await?;
    let mut runs: Vec<Vec<String>> = vec![Vec::new()];
    let mut held = 0u64;
    for (oid, size) in oids.iter().zip(sizes) {
        let size = size.unwrap_or(0);
        if held + size > BATCH_BYTES && runs.last().is_some_and(|r| !r.is_empty()) {
            runs.push(Vec::new());
            held = 0;
        }
        held += size;
        if let Some(run) = runs.last_mut() {
            run.push(oid.clone());
        }
    }
    Ok(runs)
}

/// The contents of `oids`, by id.
pub(super) async fn blobs(
    git: &Git<'_>,
    oids: &[String],
) -> Result<HashMap<String, Vec<u8>>, OpError> {
    let mut out = HashMap::new();
    if oids.is_empty() {
        return Ok(out);
    }
    for chunk in runs(git, oids).await? {
        let ids: Vec<Oid> = chunk.iter().filter_map(|o| Oid::parse(o)).collect();
        if ids.len() != chunk.len() {
            return Err(OpError::Internal(
                "a restore point names a malformed object id".into(),
            ));
        }
        let refs: Vec<&Oid> = ids.iter().collect();
        let answers = cat_file::objects(git, &refs, MAX_BLOB, usize::MAX).await?;
        for answer in answers {
            match answer {
                Answer::Found(obj) if !obj.truncated() => {
                    out.insert(obj.oid.as_str().to_owned(), obj.bytes);
                }
                Answer::Found(obj) => {
                    return Err(OpError::Unsupported(format!(
                        "object {} is too large to restore",
                        obj.oid
                    )));
                }
                Answer::Absent { name, reason } => {
                    return Err(OpError::Internal(format!("object {name} is {reason}")));
                }
            }
        }
    }
    Ok(out)
}

/// Puts the index file back byte for byte (or removes it when there was none), with the
/// modification time it had when captured (`mtime_ns`; the epoch when the point has
/// none). The entries' stat data describe files as they were then; git believes an entry
/// whose stat data match the file only when the entry is older than the index file, so a
/// fresh time would let an entry vouch for bytes it never saw (a same-size edit made in
/// the entry's second). The old time keeps exactly the doubt git had at capture; files
/// the restore rewrites get new stat data and are read again anyway.
pub async fn index(
    git: &Git<'_>,
    repo: &Repo,
    captured: &Value,
    mtime_ns: Option<u64>,
) -> Result<(), OpError> {
    let stamp = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(mtime_ns.unwrap_or(0));
    let dir = repo.git_dir.clone();
    let bytes = match captured["blob"].as_str() {
        Some(oid) => Some(
            blobs(git, &[oid.to_owned()])
                .await?
                .remove(oid)
                .ok_or_else(|| OpError::Internal("index blob not fetched".into()))?,
        ),
        None => None,
    };
    crate::safe_file::off_thread(git.cancel(), move || match bytes {
        Some(bytes) => files::replace_locked(&dir, "index", &bytes, Some(stamp)),
        None => match std::fs::remove_file(dir.join("index")) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.to_string()),
            _ => Ok(()),
        },
    })
    .await
    .map_err(|e| OpError::Internal(e.to_string()))?
    .map_err(OpError::git)
}

/// The branches checked out in the repository's other worktrees (not `own`).
async fn checked_out_elsewhere(
    git: &Git<'_>,
    own: Option<&Path>,
) -> Result<BTreeSet<String>, OpError> {
    let listed = worktree::list(git, 100_000).await?;
    let own = own.and_then(|p| std::fs::canonicalize(p).ok());
    let mut busy = BTreeSet::new();
    for w in listed.worktrees {
        use std::os::unix::ffi::OsStrExt;
        let path = Path::new(std::ffi::OsStr::from_bytes(&w.path));
        let this = own.is_some() && std::fs::canonicalize(path).ok() == own;
        if let (false, Some(branch)) = (this, w.branch) {
            busy.insert(String::from_utf8_lossy(&branch).into_owned());
        }
    }
    Ok(busy)
}

/// Moves every captured ref back in one transaction guarded on the values just read
/// (`now`), then HEAD; returns the refs kept and the remote-tracking refs left. A ref that
/// did not exist at capture is deleted — unless a worktree (one an operation added, say)
/// has it checked out: that one is kept, since deleting it would leave the worktree on a
/// missing branch. A remote-tracking ref is never moved: it records what the remote has
/// (a push's commits stay there), and winding it back would make git count pushed work
/// as unpushed.
pub async fn refs(
    git: &Git<'_>,
    repo: &Repo,
    captured: &Value,
    now: &BTreeMap<String, Value>,
) -> Result<(Vec<String>, Vec<String>), OpError> {
    let zero = zero(repo.object_format);
    let busy = checked_out_elsewhere(git, repo.worktree.as_deref()).await?;
    let mut kept = Vec::new();
    let mut remote = Vec::new();
    let mut tx = Transaction::new();
    if let Some(refs) = captured["refs"].as_object() {
        for (name, want) in refs {
            if !name.starts_with("refs/") || name.starts_with(super::REF_PREFIX) {
                continue;
            }
            if name.starts_with(super::REMOTES) {
                remote.push(name.clone());
                continue;
            }
            let cur = now.get(name).and_then(Value::as_str);
            match (want.as_str(), cur) {
                (Some(w), Some(c)) if w == c => {}
                (Some(w), c) => {
                    tx.update(name, w, c.unwrap_or(&zero));
                }
                (None, Some(_)) if busy.contains(name) => {
                    kept.push(name.clone());
                }
                (None, Some(c)) => {
                    tx.delete(name, Some(c));
                }
                (None, None) => {}
            }
        }
    }
    tx.commit(git, Some(RESTORE_MESSAGE)).await?;
    // HEAD is written only when it must change: `symbolic-ref -m` logs even a no-op, and
    // a reflog entry for a move that never happened is not git's history.
    let head = &captured["head"];
    let on = crate::git::head::symbolic_text(git).await?;
    match (head["symbolic"].as_str(), head["oid"].as_str()) {
        (Some(target), _) if on.as_deref() != Some(target) => {
            update_ref::head_to_branch(git, target, RESTORE_MESSAGE).await?;
        }
        (None, Some(oid)) => {
            let at = update_ref::verify(git, "HEAD").await?;
            if on.is_some() || at.as_ref().map(Oid::as_str) != Some(oid) {
                update_ref::head_to_commit(git, oid, RESTORE_MESSAGE).await?;
            }
        }
        _ => {}
    }
    Ok((kept, remote))
}

/// Puts back the configuration values a point kept (`{key: [value…]}`) where they differ
/// from those just captured (`now`).
pub async fn config(
    repo: &Repo,
    cancel: &tokio_util::sync::CancellationToken,
    captured: &Value,
    now: &Value,
) -> Result<(), OpError> {
    let Some(keys) = captured.as_object() else {
        return Ok(());
    };
    let w = crate::git::write::GitWrite::new(&repo.path, cancel);
    for (key, want) in keys {
        if now.get(key) == Some(want) {
            continue;
        }
        let values: Vec<String> = want
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        let ran = w
            .config_replace(key, &values)
            .await
            .map_err(|e| OpError::git(e.to_string()))?;
        if !ran.ok() {
            return Err(OpError::git(format!(
                "could not put back {key}: {}",
                ran.stderr
            )));
        }
    }
    Ok(())
}

/// Puts git's state files back: those captured are written, any other present is removed.
pub async fn state(git: &Git<'_>, git_dir: &Path, captured: &Value) -> Result<(), OpError> {
    let wanted: BTreeMap<String, String> = captured
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                .collect()
        })
        .unwrap_or_default();
    let oids: Vec<String> = wanted.values().cloned().collect();
    let contents = blobs(git, &oids).await?;
    let dir = git_dir.to_owned();
    crate::safe_file::off_thread(git.cancel(), move || {
        for name in STATE_FILES.iter().chain(STATE_DIRS) {
            if !wanted
                .keys()
                .any(|k| k == name || k.starts_with(&format!("{name}/")))
            {
                let path = dir.join(name);
                let _ = std::fs::remove_file(&path);
                let _ = std::fs::remove_dir_all(&path);
            }
        }
        for (rel, oid) in &wanted {
            let Some(bytes) = contents.get(oid) else {
                continue;
            };
            let path = dir.join(rel);
            if rel.split('/').any(|c| c == ".." || c.is_empty()) {
                continue;
            }
            if let Some(parent) = path.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let _ = std::fs::write(&path, bytes);
        }
    })
    .await
    .map_err(|e| OpError::Internal(e.to_string()))
}
