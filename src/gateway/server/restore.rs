//! Restore points: taken before every write, put back by a person.
//!
//! A restore point keeps, without changing the user's worktree or index:
//! - HEAD (symbolic target and commit) and every ref the operation may move, copied under
//!   `refs/gitward/restore/<id>/…` so that `git gc` keeps everything they reach;
//! - the index file as a blob (conflict stages and flags included), plus its tree when it
//!   has no conflicts;
//! - the tracked and untracked (non-ignored) worktree, and the paths the operation touches
//!   whatever their ignore status, as what differs from the index's tree (the whole tree
//!   when the index has none), with caps per file and on the number of files — what was
//!   left out is listed, never silent; paths are bytes throughout;
//! - git's state files of an operation in progress (`MERGE_HEAD`, `rebase-merge/`, …).
//!
//! Capture runs through the read door: no hook, fsmonitor or filter driver of the
//! repository runs, and contents are stored raw (`--no-filters`), because a restore must
//! put back the bytes that were on disk, not what a clean filter would make of them. The
//! metadata lives in the gateway store; the after-state (HEAD, refs, the index and the
//! worktree's changes once the guarded write finished) is added to it so a restore can
//! tell whether the repository moved on, work left in the index or worktree included.
//!
//! A restore never deletes or overwrites a file no restore point saved (see `put`), and
//! never moves a remote-tracking ref. Restoring is itself revalidated (refused when the repository moved on since the
//! after-state, unless the person confirms with the differences shown) and itself takes a
//! restore point first, so a restore can be undone. Retention keeps the newest 200 per
//! repository or those of the last 14 days, whichever keeps more; pruning deletes the refs.

mod after;
mod apply;
mod capture;
mod files;
mod overwritten;
mod put;
mod steps;
mod take;
mod worktree;

pub use steps::{Step, Steps};
pub use take::{Capture, take, take_as, take_timed};

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use jiff::Timestamp;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::store::{RestorePoint, Store, StoreError};
use crate::config::Config;
use crate::git::update_ref::Transaction;
use crate::git::{Git, GitError, Oid, Repo, path_text, refs};
use crate::operation::{Fields, Moved, OpError, Operation, Pins, pins};

/// Where remote-tracking refs live: a restore never moves them.
pub(crate) const REMOTES: &str = "refs/remotes/";

/// Where a restore point's refs live: `refs/gitward/restore/<id>/…`.
pub const REF_PREFIX: &str = "refs/gitward/restore/";

pub(crate) fn ref_base(id: &str) -> String {
    format!("{REF_PREFIX}{id}/")
}

/// What one restore point may hold.
#[derive(Debug, Clone)]
pub struct Caps {
    /// Files larger than this are skipped (listed).
    pub max_file_bytes: u64,
    /// At most this many changed or untracked files are stored; the rest are skipped.
    pub max_files: usize,
}

impl Default for Caps {
    fn default() -> Self {
        Caps {
            max_file_bytes: 10 * 1024 * 1024,
            max_files: 50_000,
        }
    }
}

/// How many restore points are kept per repository.
#[derive(Debug, Clone)]
pub struct Retention {
    pub keep_newest: usize,
    pub keep_for: Duration,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            keep_newest: 200,
            keep_for: Duration::from_secs(14 * 24 * 3600),
        }
    }
}

/// Why a restore point could not be taken or put back.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    #[error("no restore point {0}")]
    NotFound(String),
    /// The repository moved on since the restore point's after-state; confirm to go on.
    #[error("the repository moved on since the restore point: {}", moved.iter().map(|m| m.what.as_str()).collect::<Vec<_>>().join(", "))]
    Moved { moved: Vec<Moved> },
    /// Putting the point back would overwrite files that no restore point holds (ignored,
    /// or over the caps): nothing was changed. Each entry is `{path, reason}`.
    #[error("restoring would overwrite files no restore point saved; move them aside and restore again: {}", files.iter().map(|f| f["path"].as_str().unwrap_or("?")).collect::<Vec<_>>().join(", "))]
    Uncaptured { files: Vec<Value> },
    #[error(transparent)]
    Op(#[from] OpError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<GitError> for RestoreError {
    fn from(e: GitError) -> Self {
        RestoreError::Op(e.into())
    }
}

/// What a restore did.
#[derive(Debug, Clone, PartialEq)]
pub struct Restored {
    /// The restore point taken just before restoring (restoring it undoes the restore).
    pub restore_point_id: String,
    pub restored_from: String,
    /// What had moved since the after-state (confirmed by the person).
    pub moved: Vec<Moved>,
    /// Files written and removed in the worktree.
    pub files: Value,
    /// Refs created after the point that stayed because a worktree has them checked out.
    pub kept_refs: Vec<String>,
    /// Remote-tracking refs left as they are: they record what the remote has, which a
    /// restore does not change.
    pub remote_refs: Vec<String>,
    /// What a person should know about what the restore did not do (a push stays on the
    /// remote).
    pub note: Option<String>,
}

