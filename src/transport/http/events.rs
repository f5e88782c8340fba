//! A `POST`'s answer when the request tells its client something first (progress): an
//! event stream of those notifications, then the answer, then the end of the stream.
//!
//! Whether a response streams is decided by what happens first. A request that answers
//! before it sends anything is answered as it always was (one JSON body, or one event),
//! byte for byte; one that sends a notification first turns its response into a stream,
//! which then carries the request to its end. The request runs inside the response body
//! from there on, so a client that hangs up drops it, and its git children are stopped.

use std::pin::Pin;

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use tokio::sync::mpsc;

use crate::transport::reply::Reply;

/// A request being answered.
pub type Answer = Pin<Box<dyn Future<Output = Option<Reply>> + Send>>;

/// How a request ended up being answered.
pub enum Outcome {
    /// Answered with nothing sent before: the caller answers as usual.
    Plain(Option<Reply>),
    /// Notifications came first: this event stream carries them and the answer.
    Streamed(Response),
}

/// Runs `answer` until it is done or has sent its first message on `queue`.
pub async fn answer_or_stream(
    mut answer: Answer,
    mut queue: mpsc::UnboundedReceiver<Vec<u8>>,
) -> Outcome {
    tokio::select! {
        biased;
        reply = &mut answer => {
            // Notifications are queued before the answer: all of them are here now.
            let mut early = Vec::new();
            while let Ok(message) = queue.try_recv() {
                early.extend(event(&message));
            }
            if early.is_empty() {
                return Outcome::Plain(reply);
            }
            if let Some(reply) = reply {
                early.extend(event(&reply.into_bytes(0)));
            }
            Outcome::Streamed(stream(Body::from(early)))
        }
        Some(first) = queue.recv() => {
            let first = futures_util::stream::once(async move {
                Ok::<_, std::convert::Infallible>(Bytes::from(event(&first)))
            });
            let rest = futures_util::stream::unfold(
                (queue, Some(answer)),
                |(mut queue, answer)| async move {
                    let mut answer = answer?;
                    tokio::select! {
                        biased;
                        Some(message) = queue.recv() => {
                            Some((Ok(Bytes::from(event(&message))), (queue, Some(answer))))
                        }
                        reply = &mut answer => {
                            let mut last = Vec::new();
                            while let Ok(message) = queue.try_recv() {
                                last.extend(event(&message));
                            }
                            // A request the client cancelled ends its stream unanswered.
                            if let Some(reply) = reply {
                                last.extend(event(&reply.into_bytes(0)));
                            }
                            Some((Ok(Bytes::from(last)), (queue, None)))
                        }
                    }
                },
            );
            Outcome::Streamed(stream(Body::from_stream(first.chain(rest))))
        }
    }
}

/// One server-sent event carrying one JSON-RPC message.
pub fn event(message: &[u8]) -> Vec<u8> {
    const HEAD: &[u8] = b"event: message\ndata: ";
    let mut out = Vec::with_capacity(HEAD.len() + message.len() + 2);
    out.extend_from_slice(HEAD);
    out.extend_from_slice(message);
    out.extend_from_slice(b"\n\n");
    out
}

fn stream(body: Body) -> Response {
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
