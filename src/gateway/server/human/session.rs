//! Logging in: the one-time token from the login link becomes a session token (the page
//! keeps it in its own origin's storage and sends it as a header) and a CSRF token;
//! `GET /api/session` tells the page whether it is logged in.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::super::app::{ApiError, App};
use super::super::auth::{self, Caller};
use super::super::handshake::read_json;

/// `POST /api/login` `{token}`: only from the page's own origin, and only once.
pub async fn login(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok());
    if !origin.is_some_and(|o| o.eq_ignore_ascii_case(&format!("http://{host}"))) {
        return Err(ApiError::forbidden(
            "logging in must come from the approval page's own origin",
        ));
    }
    let value = read_json(&headers, body).await?;
    let token = value
        .get("token")
        .and_then(|t| t.as_str())
        .ok_or_else(|| ApiError::invalid("token", "required"))?;
    let exchanged = app
        .auth
        .exchange(token)
        .map_err(|e| ApiError::internal(format!("no randomness: {e}")))?;
    let Some((session, csrf)) = exchanged else {
        return Err(ApiError::other(
            axum::http::StatusCode::UNAUTHORIZED,
            "unauthorized",
            "this login link was already used or is not this gateway's; restart the gateway \
             for a new one",
        ));
    };
    Ok(axum::Json(json!({"session": session, "csrf": csrf})).into_response())
}

/// `GET /api/session`: `{csrf}` for a logged-in page, 401 otherwise.
pub async fn session(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let csrf = match auth::authenticate(&app, &headers)? {
        Caller::Web { csrf } => Some(csrf),
        Caller::Tty => None,
    };
    Ok(axum::Json(json!({"csrf": csrf})).into_response())
}