impl Restored {
    pub fn to_json(&self) -> Value {
        json!({
            "restorePointId": self.restore_point_id,
            "restoredFrom": self.restored_from,
            "moved": self.moved,
            "files": self.files,
            "keptRefs": self.kept_refs,
            "remoteRefs": self.remote_refs,
            "note": self.note,
        })
    }
}

/// A restore point's id (`rp_…`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestorePointId(pub String);

/// A fresh id: `rp_`, the UTC time to the millisecond, and 8 random hex digits.
pub fn new_id(now: Timestamp) -> String {
    let stamp = now.strftime("%Y%m%dT%H%M%S%3fZ").to_string();
    let random = uuid::Uuid::new_v4().simple().to_string();
    format!("rp_{stamp}_{}", &random[..8])
}

/// The paths `op` will touch as `fields` name them, as a restore point captures them
/// (`./` and a trailing `/` dropped).
pub fn touched(op: &dyn Operation, fields: &Fields) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = op
        .touched_paths(fields)
        .iter()
        .map(|p| p.trim_start_matches("./").trim_end_matches('/'))
        .filter(|p| !p.is_empty())
        .map(|p| p.as_bytes().to_vec())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The paths a restore point before `op`'s write captures whatever their ignore status:
/// those it names ([`touched`]) and the untracked files on disk that a tree it checks out
/// tracks, which git's checkout would overwrite or delete ([`overwritten`]).
pub async fn to_capture(
    repo: &Repo,
    cancel: &CancellationToken,
    op: &dyn Operation,
    fields: &Fields,
    pins: &Pins,
    caps: &Caps,
) -> Result<Vec<Vec<u8>>, OpError> {
    let mut out = touched(op, fields);
    let checkouts = op.checks_out(fields, pins);
    if let (Some(top), false) = (repo.worktree.as_deref(), checkouts.is_empty()) {
        let git = Git::new(repo, cancel);
        out.extend(overwritten::paths(&git, top, &checkouts, caps.max_files).await?);
        out.sort();
        out.dedup();
    }
    Ok(out)
}

/// The paths a point captured whatever their ignore status.
fn touched_of(captured: &Value) -> Vec<Vec<u8>> {
    captured["touched"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p.as_str().and_then(path_text::decode))
        .collect()
}

