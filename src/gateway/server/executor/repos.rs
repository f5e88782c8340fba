//! The further repositories of one write (a `branchDelete` across repositories): each is
//! opened through the allowed roots, locked with the proposal's own in one order, given
//! its own restore point and verified against its own intent.
//!
//! One restore point per repository, not one record covering all: a restore point is a
//! repository's refs, index and worktree, and a person restores (on the page or with
//! `gitward restore`) one repository at a time, each guarded on its own after-state. The
//! result lists every repository's restore point under `restorePoints`.

use jiff::Timestamp;
use serde_json::{Value, json};
use tokio::sync::OwnedMutexGuard;
use tokio_util::sync::CancellationToken;

use super::super::restore::{self, Caps, RestoreError, Retention};
use super::super::store::{RestorePoint, Store};
use super::Executor;
use crate::config::Config;
use crate::git::Repo;
use crate::operation::intent::{Intent, Reached, reached};
use crate::operation::{Ctx, Fields, OpError, Operation, Pins};

/// A repository the write changes besides the proposal's own.
pub(super) struct Other {
    pub repo: std::sync::Arc<Repo>,
    pub intent: Intent,
    /// The id its restore point will have, noted in the intent record before it is taken.
    pub pending: String,
    pub point: Option<RestorePoint>,
}

/// The further repositories the operation names, each opened again through the allowed
/// roots (a root removed since the proposal refuses the write).
pub(super) async fn open(
    config: &Config,
    op: &dyn Operation,
    fields: &Fields,
    pins: &Pins,
    cancel: &CancellationToken,
) -> Result<Vec<Other>, OpError> {
    let mut out = Vec::new();
    for (path, intent) in op.other_repositories(fields, pins)? {
        let repo = crate::git::repo::open(config, "targets", &path, cancel).await?;
        out.push(Other {
            repo,
            intent,
            pending: restore::new_id(Timestamp::now()),
            point: None,
        });
    }
    Ok(out)
}

impl Executor {
    /// Every repository's lock, taken in the order of their canonical paths so two writes
    /// naming the same repositories can never wait on each other in a circle.
    pub(super) async fn lock_all(&self, own: &Repo, others: &[Other]) -> Vec<OwnedMutexGuard<()>> {
        let mut paths: Vec<String> = others.iter().map(|o| o.repo.display()).collect();
        paths.push(own.display());
        paths.sort();
        paths.dedup();
        let mut held = Vec::with_capacity(paths.len());
        for path in paths {
            held.push(self.lock_for(&path).lock_owned().await);
        }
        held
    }
}

/// The intent record's entry for the further repositories (restore points once taken).
pub(super) fn record(others: &[Other]) -> Value {
    json!(
        others
            .iter()
            .map(|o| json!({"repoPath": o.repo.display(), "intent": o.intent,
                        "restorePointPending": o.pending,
                        "restorePointId": o.point.as_ref().map(|p| p.id.as_str())}))
            .collect::<Vec<_>>()
    )
}

/// A restore point in each further repository, of the refs its intent names.
pub(super) async fn take_points(
    store: &mut Store,
    others: &mut [Other],
    cancel: &CancellationToken,
    preview_id: &str,
    kind: &str,
    caps: &Caps,
) -> Result<(), RestoreError> {
    for o in others.iter_mut() {
        let refs = o.intent.refs();
        let what = restore::Capture {
            refs: &refs,
            paths: &[],
            config: &[],
            preview_id: Some(preview_id),
            operation_type: Some(kind),
            caps,
        };
        let (now, steps) = (Timestamp::now(), restore::Steps::default());
        let point =
            restore::take_as(store, &o.repo, cancel, &o.pending, &what, now, &steps).await?;
        o.point = Some(point);
    }
    Ok(())
}

/// `[{repoPath, restorePointId}]`: the proposal's own first, then each further one.
pub(super) fn points(own: &Repo, own_point: &str, others: &[Other]) -> Value {
    let mut out = vec![json!({"repoPath": own.display(), "restorePointId": own_point})];
    for o in others {
        if let Some(p) = &o.point {
            out.push(json!({"repoPath": o.repo.display(), "restorePointId": p.id}));
        }
    }
    json!(out)
}

/// Each further repository's after-state on its restore point, so a later restore can
/// tell whether that repository moved on.
pub(super) async fn record_after(
    store: &mut Store,
    others: &[Other],
    cancel: &CancellationToken,
) -> Result<(), RestoreError> {
    for o in others {
        if let Some(point) = &o.point {
            restore::record_after(store, &o.repo, cancel, point).await?;
        }
    }
    Ok(())
}

/// `Ok` when every further repository reached its post-state; else what was found in
/// each that did not.
pub(super) async fn verify(
    config: &Config,
    others: &[Other],
    cancel: &CancellationToken,
) -> Result<(), Value> {
    let mut found = serde_json::Map::new();
    for o in others {
        let ctx = Ctx {
            repo: &o.repo,
            config,
            cancel,
        };
        let what = match reached(ctx, &o.intent).await {
            Ok(Reached::Post) => continue,
            Ok(Reached::Pre) => json!("the repository is still in its pre-state"),
            Ok(Reached::Neither(f)) => f,
            Err(e) => json!(e.to_string()),
        };
        found.insert(o.repo.display(), what);
    }
    if found.is_empty() {
        Ok(())
    } else {
        Err(Value::Object(found))
    }
}

/// Pruning is housekeeping: a failure here never fails the write it follows.
pub(super) async fn prune(
    store: &mut Store,
    others: &[Other],
    cancel: &CancellationToken,
    retention: &Retention,
) {
    for o in others {
        let _ = restore::prune(store, &o.repo, cancel, Timestamp::now(), retention).await;
    }
}
