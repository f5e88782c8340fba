//! The sidecar's one client of the write handshake: POST a proposal, GET its status, POST a
//! cancellation.
//!
//! Loopback only (the address passed [`GatewayAddr::parse`], and `localhost` is dialled as
//! 127.0.0.1, never looked up), no proxy, no redirect, a deadline per request, an answer
//! capped at 1 MiB that must say `application/json`. Every way a call can go wrong is one
//! [`GatewayError`] variant; `error.rs` maps them onto the product codes in one place.

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::addr::GatewayAddr;
use super::api::{self, Accepted, CancelRequest, Proposal, StatusRecord};
use crate::process::CancellationToken;

/// The largest answer read from the gateway.
pub const MAX_RESPONSE: u64 = 1024 * 1024;

/// Deadlines: a loopback peer that takes longer than this is not answering.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
pub const POST_TIMEOUT: Duration = Duration::from_secs(5);
pub const STATUS_TIMEOUT: Duration = Duration::from_secs(2);

/// Everything that can stop a handshake call.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GatewayError {
    /// No gateway address is configured.
    #[error("no approval gateway is configured")]
    NotConfigured,
    /// The configured address breaks the loopback policy.
    #[error("the configured gateway address is invalid: {0}")]
    InvalidAddress(String),
    /// Nothing answered (refused, reset, closed early).
    #[error("the approval gateway is unreachable: {0}")]
    Unreachable(String),
    /// The request's deadline passed first.
    #[error("the approval gateway did not answer within {}s", .0.as_secs_f32())]
    Timeout(Duration),
    /// An answer that is not what the protocol promises (status, type, size or shape).
    #[error("the approval gateway answered malformed: {0}")]
    Malformed(String),
    /// The gateway refused the request with its `{error}` body (policy, validation,
    /// quota, not the owner, no longer pending, an idempotency key reused).
    #[error("the approval gateway refused (HTTP {status})")]
    Refused { status: u16, body: Value },
    /// The gateway does not know this preview id.
    #[error("the approval gateway does not know preview {0}")]
    UnknownPreview(String),
    /// The gateway named a preview id that is not a canonical UUID.
    #[error("the approval gateway returned an unsafe preview id")]
    UnsafePreviewId(String),
    /// The caller cancelled the request.
    #[error("the request was cancelled")]
    Cancelled,
}

/// A checked gateway to talk to.
#[derive(Debug, Clone)]
pub struct Client {
    addr: GatewayAddr,
}

/// One HTTP exchange's outcome before the protocol reads it.
struct Answer {
    status: u16,
    json: Option<Value>,
}

impl Client {
    /// The client of the configured address (`None` when nothing is configured).
    pub fn from_configured(configured: Option<&str>) -> Result<Client, GatewayError> {
        let value = configured.ok_or(GatewayError::NotConfigured)?;
        let addr = GatewayAddr::parse(value)
            .map_err(|why| GatewayError::InvalidAddress(why.to_owned()))?;
        Ok(Client { addr })
    }

    pub fn new(addr: GatewayAddr) -> Client {
        Client { addr }
    }

    /// POSTs a proposal. `202` is a new proposal, `200` an idempotent retry; either way
    /// the answer carries the gateway's canonical preview id.
    pub async fn propose(
        &self,
        proposal: &Proposal,
        cancel: &CancellationToken,
    ) -> Result<Accepted, GatewayError> {
        let body = serde_json::to_value(proposal)
            .map_err(|e| GatewayError::Malformed(format!("proposal: {e}")))?;
        let path = api::preview_path(&proposal.operation_type);
        let answer = self
            .send(Method::Post(body), path, POST_TIMEOUT, cancel)
            .await?;
        let json = expect_success(answer, None)?;
        let id = preview_id_of(&json)?;
        let accepted: Accepted = read(json, "proposal answer")?;
        debug_assert_eq!(accepted.preview_id, id);
        Ok(accepted)
    }

