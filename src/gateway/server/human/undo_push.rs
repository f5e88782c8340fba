//! `POST /api/proposals/{id}/undo-push`: a person asks to undo a completed push. The remote
//! cannot be restored from here, so this never rolls anything back: it opens a new push
//! proposal — the same remote branch back to the commit it had, leased on the commit the
//! push left there — which is pinned, previewed and approved like any other (HIGH risk,
//! behind the checkbox). Asking twice opens one proposal (its idempotency key is the
//! undone push's id).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use super::super::app::{ApiError, App};
use super::super::auth;
use super::super::handshake::{preview, read_json};
use super::super::store::Inserted;
use super::card;
use crate::gateway::api::{self, Proposal, Status};

/// Who the undo proposal is attributed to on its card.
const UNDO_AGENT: &str = "gitward-undo";

pub async fn undo_push(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Body,
) -> Result<Response, ApiError> {
    let caller = auth::authenticate(&app, &headers)?;
    auth::check_change(&headers, &caller)?;
    read_json(&headers, body).await?;
    if !api::is_canonical_preview_id(&id) {
        return Err(ApiError::not_found());
    }
    let stored = app
        .store
        .run({
            let id = id.clone();
            move |s| s.proposal(&id)
        })
        .await?;
    let done = stored.record.status == Status::Completed;
    let result = stored.record.result.as_ref().filter(|_| done);
    let (Some(result), "push") = (result, stored.proposal.operation_type.as_str()) else {
        return Err(ApiError::invalid(
            "previewId",
            "only a completed push can be undone this way",
        ));
    };
    let fields = crate::operation::push::undo_fields(&stored.proposal.fields, &result.fields)
        .map_err(|e| ApiError::invalid("previewId", e.to_string()))?;
    let old = fields
        .get("revertTo")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let proposal = Proposal {
        preview_id: None,
        agent_id: UNDO_AGENT.to_owned(),
        operation_type: "push".to_owned(),
        repo_path: stored.proposal.repo_path.clone(),
        reason: format!("Undo the push {id}: put the remote branch back at {old}."),
        requested_at: format!("{:.3}", jiff::Timestamp::now()),
        idempotency_key: Some(format!("push:undo-{id}")),
        fields,
    };
    let path = proposal.repo_path.clone().unwrap_or_default();
    let cancel = crate::process::CancellationToken::new();
    let repo = crate::git::repo::open(&app.config, "repoPath", &path, &cancel)
        .await
        .map_err(|e| ApiError::invalid("repoPath", e.to_string()))?;
    let pins = preview::pin(&app, "push", &repo, &proposal.fields).await?;
    let identity =
        crate::operation::identity::read(&repo).map_err(|e| ApiError::internal(e.to_string()))?;
    let new_id = uuid::Uuid::new_v4().to_string();
    let inserted = app
        .store
        .run({
            let (new_id, proposal) = (new_id.clone(), proposal.clone());
            let data = preview::pins_only(&pins);
            move |s| {
                let inserted = s.insert(&new_id, &proposal, jiff::Timestamp::now())?;
                if let Inserted::New(_) = inserted {
                    s.set_card_data(&new_id, &data)?;
                    s.set_identity(&new_id, &identity)?;
                }
                Ok(inserted)
            }
        })
        .await?;
    app.changed.notify_one();
    let (status, record) = match inserted {
        Inserted::New(record) => {
            let fresh = record.preview_id.clone();
            preview::spawn(
                Arc::clone(&app),
                fresh,
                repo,
                "push".into(),
                proposal.fields,
                pins,
            );
            (StatusCode::CREATED, record)
        }
        Inserted::Existing(record) => (StatusCode::OK, record),
    };
    let card = card::load(&app, &record.preview_id).await?;
    Ok((status, axum::Json(card)).into_response())
}
