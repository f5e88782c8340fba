//! Review in the host: where a client declares URL-mode elicitation
//! (`capabilities.elicitation.url`), a new proposal asks it, beside the proposal's answer,
//! to take the person to the proposal's card (`elicitation/create`, `mode: "url"`), and
//! once the proposal is decided (approved, rejected, expired, withdrawn) tells it the flow
//! is over (`notifications/elicitation/complete`).
//!
//! The request decides nothing. Accept, decline, cancel or no answer at all leave the
//! proposal exactly as it was: the person decides on the page, which needs its own login
//! session, or on a terminal, and the gateway's status says when. Form mode is never
//! used for this, since a form's answer comes back through the client, from the agent's
//! side of the conversation. The proposal tool answers as it always did; a client that
//! declares no URL mode is sent nothing at all.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::outgoing::Outgoing;
use super::reply::CallReply;
use super::rounds;
use crate::config::Config;
use crate::gateway::addr::GatewayAddr;
use crate::gateway::api::Status;
use crate::gateway::client::{Client, GatewayError};
use crate::gateway::page;
use crate::operation;
use crate::process::CancellationToken;

/// How often a followed proposal's status is read.
const POLL: Duration = Duration::from_millis(500);
/// The longest a proposal is followed (its expiry ends it long before, unless extended).
const FOLLOW_AT_MOST: Duration = Duration::from_secs(24 * 60 * 60);
/// How long a new proposal waits for its session's event stream to open.
const WAIT_FOR_STREAM: Duration = Duration::from_secs(10);
/// The longest operation summary shown in the host's prompt.
const MAX_SUMMARY: usize = 120;

/// Whether `capabilities` (a client's, as `initialize` or a request's `_meta` carries
/// them) declare URL-mode elicitation.
pub fn declares_url(capabilities: Option<&Value>) -> bool {
    capabilities
        .and_then(|c| c.get("elicitation"))
        .and_then(|e| e.get("url"))
        .is_some_and(Value::is_object)
}

/// A conversation's way to its client outside any request: stdio's writer, an HTTP
/// session's event stream while one is open. Closed (`None`), nothing is sent.
#[derive(Clone, Default)]
pub struct Standing {
    queue: Arc<Mutex<Option<Outgoing>>>,
}

impl Standing {
    /// Sends from now on to `queue`; `None` closes the way (the writer can then end).
    pub fn set(&self, queue: Option<Outgoing>) {
        *self.queue.lock().unwrap_or_else(|p| p.into_inner()) = queue;
    }

    /// Sends to `queue` until the returned guard is dropped, on every path out of the
    /// serving loop: a sender left behind would keep the writer from ending.
    pub fn open(&self, queue: Outgoing) -> Opened {
        self.set(Some(queue.clone()));
        Opened(self.clone(), queue)
    }

    pub fn is_open(&self) -> bool {
        self.queue
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_some_and(|q| !q.is_closed())
    }

    fn send(&self, message: &Value) -> bool {
        // Writing a `Value` into memory cannot fail.
        let bytes = serde_json::to_vec(message).unwrap_or_default();
        let queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        queue.as_ref().is_some_and(|q| q.send(bytes).is_ok())
    }
}

/// Closes its [`Standing`] when dropped, unless a newer queue (a client's next event
/// stream) took its place.
pub struct Opened(Standing, Outgoing);

impl Drop for Opened {
    fn drop(&mut self) {
        let mut queue = self.0.queue.lock().unwrap_or_else(|p| p.into_inner());
        if queue.as_ref().is_some_and(|q| q.same_channel(&self.1)) {
            queue.take();
        }
    }
}

/// What the host is asked to show for one proposal.
#[derive(Debug, Clone, PartialEq)]
pub struct Review {
    pub preview_id: String,
    pub elicitation_id: String,
    pub url: String,
    pub message: String,
}

impl Review {
    /// The proposal a successful call of `tool` (its dotted name) with `args` made, when
    /// its card can be linked; `None` for every other call.
    pub fn of_call(config: &Config, tool: &str, args: &Value, result: &RawValue) -> Option<Review> {
        tool.strip_prefix("operation.preview.")?;
        let result: Value = serde_json::from_str(result.get()).ok()?;
        if result.get("status")?.as_str()? != Status::Pending.as_str() {
            return None;
        }
        let preview_id = result.get("previewId")?.as_str()?;
        let kind = result.get("operationType")?.as_str()?;
        let gateway = GatewayAddr::parse(config.gateway_addr.as_deref()?).ok()?;
        let url = page::card_url(config.run_dir.as_deref()?, &gateway, preview_id)?;
        Some(Review {
            preview_id: preview_id.to_owned(),
            elicitation_id: uuid::Uuid::new_v4().to_string(),
            url,
            message: format!("gitward asks you to review: {}", summary(kind, args)),
        })
    }

    /// The `elicitation/create` parameters.
    pub fn params(&self) -> Value {
        json!({
            "mode": "url",
            "elicitationId": self.elicitation_id,
            "url": self.url,
            "message": self.message,
        })
    }

    /// The `elicitation/create` request, under an id of the server's own.
    pub fn request(&self) -> Value {
        json!({
            "jsonrpc": "2.0",
            "id": format!("gitward-review-{}", self.elicitation_id),
            "method": "elicitation/create",
            "params": self.params(),
        })
    }

    pub fn completed(&self) -> Value {
        json!({
            "jsonrpc": "2.0",
            "method": "notifications/elicitation/complete",
            "params": { "elicitationId": self.elicitation_id },
        })
    }
}

