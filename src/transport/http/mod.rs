//! MCP over Streamable HTTP on one loopback endpoint: `/mcp` serves the git tools, and
//! `/mcp/<capability>` adds the spec tools of the workspace that capability was minted for.
//!
//! ```text
//! request ─ guard (Host, Origin) ─ scope (capability → configuration)
//!         ─ POST: JSON-RPC body ─ session or stateless handler ─ dispatch ─ JSON / SSE
//!         ─ GET: the session's event stream      ─ DELETE: end the session
//! ```
//!
//! The 2025-11-25 revision's sessions (`initialize`, `Mcp-Session-Id`) and the stateless
//! 2026-07-28 era (`_meta` on every request) share the endpoint; what a request means is
//! decided by the same [`Handler`](super::dispatch::Handler) as on stdio, so results,
//! audit entries and presence are the same. Every request must name this listener's own
//! loopback authority in `Host` and carry either no `Origin` or this listener's own
//! origin (DNS rebinding, web pages); no CORS header is ever sent.

pub mod capability;
mod events;
mod post;
pub mod scope;
mod session_id;
mod sessions;
mod stream;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::json;
use tokio::net::TcpListener;

use super::dispatch::Observers;
use super::guard::Inflight;
use crate::config::Config;
use crate::process::CancellationToken;
use scope::{Scope, Scopes};
use sessions::Sessions;

/// The session header of the 2025-11-25 transport.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The negotiated version a client repeats on every request after `initialize`.
pub const VERSION_HEADER: &str = "mcp-protocol-version";

/// How `serve --http` was started.
pub struct Options {
    /// Refuse the capability-less endpoint (401) instead of serving the git tools there.
    pub require_capability: bool,
    /// Whether spec tools may be served to a capability at all.
    pub specs: bool,
}

struct App {
    scopes: Scopes,
    sessions: Sessions,
    /// The whole server's bound on requests in progress, as one stdio connection has.
    inflight: Inflight,
    port: u16,
    require_capability: bool,
    shutdown: CancellationToken,
}

/// Serves MCP on `listener` until `shutdown` fires; in-flight requests are cancelled then.
pub async fn serve(
    config: Arc<Config>,
    observers: Vec<Arc<dyn crate::observe::CallObserver>>,
    listener: TcpListener,
    options: Options,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let port = listener.local_addr()?.port();
    let observers: Observers = observers.into();
    let app = Arc::new(App {
        scopes: Scopes::new(&config, options.specs),
        sessions: Sessions::new(observers, shutdown.clone(), config.run_dir.as_deref()),
        inflight: Inflight::new(),
        port,
        require_capability: options.require_capability,
        shutdown: shutdown.clone(),
    });
    let done = shutdown.clone();
    let limits = crate::listen::Limits::default();
    crate::listen::serve(listener, router(app), limits, async move {
        done.cancelled().await
    })
    .await
}

fn router(app: Arc<App>) -> Router {
    Router::new()
        .route(
            "/mcp",
            post(post::plain)
                .get(stream::open_plain)
                .delete(stream::end_plain),
        )
        .route(
            "/mcp/{capability}",
            post(post::bound)
                .get(stream::open_bound)
                .delete(stream::end_bound),
        )
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(Arc::clone(&app), guard))
        .with_state(app)
}

/// The URL of the endpoint at `addr`, with a capability token when given.
pub fn url(addr: SocketAddr, token: Option<&str>) -> String {
    let host = if addr.is_ipv6() {
        format!("[::1]:{}", addr.port())
    } else {
        format!("127.0.0.1:{}", addr.port())
    };
    match token {
        Some(token) => format!("http://{host}/mcp/{token}"),
        None => format!("http://{host}/mcp"),
    }
}

async fn not_found() -> Response {
    refuse(
        StatusCode::NOT_FOUND,
        "no such endpoint; MCP is served at /mcp",
    )
}

/// `Host` must be this listener's loopback authority; `Origin`, when sent, its origin.
async fn guard(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
        return refuse(StatusCode::FORBIDDEN, "a Host header is required");
    };
    if !is_own_authority(host, app.port) {
        return refuse(
            StatusCode::FORBIDDEN,
            "Host is not this server's loopback address",
        );
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let own = origin
            .to_str()
            .ok()
            .and_then(|o| o.strip_prefix("http://"))
            .is_some_and(|authority| is_own_authority(authority, app.port));
        if !own {
            return refuse(
                StatusCode::FORBIDDEN,
                "requests from other origins are not accepted",
            );
        }
    }
    next.run(request).await
}

fn is_own_authority(authority: &str, port: u16) -> bool {
    ["127.0.0.1", "localhost", "[::1]"]
        .iter()
        .any(|name| authority.eq_ignore_ascii_case(&format!("{name}:{port}")))
}

impl App {
    /// The scope of a request to `/mcp` (`None`) or `/mcp/<token>`, or its refusal.
    fn scope(&self, token: Option<&str>) -> Result<Scope, Box<Response>> {
        match token {
            Some(token) => self.scopes.of(token).ok_or_else(|| {
                Box::new(refuse(
                    StatusCode::FORBIDDEN,
                    "unknown or revoked capability; ask for a new URL",
                ))
            }),
            None if self.require_capability => Err(Box::new(refuse(
                StatusCode::UNAUTHORIZED,
                "this server requires a capability URL (/mcp/<capability>)",
            ))),
            None => Ok(self.scopes.plain()),
        }
    }
}

/// The session id a request names, if any.
fn session_id(headers: &HeaderMap) -> Option<&str> {
    headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok())
}

/// An HTTP-level refusal, with a JSON-RPC error body as MCP clients expect.
fn refuse(status: StatusCode, message: &str) -> Response {
    refuse_id(&serde_json::Value::Null, status, message)
}

/// [`refuse`] of a request whose id could be read: the body answers that id.
fn refuse_id(id: &serde_json::Value, status: StatusCode, message: &str) -> Response {
    let body = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": -32000, "message": message },
    });
    let mut response = (status, axum::Json(body)).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_listeners_own_authority_is_accepted() {
        for ok in ["127.0.0.1:8", "localhost:8", "LOCALHOST:8", "[::1]:8"] {
            assert!(is_own_authority(ok, 8), "{ok}");
        }
        for bad in [
            "127.0.0.1:9",
            "127.0.0.1",
            "evil.example.com:8",
            "127.0.0.1:8.evil",
            "localhost.evil:8",
            "",
        ] {
            assert!(!is_own_authority(bad, 8), "{bad}");
        }
    }
}
