//! The stdio server loop: read frames, dispatch requests concurrently, write responses.
//! A request's notifications (progress) share the writer's queue, so each is written
//! before that request's answer.
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
use super::reply::Reply;
use super::stdin::StdinFrames;
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
        let reader = FrameReader::new(input);
        Server::serve_loop(config, observers, opening, reader, tx, shutdown).await?;
        let _ = writer.await;
        Ok(())
    }

    /// [`Server::serve_opened`] reading frames from `input` (stdin, read on a thread of
    /// its own) and answering on the process's stdout from a thread of its own: an answer
    /// is written as soon as it is queued, where an async stdout would hand each write to
    /// a blocking-pool thread and wake the writer again when it is done.
    ///
    /// The loop runs as a task on a worker, not on the thread that drives the runtime: a
    /// request's task then starts on the worker that read it, with no thread to wake.
    pub async fn serve_stdout(
        config: Arc<Config>,
        observers: Vec<Arc<dyn CallObserver>>,
        opening: Opening,
        input: StdinFrames,
        shutdown: CancellationToken,
    ) -> std::io::Result<()> {
        let (tx, rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let writer = std::thread::Builder::new()
            .name("gitward-stdout".into())
            .spawn(move || write_stdout(rx))?;
        let served = tokio::spawn(Server::serve_loop(
            config, observers, opening, input, tx, shutdown,
        ))
        .await
        .unwrap_or_else(|e| Err(std::io::Error::other(e)));
        // Every sender is gone: the thread ends once what is queued is written.
        let _ = tokio::task::spawn_blocking(move || writer.join()).await;
        served
    }

    /// Reads and answers requests; each answer is queued on `tx` as one line's bytes.
    async fn serve_loop<F: Frames>(
        config: Arc<Config>,
        observers: Vec<Arc<dyn CallObserver>>,
        opening: Opening,
        mut reader: F,
        tx: mpsc::UnboundedSender<Vec<u8>>,
        shutdown: CancellationToken,
    ) -> std::io::Result<()> {
        // Each line leaves room for its newline, so the writer never copies an answer.
        // A request's notifications go through the same queue, ahead of its answer.
        let outgoing = tx.clone();
        let send = move |reply: Reply| {
            let _ = tx.send(reply.into_bytes(1));
        };
        let Opening { first, session, .. } = opening;
        let observers = observers.into();
        let handler = Arc::new(Handler::resume(
            config,
            observers,
            shutdown.clone(),
            session,
        ));
        // A proposal's review request reaches the client outside its request, on the
        // same writer; closed however the loop ends, so the writer can finish.
        let _standing = handler.standing().open(outgoing.clone());
        let mut first = first;
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
                Frame::TooLarge => send(Reply::from(jsonrpc::error(
                    Value::Null,
                    code::INVALID_REQUEST,
                    "Invalid request",
                    Some(
                        json!({ "details": format!("frame exceeds {} bytes", super::framing::MAX_FRAME) }),
                    ),
                ))),
                Frame::BadHeader(why) => send(Reply::from(jsonrpc::error(
                    Value::Null,
                    code::PARSE_ERROR,
                    "Parse error",
                    Some(json!({ "details": why })),
                ))),
                Frame::Message(bytes) => match jsonrpc::classify(&bytes) {
                    Incoming::Invalid(reply) => send(Reply::from(*reply)),
                    Incoming::Notification { method, params } => handler.notify(&method, &params),
                    Incoming::Request { id, method, params } => {
                        if let Some(reply) = handler.inline(&id, &method, &params) {
                            send(reply.into());
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
                        let outgoing = outgoing.clone();
                        tasks.spawn(async move {
                            let _admitted = admitted;
                            let answered = handler.request(id, method, params, Some(outgoing));
                            if let Some(reply) = answered.await {
                                send(reply);
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
        Ok(())
    }
}

/// Where the serving loop takes its frames from.
trait Frames {
    fn next(&mut self) -> impl Future<Output = std::io::Result<Frame>>;
}

impl<R: AsyncBufRead + Unpin> Frames for FrameReader<R> {
    fn next(&mut self) -> impl Future<Output = std::io::Result<Frame>> {
        FrameReader::next(self)
    }
}

impl Frames for StdinFrames {
    fn next(&mut self) -> impl Future<Output = std::io::Result<Frame>> {
        StdinFrames::next(self)
    }
}

/// [`write_lines`] on a thread, straight into the process's stdout.
fn write_stdout(mut rx: mpsc::UnboundedReceiver<Vec<u8>>) {
    use std::io::Write;
    while let Some(mut line) = rx.blocking_recv() {
        line.push(b'\n');
        while let Ok(mut more) = rx.try_recv() {
            line.append(&mut more);
            line.push(b'\n');
        }
        let mut out = std::io::stdout().lock();
        if out.write_all(&line).is_err() || out.flush().is_err() {
            break;
        }
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
