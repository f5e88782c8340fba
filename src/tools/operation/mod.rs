//! The write handshake, sidecar side: one generic preview tool per operation type
//! ([`preview`]), `operation.status` ([`status`]) and `operation.cancel` ([`cancel`]).
//!
//! Nothing here writes. A preview POSTs a proposal to the approval gateway through the
//! one typed client (`gateway::client`), reads its status once, and returns at once; a
//! person decides on the gateway's page, and the gateway carries the operation out.

pub mod cancel;
mod hint;
pub mod preview;
pub mod status;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};

use crate::error::{ToolError, code};
use crate::gateway::api::{Status, StatusRecord};
use crate::gateway::client::{Client, GatewayError};

use super::CallCtx;

/// `source` of every handshake result: the answer comes from the approval gateway.
pub const SOURCE: &str = "fluxgit-gateway";

/// Sent as `agentId` when the client declared no usable name.
pub const ANONYMOUS_AGENT: &str = "external-mcp-sidecar";

/// How long an agent should wait before it polls `operation.status` again.
const POLL_AFTER_MS: u64 = 2000;

/// The gateway client of this configuration, or why there is none.
fn client(ctx: &CallCtx) -> Result<Client, GatewayError> {
    Client::from_configured(ctx.config.gateway_addr.as_deref())
}

/// The `agentId` the gateway's policy, quota and audit see: the declared client name
/// lower-cased, every character outside `[a-z0-9._-]` (and every run of them) made one
/// `-`, at most 64 bytes. Attribution only: the name is self-declared.
pub fn agent_id(client_name: Option<&str>) -> String {
    let mut id = String::new();
    for ch in client_name.unwrap_or_default().chars() {
        let ch = ch.to_ascii_lowercase();
        if ch.is_ascii_lowercase() || ch.is_ascii_digit() || matches!(ch, '.' | '_') {
            id.push(ch);
        } else if !id.ends_with('-') {
            id.push('-');
        }
    }
    let id = id.trim_matches('-');
    let id = &id[..id.len().min(64)];
    let id = id.trim_end_matches('-');
    if id.is_empty() || id.chars().all(|c| c == '.') {
        ANONYMOUS_AGENT.to_owned()
    } else {
        id.to_owned()
    }
}

/// What the agent should call next while a proposal is live.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NextAction {
    /// Always `operation.status`, as it is served.
    #[serde(serialize_with = "crate::model::tool_name::serialize_served")]
    pub tool: &'static str,
    /// Its arguments.
    pub data: NextActionData,
    /// Milliseconds to wait before calling it.
    pub after_ms: u64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NextActionData {
    pub preview_id: String,
}

impl NextAction {
    /// Poll the status of `preview_id` while `status` is live; nothing once it ended.
    pub fn poll(preview_id: &str, status: Status) -> Option<NextAction> {
        (!status.is_terminal()).then(|| NextAction {
            tool: "operation.status",
            data: NextActionData {
                preview_id: preview_id.to_owned(),
            },
            after_ms: POLL_AFTER_MS,
        })
    }
}

/// The schema of a lifecycle state: exactly the contract's eight names.
fn status_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": Status::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
    })
}

/// A proposal that ended without completion (`rejected`, `failed`, `expired`,
/// `cancelled`) is an error result carrying the whole record, so the agent reports what
/// really happened. `None` for a live or completed proposal.
pub fn ended(record: &StatusRecord, body: &Value) -> Option<ToolError> {
    if !record.status.is_terminal() || record.status == Status::Completed {
        return None;
    }
    let status = record.status.as_str();
    let why = match record.status {
        Status::Rejected => match record.reject_reason.as_deref() {
            Some(reason) if !reason.trim().is_empty() => {
                format!("a person rejected it: {reason}")
            }
            _ => "a person rejected it".to_owned(),
        },
        Status::Failed => {
            let failure = record
                .result
                .as_ref()
                .and_then(|r| r.failure)
                .and_then(|f| serde_json::to_value(f).ok())
                .and_then(|v| v.as_str().map(str::to_owned));
            match failure {
                Some(kind) => format!("the execution failed ({kind}); nothing further will run"),
                None => "the execution failed; nothing further will run".to_owned(),
            }
        }
        Status::Expired => "nobody decided before it expired; it was not rejected".to_owned(),
        _ => "it was withdrawn before anyone decided".to_owned(),
    };
    Some(ToolError::new(
        code::PROPOSAL_ENDED,
        format!("Proposal {} ended {status}: {why}", record.preview_id),
        json!({ "previewId": record.preview_id, "status": status, "statusBody": body }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_ids_are_sanitized_names() {
        for (name, id) in [
            (Some("claude-code"), "claude-code"),
            (Some("Claude Code"), "claude-code"),
            (Some("  Cursor / Agent!! "), "cursor-agent"),
            (Some("codex_mcp.v2"), "codex_mcp.v2"),
            (Some("ÆØÅ"), ANONYMOUS_AGENT),
            (Some(""), ANONYMOUS_AGENT),
            (Some("..."), ANONYMOUS_AGENT),
            (None, ANONYMOUS_AGENT),
        ] {
            assert_eq!(agent_id(name), id, "{name:?}");
        }
        let long = agent_id(Some(&format!("{}-{}", "a".repeat(63), "b".repeat(10))));
        assert_eq!(long, "a".repeat(63));
        for name in ["x y z", "A", "a\u{0}b", &"z-".repeat(100)] {
            let id = agent_id(Some(name));
            assert!(crate::gateway::api::is_sanitized_agent_id(&id), "{id}");
        }
    }

    #[test]
    fn only_endings_without_completion_are_errors() {
        let record = |status: &str| -> (StatusRecord, Value) {
            let body = json!({"previewId": "1f3c5b9a-0c1d-4e2f-8a9b-0123456789ab",
                "operationType": "commit", "status": status, "rejectReason": "not now",
                "result": {"failure": "stale"}});
            (serde_json::from_value(body.clone()).unwrap(), body)
        };
        for live in ["pending", "approved", "executing", "completed"] {
            let (r, body) = record(live);
            assert!(ended(&r, &body).is_none(), "{live}");
        }
        for (status, says) in [
            ("rejected", "rejected it: not now"),
            ("failed", "(stale)"),
            ("expired", "it was not rejected"),
            ("cancelled", "withdrawn"),
        ] {
            let (r, body) = record(status);
            let e = ended(&r, &body).unwrap();
            assert_eq!(e.code, code::PROPOSAL_ENDED);
            assert!(e.message.contains(says), "{}", e.message);
            assert_eq!(e.data["statusBody"], body);
        }
    }
}
