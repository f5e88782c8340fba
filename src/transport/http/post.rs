//! `POST`: one JSON-RPC message in, its answer out (JSON, or one SSE event when the client
//! accepts only event streams; an event stream when the request sends notifications
//! first, see [`super::events`]). Notifications and responses get `202 Accepted`.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use super::events::{self, Outcome};
use super::sessions::Session;
use super::{App, SESSION_HEADER, VERSION_HEADER, refuse, refuse_id, session_id};
use crate::error::code;
use crate::transport::dispatch::Handler;
use crate::transport::framing::MAX_FRAME;
use crate::transport::jsonrpc::{self, Incoming};
use crate::transport::outgoing::Outgoing;
use crate::transport::protocol::{Version, meta};
use crate::transport::reply::Reply;

pub async fn plain(State(app): State<Arc<App>>, headers: HeaderMap, body: Body) -> Response {
    handle(app, None, headers, body).await
}

pub async fn bound(
    State(app): State<Arc<App>>,
    Path(token): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    handle(app, Some(token), headers, body).await
}

async fn handle(app: Arc<App>, token: Option<String>, headers: HeaderMap, body: Body) -> Response {
    let scope = match app.scope(token.as_deref()) {
        Ok(scope) => scope,
        Err(refused) => return *refused,
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_FRAME as u64) {
        return too_large();
    }
    let bytes = match axum::body::to_bytes(body, MAX_FRAME).await {
        Ok(bytes) => bytes,
        Err(_) => return too_large(),
    };
    // Every refusal from here on answers the request's id when it can be read, as stdio
    // would: a client matches the error to the call it made.
    let readable = jsonrpc::readable_id(&bytes);
    if let Some(refused) = check_headers(&headers, &readable) {
        return refused;
    }
    let sse = wants_sse(&headers);
    let (id, method, params) = match jsonrpc::classify(&bytes) {
        Incoming::Invalid(reply) => {
            return answer(StatusCode::BAD_REQUEST, (*reply).into(), sse, None);
        }
        Incoming::Notification { method, params } => {
            if let Some(id) = session_id(&headers) {
                match app.sessions.get(id, &scope) {
                    Some(session) => session.handler.notify(&method, &params),
                    None => return unknown_session(&readable),
                }
            }
            return StatusCode::ACCEPTED.into_response();
        }
        Incoming::Request { id, method, params } => (id, method, params),
    };
    if method == "initialize" {
        let Some((session_id, reply)) = app.sessions.open(&scope, &id, &params) else {
            return refuse_id(
                &id,
                StatusCode::SERVICE_UNAVAILABLE,
                "too many open sessions; end one (DELETE) and retry",
            );
        };
        return answer(StatusCode::OK, reply.into(), sse, Some(&session_id));
    }
    if let Some(refused) = version_disagrees(&headers, &id, &params) {
        return refused;
    }
    let session: Option<Arc<Session>> = match session_id(&headers) {
        Some(sid) => match app.sessions.get(sid, &scope) {
            Some(session) => Some(session),
            // A 2026-07-28 request needs no session: one it names that ended (a restart,
            // an idle timeout) is no reason to refuse what stands on its own.
            None if is_modern(&params) => None,
            None => return unknown_session(&id),
        },
        None if is_modern(&params) => None,
        None => {
            let reply = jsonrpc::error(
                id,
                code::INVALID_PARAMS,
                "Invalid params",
                Some(
                    json!({ "details": "an Mcp-Session-Id header is required: call initialize first, or send the 2026-07-28 _meta envelope on every request" }),
                ),
            );
            return answer(StatusCode::BAD_REQUEST, reply.into(), sse, None);
        }
    };
    let handler: Arc<Handler> = match &session {
        Some(session) => Arc::clone(&session.handler),
        None => Arc::new(app.sessions.stateless(&scope)),
    };
    if let Some(reply) = handler.inline(&id, &method, &params) {
        return answer(StatusCode::OK, reply.into(), sse, None);
    }
    // Notifications need an event stream: a client that takes JSON only is sent none.
    let (queue, notes) = mpsc::unbounded_channel();
    let queue = Accept::of(&headers).sse.then_some(queue);
    let size = bytes.len();
    let running = Box::pin(run(app, handler, id, method, params, size, queue));
    match events::answer_or_stream(running, notes).await {
        Outcome::Plain(Some(reply)) => answer(StatusCode::OK, reply, sse, None),
        // Cancelled by the client, who no longer waits for an answer.
        Outcome::Plain(None) => StatusCode::ACCEPTED.into_response(),
        Outcome::Streamed(response) => response,
    }
}

