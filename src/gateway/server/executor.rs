//! The executor: carries out one approved proposal, as a library (the HTTP side calls it
//! from a task).
//!
//! ```text
//! claim (approved → executing, CAS) → repository lock → revalidate the pins
//!   → intent record (expected pre/post refs) → restore point → write → verify
//!   → completed {…, restorePointId} | failed {failure: stale | git, …}
//! ```
//!
//! The claim comes first so two runners racing one proposal cannot both start: the loser
//! gets the store's conflict. From then on every path ends the proposal: a moved pin is
//! `stale` (nothing written), a git refusal or a failed verification is `git` (with the
//! restore point taken before the write). One async mutex per repository serialises the
//! gateway's own writes; git's `index.lock` and guarded `update-ref` take care of
//! everything else. After a crash, [`Executor::reconcile_at_start`] ends every
//! `executing` proposal by comparing the repository with its intent — never by running it
//! again (see `reconcile`).

mod in_progress;
mod prepare;
mod reconcile;
mod repos;
mod stop;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use jiff::Timestamp;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::restore::{self, Caps, RestoreError, Restored, Retention};
use super::store::{Settings, Store, StoreError, StoredProposal};
use crate::config::Config;
use crate::gateway::api::{FailureKind, OperationResult, Status, StatusRecord};
use crate::git::Repo;
use crate::operation::intent::{Reached, reached};
use crate::operation::{self, Ctx, Fields, OpError, Operation, Pins, crash, identity};

pub use prepare::{compute_preview, pin_proposal};
pub use stop::Stop;

/// Why [`Executor::run`] did not run a proposal. Once claimed, a proposal always ends
/// `completed` or `failed`; these errors are for the cases before (or the store failing).
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The proposal is not `approved` (another runner claimed it, or it was never approved).
    #[error("the proposal is {}, not approved", .0.as_str())]
    NotApproved(Status),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Op(#[from] OpError),
    /// The gateway is stopping: the proposal stays `approved` for the next start.
    #[error("the gateway is stopping; the proposal runs at its next start")]
    Stopping,
}

/// How an execution ended, before it is written to the store.
struct Failure {
    kind: FailureKind,
    fields: Fields,
    restore_point_id: Option<String>,
}

impl Failure {
    fn new(kind: FailureKind, fields: Value) -> Failure {
        Failure {
            kind,
            fields: fields.as_object().cloned().unwrap_or_default(),
            restore_point_id: None,
        }
    }

    fn from_op(e: OpError) -> Failure {
        match e {
            OpError::Stale { moved } => Failure::new(
                FailureKind::Stale,
                json!({"moved": moved, "message": "the repository moved since the proposal; nothing was written"}),
            ),
            OpError::Refused { message, details } | OpError::RollBack { message, details } => {
                let mut fields = details;
                fields.insert("message".into(), json!(message));
                Failure::new(FailureKind::Git, Value::Object(fields))
            }
            other => Failure::new(FailureKind::Git, json!({"message": other.to_string()})),
        }
    }
}

/// Runs approved proposals against the repositories they name.
pub struct Executor {
    store_path: PathBuf,
    settings: Settings,
    config: Arc<Config>,
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    pub caps: Caps,
    pub retention: Retention,
    /// Stopping without leaving a repository half-done (see `stop`).
    pub stop: Stop,
}

