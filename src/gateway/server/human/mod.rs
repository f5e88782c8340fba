//! The human listener: the approval page, its JSON API and the live event stream, and the
//! same API for `gitward pending/approve/reject/restore` with the CLI's bearer token.
//!
//! The page is the authority, so every request must name the listener's own authority in
//! `Host` (DNS rebinding), every response carries the page's security headers, and no
//! CORS header is ever sent. Who may call the API, and how a state change must be
//! presented, is [`super::auth`]'s.

mod assets;
pub mod card;
mod execute;
pub mod moved;
pub mod others;
mod proposals;
pub mod restore;
mod session;
mod stream;
mod undo_push;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use super::app::{ApiError, App, host_is_own};

pub use execute::{at_start as resume_at_start, start as start_execution};

/// The human listener's routes.
pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(assets::index))
        .route("/login", get(assets::index))
        .route("/assets/{name}", get(assets::asset))
        .route("/api/login", post(session::login))
        .route("/api/session", get(session::session))
        .route("/api/proposals", get(proposals::list))
        .route("/api/proposals/{id}", get(proposals::one))
        .route("/api/proposals/{id}/approve", post(proposals::approve))
        .route("/api/proposals/{id}/reject", post(proposals::reject))
        .route("/api/proposals/{id}/extend", post(proposals::extend))
        .route("/api/proposals/{id}/undo-push", post(undo_push::undo_push))
        .route("/api/restore-points", get(restore::list))
        .route("/api/restore-points/{id}", get(restore::one))
        .route("/api/restore-points/{id}/restore", post(restore::restore))
        .route("/api/events", get(stream::events))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(Arc::clone(&app), guard))
        .with_state(app)
}

async fn not_found() -> ApiError {
    ApiError::not_found()
}

/// `Host` must be ours; every answer gets the page's security headers.
async fn guard(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let mut response = if host_is_own(request.headers(), app.ui_port) {
        next.run(request).await
    } else {
        ApiError::forbidden("Host is not this gateway's loopback address").into_response()
    };
    let headers = response.headers_mut();
    for (name, value) in [
        (
            header::CONTENT_SECURITY_POLICY,
            "default-src 'self'; frame-ancestors 'none'",
        ),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::CACHE_CONTROL, "no-store"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}
