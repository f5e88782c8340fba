//! Starting an approved proposal's execution off the request: the approval answers at
//! once, the executor claims the proposal and runs it in its own task.

use std::sync::Arc;

use super::super::app::App;

/// Starts executing the approved proposal `id`.
pub fn start(app: &Arc<App>, _id: &str) {
    app.changed.notify_one();
}

/// At start: proposals found `executing` are reconciled (never re-run), `approved` ones
/// resume through the normal claim.
pub async fn at_start(app: &Arc<App>) {
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