fn ref_names(captured: &Value) -> Vec<String> {
    captured["refs"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// HEAD and the point's refs as they are now: `{head, refs}`; with `tree` (and a
/// worktree) also a digest of the index and every changed or untracked path with a digest
/// of its bytes, so a restore notices work done after the guarded write.
async fn current(
    git: &Git<'_>,
    repo: &Repo,
    captured: &Value,
    tree: bool,
) -> Result<Value, OpError> {
    let names = ref_names(captured);
    let top = repo.worktree.as_deref().filter(|_| tree);
    let touched = touched_of(captured);
    // The worktree side (a `status` and a digest of each changed file) is the slow part;
    // the refs and the index are read beside it.
    let worktree = async {
        match top {
            Some(top) => after::changes(git, top, &touched).await.map(Some),
            None => Ok(None),
        }
    };
    let index = async {
        match top {
            Some(_) => pins::index_digest(git).await.map(Some),
            None => Ok(None),
        }
    };
    let keys = config_keys(captured);
    let (refs, index, changes, config) = tokio::join!(
        capture::refs(git, &names),
        index,
        worktree,
        capture::config(git, &keys)
    );
    let (head, refs) = refs?;
    let mut now = json!({"head": head, "refs": refs});
    if !keys.is_empty() {
        now["config"] = config?;
    }
    if let (Some(index), Some(changes)) = (index?, changes?) {
        now["index"] = json!(index);
        now["changes"] = changes;
    }
    Ok(now)
}

/// Records the state the guarded write left (HEAD, the point's refs, the index and the
/// worktree's changes).
pub async fn record_after(
    store: &mut Store,
    repo: &Repo,
    cancel: &CancellationToken,
    point: &RestorePoint,
) -> Result<(), RestoreError> {
    let git = Git::new(repo, cancel);
    let mut captured = point.captured.clone();
    captured["after"] = current(&git, repo, &point.captured, true).await?;
    store.update_restore_point_captured(&point.id, &captured)?;
    Ok(())
}

/// What moved since the point's after-state (or, without one, since it was taken): HEAD
/// and refs, and the index and worktree when the after-state recorded them.
pub async fn moved_since(
    git: &Git<'_>,
    repo: &Repo,
    point: &RestorePoint,
) -> Result<Vec<Moved>, OpError> {
    let c = &point.captured;
    let expected = match c.get("after") {
        Some(after) if !after.is_null() => after.clone(),
        _ => json!({"head": c["head"], "refs": c["refs"]}),
    };
    let tree = expected.get("index").is_some();
    let found = current(git, repo, c, tree).await?;
    // A remote-tracking ref records the remote, which a restore leaves as it is: its
    // moving (a fetch) is nothing a restore would undo.
    let mut moved = pins::diff(&expected, &found);
    moved.retain(|m| !m.what.starts_with(&format!("refs {REMOTES}")));
    Ok(moved)
}

/// Puts restore point `id` back. Refused with [`RestoreError::Moved`] when the
/// repository moved on and `confirm_moved` is false.
pub async fn restore(
    store: &mut Store,
    config: &Config,
    id: &str,
    confirm_moved: bool,
    cancel: &CancellationToken,
    now: Timestamp,
) -> Result<Restored, RestoreError> {
    let point = store
        .restore_point(id)?
        .ok_or_else(|| RestoreError::NotFound(id.to_owned()))?;
    let repo = crate::git::repo::open(config, "repoPath", &point.repo_path, cancel).await?;
    restore_in(store, &repo, &point, confirm_moved, cancel, now).await
}

/// [`restore`] with the repository already open (and locked by the caller).
pub async fn restore_in(
    store: &mut Store,
    repo: &Repo,
    point: &RestorePoint,
    confirm_moved: bool,
    cancel: &CancellationToken,
    now: Timestamp,
) -> Result<Restored, RestoreError> {
    let git = Git::new(repo, cancel);
    let moved = moved_since(&git, repo, point).await?;
    if !moved.is_empty() && !confirm_moved {
        return Err(RestoreError::Moved { moved });
    }
    let old = &point.captured;
    let names = ref_names(old);
    // The paths the point captured whatever their ignore status are captured again now,
    // so that putting them back never loses what is there.
    let paths = touched_of(old);
    let keys = config_keys(old);
    let what = Capture {
        refs: &names,
        paths: &paths,
        config: &keys,
        preview_id: None,
        operation_type: Some("restore"),
        caps: &Caps::default(),
    };
    let before = take_timed(store, repo, cancel, &what, now, &Steps::default()).await?;
    let new = &before.captured;
    let mut files = Value::Null;
    let (cur, target) = tokio::try_join!(whole(&git, &before), whole(&git, point))?;
    if let (Some(top), Some(cur), Some(target)) = (repo.worktree.as_deref(), cur, target) {
        let skipped: BTreeSet<Vec<u8>> = point
            .skipped
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s["path"].as_str().and_then(path_text::decode))
                    .collect()
            })
            .unwrap_or_default();
        // The paths the point looked at whatever their ignore status: one it did not
        // store was absent or a directory then, so no file there is kept.
        let looked: BTreeSet<Vec<u8>> = touched_of(old).into_iter().collect();
        let left = put::Left {
            skipped: &skipped,
            looked: &looked,
        };
        files = match put::worktree(&git, top, &cur, &target, left).await {
            Ok(files) => files,
            Err(e) => {
                // Refused before anything was written: the point taken for it goes too.
                if matches!(e, RestoreError::Uncaptured { .. }) {
                    delete_refs(&git, &before.id).await?;
                    store.delete_restore_point(&before.id)?;
                }
                return Err(e);
            }
        };
        apply::index(&git, repo, &old["index"], old["indexMtimeNs"].as_u64()).await?;
    }
    let refs_now = new["refs"]
        .as_object()
        .map(|m| m.clone().into_iter().collect())
        .unwrap_or_default();
    let (kept_refs, remote_refs) = apply::refs(&git, repo, old, &refs_now).await?;
    apply::config(repo, cancel, &old["config"], &new["config"]).await?;
    apply::state(&git, &repo.git_dir, &old["state"]).await?;
    let note = remote_note(&remote_refs, &refs_now);
    record_after(store, repo, cancel, &before).await?;
    Ok(Restored {
        restore_point_id: before.id,
        restored_from: point.id.clone(),
        moved,
        files,
        kept_refs,
        remote_refs,
        note,
    })
}

/// What a restore says of the remote-tracking refs it left: the remote keeps what was
/// pushed, and the ref stays as the remote has it.
fn remote_note(remote_refs: &[String], now: &BTreeMap<String, Value>) -> Option<String> {
    if remote_refs.is_empty() {
        return None;
    }
    let refs: Vec<String> = remote_refs
        .iter()
        .map(|r| {
            let at = now.get(r).and_then(Value::as_str).unwrap_or("(none)");
            let short = r.strip_prefix("refs/remotes/").unwrap_or(r);
            format!("{short} at {}", &at[..at.len().min(12)])
        })
        .collect();
    Some(format!(
        "The remote keeps the pushed commits: a restore changes only this repository. {} stays as the remote has it; to take the commits back there, propose a push back to the old tip.",
        refs.join(", ")
    ))
}

