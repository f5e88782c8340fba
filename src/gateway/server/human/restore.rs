//! Restore points: the list a page shows and a person's restore.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::super::app::{ApiError, App};
use super::super::auth;
use super::super::handshake::{RestoreQuery, query_repo, read_json};
use super::super::store::{RestorePoint, is_restore_point_id};
use crate::gateway::api::ErrorCode;

/// A restore point as the page, the CLI and the read bridge show it.
pub fn view(point: &RestorePoint) -> Value {
    let captured = &point.captured;
    json!({
        "id": point.id,
        "repoPath": point.repo_path,
        "operationType": point.operation_type,
        "previewId": point.preview_id,
        "createdAt": point.created_at.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        "headBefore": captured.get("headBefore").cloned().unwrap_or(Value::Null),
        "headAfter": captured.get("headAfter").cloned().unwrap_or(Value::Null),
        "captured": {
            "refs": captured.get("refs").cloned().unwrap_or(Value::Null),
            "index": captured.get("index").cloned().unwrap_or(Value::Null),
            "worktree": captured.get("worktree").cloned().unwrap_or(Value::Null),
        },
        "skipped": point.skipped,
        "restorable": captured.get("restorable").and_then(Value::as_bool).unwrap_or(true),
    })
}

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

/// `POST /api/restore-points/{id}/restore` `{confirmMoved}`.
pub async fn restore(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Body,
) -> Result<Response, ApiError> {
    let caller = auth::authenticate(&app, &headers)?;
    auth::check_change(&headers, &caller)?;
    let _value = read_json(&headers, body).await?;
    if !is_restore_point_id(&id) {
        return Err(ApiError::not_found());
    }
    let point = app.store.run(move |s| s.restore_point(&id)).await?;
    let _point = point.ok_or_else(ApiError::not_found)?;
    Err(ApiError::new(
        ErrorCode::NotImplemented,
        "restoring is not available in this build",
    ))
}