    /// Reads the lifecycle record of `preview_id`: the typed record and the body as sent
    /// (passed on to the agent whole, fields this gitward does not know included).
    pub async fn status(
        &self,
        preview_id: &str,
        cancel: &CancellationToken,
    ) -> Result<(StatusRecord, Value), GatewayError> {
        let path = api::status_path(checked(preview_id)?);
        let answer = self.send(Method::Get, path, STATUS_TIMEOUT, cancel).await?;
        let json = expect_success(answer, Some(preview_id))?;
        let id = preview_id_of(&json)?;
        if id != preview_id {
            return Err(GatewayError::Malformed(
                "the status record names another preview".into(),
            ));
        }
        let record: StatusRecord = read(json.clone(), "status record")?;
        Ok((record, json))
    }

    /// Withdraws `preview_id`, a pending proposal of `agent_id`; returns the gateway's body.
    pub async fn cancel(
        &self,
        preview_id: &str,
        agent_id: &str,
        cancel: &CancellationToken,
    ) -> Result<(api::Cancelled, Value), GatewayError> {
        let path = api::cancel_path(checked(preview_id)?);
        let body = serde_json::to_value(CancelRequest {
            agent_id: agent_id.to_owned(),
        })
        .map_err(|e| GatewayError::Malformed(format!("cancel request: {e}")))?;
        let answer = self
            .send(Method::Post(body), path, POST_TIMEOUT, cancel)
            .await?;
        let json = expect_success(answer, Some(preview_id))?;
        let cancelled: api::Cancelled = read(json.clone(), "cancel answer")?;
        if !cancelled.preview_id.is_empty() && cancelled.preview_id != preview_id {
            return Err(GatewayError::Malformed(
                "the cancel answer names another preview".into(),
            ));
        }
        Ok((cancelled, json))
    }

    /// GETs one read-bridge answer: `path` (each segment already [`encode`]d) with the
    /// `query` pairs encoded here.
    pub async fn read(
        &self,
        path: &str,
        query: &[(&str, String)],
        cancel: &CancellationToken,
    ) -> Result<Value, GatewayError> {
        let mut url = path.to_owned();
        for (i, (key, value)) in query.iter().enumerate() {
            url.push(if i == 0 { '?' } else { '&' });
            url.push_str(&encode(key));
            url.push('=');
            url.push_str(&encode(value));
        }
        let answer = self.send(Method::Get, url, STATUS_TIMEOUT, cancel).await?;
        expect_success(answer, None)
    }

    async fn send(
        &self,
        method: Method,
        path: String,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<Answer, GatewayError> {
        // The socket address, not the name: `localhost` never goes to a resolver.
        let url = format!("http://{}{}", self.addr.socket(), path);
        let call = tokio::task::spawn_blocking(move || exchange(&url, &method, timeout));
        tokio::select! {
            biased;
            _ = cancel.cancelled() => Err(GatewayError::Cancelled),
            joined = tokio::time::timeout(timeout + Duration::from_millis(500), call) => match joined {
                Ok(Ok(answer)) => answer,
                Ok(Err(e)) => Err(GatewayError::Unreachable(format!("the request failed: {e}"))),
                Err(_) => Err(GatewayError::Timeout(timeout)),
            },
        }
    }
}

enum Method {
    Get,
    Post(Value),
}

/// `text` with every byte but ASCII letters, digits, `-` and `_` percent-encoded, so a
/// value can never end a path segment or a query pair early, nor read as `..`.
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn checked(preview_id: &str) -> Result<&str, GatewayError> {
    if api::is_canonical_preview_id(preview_id) {
        Ok(preview_id)
    } else {
        Err(GatewayError::UnsafePreviewId(shown(preview_id)))
    }
}

/// At most 80 characters of a foreign string, for a message.
fn shown(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).take(80).collect()
}

/// The canonical preview id an answer names; anything else is refused before it is used.
fn preview_id_of(json: &Value) -> Result<String, GatewayError> {
    match json.get("previewId") {
        Some(Value::String(id)) if api::is_canonical_preview_id(id) => Ok(id.clone()),
        Some(Value::String(id)) => Err(GatewayError::UnsafePreviewId(shown(id))),
        Some(other) => Err(GatewayError::UnsafePreviewId(shown(&other.to_string()))),
        None => Err(GatewayError::Malformed(
            "the answer has no previewId".into(),
        )),
    }
}

