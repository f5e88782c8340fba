//! Every lifecycle move: a person's decision, the agent's cancellation, the executor's
//! claim and outcome, reconciliation, expiry and extension — each one `BEGIN IMMEDIATE`
//! transaction with a compare-and-set on the old state.

use jiff::Timestamp;
use rusqlite::{Transaction, TransactionBehavior, params};
use serde_json::Value;

use super::proposals::read_record;
use super::rows::{self, millis};
use super::{Reconciled, Store, StoreError};
use crate::gateway::api::{Channel, FailureKind, OperationResult, Status, StatusRecord};
use crate::gateway::server::lifecycle;

/// The latest deadline a record can show (`9999-12-30T22:00:00Z`, the last millisecond
/// jiff accepts): a longer expiry or extension is clamped to it rather than stored as a
/// time no reader can render.
pub(super) const LATEST: i64 = 253_402_207_200_000;

/// `span` in milliseconds, at most [`LATEST`] (so adding it to a stored time cannot overflow).
pub(super) fn span_millis(span: std::time::Duration) -> i64 {
    i64::try_from(span.as_millis()).map_or(LATEST, |ms| ms.min(LATEST))
}

/// What a transition writes besides the new state.
#[derive(Default)]
struct Change<'a> {
    channel: Option<Channel>,
    reject_reason: Option<&'a str>,
    result: Option<&'a OperationResult>,
    intent: Option<&'a Value>,
    /// Only this agent may make the move.
    owner: Option<&'a str>,
    note: Option<&'a str>,
}

impl Store {
    /// pending → approved, by a person on `channel`.
    pub fn approve(
        &mut self,
        id: &str,
        channel: Channel,
        now: Timestamp,
    ) -> Result<StatusRecord, StoreError> {
        let change = Change {
            channel: Some(channel),
            ..Change::default()
        };
        self.transition(id, Status::Pending, Status::Approved, now, change)
    }

    /// pending → rejected, by a person on `channel`, with their reason if they gave one.
    pub fn reject(
        &mut self,
        id: &str,
        channel: Channel,
        reason: Option<&str>,
        now: Timestamp,
    ) -> Result<StatusRecord, StoreError> {
        let change = Change {
            channel: Some(channel),
            reject_reason: reason,
            ..Change::default()
        };
        self.transition(id, Status::Pending, Status::Rejected, now, change)
    }

    /// pending → cancelled, only by the agent that proposed it ([`StoreError::NotOwner`]
    /// otherwise, checked before the state so a stranger learns nothing).
    pub fn cancel(
        &mut self,
        id: &str,
        agent_id: &str,
        now: Timestamp,
    ) -> Result<StatusRecord, StoreError> {
        let change = Change {
            owner: Some(agent_id),
            ..Change::default()
        };
        self.transition(id, Status::Pending, Status::Cancelled, now, change)
    }

    /// approved → executing, recording the executor's intent (the expected pre- and
    /// post-state refs) in the same transaction, so a crash after the claim always leaves
    /// something to reconcile against.
    pub fn claim(
        &mut self,
        id: &str,
        intent: &Value,
        now: Timestamp,
    ) -> Result<StatusRecord, StoreError> {
        let change = Change {
            intent: Some(intent),
            ..Change::default()
        };
        self.transition(id, Status::Approved, Status::Executing, now, change)
    }

