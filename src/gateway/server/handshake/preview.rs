//! The operation's own side of a proposal: its fields' validation and its pins before the
//! card opens (a proposal whose preconditions cannot be read is refused, not queued), and
//! the heavier preview computed after the `202` and streamed into the card when ready.

use std::sync::Arc;

use serde_json::{Value, json};

use super::super::app::{ApiError, App};
use super::super::store::CardData;
use crate::gateway::api::{ErrorCode, Status};
use crate::git::Repo;
use crate::operation::{self, Ctx, Fields, OpError, Operation, Pins};
use crate::process::{CancellationToken, priority};

/// The operation type `kind`, if this gateway carries it out.
pub fn operation_of(kind: &str) -> Result<&'static dyn Operation, ApiError> {
    operation::find(kind).ok_or_else(|| {
        ApiError::invalid(
            "operationType",
            format!("this gateway does not carry out {kind} operations yet"),
        )
    })
}

/// Checks the operation's own fields. An agent may send only the fields its schema gives
/// agents: a field the gateway sets itself (a push's `revertTo`, which makes the card read
/// "Undoes a push") is refused by name.
pub fn validate(kind: &str, fields: &Fields) -> Result<(), ApiError> {
    let op = operation_of(kind)?;
    let schema = op.fields_schema();
    let offered = schema["properties"].as_object();
    if let Some(name) = fields
        .keys()
        .find(|k| !offered.is_some_and(|p| p.contains_key(k.as_str())))
    {
        return Err(ApiError::invalid(
            name,
            format!("not a field of a {kind} proposal"),
        ));
    }
    op.validate(fields)
        .map_err(|e| ApiError::invalid(e.field, e.reason))
}

/// A refusal for an operation error at proposal time.
pub(super) fn refusal(e: OpError) -> ApiError {
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

/// One preview at a time, oldest first (the semaphore is fair): a burst of proposals
/// queues its cards rather than running their git processes side by side, where they
/// would crowd out the next proposal's own reads (each preview may run several).
static PREVIEWS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(1);

/// Computes the card's preview of the new proposal `id` in the background — first the
/// pins read only now ([`Operation::late_pins`]), then the preview against them — stores
/// both and streams the card; a preview that fails shows its error on the card instead.
/// Its git processes run at a higher niceness, and none starts while a handshake request
/// is in flight.
pub fn spawn(app: Arc<App>, id: String, repo: Arc<Repo>, kind: String, fields: Fields, pins: Pins) {
    let foreground = app.answered.foreground().clone();
    let work = compute(app, id, repo, kind, fields, pins);
    tokio::spawn(priority::background(Some(foreground), work));
}

/// Whether `id` still waits for a decision: a card decided (rejected, cancelled, expired)
/// while its preview was queued is never approved, so its preview is not computed.
async fn still_pending(app: &App, id: &str) -> bool {
    let id = id.to_owned();
    let record = app
        .store
        .run(move |s| s.get(&id, jiff::Timestamp::now()))
        .await;
    match record {
        Ok(r) if r.status == Status::Pending => true,
        Ok(r) => {
            if r.status == Status::Expired {
                // The read may have been what expired it.
                app.changed.notify_one();
            }
            false
        }
        Err(_) => false,
    }
}

async fn compute(
    app: Arc<App>,
    id: String,
    repo: Arc<Repo>,
    kind: String,
    fields: Fields,
    pins: Pins,
) {
    let Ok(op) = operation_of(&kind) else {
        return;
    };
    let _turn = PREVIEWS.acquire().await;
    hold().await;
    if !still_pending(&app, &id).await {
        return;
    }
    let cancel = CancellationToken::new();
    let ctx = Ctx {
        repo: &repo,
        config: &app.config,
        cancel: &cancel,
    };
    let (pins, preview) = match operation::with_late_pins(op, ctx, &fields, pins.clone()).await {
        Ok(pins) => {
            let mut preview = op.preview(ctx, &fields, &pins).await;
            if let Ok(card) = &mut preview {
                operation::programs::annotate(ctx, card).await;
            }
            (pins, preview)
        }
        Err(e) => (pins, Err(e)),
    };
    let preview = preview.unwrap_or_else(|e| json!({"error": e.to_string()}));
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
}

/// Development builds only: while the file `GITWARD_DEBUG_PREVIEW_HOLD` names exists, a
/// preview waits before it starts, so tests can act on a card whose preview is not there.
#[cfg(debug_assertions)]
async fn hold() {
    let Some(path) = &crate::config::debug_knobs().preview_hold else {
        return;
    };
    while path.exists() {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[cfg(not(debug_assertions))]
async fn hold() {}

/// At start: the pending proposals whose preview a stopped gateway never finished (it
/// stopped between storing the proposal and storing its preview) get it computed now, so
/// their cards can be approved.
pub async fn resume_at_start(app: &Arc<App>) {
    let found = app
        .store
        .run(|s| {
            let mut out = Vec::new();
            for record in s.list_pending(jiff::Timestamp::now(), u32::MAX)? {
                let data = s.card_data(&record.preview_id)?;
                if data.preview.is_none() {
                    let stored = s.proposal(&record.preview_id)?;
                    out.push((record.preview_id, stored.proposal, data.pins));
                }
            }
            Ok(out)
        })
        .await;
    let found = match found {
        Ok(found) => found,
        Err(e) => {
            eprintln!("gitward gateway: listing the proposals without a preview: {e}");
            return;
        }
    };
    for (id, proposal, pins) in found {
        resume_one(app, id, proposal, pins).await;
    }
}

async fn resume_one(
    app: &Arc<App>,
    id: String,
    proposal: crate::gateway::api::Proposal,
    pins: Option<Value>,
) {
    let kind = proposal.operation_type.clone();
    let cancel = CancellationToken::new();
    let path = proposal.repo_path.clone().unwrap_or_default();
    let repo = match crate::git::repo::open(&app.config, "repoPath", &path, &cancel).await {
        Ok(repo) => repo,
        Err(e) => {
            store_failure(app, &id, pins, &e.to_string()).await;
            return;
        }
    };
    let pins = match pins {
        Some(pins) => Pins(pins),
        // Pins always come with the proposal; a row without them is refused at approval
        // by revalidation, and its card says why.
        None => {
            store_failure(app, &id, None, "the proposal's pins were never stored").await;
            return;
        }
    };
    spawn(Arc::clone(app), id, repo, kind, proposal.fields, pins);
}

async fn store_failure(app: &Arc<App>, id: &str, pins: Option<Value>, why: &str) {
    let data = CardData {
        pins,
        preview: Some(json!({"error": why})),
    };
    let stored = app
        .store
        .run({
            let id = id.to_owned();
            move |s| s.set_card_data(&id, &data)
        })
        .await;
    if stored.is_ok() {
        let _ = super::super::events::publish(app, id).await;
    }
}

/// The pins as stored before the preview exists.
pub fn pins_only(pins: &Pins) -> CardData {
    CardData {
        pins: Some(pins.0.clone()),
        preview: None,
    }
}
