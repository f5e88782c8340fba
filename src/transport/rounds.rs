//! Asking the client in the 2026-07-28 era, where a server sends it no requests of its
//! own: the call answers `resultType: "input_required"` with the request embedded
//! (`inputRequests`) and an opaque `requestState`; the client fulfils the request and
//! calls again with its answers (`inputResponses`) and that state echoed.
//!
//! Used for a proposal's review (see [`super::elicit`]). The proposal is made, and
//! audited, by the first call; its answer waits here under the state, a random token that
//! names nothing else, and the second call gets it whatever the client answered: the
//! answer decides nothing. The era has no completion notification; the page shows the
//! outcome and `operation.status` tells it. A token is good once, for [`KEEP`], and at
//! most [`MAX_WAITING`] answers wait at once (past that a call answers at once, unasked).

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::elicit::Review;
use super::jsonrpc::{self, Id};
use super::protocol::{self, meta};
use super::reply::CallReply;
use crate::error::code;

/// How long an answer waits for the client to call again.
const KEEP: Duration = Duration::from_secs(10 * 60);
/// The most answers waiting at once, across the process.
const MAX_WAITING: usize = 1024;
/// What every state this server hands out starts with.
const PREFIX: &str = "gitward-review-";

static WAITING: LazyLock<Mutex<HashMap<String, (Instant, CallReply)>>> =
    LazyLock::new(Default::default);

/// The `input_required` answer asking for `review`, with `reply` kept for the call that
/// follows; `Err(reply)` back when too many answers wait already.
pub fn ask(reply: CallReply, review: &Review) -> Result<Value, CallReply> {
    let state = format!(
        "{PREFIX}{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    let id = reply.id.clone();
    {
        let mut waiting = WAITING.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        waiting.retain(|_, (since, _)| now.duration_since(*since) < KEEP);
        if waiting.len() >= MAX_WAITING {
            return Err(reply);
        }
        waiting.insert(state.clone(), (now, reply));
    }
    Ok(jsonrpc::result(
        id,
        json!({
            "resultType": "input_required",
            "inputRequests": {
                "review": { "method": "elicitation/create", "params": review.params() },
            },
            "requestState": state,
            "_meta": { meta::SERVER_INFO: protocol::server_info() },
        }),
    ))
}

/// The answer kept under `state`, now for the request `id`; an error when this server
/// holds nothing under it (never handed out, used already, expired, or a restart since).
pub fn resume(id: Id, state: &Value) -> Result<CallReply, Value> {
    let kept = state
        .as_str()
        .filter(|s| s.starts_with(PREFIX))
        .and_then(|s| {
            let mut waiting = WAITING.lock().unwrap_or_else(|p| p.into_inner());
            waiting.remove(s)
        })
        .filter(|(since, _)| since.elapsed() < KEEP);
    match kept {
        Some((_, mut reply)) => {
            reply.id = id;
            Ok(reply)
        }
        None => Err(jsonrpc::error(
            id,
            code::INVALID_PARAMS,
            "Invalid params",
            Some(json!({
                "details": "requestState is unknown or expired: call the tool again without it"
            })),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Rendered;
    use crate::transport::protocol::Version;

    fn reply(id: i64) -> CallReply {
        CallReply {
            id: json!(id),
            rendered: Rendered {
                structured: serde_json::value::RawValue::from_string("{\"a\":1}".into()).unwrap(),
                text: None,
            },
            is_error: false,
            version: Version::V2026_07_28,
        }
    }

    fn review() -> Review {
        Review {
            preview_id: "p".into(),
            elicitation_id: "e".into(),
            url: "http://127.0.0.1:1/#proposal=p".into(),
            message: "gitward asks you to review: a merge".into(),
        }
    }

    #[test]
    fn the_kept_answer_comes_back_once_under_the_new_id() {
        let Ok(asked) = ask(reply(1), &review()) else {
            panic!("not asked")
        };
        let result = &asked["result"];
        assert_eq!(result["resultType"], "input_required");
        let request = &result["inputRequests"]["review"];
        assert_eq!(request["method"], "elicitation/create");
        assert_eq!(request["params"]["mode"], "url");
        let state = result["requestState"].clone();
        let again = resume(json!(2), &state).ok().unwrap();
        assert_eq!(again.id, json!(2));
        assert_eq!(again.rendered.structured.get(), "{\"a\":1}");
        let twice = resume(json!(3), &state).err().unwrap();
        assert_eq!(twice["error"]["code"], code::INVALID_PARAMS);
        for forged in [json!("gitward-review-0"), json!(7), json!("x")] {
            assert!(resume(json!(4), &forged).is_err(), "{forged}");
        }
    }
}
