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
use crate::gateway::server::store::{Executing, Reconciled};
use crate::operation::intent::{Expect, Found, Intent, Reached, reached, read_ref};
use crate::operation::{Ctx, Fields};

fn interrupted(point: Option<String>, found: Value) -> Reconciled {
    let mut fields = Fields::new();
    fields.insert("found".into(), found);
    Reconciled::Interrupted(OperationResult {
        failure: None,
        restore_point_id: point,
        fields,
    })
}

/// How the proposal in `executing` ends.
pub async fn decide(
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
    match reached(ctx, &intent).await {
        Ok(Reached::Post) => {
            let mut fields = Fields::new();
            fields.insert("reconciled".into(), json!(true));
            let git = crate::git::Git::new(&repo, cancel);
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