fn read<T: DeserializeOwned>(json: Value, what: &str) -> Result<T, GatewayError> {
    serde_json::from_value(json).map_err(|e| GatewayError::Malformed(format!("{what}: {e}")))
}

/// The JSON object of a 2xx answer, or the error its status stands for. `preview` is the
/// id the request named, for a `404`.
fn expect_success(answer: Answer, preview: Option<&str>) -> Result<Value, GatewayError> {
    match (answer.status, answer.json) {
        (200..=299, Some(json)) => Ok(json),
        (200..=299, None) => Err(GatewayError::Malformed(
            "a success without a JSON object".into(),
        )),
        (404, _) if preview.is_some() => Err(GatewayError::UnknownPreview(
            preview.unwrap_or_default().to_owned(),
        )),
        (status @ 400..=499, Some(body)) if body.get("error").is_some_and(Value::is_object) => {
            Err(GatewayError::Refused { status, body })
        }
        (status @ 400..=499, _) => Err(GatewayError::Malformed(format!(
            "HTTP {status} without an {{error}} body"
        ))),
        (status @ 500..=599, _) => Err(GatewayError::Unreachable(format!(
            "the gateway failed (HTTP {status})"
        ))),
        (status, _) => Err(GatewayError::Malformed(format!("unexpected HTTP {status}"))),
    }
}

/// The one agent of the process: its pool keeps the connection to the gateway open
/// between requests, so a preview's POST and status read (and the next call's) pay for
/// one TCP connection. Its settings hold for every request; the deadlines are per request.
fn agent() -> &'static ureq::Agent {
    static AGENT: std::sync::OnceLock<ureq::Agent> = std::sync::OnceLock::new();
    AGENT.get_or_init(|| {
        ureq::Agent::config_builder()
            .proxy(None)
            .max_redirects(0)
            .http_status_as_error(false)
            .max_idle_age(IDLE)
            .user_agent(concat!("gitward/", env!("CARGO_PKG_VERSION")))
            .build()
            .into()
    })
}

/// How long an unused connection stays in the pool.
const IDLE: Duration = Duration::from_secs(30);

