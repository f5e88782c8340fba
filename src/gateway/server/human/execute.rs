//! Running approved proposals off the request: the approval answers at once, the
//! executor claims the proposal and carries it out in its own task; at start, what a
//! crash left `executing` is reconciled (never re-run) and `approved` ones resume.

use std::sync::Arc;

use super::super::app::App;
use super::super::executor::ExecError;
use crate::process::CancellationToken;

/// Starts executing the approved proposal `id`.
pub fn start(app: &Arc<App>, id: &str) {
    let (app, id) = (Arc::clone(app), id.to_owned());
    tokio::spawn(async move {
        let cancel = CancellationToken::new();
        let ran = app.executor.run(&id, &cancel).await;
        app.changed.notify_one();
        match ran {
            // Another runner claimed it first: that one reports. A stopping gateway
            // leaves it approved for its next start.
            Ok(_) | Err(ExecError::NotApproved(_) | ExecError::Stopping) => {}
            Err(e) => eprintln!("gitward gateway: executing {id}: {e}"),
        }
    });
}

/// At start: proposals found `executing` are reconciled against their intent (never run
/// again), `approved` ones resume through the normal claim.
pub async fn at_start(app: &Arc<App>) {
    let cancel = CancellationToken::new();
    if let Err(e) = app.executor.reconcile_at_start(&cancel).await {
        eprintln!("gitward gateway: reconciling interrupted executions: {e}");
    }
    app.changed.notify_one();
    let approved = app
        .store
        .run(|s| s.list_in(crate::gateway::api::Status::Approved))
        .await;
    match approved {
        Ok(records) => {
            for record in records {
                start(app, &record.preview_id);
            }
        }
        Err(e) => eprintln!("gitward gateway: listing approved proposals: {e}"),
    }
}
