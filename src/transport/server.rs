//! The stdio server loop: read frames, dispatch requests concurrently, write responses.
//!
//! Each request runs in its own task with its own cancellation token, so a slow git call
//! never delays a `ping`, and `notifications/cancelled` kills the git process of the
//! request it names, which then gets no response. One writer task owns stdout; nothing
//! else writes to it. What a request means is decided by the shared [`Handler`].

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::dispatch::Handler;
use super::framing::{Frame, FrameReader};
use super::guard;
use super::jsonrpc::{self, Incoming};
use super::opening::Opening;
use crate::config::Config;
use crate::error::code;
use crate::observe::CallObserver;
use crate::process::CancellationToken;

pub use super::dispatch::{CallOutcome, run_tool, settle, unknown_tool};

pub struct Server;

impl Server {
    /// Serves until `input` ends (then in-flight requests finish) or `shutdown` fires.
    pub async fn serve<R, W>(
        config: Arc<Config>,
        observers: Vec<Arc<dyn CallObserver>>,
        input: R,
        output: W,
        shutdown: CancellationToken,
    ) -> std::io::Result<()>
    where
        R: AsyncBufRead + Unpin,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let opening = Opening::default();
        Server::serve_opened(config, observers, opening, input, output, shutdown).await
    }

    /// [`Server::serve`] after [`super::opening::answer_first`]: its first frame, if not
    /// answered there, is served first, and its handshake holds.
    pub async fn serve_opened<R, W>(
        config: Arc<Config>,
        observers: Vec<Arc<dyn CallObserver>>,
        opening: Opening,
        input: R,
        output: W,
        shutdown: CancellationToken,
    ) -> std::io::Result<()>
    where
        R: AsyncBufRead + Unpin,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let writer = tokio::spawn(write_lines(rx, output));
        let send = move |message: &Value| {
            let _ = tx.send(crate::tools::compact(message).into_bytes());
        };
        let Opening { first, session, .. } = opening;
        let observers = observers.into();
        let handler = Arc::new(Handler::resume(
            config,
            observers,
            shutdown.clone(),
            session,
        ));
        let mut first = first;
        let mut reader = FrameReader::new(input);
        let mut tasks = JoinSet::new();
        let inflight = guard::Inflight::new();
        loop {
            let frame = match first.take() {
                Some(frame) => frame,
                None => tokio::select! {
                    biased;
                    _ = shutdown.cancelled() => break,
                    frame = reader.next() => frame?,
                },
            };
            while tasks.try_join_next().is_some() {}
            match frame {
                Frame::Eof => break,
                Frame::TooLarge => send(&jsonrpc::error(
                    Value::Null,
                    code::INVALID_REQUEST,
                    "Invalid request",
                    Some(
                        json!({ "details": format!("frame exceeds {} bytes", super::framing::MAX_FRAME) }),
                    ),
                )),
                Frame::BadHeader(why) => send(&jsonrpc::error(
                    Value::Null,
                    code::PARSE_ERROR,
                    "Parse error",
                    Some(json!({ "details": why })),
                )),
                Frame::Message(bytes) => match jsonrpc::classify(&bytes) {
                    Incoming::Invalid(reply) => send(&reply),
                    Incoming::Notification { method, params } => handler.notify(&method, &params),
                    Incoming::Request { id, method, params } => {
                        if let Some(reply) = handler.inline(&id, &method, &params) {
                            send(&reply);
                            continue;
                        }
                        // Past the bound, input waits in the pipe until a request finishes:
                        // memory stays bounded however much a client sends at once.
                        let admitted = tokio::select! {
                            biased;
                            _ = shutdown.cancelled() => break,
                            admitted = inflight.admit(bytes.len()) => admitted,
                        };
                        let handler = Arc::clone(&handler);
                        let send = send.clone();
                        tasks.spawn(async move {
                            let _admitted = admitted;
                            if let Some(reply) = handler.request(id, method, params).await {
                                send(&reply);
                            }
                        });
                    }
                },
            }
        }
        if shutdown.is_cancelled() {
            handler.cancel_all();
        }
        while tasks.join_next().await.is_some() {}
        drop(handler);
        drop(send);
        let _ = writer.await;
        Ok(())
    }
}

/// Writes each queued message as one line; a burst costs one flush.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut rx: mpsc::UnboundedReceiver<Vec<u8>>,
    mut output: W,
) {
    while let Some(mut line) = rx.recv().await {
        line.push(b'\n');
        while let Ok(mut more) = rx.try_recv() {
            line.append(&mut more);
            line.push(b'\n');
        }
        if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
            break;
        }
    }
}