/// One blocking HTTP exchange under `timeout`.
fn exchange(url: &str, method: &Method, timeout: Duration) -> Result<Answer, GatewayError> {
    let agent = agent();
    let connect = CONNECT_TIMEOUT.min(timeout);
    let sent = match method {
        Method::Get => agent
            .get(url)
            .header("Accept", "application/json")
            .config()
            .timeout_global(Some(timeout))
            .timeout_connect(Some(connect))
            .build()
            .call(),
        Method::Post(body) => agent
            .post(url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .config()
            .timeout_global(Some(timeout))
            .timeout_connect(Some(connect))
            .build()
            .send(body.to_string()),
    };
    let mut response = sent.map_err(|e| transport(e, timeout))?;
    let status = response.status().as_u16();
    let is_json = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    let bytes = response
        .body_mut()
        .with_config()
        .limit(MAX_RESPONSE)
        .read_to_vec()
        .map_err(|e| match e {
            ureq::Error::BodyExceedsLimit(_) => {
                GatewayError::Malformed(format!("the answer is over {MAX_RESPONSE} bytes"))
            }
            other => transport(other, timeout),
        })?;
    if (200..=299).contains(&status) && !is_json {
        return Err(GatewayError::Malformed(
            "the answer is not application/json".into(),
        ));
    }
    let json = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .filter(Value::is_object);
    Ok(Answer { status, json })
}

fn transport(e: ureq::Error, timeout: Duration) -> GatewayError {
    match e {
        ureq::Error::Timeout(_) => GatewayError::Timeout(timeout),
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
            GatewayError::Timeout(timeout)
        }
        ureq::Error::Protocol(p) => GatewayError::Malformed(format!("not HTTP: {p}")),
        ureq::Error::LargeResponseHeader(..) => {
            GatewayError::Malformed("the answer's header is too large".into())
        }
        other => GatewayError::Unreachable(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::json;

    use super::*;

    fn answer(status: u16, json: Value) -> Answer {
        Answer {
            status,
            json: json.is_object().then_some(json),
        }
    }

    #[test]
    fn statuses_map_to_the_error_they_stand_for() {
        let body = json!({"error": {"code": "quotaExceeded", "message": "m"}});
        assert_eq!(
            expect_success(answer(429, body.clone()), None),
            Err(GatewayError::Refused {
                status: 429,
                body: body.clone()
            })
        );
        let id = "1f3c5b9a-0c1d-4e2f-8a9b-0123456789ab";
        assert_eq!(
            expect_success(answer(404, body.clone()), Some(id)),
            Err(GatewayError::UnknownPreview(id.into()))
        );
        // A 404 on a proposal is the route missing: another kind of refusal.
        assert!(matches!(
            expect_success(answer(404, body.clone()), None),
            Err(GatewayError::Refused { status: 404, .. })
        ));
        assert!(matches!(
            expect_success(answer(500, body), None),
            Err(GatewayError::Unreachable(_))
        ));
        assert!(matches!(
            expect_success(answer(403, json!("nope")), None),
            Err(GatewayError::Malformed(_))
        ));
        assert!(matches!(
            expect_success(answer(302, json!({})), None),
            Err(GatewayError::Malformed(_))
        ));
        assert!(matches!(
            expect_success(answer(202, Value::Null), None),
            Err(GatewayError::Malformed(_))
        ));
    }

    #[test]
    fn only_canonical_preview_ids_are_followed() {
        let id = "1f3c5b9a-0c1d-4e2f-8a9b-0123456789ab";
        assert_eq!(preview_id_of(&json!({"previewId": id})), Ok(id.into()));
        for bad in [json!("../../x"), json!(id.to_uppercase()), json!(7)] {
            assert!(matches!(
                preview_id_of(&json!({"previewId": bad})),
                Err(GatewayError::UnsafePreviewId(_))
            ));
        }
        assert!(matches!(
            preview_id_of(&json!({})),
            Err(GatewayError::Malformed(_))
        ));
        assert!(matches!(
            checked("a/../b"),
            Err(GatewayError::UnsafePreviewId(_))
        ));
    }

    #[test]
    fn configuration_is_checked_before_anything_is_sent() {
        assert!(matches!(
            Client::from_configured(None),
            Err(GatewayError::NotConfigured)
        ));
        assert!(matches!(
            Client::from_configured(Some("example.com:80")),
            Err(GatewayError::InvalidAddress(_))
        ));
        assert!(Client::from_configured(Some("localhost:1")).is_ok());
    }

    /// A loopback HTTP/1.1 peer that answers every request with `body` on the connection
    /// it came on, and counts the connections it accepted.
    fn keep_alive_peer(body: &'static str) -> (String, Arc<AtomicUsize>) {
        use std::io::{BufRead, BufReader, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&accepted);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                count.fetch_add(1, Ordering::SeqCst);
                let mut stream = stream.unwrap();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                std::thread::spawn(move || {
                    loop {
                        let mut line = String::new();
                        // Skip the request line and headers (status reads have no body).
                        while reader.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
                            line.clear();
                        }
                        if line != "\r\n" {
                            return;
                        }
                        let answer = format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                            body.len()
                        );
                        if stream.write_all(answer.as_bytes()).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (addr, accepted)
    }

    #[tokio::test]
    async fn requests_reuse_one_connection() {
        let id = "1f3c5b9a-0c1d-4e2f-8a9b-0123456789ab";
        let body: &'static str = Box::leak(
            json!({"previewId": id, "operationType": "commit", "status": "pending"})
                .to_string()
                .into_boxed_str(),
        );
        let (addr, accepted) = keep_alive_peer(body);
        let client = Client::from_configured(Some(&addr)).unwrap();
        let cancel = CancellationToken::new();
        for _ in 0..3 {
            let (record, _) = client.status(id, &cancel).await.unwrap();
            assert_eq!(record.preview_id, id);
        }
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            1,
            "one connection for three requests"
        );
    }
}
