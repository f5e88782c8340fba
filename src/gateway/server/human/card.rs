//! The card: a proposal as the approval page and `gitward approve` show it — the status
//! record plus its risk, preview, confirmation needs and the code a terminal asks for.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::gateway::api::{DecidedBy, OperationResult, Status};
use crate::gateway::server::store::{CardData, StoredProposal};

/// What `GET /api/proposals/{id}` returns and `/api/events` streams.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Card {
    pub preview_id: String,
    pub operation_type: String,
    pub status: Status,
    pub agent_id: String,
    pub repo_path: Option<String>,
    pub branch: Option<String>,
    pub reason: String,
    pub risk: &'static str,
    pub created_at: String,
    pub expires_at: String,
    pub decided_at: Option<String>,
    pub decided_by: Option<DecidedBy>,
    pub reject_reason: Option<String>,
    pub result: Option<OperationResult>,
    /// The operation's own fields as proposed, so the page can show what was asked.
    pub fields: Map<String, Value>,
    pub preview: Option<Value>,
    pub preview_pending: bool,
    pub needs_confirmation: bool,
    pub confirmation_code: String,
    pub other_agents: Option<Value>,
}

impl Card {
    pub fn new(stored: StoredProposal, data: CardData, confirmation_code: String) -> Card {
        let StoredProposal {
            record, proposal, ..
        } = stored;
        let fields = proposal.fields;
        let branch = branch_of(&fields, data.pins.as_ref());
        let preview_pending = data.preview.is_none() && record.status == Status::Pending;
        Card {
            risk: risk(&record.operation_type, &fields),
            needs_confirmation: needs_confirmation(&record.operation_type, &fields),
            branch,
            preview_id: record.preview_id,
            operation_type: record.operation_type,
            status: record.status,
            agent_id: record.agent_id,
            repo_path: record.repo_path,
            reason: record.reason,
            created_at: record.created_at,
            expires_at: record.expires_at,
            decided_at: record.decided_at,
            decided_by: record.decided_by,
            reject_reason: record.reject_reason,
            result: record.result,
            fields,
            preview: data.preview,
            preview_pending,
            confirmation_code,
            other_agents: None,
        }
    }
}

/// The branch the card names: the one the pins read (the checked-out branch), else the
/// one the proposal names.
fn branch_of(fields: &Map<String, Value>, pins: Option<&Value>) -> Option<String> {
    let pinned = pins.and_then(|p| p.get("branch")).and_then(Value::as_str);
    pinned
        .or_else(|| fields.get("branch").and_then(Value::as_str))
        .or_else(|| fields.get("targetRef").and_then(Value::as_str))
        .map(str::to_owned)
}

fn flag(fields: &Map<String, Value>, name: &str) -> bool {
    fields.get(name).and_then(Value::as_bool) == Some(true)
}

/// True for what loses work the way no restore point fully hides from a person: a hard
/// reset, a discard, a force-with-lease push, a plan with any of these.
pub fn needs_confirmation(kind: &str, fields: &Map<String, Value>) -> bool {
    if crate::operation::find(kind).is_some_and(|op| op.needs_confirmation(fields)) {
        return true;
    }
    match kind {
        "discard" => true,
        "reset" => fields.get("mode").and_then(Value::as_str) == Some("hard"),
        "push" => flag(fields, "forceWithLease"),
        "plan" => fields
            .get("steps")
            .and_then(Value::as_array)
            .is_some_and(|steps| {
                steps.iter().any(|step| {
                    let kind = step.get("operationType").and_then(Value::as_str);
                    match (kind, step.as_object()) {
                        (Some(kind), Some(step)) => needs_confirmation(kind, step),
                        _ => false,
                    }
                })
            }),
        _ => false,
    }
}

/// The card's risk badge: the operation's own, raised to high for what needs confirmation.
pub fn risk(kind: &str, fields: &Map<String, Value>) -> &'static str {
    if needs_confirmation(kind, fields) {
        return "high";
    }
    crate::operation::risk::of(kind).as_str()
}

/// The card of `id`, expiring it first when its time is up (a read never shows a stale
/// `pending`).
pub async fn load(
    app: &std::sync::Arc<crate::gateway::server::app::App>,
    id: &str,
) -> Result<Card, crate::gateway::server::app::ApiError> {
    use crate::gateway::server::app::ApiError;
    if !crate::gateway::api::is_canonical_preview_id(id) {
        return Err(ApiError::not_found());
    }
    let owned = id.to_owned();
    let (stored, data, others, expired) = app
        .store
        .run(move |s| {
            let before = s.proposal(&owned)?.record.status;
            s.get(&owned, jiff::Timestamp::now())?;
            let stored = s.proposal(&owned)?;
            let data = s.card_data(&owned)?;
            let others = s.other_agents(&owned)?;
            let expired = before != Status::Expired && stored_is_expired(&stored);
            Ok((stored, data, others, expired))
        })
        .await?;
    if expired {
        app.changed.notify_one();
    }
    let mut card = Card::new(stored, data, app.auth.confirmation_code(id));
    card.other_agents = others;
    Ok(card)
}

fn stored_is_expired(stored: &StoredProposal) -> bool {
    stored.record.status == Status::Expired
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn destructive_choices_need_the_checkbox() {
        assert!(needs_confirmation("discard", &map(json!({"paths": ["a"]}))));
        assert!(needs_confirmation("reset", &map(json!({"mode": "hard"}))));
        assert!(!needs_confirmation("reset", &map(json!({"mode": "mixed"}))));
        assert!(needs_confirmation(
            "push",
            &map(json!({"forceWithLease": true}))
        ));
        assert!(!needs_confirmation("push", &map(json!({}))));
        let plan = json!({"steps": [{"operationType": "merge"},
                                    {"operationType": "reset", "mode": "hard"}]});
        assert!(needs_confirmation("plan", &map(plan)));
        assert!(!needs_confirmation("commit", &map(json!({"message": "m"}))));
        assert_eq!(risk("push", &map(json!({"forceWithLease": true}))), "high");
        assert_eq!(risk("branch", &map(json!({}))), "low");
    }
}
