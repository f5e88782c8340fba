//! Ending a proposal found `executing` at start, from its intent record alone.
//!
//! The record says how far the executor got: only claimed (nothing written), intent
//! recorded, restore point taken. The repository then says which side of the intent it is
//! on: the post-state means the write finished before the crash (`completed`); the
//! pre-state or anything else means `failed` with `failure: "interrupted"`, what was
//! found, and the restore point to go back with when one was taken.

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::gateway::api::OperationResult;
use crate::gateway::server::restore;
use crate::gateway::server::store::{Executing, Reconciled, Store};
use crate::operation::intent::{Expect, Found, Intent, Reached, reached, read_ref};
use crate::operation::{Ctx, Fields};

use super::in_progress;

fn interrupted(point: Option<String>, found: Value) -> Reconciled {
    let mut fields = Fields::new();
    fields.insert("found".into(), found);
    Reconciled::Interrupted(OperationResult {
        failure: None,
        restore_point_id: point,
        fields,
    })
}

/// Settles the restore points an execution noted before taking them and never confirmed,
/// its own and each further repository's: one recorded (the crash came after its record)
/// becomes that repository's restore point; the refs of one never recorded are deleted,
/// or they would keep their objects forever.
pub async fn settle_points(
    store: &Store,
    config: &Config,
    executing: &mut Executing,
    cancel: &CancellationToken,
) {
    let Some(record) = executing.intent.as_mut() else {
        return;
    };
    settle_point(store, config, record, cancel).await;
    for other in record["others"].as_array_mut().into_iter().flatten() {
        settle_point(store, config, other, cancel).await;
    }
}

/// [`settle_points`] for one repository's entry (`repoPath`, `restorePointPending`,
/// `restorePointId`).
async fn settle_point(
    store: &Store,
    config: &Config,
    entry: &mut Value,
    cancel: &CancellationToken,
) {
    let (Some(pending), None) = (
        entry["restorePointPending"].as_str().map(str::to_owned),
        entry["restorePointId"].as_str(),
    ) else {
        return;
    };
    let Some(path) = entry["repoPath"].as_str() else {
        return;
    };
    // A repository that cannot be opened keeps the refs; its restore points are out of
    // reach anyway.
    let Ok(repo) = crate::git::repo::open(config, "repoPath", path, cancel).await else {
        return;
    };
    if let Ok(true) = restore::settle_unrecorded(store, &repo, cancel, &pending).await {
        entry["restorePointId"] = json!(pending);
    }
}

/// How the proposal in `executing` ends; a write across repositories lists each one's
/// restore point either way.
pub async fn decide(
    config: &Config,
    executing: &Executing,
    cancel: &CancellationToken,
) -> Reconciled {
    let mut ended = decide_one(config, executing, cancel).await;
    let record = executing.intent.as_ref().unwrap_or(&Value::Null);
    if record["others"].is_array() {
        let (Reconciled::Completed(r) | Reconciled::Interrupted(r)) = &mut ended;
        r.fields.insert("restorePoints".into(), points(record));
    }
    ended
}

async fn decide_one(
    config: &Config,
    executing: &Executing,
    cancel: &CancellationToken,
) -> Reconciled {
    let record = executing.intent.clone().unwrap_or(Value::Null);
    let point = record["restorePointId"].as_str().map(str::to_owned);
    let intent: Option<Intent> = serde_json::from_value(record["intent"].clone()).ok();
    let (Some(intent), Some(path)) = (intent, record["repoPath"].as_str()) else {
        return interrupted(
            point,
            json!("stopped before the intent record: nothing was written"),
        );
    };
    let repo = match crate::git::repo::open(config, "repoPath", path, cancel).await {
        Ok(repo) => repo,
        Err(e) => return interrupted(point, json!(format!("cannot open the repository: {e}"))),
    };
    let ctx = Ctx {
        repo: &repo,
        config,
        cancel,
    };
    // Once the restore point is taken the write may have started a git operation; it is
    // ended (completed or aborted) before the refs are compared.
    let settled = match &point {
        Some(_) => {
            let kind = executing.record.operation_type.as_str();
            in_progress::settle(&repo, kind, &intent, cancel).await
        }
        None => None,
    };
    let mut ended = compare(ctx, &record, &intent, point, config, cancel).await;
    if let Some(settled) = settled {
        let (Reconciled::Completed(r) | Reconciled::Interrupted(r)) = &mut ended;
        if let (Some(Value::String(found)), Some(what)) =
            (r.fields.get_mut("found"), in_progress::said(&settled))
        {
            *found = format!("{what}; {found}");
        }
        r.fields.insert("inProgress".into(), settled);
    }
    ended
}

