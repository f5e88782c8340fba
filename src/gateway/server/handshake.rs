//! The handshake listener: the seed's `/v1/mcp/…` protocol for sidecars. Nothing here can
//! approve — the decision routes live only on the human listener, which a handshake
//! client has no credential for.
//!
//! Every request must name this listener's own loopback authority in `Host` (a rebound
//! DNS name does not), and carry no `Origin` (browsers have no business here); no CORS
//! header is ever sent. Bodies are JSON, at most 2 MiB.

mod bridge;
mod events;
pub(crate) mod preview;
mod proposal;
mod scope;
mod semantic;
pub mod settle;

pub use bridge::{RestoreQuery, query_repo};

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::Value;

use super::app::{ApiError, App, host_is_own, no_store};
use crate::gateway::api::{self, CancelRequest, Cancelled, ErrorCode};

/// The largest body accepted: room for a 1 MiB patch and its JSON escaping.
pub const MAX_BODY: usize = 2 * 1024 * 1024;

/// The handshake listener's routes.
pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route(
            "/v1/mcp/operation/preview/{operation_type}",
            post(proposal::preview),
        )
        .route("/v1/mcp/operation/status/{preview_id}", get(status))
        .route("/v1/mcp/operation/cancel/{preview_id}", post(cancel))
        .route("/v1/mcp/restore-points", get(bridge::restore_points))
        .route("/v1/mcp/restore-points/{id}", get(bridge::restore_point))
        .route("/v1/mcp/safety/timeline", get(bridge::timeline))
        .route("/v1/mcp/safety/events/{event_id}", get(bridge::event))
        .route("/v1/mcp/diff/semantic", post(semantic::diff))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(Arc::clone(&app), guard))
        .with_state(app)
}

/// `Host` must be ours, `Origin` must be absent, and every answer is uncacheable. While a
/// request runs, queued background work starts no git process: a sidecar's call is waiting.
async fn guard(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let _busy = app.answered.foreground().busy();
    if !host_is_own(request.headers(), app.handshake_port) {
        return ApiError::forbidden("Host is not this gateway's loopback address").into_response();
    }
    if request.headers().contains_key(header::ORIGIN) {
        return ApiError::forbidden("requests from web pages are not accepted here")
            .into_response();
    }
    no_store(next.run(request).await)
}

async fn not_found() -> ApiError {
    ApiError::not_found()
}

/// Reads a JSON body: `application/json`, at most [`MAX_BODY`] bytes.
pub async fn read_json(headers: &HeaderMap, body: Body) -> Result<Value, ApiError> {
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !json {
        return Err(ApiError::new(
            ErrorCode::UnsupportedMediaType,
            "send the body as Content-Type: application/json",
        ));
    }
    let bytes = axum::body::to_bytes(body, MAX_BODY).await.map_err(|_| {
        ApiError::new(
            ErrorCode::TooLarge,
            format!("the body is larger than {MAX_BODY} bytes"),
        )
    })?;
    serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::invalid("body", format!("not valid JSON: {e}")))
}

async fn status(State(app): State<Arc<App>>, Path(id): Path<String>) -> Result<Response, ApiError> {
    if !api::is_canonical_preview_id(&id) {
        return Err(ApiError::not_found());
    }
    let before = app.store.run({
        let id = id.clone();
        move |s| s.get(&id, jiff::Timestamp::now())
    });
    let record = before.await?;
    app.answered.read(&id);
    if record.status == api::Status::Expired {
        // The read may have been what expired it.
        app.changed.notify_one();
    }
    Ok(axum::Json(record).into_response())
}

async fn cancel(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let value = read_json(&headers, body).await?;
    if !api::is_canonical_preview_id(&id) {
        return Err(ApiError::not_found());
    }
    let request: CancelRequest =
        serde_json::from_value(value).map_err(|e| ApiError::invalid("agentId", e.to_string()))?;
    let record = app
        .store
        .run(move |s| s.cancel(&id, &request.agent_id, jiff::Timestamp::now()))
        .await;
    app.changed.notify_one();
    let record = record?;
    Ok(axum::Json(Cancelled {
        preview_id: record.preview_id,
        status: record.status,
    })
    .into_response())
}
