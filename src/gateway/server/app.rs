//! What every request of both listeners shares: the store, the policy, the allowed roots,
//! the live event stream and the human side's credentials — and the answers they all give
//! (`{error:{code,message,details}}`, the `Host` check).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::Notify;

use super::auth::Auth;
use super::events::Events;
use super::executor::Executor;
use super::handshake::settle::Answered;
use super::policy::Policy;
use super::store::{Settings, Store, StoreError};
use crate::audit::writer::AuditWriter;
use crate::config::Config;
use crate::gateway::api::{ErrorBody, ErrorCode};

/// The gateway's shared state; one per process, behind an `Arc`.
pub struct App {
    pub store: Arc<StorePool>,
    pub policy: Policy,
    /// Repositories a proposal may name; the same rules as `gitward serve`'s.
    pub config: Arc<Config>,
    pub events: Events,
    pub auth: Auth,
    /// The ledger's writer, when audit is on.
    pub audit: Option<Arc<AuditWriter>>,
    /// Wakes the follower that audits and streams new transitions.
    pub changed: Arc<Notify>,
    /// The human listener's port, for its `Host` and `Origin` checks.
    pub ui_port: u16,
    /// The handshake listener's port, for its `Host` check.
    pub handshake_port: u16,
    /// Carries out approved proposals and a person's restores.
    pub executor: Arc<Executor>,
    /// New proposals whose background work waits for the proposing call's status read.
    pub answered: Answered,
}

impl App {
    /// The human listener's own origin, the only one its POSTs may come from.
    pub fn ui_origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.ui_port)
    }
}

/// Connections to the store, reused across requests; each call runs on a blocking thread
/// because every transition waits for an `fsync`.
pub struct StorePool {
    path: PathBuf,
    settings: Settings,
    idle: Mutex<Vec<Store>>,
}

/// How many idle connections are kept; more may be open while requests run.
const MAX_IDLE: usize = 8;

impl StorePool {
    /// Opens the first connection now, so a store that cannot be opened stops the start.
    pub fn open(path: PathBuf, settings: Settings) -> Result<StorePool, StoreError> {
        let first = Store::open(&path, settings.clone())?;
        Ok(StorePool {
            path,
            settings,
            idle: Mutex::new(vec![first]),
        })
    }

    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    fn take(&self) -> Result<Store, StoreError> {
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        match idle {
            Some(store) => Ok(store),
            None => Store::open(&self.path, self.settings.clone()),
        }
    }

    fn give_back(&self, store: Store) {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < MAX_IDLE && store.is_sound() {
            idle.push(store);
        }
    }

    /// Runs `work` with a connection on a blocking thread.
    pub async fn run<T, F>(self: &Arc<Self>, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Store) -> Result<T, StoreError> + Send + 'static,
    {
        let pool = Arc::clone(self);
        let joined = tokio::task::spawn_blocking(move || {
            let mut store = pool.take()?;
            let result = work(&mut store);
            pool.give_back(store);
            result
        })
        .await;
        joined.map_err(|e| StoreError::Corrupt(format!("store task ended: {e}")))?
    }
}

/// A refusal on either listener: an HTTP status and `{error:{code,message,details}}`.
#[derive(Debug, Clone)]
pub struct ApiError(Box<Refusal>);

#[derive(Debug, Clone)]
struct Refusal {
    status: StatusCode,
    code: String,
    message: String,
    details: Value,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ApiError {
        let status =
            StatusCode::from_u16(code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        ApiError::other(status, code.as_str(), message)
    }

    pub fn status(&self) -> StatusCode {
        self.0.status
    }

    /// A refusal with a code this gateway's human side adds (`forbidden`, `unauthorized`, …).
    pub fn other(status: StatusCode, code: &str, message: impl Into<String>) -> ApiError {
        ApiError(Box::new(Refusal {
            status,
            code: code.to_owned(),
            message: message.into(),
            details: json!({}),
        }))
    }

    pub fn with_details(mut self, details: Value) -> ApiError {
        self.0.details = details;
        self
    }

    pub fn forbidden(message: impl Into<String>) -> ApiError {
        ApiError::other(StatusCode::FORBIDDEN, "forbidden", message)
    }

    pub fn not_found() -> ApiError {
        ApiError::new(ErrorCode::NotFound, "no such route or proposal")
    }

    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::other(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }

    /// A 422 naming `field`.
    pub fn invalid(field: &str, reason: impl Into<String>) -> ApiError {
        let reason = reason.into();
        ApiError::new(ErrorCode::Invalid, format!("invalid `{field}`: {reason}"))
            .with_details(json!({"field": field, "reason": reason}))
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        let message = e.to_string();
        match e {
            StoreError::NotFound { .. } => ApiError::new(ErrorCode::NotFound, message),
            StoreError::Conflict { current_state } => ApiError::new(ErrorCode::Conflict, message)
                .with_details(json!({"status": current_state.as_str()})),
            StoreError::NotOwner => ApiError::new(ErrorCode::NotOwner, message),
            StoreError::QuotaExceeded { limit, .. } => {
                ApiError::new(ErrorCode::QuotaExceeded, message)
                    .with_details(json!({"limit": limit}))
            }
            StoreError::QueueFull { limit } => ApiError::new(ErrorCode::QuotaExceeded, message)
                .with_details(json!({"limit": limit, "scope": "allAgents"})),
            StoreError::IdempotencyMismatch => {
                ApiError::new(ErrorCode::IdempotencyMismatch, message)
            }
            StoreError::Invalid { field, reason } => ApiError::invalid(field, reason),
            _ => ApiError::internal(message),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let Refusal {
            status,
            code,
            message,
            details,
        } = *self.0;
        let body = ErrorBody {
            error: crate::gateway::api::ErrorDetail {
                code,
                message,
                details,
            },
        };
        (status, axum::Json(body)).into_response()
    }
}

/// True when the request's `Host` is this listener's own loopback authority: anything else
/// is a browser that was pointed here by a rebound DNS name.
pub fn host_is_own(headers: &HeaderMap, port: u16) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
        return false;
    };
    ["127.0.0.1", "localhost", "[::1]"]
        .iter()
        .any(|name| host.eq_ignore_ascii_case(&format!("{name}:{port}")))
}

/// `Cache-Control: no-store` for an API answer.
pub fn no_store(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