/// The repository against the intent: `completed` at the post-state, else `interrupted`.
async fn compare(
    ctx: Ctx<'_>,
    record: &Value,
    intent: &Intent,
    point: Option<String>,
    config: &Config,
    cancel: &CancellationToken,
) -> Reconciled {
    let git = crate::git::Git::new(ctx.repo, cancel);
    match reached(ctx, intent).await {
        Ok(Reached::Post) => {
            let mut fields = Fields::new();
            if let Some(others) = record["others"].as_array()
                && let Err(found) = others_reached(config, others, cancel).await
            {
                return interrupted(point, found);
            }
            fields.insert("reconciled".into(), json!(true));
            for (name, expect) in &intent.post {
                if let Expect::ChildOf { .. } = expect {
                    match read_ref(&git, name).await {
                        Ok(Found::At(oid)) | Ok(Found::Symbolic { oid: Some(oid), .. }) => {
                            fields.insert("commitSha".into(), json!(oid.as_str()));
                        }
                        _ => {}
                    }
                }
            }
            if let Some(path) = &intent.worktree {
                fields.insert("worktreePath".into(), json!(path));
            }
            Reconciled::Completed(OperationResult {
                failure: None,
                restore_point_id: point,
                fields,
            })
        }
        Ok(Reached::Pre) => interrupted(
            point,
            json!(
                "the refs are in their pre-state: the write did not happen (the worktree or index may be partly changed; the restore point holds them as they were)"
            ),
        ),
        Ok(Reached::Neither(found)) => interrupted(point, found),
        Err(e) => interrupted(point, json!(format!("cannot read the repository: {e}"))),
    }
}

/// `Ok` when every further repository of the record reached its post-state; else what
/// was found in each that did not.
async fn others_reached(
    config: &Config,
    others: &[Value],
    cancel: &CancellationToken,
) -> Result<(), Value> {
    let mut found = serde_json::Map::new();
    for other in others {
        let path = other["repoPath"].as_str().unwrap_or_default();
        let intent: Option<Intent> = serde_json::from_value(other["intent"].clone()).ok();
        let what = match (
            intent,
            crate::git::repo::open(config, "targets", path, cancel).await,
        ) {
            (Some(intent), Ok(repo)) => {
                let ctx = Ctx {
                    repo: &repo,
                    config,
                    cancel,
                };
                match reached(ctx, &intent).await {
                    Ok(Reached::Post) => continue,
                    Ok(Reached::Pre) => json!("the refs are in their pre-state"),
                    Ok(Reached::Neither(f)) => f,
                    Err(e) => json!(format!("cannot read the repository: {e}")),
                }
            }
            (None, _) => json!("no intent recorded"),
            (_, Err(e)) => json!(format!("cannot open the repository: {e}")),
        };
        found.insert(path.to_owned(), what);
    }
    if found.is_empty() {
        Ok(())
    } else {
        Err(Value::Object(found))
    }
}

/// `[{repoPath, restorePointId}]` of the record: the proposal's own, then the others'.
fn points(record: &Value) -> Value {
    let mut out =
        vec![json!({"repoPath": record["repoPath"], "restorePointId": record["restorePointId"]})];
    for other in record["others"].as_array().into_iter().flatten() {
        out.push(json!({"repoPath": other["repoPath"], "restorePointId": other["restorePointId"]}));
    }
    json!(out)
}
