//! Ledger entries for the gateway's lifecycle transitions and restores, written through
//! the one audit writer the sidecar uses (same chain, same signatures).
//!
//! The repository is pseudonymised exactly like a tool call's `repo_scope`, so one
//! repository correlates across the sidecar's and the gateway's entries without its path
//! being stored.

use serde_json::{Value, json};

use super::store::Transition;
use crate::audit::Entry;
use crate::audit::record::repo_scope;
use crate::gateway::api::{Channel, Status, StatusRecord};

/// The event type of every gateway lifecycle entry.
pub const EVENT_TYPE: &str = "proposal_transition";

/// The event type of a person's restore.
pub const RESTORE_EVENT_TYPE: &str = "restore";

/// The name of a transition in the ledger: `proposed` for the insertion, else the state
/// it reached.
pub fn transition_name(t: &Transition) -> &'static str {
    match t.from {
        None => "proposed",
        Some(_) => t.to.as_str(),
    }
}

fn ms(ts: jiff::Timestamp) -> u64 {
    u64::try_from(ts.as_millisecond()).unwrap_or(0)
}

/// The entry for transition `t` of the proposal now described by `record`.
pub fn transition_entry(t: &Transition, record: &StatusRecord, risk: &str) -> Entry {
    let scope = repo_scope(&json!({"repoPath": record.repo_path}));
    let restore_point = record
        .result
        .as_ref()
        .and_then(|r| r.restore_point_id.clone());
    let result = match t.to {
        Status::Failed => "error",
        _ => "success",
    };
    let mut entry = Entry::now();
    entry
        .set("tool", format!("gateway.{}", record.operation_type))
        .set("event_type", EVENT_TYPE)
        .set("transition", transition_name(t))
        .set("transitionSeq", t.seq)
        .set("transitionAt", ms(t.at))
        .set("from", t.from.map(Status::as_str))
        .set("to", t.to.as_str())
        .set("previewId", record.preview_id.as_str())
        .set("operation", record.operation_type.as_str())
        .set("repo_scope", scope)
        .set("agentId", record.agent_id.as_str())
        .set("channel", t.channel.map(Channel::as_str))
        .set("restorePointId", restore_point)
        .set("risk", risk)
        .set("approval", "human")
        .set("result", result)
        .set("summary", summary(t, record));
    // The repository's programs the write ran (hooks, drivers, signing), when any.
    if let Some(programs) = record
        .result
        .as_ref()
        .and_then(|r| r.fields.get("programs"))
    {
        entry.set("programs", programs.clone());
    }
    entry
}

fn summary(t: &Transition, record: &StatusRecord) -> String {
    let mut text = format!("{} {}", record.operation_type, transition_name(t));
    if t.to == Status::Failed {
        if let Some(kind) = record.result.as_ref().and_then(|r| r.failure) {
            let kind = serde_json::to_value(kind).unwrap_or(Value::Null);
            if let Some(kind) = kind.as_str() {
                text.push_str(": ");
                text.push_str(kind);
            }
        }
    }
    if let Some(note) = &t.note {
        text.push_str(" (");
        text.push_str(note);
        text.push(')');
    }
    text
}

/// The entry for a person's restore of `restore_point_id`, which first took `new_point`.
pub fn restore_entry(
    repo_path: &str,
    restore_point_id: &str,
    new_point: Option<&str>,
    channel: Channel,
    outcome: Result<(), &str>,
) -> Entry {
    let mut entry = Entry::now();
    entry
        .set("tool", "gateway.restore")
        .set("event_type", RESTORE_EVENT_TYPE)
        .set("transition", "restored")
        .set("repo_scope", repo_scope(&json!({"repoPath": repo_path})))
        .set("restoredFrom", restore_point_id)
        .set("restorePointId", new_point)
        .set("channel", channel.as_str())
        .set("risk", "high")
        .set("approval", "human")
        .set("result", if outcome.is_ok() { "success" } else { "error" })
        .set(
            "summary",
            match outcome {
                Ok(()) => "restored".to_owned(),
                Err(why) => format!("restore failed: {why}"),
            },
        );
    entry
}
