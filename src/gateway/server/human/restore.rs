//! Restore points: the list a page shows and a person's restore.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::super::app::{ApiError, App};
use super::super::audit;
use super::super::auth;
use super::super::handshake::{RestoreQuery, query_repo, read_json};
use super::super::restore::{RestoreError, view};
use super::super::store::is_restore_point_id;
use crate::audit::writer::Durability;
use crate::gateway::api::ErrorCode;

/// `GET /api/restore-points?repoPath=&limit=`.
pub async fn list(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Query(query): Query<RestoreQuery>,
) -> Result<Response, ApiError> {
    auth::authenticate(&app, &headers)?;
    let repo = query_repo(&app, query.repo_path.as_deref()).await?;
    let limit = query.limit.unwrap_or(50).clamp(1, 200);
    let points = app
        .store
        .run(move |s| s.list_restore_points(&repo, limit))
        .await?;
    let views: Vec<Value> = points.iter().map(view).collect();
    Ok(axum::Json(json!({"restorePoints": views})).into_response())
}

/// `POST /api/restore-points/{id}/restore` `{confirmMoved}`: refused with 409 and what
/// moved when the repository moved on since and the person has not confirmed.
pub async fn restore(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Body,
) -> Result<Response, ApiError> {
    let caller = auth::authenticate(&app, &headers)?;
    auth::check_change(&headers, &caller)?;
    let value = read_json(&headers, body).await?;
    if !is_restore_point_id(&id) {
        return Err(ApiError::not_found());
    }
    let confirm = value.get("confirmMoved").and_then(Value::as_bool) == Some(true);
    let point = app
        .store
        .run({
            let id = id.clone();
            move |s| s.restore_point(&id)
        })
        .await?
        .ok_or_else(ApiError::not_found)?;
    let cancel = crate::process::CancellationToken::new();
    let restored = app.executor.restore(&id, confirm, &cancel).await;
    let channel = caller.channel();
    let outcome = match &restored {
        Ok(r) => (Some(r.restore_point_id.clone()), Ok(())),
        Err(e) => (None, Err(e.to_string())),
    };
    if !matches!(
        restored,
        Err(RestoreError::Moved { .. } | RestoreError::NotFound(_))
    ) {
        if let Some(writer) = &app.audit {
            let entry = audit::restore_entry(
                &point.repo_path,
                &id,
                outcome.0.as_deref(),
                channel,
                outcome.1.as_ref().map(|_| ()).map_err(String::as_str),
            );
            let _ = writer
                .submit_waiting(Box::new(move || entry), Durability::Written)
                .await;
        }
    }
    match restored {
        Ok(restored) => Ok(axum::Json(restored.to_json()).into_response()),
        Err(RestoreError::NotFound(_)) => Err(ApiError::not_found()),
        Err(RestoreError::Moved { moved }) => Err(ApiError::new(
            ErrorCode::Conflict,
            "the repository moved on since this restore point; confirm to restore anyway",
        )
        .with_details(json!({"moved": moved}))),
        Err(e) => Err(ApiError::internal(e.to_string())),
    }
}
