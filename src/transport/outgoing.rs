//! Messages the server sends a client on its own, before the answer to a request: the
//! path every server→client notification takes (progress now; anything a request may
//! tell its client later, such as log lines, the same way).
//!
//! Each transport owns one [`Outgoing`] queue per place it writes to: a stdio connection
//! has one writer (its replies go through the same queue, so a request's notifications
//! are written before its answer), and an HTTP request that may be told something gets
//! a queue of its own, which its response turns into an event stream. A request holds a
//! [`RequestChannel`] onto that queue, closed by the dispatch before the answer is queued:
//! a notification a tool's straggling task sends later is dropped, never written after
//! the response.

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use super::protocol::Version;
use crate::process::CancellationToken;
use crate::progress::{Progress, Update, Watcher};

/// A queue of whole JSON-RPC messages (compact JSON, no line ending) towards one client.
pub type Outgoing = mpsc::UnboundedSender<Vec<u8>>;

/// One request's way to its client until it is answered.
#[derive(Clone, Default)]
pub struct RequestChannel {
    queue: Arc<Mutex<Option<Outgoing>>>,
}

impl RequestChannel {
    /// A channel onto `queue`; `None` when the transport cannot carry messages before the
    /// answer (an HTTP client that takes JSON responses only).
    pub fn new(queue: Option<Outgoing>) -> RequestChannel {
        RequestChannel {
            queue: Arc::new(Mutex::new(queue)),
        }
    }

    /// Queues the notification `method`; false when the channel is closed (or none).
    pub fn notify(&self, method: &str, params: Value) -> bool {
        let message = json!({ "jsonrpc": "2.0", "method": method, "params": params });
        // Writing a `Value` into memory cannot fail.
        let bytes = serde_json::to_vec(&message).unwrap_or_default();
        // Sent under the lock, so `close` returns only after a send under way is queued.
        let queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        queue.as_ref().is_some_and(|q| q.send(bytes).is_ok())
    }

    /// Whether anything sent now could still reach the client.
    pub fn is_open(&self) -> bool {
        self.queue
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    /// Nothing more is sent; the answer may be queued once this returns.
    pub fn close(&self) {
        self.queue.lock().unwrap_or_else(|p| p.into_inner()).take();
    }
}

/// A request's `_meta.progressToken`: a string or an integer, as MCP defines it; anything
/// else asks for nothing.
pub fn progress_token(params: &Map<String, Value>) -> Option<Value> {
    let token = params.get("_meta")?.get("progressToken")?;
    let usable = token.is_string() || token.is_i64() || token.is_u64();
    usable.then(|| token.clone())
}

/// The progress handle of a request: `notifications/progress` on `channel` when the
/// request carries a token and the channel is open, nothing otherwise.
pub fn progress(
    params: &Map<String, Value>,
    version: Version,
    channel: &RequestChannel,
    cancel: &CancellationToken,
) -> Progress {
    match progress_token(params) {
        Some(token) if channel.is_open() => Progress::new(Notifier {
            channel: channel.clone(),
            token,
            with_message: version.has_progress_message(),
            cancel: cancel.clone(),
        }),
        _ => Progress::none(),
    }
}

/// Tells the client of one request how it is coming along.
struct Notifier {
    channel: RequestChannel,
    token: Value,
    /// `message` arrived in 2025-03-26; an older client is sent none.
    with_message: bool,
    /// A request the client cancelled is not answered, nor told about any more.
    cancel: CancellationToken,
}

impl Watcher for Notifier {
    fn update(&self, update: &Update<'_>) {
        if self.cancel.is_cancelled() {
            return;
        }
        let mut params = Map::new();
        params.insert("progressToken".into(), self.token.clone());
        params.insert("progress".into(), update.progress.into());
        if let Some(total) = update.total {
            params.insert("total".into(), total.into());
        }
        if self.with_message && !update.message.is_empty() {
            params.insert("message".into(), update.message.into());
        }
        self.channel
            .notify("notifications/progress", Value::Object(params));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(meta: Value) -> Map<String, Value> {
        json!({ "name": "x", "_meta": meta })
            .as_object()
            .unwrap()
            .clone()
    }

    #[test]
    fn only_a_string_or_integer_token_asks_for_progress() {
        for ok in [json!("abc"), json!(7), json!(0)] {
            assert_eq!(
                progress_token(&params(json!({"progressToken": ok}))),
                Some(ok)
            );
        }
        for no in [json!(null), json!(1.5), json!(true), json!({}), json!([1])] {
            assert_eq!(progress_token(&params(json!({"progressToken": no}))), None);
        }
        assert_eq!(progress_token(&params(json!({}))), None);
        assert_eq!(progress_token(&Map::new()), None);
    }

    #[test]
    fn notifications_carry_the_token_in_each_eras_form_and_stop_at_close() {
        for (version, with_message) in [
            (Version::V2024_11_05, false),
            (Version::V2025_03_26, true),
            (Version::V2026_07_28, true),
        ] {
            let (tx, mut rx) = mpsc::unbounded_channel();
            let channel = RequestChannel::new(Some(tx));
            let cancel = CancellationToken::new();
            let p = progress(
                &params(json!({"progressToken": "t1"})),
                version,
                &channel,
                &cancel,
            );
            p.report(3, Some(9), || "three of nine".into());
            channel.close();
            p.report(9, Some(9), || "all".into());
            let sent: Value = serde_json::from_slice(&rx.try_recv().unwrap()).unwrap();
            let mut want = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": "t1", "progress": 3, "total": 9}});
            if with_message {
                want["params"]["message"] = "three of nine".into();
            }
            assert_eq!(sent, want, "{version:?}");
            assert!(rx.try_recv().is_err(), "nothing after close");
        }
    }

    #[test]
    fn no_token_no_channel_or_a_cancelled_request_sends_nothing() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let channel = RequestChannel::new(Some(tx));
        let cancel = CancellationToken::new();
        let untracked = progress(&params(json!({})), Version::V2025_11_25, &channel, &cancel);
        assert!(!untracked.is_watched());
        untracked.report(1, None, || unreachable!("no token"));
        let none = RequestChannel::new(None);
        let token = params(json!({"progressToken": 1}));
        assert!(!progress(&token, Version::V2025_11_25, &none, &cancel).is_watched());
        let p = progress(&token, Version::V2025_11_25, &channel, &cancel);
        cancel.cancel();
        p.report(1, None, String::new);
        assert!(rx.try_recv().is_err());
    }
}
