//! `GET`: a session's server-to-client event stream; `DELETE`: the end of a session.
//!
//! The one thing gitward sends a session unprompted is a proposal's review request and its
//! completion (see [`crate::transport::elicit`]), for a client that declared URL-mode
//! elicitation; a request's progress rides that request's own response. Between them the
//! stream carries keep-alive comments until the session or the server ends. The newest
//! open stream of a session gets what is sent; nothing is kept for replay, so a
//! `Last-Event-ID` resumes the stream as it is now.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use tokio::sync::mpsc;

use super::post::Accept;
use super::{App, events, refuse, session_id};

/// How often an idle stream says it is alive, so proxies and clients keep it open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

pub async fn open_plain(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    open(&app, None, &headers)
}

pub async fn open_bound(
    State(app): State<Arc<App>>,
    Path(token): Path<String>,
    headers: HeaderMap,
) -> Response {
    open(&app, Some(&token), &headers)
}

pub async fn end_plain(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    end(&app, None, &headers)
}

pub async fn end_bound(
    State(app): State<Arc<App>>,
    Path(token): Path<String>,
    headers: HeaderMap,
) -> Response {
    end(&app, Some(&token), &headers)
}

fn open(app: &App, token: Option<&str>, headers: &HeaderMap) -> Response {
    let scope = match app.scope(token) {
        Ok(scope) => scope,
        Err(refused) => return *refused,
    };
    let Some(id) = session_id(headers) else {
        // Stateless requests have no stream to listen on.
        let mut response = refuse(
            StatusCode::METHOD_NOT_ALLOWED,
            "a GET stream belongs to a session (Mcp-Session-Id)",
        );
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST, DELETE"));
        return response;
    };
    if !Accept::of(headers).sse {
        return refuse(
            StatusCode::NOT_ACCEPTABLE,
            "the client must accept text/event-stream",
        );
    }
    let Some(session) = app.sessions.get(id, &scope) else {
        return refuse(
            StatusCode::NOT_FOUND,
            "unknown or ended session; initialize a new one",
        );
    };
    let ended = session.ended.clone();
    let (queue, messages) = mpsc::unbounded_channel();
    // The stream holds the guard: when the client hangs up, its queue closes.
    let opened = session.handler.standing().open(queue);
    let beats = futures_util::stream::unfold(
        (true, messages, opened),
        move |(first, mut messages, opened)| {
            let ended = ended.clone();
            async move {
                const BEAT: &[u8] = b": keep-alive\n\n";
                let bytes = if first {
                    Bytes::from_static(BEAT)
                } else {
                    tokio::select! {
                        () = ended.cancelled() => return None,
                        message = messages.recv() => Bytes::from(events::event(&message?)),
                        () = tokio::time::sleep(KEEP_ALIVE) => Bytes::from_static(BEAT),
                    }
                };
                Some((
                    Ok::<_, std::convert::Infallible>(bytes),
                    (false, messages, opened),
                ))
            }
        },
    );
    let mut response = (StatusCode::OK, Body::from_stream(beats)).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn end(app: &App, token: Option<&str>, headers: &HeaderMap) -> Response {
    let scope = match app.scope(token) {
        Ok(scope) => scope,
        Err(refused) => return *refused,
    };
    let Some(id) = session_id(headers) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "DELETE names the session to end in Mcp-Session-Id",
        );
    };
    if app.sessions.end(id, &scope) {
        StatusCode::NO_CONTENT.into_response()
    } else {
        refuse(
            StatusCode::NOT_FOUND,
            "unknown or ended session; initialize a new one",
        )
    }
}