impl Executor {
    /// `config.allowed_roots` bounds every repository and worktree path an execution uses.
    pub fn new(store_path: impl Into<PathBuf>, settings: Settings, config: Arc<Config>) -> Self {
        Executor {
            store_path: store_path.into(),
            settings,
            config,
            locks: Mutex::new(HashMap::new()),
            caps: Caps::default(),
            retention: Retention::default(),
            stop: Stop::default(),
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    fn store(&self) -> Result<Store, StoreError> {
        Store::open(&self.store_path, self.settings.clone())
    }

    /// The one mutex of the repository at `path` (canonical).
    fn lock_for(&self, path: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut locks = self.locks.lock().unwrap_or_else(|p| p.into_inner());
        Arc::clone(locks.entry(path.to_owned()).or_default())
    }

    /// The ids of `approved` proposals (to resume after a start, through [`Executor::run`]).
    pub fn approved(&self) -> Result<Vec<String>, StoreError> {
        Ok(self
            .store()?
            .list_in(Status::Approved)?
            .into_iter()
            .map(|r| r.preview_id)
            .collect())
    }

    /// Executes the approved proposal `preview_id`; returns its final record.
    pub async fn run(
        &self,
        preview_id: &str,
        cancel: &CancellationToken,
    ) -> Result<StatusRecord, ExecError> {
        // Counted before the claim, so a stop either prevents the claim or waits for it.
        let Some(_running) = self.stop.enter() else {
            return Err(ExecError::Stopping);
        };
        let mut store = self.store()?;
        let stored = store.proposal(preview_id)?;
        if stored.record.status != Status::Approved {
            return Err(ExecError::NotApproved(stored.record.status));
        }
        store.claim(preview_id, &json!({"phase": "claimed"}), Timestamp::now())?;
        let (cancel, _link) = self.stop.linked(cancel);
        let outcome = self.claimed(&mut store, &stored, &cancel).await;
        let now = Timestamp::now();
        let record = match outcome {
            Ok(result) => store.complete(preview_id, &result, now)?,
            Err(mut f) => {
                if self.stop.aborted() && matches!(f.kind, FailureKind::Git | FailureKind::Stale) {
                    // Stopped before the write could start: nothing was written.
                    f.kind = FailureKind::Interrupted;
                    f.fields.insert(
                        "found".into(),
                        json!(
                            "the gateway was stopped before the write started: nothing was written"
                        ),
                    );
                }
                let result = OperationResult {
                    failure: Some(f.kind),
                    restore_point_id: f.restore_point_id,
                    fields: f.fields,
                };
                store.fail(preview_id, &result, now)?
            }
        };
        Ok(record)
    }

    /// Everything after the claim; any error becomes the proposal's failure.
    async fn claimed(
        &self,
        store: &mut Store,
        stored: &StoredProposal,
        cancel: &CancellationToken,
    ) -> Result<OperationResult, Failure> {
        let proposal = &stored.proposal;
        let Some(op) = operation::find(&proposal.operation_type) else {
            return Err(Failure::new(
                FailureKind::Git,
                json!({"message": format!("this gateway cannot execute `{}`", proposal.operation_type)}),
            ));
        };
        let repo_path = proposal.repo_path.as_deref().unwrap_or_default();
        let repo = crate::git::repo::open(&self.config, "repoPath", repo_path, cancel)
            .await
            .map_err(|e| Failure::from_op(e.into()))?;
        let ctx = Ctx {
            repo: &repo,
            config: &self.config,
            cancel,
        };
        let id = stored.record.preview_id.as_str();
        let identity = store.identity(id).map_err(store_failure)?;
        let (pins, identity) = match store.pins(id).map_err(store_failure)? {
            Some(p) => (Pins(p), identity),
            // Pinned now, the revalidation under the locks still guards the claim-to-write
            // window.
            None => {
                let pins = op
                    .pin(ctx, &proposal.fields)
                    .await
                    .map_err(Failure::from_op)?;
                let now = identity::read(&repo).map_err(Failure::from_op)?;
                (pins, Some(now))
            }
        };
        let mut others = repos::open(&self.config, op, &proposal.fields, &pins, cancel)
            .await
            .map_err(Failure::from_op)?;
        let _held = self.lock_all(&repo, &others).await;
        // Pins without an identity were made by no gateway that pins one: which
        // repository they were read from cannot be told, so they are not written on.
        let identity = identity.unwrap_or(Value::Null);
        identity::check(&identity, &repo).map_err(Failure::from_op)?;
        self.guarded(store, op, ctx, id, &proposal.fields, &pins, &mut others)
            .await
    }

    /// Revalidate → intent → restore point → write → verify, under the repository locks.
    #[allow(clippy::too_many_arguments)]
    async fn guarded(
        &self,
        store: &mut Store,
        op: &dyn Operation,
        ctx: Ctx<'_>,
        id: &str,
        fields: &Fields,
        pins: &Pins,
        others: &mut [repos::Other],
    ) -> Result<OperationResult, Failure> {
        let repo = ctx.repo;
        op.revalidate(ctx, fields, pins)
            .await
            .map_err(Failure::from_op)?;
        let card = store.card_data(id).map_err(store_failure)?;
        let listed = card.preview.as_ref().and_then(|p| p.get("programs"));
        let programs = operation::programs::check(ctx, listed)
            .await
            .map_err(Failure::from_op)?;
        let intent = op.intent(fields, pins).map_err(Failure::from_op)?;
        // Noted before the point is taken, so that reconciliation can find its refs.
        let point_id = restore::new_id(Timestamp::now());
        let mut record = json!({
            "phase": "intent",
            "repoPath": repo.display(),
            "intent": intent,
            "restorePointPending": point_id,
        });
        if !others.is_empty() {
            record["others"] = repos::record(others);
        }
        store
            .update_intent(id, &record, Timestamp::now())
            .map_err(store_failure)?;
        crash::point(crash::AFTER_INTENT);
        let refs = intent.refs();
        let paths = restore::to_capture(repo, ctx.cancel, op, fields, pins, &self.caps)
            .await
            .map_err(Failure::from_op)?;
        let config = op.touched_config(fields, pins);
        let what = restore::Capture {
            refs: &refs,
            paths: &paths,
            config: &config,
            preview_id: Some(id),
            operation_type: Some(op.kind()),
            caps: &self.caps,
        };
        let now = Timestamp::now();
        let steps = restore::Steps::default();
        let point = restore::take_as(store, repo, ctx.cancel, &point_id, &what, now, &steps)
            .await
            .map_err(|e| restore_failure(e, None))?;
        repos::take_points(store, others, ctx.cancel, id, op.kind(), &self.caps)
            .await
            .map_err(|e| restore_failure(e, Some(&point.id)))?;
        record["phase"] = json!("restorePoint");
        record["restorePointId"] = json!(point.id);
        if !others.is_empty() {
            record["others"] = repos::record(others);
        }
        store
            .update_intent(id, &record, Timestamp::now())
            .map_err(store_failure)?;
        crash::point(crash::AFTER_RESTORE_POINT);
        let written = op.execute(ctx, fields, pins).await;
        crash::point(crash::AFTER_WRITE);
        if written.is_err() && self.stop.aborted() {
            let end = stop::Interrupted {
                store,
                repo,
                config: &self.config,
                kind: op.kind(),
                intent: &intent,
                point: &point,
            };
            return end.settle().await.map_err(|f| Failure {
                kind: FailureKind::Interrupted,
                fields: f,
                restore_point_id: Some(point.id.clone()),
            });
        }
        // Past the write nothing is cancelled: what it did is verified and recorded.
        let settle = CancellationToken::new();
        let ctx = Ctx {
            cancel: &settle,
            ..ctx
        };
        let after = restore::record_after(store, repo, ctx.cancel, &point).await;
        let after_others = repos::record_after(store, others, ctx.cancel).await;
        let all_points = (!others.is_empty()).then(|| repos::points(repo, &point.id, others));
        let with_point = |mut f: Failure| {
            f.restore_point_id = Some(point.id.clone());
            if let Some(p) = &all_points {
                f.fields.insert("restorePoints".into(), p.clone());
            }
            f
        };
        if let Err(e @ OpError::RollBack { .. }) = written {
            return Err(with_point(
                roll_back(store, repo, ctx.cancel, &point, e).await,
            ));
        }
        let mut out = written.map_err(|e| with_point(Failure::from_op(e)))?;
        after
            .and(after_others)
            .map_err(|e| with_point(restore_failure(e, Some(&point.id))))?;
        let not_reached = |found: Value| {
            with_point(Failure::new(
                FailureKind::Git,
                json!({"message": "after the write the repository is not as intended", "found": found}),
            ))
        };
        match reached(ctx, &intent).await {
            Ok(Reached::Post) => {}
            Ok(Reached::Neither(found)) => return Err(not_reached(found)),
            Ok(_) => {
                return Err(not_reached(json!(
                    "the repository is still in its pre-state"
                )));
            }
            Err(e) => return Err(with_point(Failure::from_op(e))),
        }
        repos::verify(&self.config, others, ctx.cancel)
            .await
            .map_err(not_reached)?;
        // Pruning is housekeeping: a failure here never fails the write it follows.
        let _ = restore::prune(store, repo, ctx.cancel, Timestamp::now(), &self.retention).await;
        repos::prune(store, others, ctx.cancel, &self.retention).await;
        if let Some(p) = all_points {
            out.insert("restorePoints".into(), p);
        }
        if programs.as_array().is_some_and(|p| !p.is_empty()) {
            out.insert("programs".into(), programs);
        }
        Ok(OperationResult {
            failure: None,
            restore_point_id: Some(point.id),
            fields: out,
        })
    }

    /// Ends every `executing` proposal found at start by comparing its repository with
    /// its intent; returns the records as ended. Nothing is executed again.
    pub async fn reconcile_at_start(
        &self,
        cancel: &CancellationToken,
    ) -> Result<Vec<StatusRecord>, ExecError> {
        let mut store = self.store()?;
        let mut out = Vec::new();
        for mut executing in store.list_executing()? {
            reconcile::settle_points(&store, &self.config, &mut executing, cancel).await;
            let outcome = reconcile::decide(&self.config, &executing, cancel).await;
            let id = executing.record.preview_id.clone();
            out.push(store.reconcile(&id, &outcome, Timestamp::now())?);
        }
        Ok(out)
    }

    /// A person's restore of restore point `id`, under the repository's lock.
    pub async fn restore(
        &self,
        id: &str,
        confirm_moved: bool,
        cancel: &CancellationToken,
    ) -> Result<Restored, RestoreError> {
        let mut store = self.store()?;
        let point = store
            .restore_point(id)?
            .ok_or_else(|| RestoreError::NotFound(id.to_owned()))?;
        let repo =
            crate::git::repo::open(&self.config, "repoPath", &point.repo_path, cancel).await?;
        let lock = self.lock_for(&repo.display());
        let _held = lock.lock().await;
        restore::restore_in(
            &mut store,
            &repo,
            &point,
            confirm_moved,
            cancel,
            Timestamp::now(),
        )
        .await
    }

    /// Pins the stored proposal `preview_id` (at proposal time) and records the pins.
    pub async fn pin(
        &self,
        preview_id: &str,
        cancel: &CancellationToken,
    ) -> Result<Pins, ExecError> {
        let mut store = self.store()?;
        let stored = store.proposal(preview_id)?;
        let (pins, identity) = pin_proposal(&self.config, &stored.proposal, cancel).await?;
        store.set_pins(preview_id, &pins.0)?;
        store.set_identity(preview_id, &identity)?;
        Ok(pins)
    }

    /// Computes and records the card's preview of `preview_id` (after its pins).
    pub async fn preview(
        &self,
        preview_id: &str,
        cancel: &CancellationToken,
    ) -> Result<Value, ExecError> {
        let mut store = self.store()?;
        let stored = store.proposal(preview_id)?;
        let pins = match store.pins(preview_id)? {
            Some(p) => Pins(p),
            None => {
                let (p, identity) = pin_proposal(&self.config, &stored.proposal, cancel).await?;
                store.set_pins(preview_id, &p.0)?;
                store.set_identity(preview_id, &identity)?;
                p
            }
        };
        let (pins, preview) = compute_preview(&self.config, &stored.proposal, pins, cancel).await?;
        store.set_pins(preview_id, &pins.0)?;
        store.set_preview(preview_id, &preview)?;
        Ok(preview)
    }
}

/// Puts the repository back to `point` after a write made of several steps failed part
/// way; the failure says what each step did and what the rollback restored.
async fn roll_back(
    store: &mut Store,
    repo: &Repo,
    cancel: &CancellationToken,
    point: &super::store::RestorePoint,
    e: OpError,
) -> Failure {
    let mut failure = Failure::from_op(e);
    match restore::restore_in(store, repo, point, true, cancel, Timestamp::now()).await {
        Ok(restored) => {
            failure.kind = FailureKind::RolledBack;
            failure.fields.insert("rollback".into(), restored.to_json());
        }
        Err(err) => {
            failure.fields.insert(
                "rollbackError".into(),
                json!(format!("the rollback did not finish: {err}")),
            );
        }
    }
    failure
}

fn store_failure(e: StoreError) -> Failure {
    Failure::new(
        FailureKind::Git,
        json!({"message": format!("gateway store: {e}")}),
    )
}

fn restore_failure(e: RestoreError, point: Option<&str>) -> Failure {
    let mut f = Failure::new(
        FailureKind::Git,
        json!({"message": format!("restore point: {e}")}),
    );
    f.restore_point_id = point.map(str::to_owned);
    f
}
