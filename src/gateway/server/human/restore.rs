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
use super::super::restore::{RestoreError, moved_since, view};
use super::super::store::RestorePoint;
use super::super::store::is_restore_point_id;
use super::moved::changed_since;
use crate::audit::writer::Durability;
use crate::gateway::api::ErrorCode;
use crate::operation::Moved;

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

/// `GET /api/restore-points/{id}`: one restore point, with the confirmation code a person
/// types to restore it on a terminal.
pub async fn one(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    auth::authenticate(&app, &headers)?;
    if !is_restore_point_id(&id) {
        return Err(ApiError::not_found());
    }
    let point = app
        .store
        .run({
            let id = id.clone();
            move |s| s.restore_point(&id)
        })
        .await?
        .ok_or_else(ApiError::not_found)?;
    let mut body = view(&point);
    body["confirmationCode"] = json!(app.auth.confirmation_code(&id));
    Ok(axum::Json(body).into_response())
}

/// `POST /api/restore-points/{id}/restore` `{confirmMoved, confirmationCode}` (the code on
/// a terminal only): refused with 409 and what moved when the repository moved on since
/// and the person has not confirmed.
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
    auth::check_code(&app.auth, &caller, &id, &value)?;
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
    if confirm && let Some(shown) = value.get("moved") {
        confirmed_what_is(&app, &point, shown, &cancel).await?;
    }
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
        Err(RestoreError::Moved { moved }) => Err(moved_on(&moved)),
        Ok(restored) => {
            let mut body = restored.to_json();
            body["changedSince"] = json!(changed_since(&restored.moved));
            Ok(axum::Json(body).into_response())
        }
        Err(RestoreError::NotFound(_)) => Err(ApiError::not_found()),
        Err(RestoreError::Uncaptured { files }) => {
            let message = outcome.1.err().unwrap_or_default();
            let details = json!({"uncaptured": files});
            Err(ApiError::new(ErrorCode::Conflict, message).with_details(details))
        }
        Err(e) => Err(ApiError::internal(e.to_string())),
    }
}

/// The 409 for a repository that moved on: what moved, and the same as a person reads it.
fn moved_on(moved: &[Moved]) -> ApiError {
    ApiError::new(
        ErrorCode::Conflict,
        "the repository moved on since this restore point; confirm to restore anyway",
    )
    .with_details(json!({"moved": moved, "changedSince": changed_since(moved)}))
}

/// A confirmation names the changes the person was shown (`moved`); when the repository
/// has moved on again since, the restore is refused with the new list, so a confirmation
/// never covers changes nobody saw.
async fn confirmed_what_is(
    app: &App,
    point: &RestorePoint,
    shown: &Value,
    cancel: &crate::process::CancellationToken,
) -> Result<(), ApiError> {
    let shown: Vec<Moved> = serde_json::from_value(shown.clone())
        .map_err(|e| ApiError::invalid("moved", e.to_string()))?;
    let repo = crate::git::repo::open(&app.config, "repoPath", &point.repo_path, cancel)
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let git = crate::git::Git::new(&repo, cancel);
    let now = moved_since(&git, &repo, point)
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?;
    if now == shown {
        Ok(())
    } else {
        Err(moved_on(&now))
    }
}
