//! The cards and a person's decisions: list, read, approve, reject, extend.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use jiff::Timestamp;
use serde::Deserialize;
use serde_json::{Value, json};

use super::super::app::{ApiError, App};
use super::super::auth::{self, Caller};
use super::super::handshake::read_json;
use super::card::{self, Card};
use crate::gateway::api::{self, StatusRecord};

/// The most pending cards one answer holds: the newest, with the total beside them. No
/// smaller than the largest `--max-pending`, so the queue is always shown whole.
pub const MAX_PENDING: u32 = 500;

/// History answers hold the newest this many.
const MAX_HISTORY: u32 = 100;

/// The longest one extension may add.
const MAX_EXTEND: u64 = 24 * 60 * 60;

/// Crash point (development builds): the approval is stored, the execution not started.
pub const AFTER_APPROVE: &str = "after-approve";

#[derive(Deserialize)]
pub struct ListQuery {
    view: Option<String>,
}

/// `GET /api/proposals?view=pending|history`.
pub async fn list(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Query(query): Query<ListQuery>,
) -> Result<Response, ApiError> {
    auth::authenticate(&app, &headers)?;
    let history = match query.view.as_deref() {
        None | Some("pending") => false,
        Some("history") => true,
        Some(_) => return Err(ApiError::invalid("view", "expected pending or history")),
    };
    let rows = app
        .store
        .run(move |s| {
            let now = Timestamp::now();
            let (records, total) = if history {
                (s.list_history(MAX_HISTORY)?, None)
            } else {
                let records = s.list_pending(now, MAX_PENDING)?;
                (records, Some(s.count_pending(now)?))
            };
            let mut rows = Vec::with_capacity(records.len());
            for StatusRecord { preview_id, .. } in records {
                let stored = s.proposal(&preview_id)?;
                let data = s.card_data(&preview_id)?;
                let others = s.other_agents(&preview_id)?;
                rows.push((stored, data, others));
            }
            Ok((rows, total))
        })
        .await?;
    let (rows, total) = rows;
    let cards: Vec<Card> = rows
        .into_iter()
        .map(|(stored, data, others)| {
            let code = app.auth.confirmation_code(&stored.record.preview_id);
            let mut card = Card::new(stored, data, code);
            card.other_agents = others;
            card
        })
        .collect();
    // Transitions the audit ledger has not taken yet: the page says so above the list.
    let gap = app.events.audit_gap.current();
    let mut body = json!({"cards": cards, "auditGap": gap});
    if let Some(total) = total {
        // Every pending proposal, also those beyond the cards listed.
        body["total"] = json!(total);
    }
    Ok(axum::Json(body).into_response())
}

/// `GET /api/proposals/{id}`.
pub async fn one(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    auth::authenticate(&app, &headers)?;
    Ok(axum::Json(card::load(&app, &id).await?).into_response())
}

/// Authenticates a decision and reads its body.
async fn decision(
    app: &App,
    headers: &HeaderMap,
    id: &str,
    body: Body,
) -> Result<(Caller, Value), ApiError> {
    let caller = auth::authenticate(app, headers)?;
    auth::check_change(headers, &caller)?;
    let value = read_json(headers, body).await?;
    if !api::is_canonical_preview_id(id) {
        return Err(ApiError::not_found());
    }
    Ok((caller, value))
}

/// `POST /api/proposals/{id}/approve` `{confirmDestructive, confirmationCode}` (the code
/// on a terminal only).
pub async fn approve(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Body,
) -> Result<Response, ApiError> {
    let (caller, value) = decision(&app, &headers, &id, body).await?;
    auth::check_code(&app.auth, &caller, &id, &value)?;
    let confirmed = value.get("confirmDestructive").and_then(Value::as_bool) == Some(true);
    let current = card::load(&app, &id).await?;
    // A person approves what the card showed them; the preview is written once, so a
    // card that has it now still has it when the approval lands.
    if current.preview_pending {
        return Err(ApiError::other(
            StatusCode::CONFLICT,
            "previewNotReady",
            "git is still computing this proposal's preview: approve once the card shows it",
        ));
    }
    if current.needs_confirmation && !confirmed {
        return Err(ApiError::other(
            StatusCode::UNPROCESSABLE_ENTITY,
            "confirmationRequired",
            "this operation destroys work: confirm it explicitly (confirmDestructive)",
        ));
    }
    let channel = caller.channel();
    let approved = app
        .store
        .run({
            let id = id.clone();
            move |s| s.approve(&id, channel, Timestamp::now())
        })
        .await;
    app.changed.notify_one();
    approved?;
    crate::operation::crash::point(AFTER_APPROVE);
    super::start_execution(&app, &id);
    Ok(axum::Json(card::load(&app, &id).await?).into_response())
}

/// `POST /api/proposals/{id}/reject` `{reason}`.
pub async fn reject(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Body,
) -> Result<Response, ApiError> {
    let (caller, value) = decision(&app, &headers, &id, body).await?;
    let reason = match value.get("reason") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) if text.len() <= api::MAX_REASON_BYTES => {
            Some(text.trim().to_owned()).filter(|t| !t.is_empty())
        }
        Some(_) => {
            return Err(ApiError::invalid(
                "reason",
                format!("expected text of at most {} bytes", api::MAX_REASON_BYTES),
            ));
        }
    };
    let channel = caller.channel();
    let rejected = app
        .store
        .run({
            let id = id.clone();
            move |s| s.reject(&id, channel, reason.as_deref(), Timestamp::now())
        })
        .await;
    app.changed.notify_one();
    rejected?;
    Ok(axum::Json(card::load(&app, &id).await?).into_response())
}

/// `POST /api/proposals/{id}/extend` `{seconds}`.
pub async fn extend(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Body,
) -> Result<Response, ApiError> {
    let (_, value) = decision(&app, &headers, &id, body).await?;
    let seconds = value
        .get("seconds")
        .and_then(Value::as_u64)
        .filter(|s| (1..=MAX_EXTEND).contains(s))
        .ok_or_else(|| {
            ApiError::invalid(
                "seconds",
                format!("expected an integer from 1 to {MAX_EXTEND}"),
            )
        })?;
    let extended = app
        .store
        .run({
            let id = id.clone();
            move |s| s.extend(&id, Duration::from_secs(seconds), Timestamp::now())
        })
        .await;
    app.changed.notify_one();
    extended?;
    // An extension is not a transition; the page still wants the new deadline.
    let card = crate::gateway::server::events::publish(&app, &id).await?;
    Ok(axum::Json(card).into_response())
}
