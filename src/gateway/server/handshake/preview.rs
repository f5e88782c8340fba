//! The operation's own side of a proposal: its fields' validation and its pins before the
//! card opens (a proposal whose preconditions cannot be read is refused, not queued), and
//! the heavier preview computed after the `202` and streamed into the card when ready.

use std::sync::Arc;

use serde_json::json;

use super::super::app::{ApiError, App};
use super::super::store::CardData;
use crate::gateway::api::ErrorCode;
use crate::git::Repo;
use crate::operation::{self, Ctx, Fields, OpError, Operation, Pins};
use crate::process::CancellationToken;

/// The operation type `kind`, if this gateway carries it out.
pub fn operation_of(kind: &str) -> Result<&'static dyn Operation, ApiError> {
    operation::find(kind).ok_or_else(|| {
        ApiError::invalid(
            "operationType",
            format!("this gateway does not carry out {kind} operations yet"),
        )
    })
}

/// Checks the operation's own fields.
pub fn validate(kind: &str, fields: &Fields) -> Result<(), ApiError> {
    operation_of(kind)?
        .validate(fields)
        .map_err(|e| ApiError::invalid(e.field, e.reason))
}

/// A refusal for an operation error at proposal time.
fn refusal(e: OpError) -> ApiError {
    match e {
        OpError::Invalid { field, reason } => ApiError::invalid(&field, reason),
        OpError::Stale { moved } => ApiError::new(ErrorCode::Conflict, "the repository moved")
            .with_details(json!({"moved": moved})),
        other => ApiError::invalid("repoPath", other.to_string()),
    }
}

/// Reads the preconditions the proposal will be executed against.
pub async fn pin(app: &App, kind: &str, repo: &Repo, fields: &Fields) -> Result<Pins, ApiError> {
    let cancel = CancellationToken::new();
    let ctx = Ctx {
        repo,
        config: &app.config,
        cancel: &cancel,
    };
    operation_of(kind)?.pin(ctx, fields).await.map_err(refusal)
}

/// Computes the card's preview of the new proposal `id` in the background, stores it and
/// streams the card; a preview that fails shows its error on the card instead.
pub fn spawn(app: Arc<App>, id: String, repo: Arc<Repo>, kind: String, fields: Fields, pins: Pins) {
    tokio::spawn(async move {
        let Ok(op) = operation_of(&kind) else {
            return;
        };
        let cancel = CancellationToken::new();
        let ctx = Ctx {
            repo: &repo,
            config: &app.config,
            cancel: &cancel,
        };
        let preview = match op.preview(ctx, &fields, &pins).await {
            Ok(preview) => preview,
            Err(e) => json!({"error": e.to_string()}),
        };
        let data = CardData {
            pins: Some(pins.0),
            preview: Some(preview),
        };
        let stored = app
            .store
            .run({
                let id = id.clone();
                move |s| s.set_card_data(&id, &data)
            })
            .await;
        if let Err(e) = stored {
            eprintln!("gitward gateway: storing the preview of {id}: {e}");
            return;
        }
        let _ = super::super::events::publish(&app, &id).await;
    });
}

/// The pins as stored before the preview exists.
pub fn pins_only(pins: &Pins) -> CardData {
    CardData {
        pins: Some(pins.0.clone()),
        preview: None,
    }
}
