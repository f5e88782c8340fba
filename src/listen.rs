//! Serving an HTTP/1 router on a loopback listener within bounds, for the gateway's two
//! listeners and `serve --http`: any local process can connect to them, so none may be
//! able to take every descriptor or hold the server with connections that say nothing.
//!
//! - Headers must arrive within [`Limits::header_read_timeout`], and the same bound closes
//!   a kept-alive connection that sends no next request.
//! - At most [`Limits::max_connections`] connections are open. At the bound, a new
//!   connection closes the oldest one that has no request in progress (no request being
//!   answered, no response body such as an event stream still being sent); when every
//!   connection is busy the new one is closed instead. Whoever opens idle connections
//!   thus only ever displaces their own, and a person's page always gets in.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// The bounds of one listener.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections open at once.
    pub max_connections: usize,
    /// How long a request's headers (or a kept-alive connection's next request) may take.
    pub header_read_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 256,
            header_read_timeout: Duration::from_secs(5),
        }
    }
}

/// How long connections may take to finish once serving stops.
const DRAIN: Duration = Duration::from_secs(5);

struct Entry {
    busy: Arc<AtomicUsize>,
    close: CancellationToken,
}

/// The open connections, oldest first (ids only grow).
#[derive(Default)]
struct Open {
    next: u64,
    entries: BTreeMap<u64, Entry>,
}

impl Open {
    /// Registers a new connection, making room first; `None` when every connection is busy.
    fn admit(&mut self, max: usize) -> Option<(u64, Arc<AtomicUsize>, CancellationToken)> {
        while self.entries.len() >= max.max(1) {
            let idle = self
                .entries
                .iter()
                .find(|(_, e)| e.busy.load(Ordering::Acquire) == 0)
                .map(|(id, _)| *id)?;
            if let Some(evicted) = self.entries.remove(&idle) {
                evicted.close.cancel();
            }
        }
        let id = self.next;
        self.next += 1;
        let busy = Arc::new(AtomicUsize::new(0));
        let close = CancellationToken::new();
        self.entries.insert(
            id,
            Entry {
                busy: Arc::clone(&busy),
                close: close.clone(),
            },
        );
        Some((id, busy, close))
    }
}

/// Serves `router` on `listener` until `shutdown` completes; connections then get
/// [`DRAIN`] to finish.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let open = Arc::new(Mutex::new(Open::default()));
    let stopping = CancellationToken::new();
    let mut tasks = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of descriptors or a connection reset before it was taken: the next
                // accept may succeed, so the listener stays up.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        let admitted = open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .admit(limits.max_connections);
        let Some((id, busy, close)) = admitted else {
            drop(stream);
            continue;
        };
        let (router, open, stopping) = (router.clone(), Arc::clone(&open), stopping.clone());
        while tasks.try_join_next().is_some() {}
        tasks.spawn(async move {
            connection(stream, router, limits, busy, close, stopping).await;
            let mut open = open.lock().unwrap_or_else(|p| p.into_inner());
            open.entries.remove(&id);
        });
    }
    drop(listener);
    stopping.cancel();
    let _ = tokio::time::timeout(DRAIN, async { while tasks.join_next().await.is_some() {} }).await;
    Ok(())
}

async fn connection(
    stream: tokio::net::TcpStream,
    router: Router,
    limits: Limits,
    busy: Arc<AtomicUsize>,
    close: CancellationToken,
    stopping: CancellationToken,
) {
    let inner = TowerToHyperService::new(router);
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let guard = Busy::enter(&busy);
        let answer = hyper::service::Service::call(&inner, request);
        async move {
            let response = answer.await?;
            Ok::<_, Infallible>(response.map(|body| {
                Body::new(Tracked {
                    body,
                    _guard: guard,
                })
            }))
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => {}
        // Displaced by a newer connection: closed where it stands (it was idle).
        () = close.cancelled() => {}
        () = stopping.cancelled() => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
    }
}

/// One request in progress on a connection, from its headers to the end of its answer.
struct Busy(Arc<AtomicUsize>);

impl Busy {
    fn enter(count: &Arc<AtomicUsize>) -> Busy {
        count.fetch_add(1, Ordering::AcqRel);
        Busy(Arc::clone(count))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A response body that keeps its connection counted busy until it is sent or dropped.
struct Tracked {
    body: Body,
    _guard: Busy,
}

impl HttpBody for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_idle_connection_makes_room_and_busy_ones_are_kept() {
        let mut open = Open::default();
        let (a, busy_a, close_a) = open.admit(2).unwrap();
        let (_b, _, close_b) = open.admit(2).unwrap();
        busy_a.fetch_add(1, Ordering::AcqRel);
        // `a` is busy: the idle `b` goes, although `a` is older.
        let (_c, busy_c, _) = open.admit(2).unwrap();
        assert!(close_b.is_cancelled() && !close_a.is_cancelled());
        assert!(open.entries.contains_key(&a));
        busy_c.fetch_add(1, Ordering::AcqRel);
        // Every connection busy: the new one is refused, none is closed.
        assert!(open.admit(2).is_none());
        assert!(!close_a.is_cancelled());
        assert_eq!(open.entries.len(), 2);
    }
}