    /// Replaces the intent of an `executing` proposal (once the post-state is known).
    pub fn update_intent(
        &mut self,
        id: &str,
        intent: &Value,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        let text = rows::to_json(intent)?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let current = read_record(&tx, id)?.status;
        if current != Status::Executing {
            return Err(StoreError::Conflict {
                current_state: current,
            });
        }
        tx.execute(
            "INSERT INTO intents (preview_id, intent_json, recorded_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (preview_id) DO UPDATE SET intent_json = ?2, recorded_at = ?3",
            params![id, text, millis(now)],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// executing → completed with the operation's result (which carries no `failure`).
    pub fn complete(
        &mut self,
        id: &str,
        result: &OperationResult,
        now: Timestamp,
    ) -> Result<StatusRecord, StoreError> {
        if result.failure.is_some() {
            return Err(StoreError::Invalid {
                field: "result.failure",
                reason: "a completed operation has no failure".into(),
            });
        }
        let change = Change {
            result: Some(result),
            ..Change::default()
        };
        self.transition(id, Status::Executing, Status::Completed, now, change)
    }

    /// executing → failed with the result, which must say why in `failure`.
    pub fn fail(
        &mut self,
        id: &str,
        result: &OperationResult,
        now: Timestamp,
    ) -> Result<StatusRecord, StoreError> {
        if result.failure.is_none() {
            return Err(StoreError::Invalid {
                field: "result.failure",
                reason: "a failed operation says why".into(),
            });
        }
        let change = Change {
            result: Some(result),
            ..Change::default()
        };
        self.transition(id, Status::Executing, Status::Failed, now, change)
    }

    /// Ends an `executing` proposal found after a restart, as reconciliation decided.
    pub fn reconcile(
        &mut self,
        id: &str,
        outcome: &Reconciled,
        now: Timestamp,
    ) -> Result<StatusRecord, StoreError> {
        let (to, result) = match outcome {
            Reconciled::Completed(result) => (
                Status::Completed,
                OperationResult {
                    failure: None,
                    ..result.clone()
                },
            ),
            Reconciled::Interrupted(result) => (
                Status::Failed,
                OperationResult {
                    failure: Some(FailureKind::Interrupted),
                    ..result.clone()
                },
            ),
        };
        let change = Change {
            result: Some(&result),
            note: Some("reconciled after restart"),
            ..Change::default()
        };
        self.transition(id, Status::Executing, to, now, change)
    }

    /// Expires every pending proposal past its deadline (the timer's job); returns their ids.
    pub fn expire_due(&mut self, now: Timestamp) -> Result<Vec<String>, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let due: Vec<String> = {
            let mut stmt = tx.prepare(
                "SELECT preview_id FROM proposals
                 WHERE status = 'pending' AND expires_at <= ?1 ORDER BY expires_at",
            )?;
            let ids = stmt.query_map([millis(now)], |r| r.get(0))?;
            ids.collect::<Result<_, _>>()?
        };
        for id in &due {
            expire_if_due(&tx, id, now)?;
        }
        tx.commit()?;
        Ok(due)
    }

    /// Gives a pending proposal `by` more time. A proposal already past its deadline is
    /// expired instead and the call answers [`StoreError::Conflict`].
    pub fn extend(
        &mut self,
        id: &str,
        by: std::time::Duration,
        now: Timestamp,
    ) -> Result<StatusRecord, StoreError> {
        let by = span_millis(by);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        if expire_if_due(&tx, id, now)? {
            tx.commit()?;
            return Err(StoreError::Conflict {
                current_state: Status::Expired,
            });
        }
        let current = read_record(&tx, id)?.status;
        if current != Status::Pending {
            return Err(StoreError::Conflict {
                current_state: current,
            });
        }
        tx.execute(
            "UPDATE proposals SET expires_at = min(expires_at + ?2, ?4), updated_at = ?3
             WHERE preview_id = ?1 AND status = 'pending'",
            params![id, by, millis(now), LATEST],
        )?;
        let record = read_record(&tx, id)?;
        tx.commit()?;
        Ok(record)
    }

    /// The one compare-and-set every state change goes through.
    fn transition(
        &mut self,
        id: &str,
        from: Status,
        to: Status,
        now: Timestamp,
        change: Change<'_>,
    ) -> Result<StatusRecord, StoreError> {
        if !lifecycle::is_legal(from, to) {
            return Err(StoreError::Illegal { from, to });
        }
        let result = change.result.map(rows::to_json).transpose()?;
        let intent = change.intent.map(rows::to_json).transpose()?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let current = read_record(&tx, id)?;
        if change.owner.is_some_and(|owner| owner != current.agent_id) {
            return Err(StoreError::NotOwner);
        }
        if from == Status::Pending && expire_if_due(&tx, id, now)? {
            // The deadline passed before this decision: the expiry is recorded and wins.
            tx.commit()?;
            return Err(StoreError::Conflict {
                current_state: Status::Expired,
            });
        }
        let now_ms = millis(now);
        let changed = tx.execute(
            "UPDATE proposals SET status = ?3, updated_at = ?4,
                 decided_at = CASE WHEN ?2 = 'pending' THEN ?4 ELSE decided_at END,
                 decided_by = coalesce(?5, decided_by),
                 reject_reason = coalesce(?6, reject_reason),
                 result_json = coalesce(?7, result_json)
             WHERE preview_id = ?1 AND status = ?2",
            params![
                id,
                from.as_str(),
                to.as_str(),
                now_ms,
                change.channel.map(Channel::as_str),
                change.reject_reason,
                result,
            ],
        )?;
        if changed == 0 {
            return Err(StoreError::Conflict {
                current_state: current.status,
            });
        }
        log_transition(&tx, id, Some(from), to, now, change.channel, change.note)?;
        if let Some(intent) = intent {
            tx.execute(
                "INSERT INTO intents (preview_id, intent_json, recorded_at) VALUES (?1, ?2, ?3)",
                params![id, intent, now_ms],
            )?;
        }
        let record = read_record(&tx, id)?;
        tx.commit()?;
        Ok(record)
    }
}

/// Expires `id` inside `tx` if it is pending and due; true when it did.
///
/// `decidedAt` is the deadline itself (when the proposal really expired), not the moment
/// the expiry was noticed.
pub(super) fn expire_if_due(
    tx: &Transaction<'_>,
    id: &str,
    now: Timestamp,
) -> Result<bool, StoreError> {
    let changed = tx.execute(
        "UPDATE proposals SET status = 'expired', decided_at = expires_at, updated_at = ?2
         WHERE preview_id = ?1 AND status = 'pending' AND expires_at <= ?2",
        params![id, millis(now)],
    )?;
    if changed == 0 {
        return Ok(false);
    }
    log_transition(
        tx,
        id,
        Some(Status::Pending),
        Status::Expired,
        now,
        None,
        None,
    )?;
    Ok(true)
}

pub(super) fn log_transition(
    tx: &Transaction<'_>,
    id: &str,
    from: Option<Status>,
    to: Status,
    now: Timestamp,
    channel: Option<Channel>,
    note: Option<&str>,
) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO transitions (preview_id, from_status, to_status, at, channel, note)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            id,
            from.map(Status::as_str),
            to.as_str(),
            millis(now),
            channel.map(Channel::as_str),
            note
        ],
    )?;
    Ok(())
}