/// Runs a request inside the server's bound, cancelling it if the client hangs up.
async fn run(
    app: Arc<App>,
    handler: Arc<Handler>,
    id: Value,
    method: String,
    params: Map<String, Value>,
    size: usize,
    queue: Option<Outgoing>,
) -> Option<Reply> {
    let _admitted = app.inflight.admit(size).await;
    let cancel = app.shutdown.child_token();
    // Dropped with this future when the connection closes: the request's git children
    // are killed through the token rather than left to finish for no one.
    let _hang_up = cancel.clone().drop_guard();
    handler
        .request_with(id, method, params, cancel, queue)
        .await
}

/// Refuses a 2026-07-28 request whose `MCP-Protocol-Version` header names another version
/// than its `_meta`: which of the two the client meant cannot be told.
fn version_disagrees(
    headers: &HeaderMap,
    id: &Value,
    params: &Map<String, Value>,
) -> Option<Response> {
    let header = headers.get(VERSION_HEADER)?.to_str().ok()?;
    let meta = params
        .get("_meta")
        .and_then(Value::as_object)?
        .get(meta::PROTOCOL_VERSION)?
        .as_str()?;
    (header != meta).then(|| {
        let reply = jsonrpc::error(
            id.clone(),
            code::INVALID_PARAMS,
            "Invalid params",
            Some(json!({
                "details": format!(
                    "the MCP-Protocol-Version header ({header}) disagrees with params._meta[\"{}\"] ({meta})",
                    meta::PROTOCOL_VERSION
                ),
            })),
        );
        answer(StatusCode::BAD_REQUEST, reply.into(), false, None)
    })
}

/// Refuses what a Streamable HTTP client never sends.
fn check_headers(headers: &HeaderMap, id: &Value) -> Option<Response> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase());
    if content_type.as_deref() != Some("application/json") {
        return Some(refuse_id(
            id,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the body must be application/json",
        ));
    }
    let accept = Accept::of(headers);
    if !accept.json && !accept.sse {
        return Some(refuse_id(
            id,
            StatusCode::NOT_ACCEPTABLE,
            "the client must accept application/json or text/event-stream",
        ));
    }
    if let Some(version) = headers.get(VERSION_HEADER) {
        let known = version.to_str().ok().and_then(Version::parse).is_some();
        if !known {
            return Some(refuse_id(
                id,
                StatusCode::BAD_REQUEST,
                &format!(
                    "unsupported MCP-Protocol-Version; supported: {}",
                    Version::supported().join(", ")
                ),
            ));
        }
    }
    None
}

/// What the `Accept` header admits; a missing header admits anything.
pub struct Accept {
    pub json: bool,
    pub sse: bool,
}

impl Accept {
    pub fn of(headers: &HeaderMap) -> Accept {
        let Some(value) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
            return Accept {
                json: true,
                sse: true,
            };
        };
        let types: Vec<String> = value
            .split(',')
            .filter_map(|t| t.split(';').next())
            .map(|t| t.trim().to_ascii_lowercase())
            .collect();
        let has = |names: &[&str]| types.iter().any(|t| names.contains(&t.as_str()));
        Accept {
            json: has(&["application/json", "application/*", "*/*"]),
            sse: has(&["text/event-stream", "text/*", "*/*"]),
        }
    }
}

/// JSON unless the client takes event streams only.
fn wants_sse(headers: &HeaderMap) -> bool {
    let accept = Accept::of(headers);
    accept.sse && !accept.json
}

fn is_modern(params: &Map<String, Value>) -> bool {
    params
        .get("_meta")
        .and_then(Value::as_object)
        .is_some_and(|m| m.contains_key(meta::PROTOCOL_VERSION))
}

fn too_large() -> Response {
    refuse(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!("a message is at most {MAX_FRAME} bytes"),
    )
}

fn unknown_session(id: &Value) -> Response {
    refuse_id(
        id,
        StatusCode::NOT_FOUND,
        "unknown or ended session; initialize a new one",
    )
}

fn answer(status: StatusCode, reply: Reply, sse: bool, session: Option<&str>) -> Response {
    let mut response = if sse {
        let event = events::event(&reply.into_bytes(0));
        let mut response = (status, Bytes::from(event)).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        );
        response
    } else {
        let mut response = (status, Bytes::from(reply.into_bytes(0))).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        response
    };
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(id) = session.and_then(|id| HeaderValue::from_str(id).ok()) {
        headers.insert(SESSION_HEADER, id);
    }
    response
}