/// What the proposal would do, in a few words: "merge feature into main".
fn summary(kind: &str, args: &Value) -> String {
    let field = |name: &str| args.get(name).and_then(Value::as_str).map(shown);
    let said = match kind {
        "merge" => field("sourceRef")
            .zip(field("targetRef"))
            .map(|(from, into)| format!("merge {from} into {into}")),
        "rebase" => field("ontoRef").map(|onto| format!("rebase onto {onto}")),
        "commit" => field("message").map(|m| format!("commit \"{m}\"")),
        _ => None,
    };
    // A tool's title is "Propose a merge": the host's prompt says "review: a merge".
    let text = said.unwrap_or_else(|| {
        operation::find(kind).map_or_else(
            || kind.to_owned(),
            |op| op.title().trim_start_matches("Propose ").to_owned(),
        )
    });
    text.chars().take(MAX_SUMMARY).collect()
}

/// The first line of a foreign string, without control characters, at most 60 characters.
fn shown(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    line.chars().filter(|c| !c.is_control()).take(60).collect()
}

/// The answer to a successful call of `tool` from a client that declared URL mode. When
/// the call made a proposal whose card can be linked: in the legacy eras the same answer,
/// the review asked beside it (see [`follow`]); in 2026-07-28, where only an answer can
/// ask, `Err` with the `input_required` answer (see [`super::rounds`]).
pub fn offer(
    config: &Config,
    standing: &Standing,
    stop: CancellationToken,
    tool: &str,
    args: &Value,
    reply: CallReply,
) -> Result<CallReply, Value> {
    let Some(review) = Review::of_call(config, tool, args, &reply.rendered.structured) else {
        return Ok(reply);
    };
    if reply.version.is_modern() {
        return match rounds::ask(reply, &review) {
            Ok(asking) => Err(asking),
            Err(reply) => Ok(reply),
        };
    }
    if let Ok(gateway) = Client::from_configured(config.gateway_addr.as_deref()) {
        follow(review, standing.clone(), gateway, stop);
    }
    Ok(reply)
}

/// Asks the client to show `review`, then follows its proposal at `gateway` and says when
/// it is decided. Runs on its own: the tool's answer never waits for it. An HTTP session
/// whose event stream is not open yet is waited for a little; the follow ends when the
/// proposal leaves `pending`, the gateway forgets it, the way to the client closes, or
/// `stop` fires.
pub fn follow(review: Review, standing: Standing, gateway: Client, stop: CancellationToken) {
    tokio::spawn(async move {
        let started = Instant::now();
        let mut asked = false;
        while started.elapsed() < FOLLOW_AT_MOST {
            if !asked && standing.is_open() {
                asked = standing.send(&review.request());
            }
            let gone = if asked {
                !standing.is_open()
            } else {
                started.elapsed() > WAIT_FOR_STREAM
            };
            if gone {
                return;
            }
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(POLL) => {}
            }
            match gateway.status(&review.preview_id, &stop).await {
                Ok((record, _)) if record.status == Status::Pending => {}
                Ok(_) => {
                    if asked {
                        standing.send(&review.completed());
                    }
                    return;
                }
                Err(GatewayError::UnknownPreview(_) | GatewayError::Cancelled) => return,
                // A gateway restarting or slow to answer: its next status says more.
                Err(_) => {}
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_declared_url_mode_counts() {
        assert!(declares_url(Some(&json!({"elicitation": {"url": {}}}))));
        assert!(declares_url(Some(
            &json!({"elicitation": {"form": {}, "url": {}}})
        )));
        for no in [
            json!({}),
            json!({"elicitation": {}}),
            json!({"elicitation": {"form": {}}}),
            json!({"elicitation": {"url": true}}),
        ] {
            assert!(!declares_url(Some(&no)), "{no}");
        }
        assert!(!declares_url(None));
    }

    #[test]
    fn summaries_say_what_the_card_is_about() {
        let merge = json!({"sourceRef": "feature", "targetRef": "main"});
        assert_eq!(summary("merge", &merge), "merge feature into main");
        assert_eq!(
            summary("commit", &json!({"message": "Add it\n\nbody"})),
            "commit \"Add it\""
        );
        assert_eq!(
            summary("rebase", &json!({"ontoRef": "main\u{1b}[2J"})),
            "rebase onto main[2J"
        );
        assert_eq!(summary("reset", &json!({})), "a reset");
        assert_eq!(summary("merge", &json!({"sourceRef": "x"})), "a merge");
    }

    #[test]
    fn the_request_is_url_mode_and_nothing_is_sent_on_a_closed_way() {
        let review = Review {
            preview_id: "p".into(),
            elicitation_id: "e1".into(),
            url: "http://127.0.0.1:1/#proposal=p".into(),
            message: "gitward asks you to review: merge feature into main".into(),
        };
        let standing = Standing::default();
        assert!(!standing.send(&review.request()));
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        standing.set(Some(tx));
        assert!(standing.is_open());
        assert!(standing.send(&review.request()));
        let sent: Value = serde_json::from_slice(&rx.try_recv().unwrap()).unwrap();
        assert_eq!(sent["method"], "elicitation/create");
        assert_eq!(sent["params"]["mode"], "url");
        assert_eq!(sent["params"]["elicitationId"], "e1");
        assert!(sent["params"].get("requestedSchema").is_none());
        standing.set(None);
        assert!(!standing.is_open());
        assert!(!standing.send(&review.completed()));
    }

    #[test]
    fn an_older_stream_ending_leaves_the_newer_one_open() {
        let standing = Standing::default();
        let (old, _old_rx) = tokio::sync::mpsc::unbounded_channel();
        let (new, _new_rx) = tokio::sync::mpsc::unbounded_channel();
        let first = standing.open(old);
        let second = standing.open(new);
        drop(first);
        assert!(standing.is_open());
        drop(second);
        assert!(!standing.is_open());
    }
}