/// The configuration keys a point kept.
fn config_keys(captured: &Value) -> Vec<String> {
    captured["config"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// The whole worktree of `point` as one tree (tracked and untracked files, what it left
/// out excepted); `None` for a repository without a worktree. A point that stored only
/// its changes has the tree made now from the index tree and those changes, kept at the
/// point's `tree` ref so that `git gc` cannot take it while a restore uses it.
pub async fn whole_tree(git: &Git<'_>, point: &RestorePoint) -> Result<Option<Oid>, OpError> {
    Ok(whole(git, point).await?.map(|w| w.tree))
}

/// A point's whole worktree tree, the index tree it was made from, and the paths the
/// point recorded as absent.
pub struct Whole {
    pub tree: Oid,
    pub base: Option<Oid>,
    pub removed: Vec<Vec<u8>>,
}

async fn whole(git: &Git<'_>, point: &RestorePoint) -> Result<Option<Whole>, OpError> {
    let worktree = &point.captured["worktree"];
    let oid = |key: &str| worktree[key].as_str().and_then(Oid::parse);
    if let Some(tree) = oid("tree") {
        return Ok(Some(Whole {
            tree,
            base: None,
            removed: Vec::new(),
        }));
    }
    let (Some(base), Some(changes)) = (oid("base"), oid("changes")) else {
        return Ok(None);
    };
    let id = &point.id;
    let commit = (
        format!("{}tree", ref_base(id)),
        format!("gitward restore point {id}: whole worktree\n"),
    );
    let when = point.created_at.as_second();
    let (tree, removed) = worktree::whole_from_changes(git, &base, &changes, commit, when).await?;
    Ok(Some(Whole {
        tree,
        base: Some(base),
        removed,
    }))
}

/// Deletes the restore points of `repo` that retention no longer keeps (refs, then the
/// record); returns their ids.
pub async fn prune(
    store: &mut Store,
    repo: &Repo,
    cancel: &CancellationToken,
    now: Timestamp,
    retention: &Retention,
) -> Result<Vec<String>, RestoreError> {
    let points = store.all_restore_points(&repo.display())?;
    let horizon = now
        .checked_sub(jiff::SignedDuration::try_from(retention.keep_for).unwrap_or_default())
        .unwrap_or(Timestamp::MIN);
    let git = Git::new(repo, cancel);
    let mut pruned = Vec::new();
    for (i, point) in points.into_iter().enumerate() {
        if i < retention.keep_newest || point.created_at >= horizon {
            continue;
        }
        delete_refs(&git, &point.id).await?;
        store.delete_restore_point(&point.id)?;
        pruned.push(point.id);
    }
    Ok(pruned)
}

/// Settles restore point `id` of `repo`, noted before it was taken by an execution that
/// stopped: `true` when it was recorded (it is whole); otherwise whatever refs it made
/// are deleted and `false` is returned.
pub async fn settle_unrecorded(
    store: &Store,
    repo: &Repo,
    cancel: &CancellationToken,
    id: &str,
) -> Result<bool, RestoreError> {
    if store.restore_point(id)?.is_some() {
        return Ok(true);
    }
    delete_refs(&Git::new(repo, cancel), id).await?;
    Ok(false)
}

async fn delete_refs(git: &Git<'_>, id: &str) -> Result<(), OpError> {
    let base = ref_base(id);
    let mut tx = Transaction::new();
    for (name, _) in refs::resolve(git, std::slice::from_ref(&base)).await? {
        if name.starts_with(&base) {
            tx.delete(&name, None);
        }
    }
    tx.commit(git, None).await?;
    Ok(())
}

/// The page's and the read bridge's view of a restore point (`RestorePointView`).
pub fn view(point: &RestorePoint) -> Value {
    let c = &point.captured;
    let created = point
        .created_at
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string();
    json!({
        "id": point.id,
        "repoPath": point.repo_path,
        "operationType": point.operation_type,
        "previewId": point.preview_id,
        "createdAt": created,
        "headBefore": c["head"]["oid"],
        "headAfter": c.get("after").map(|a| a["head"]["oid"].clone()).unwrap_or(Value::Null),
        "captured": {
            "refs": c["refs"],
            "head": c["head"],
            "index": c["index"],
            "worktree": c["worktree"],
            "state": c["state"].as_object().map(|m| m.keys().cloned().collect::<Vec<_>>()),
        },
        "skipped": point.skipped,
        "restorable": c["refs"].is_object(),
    })
}
