//! Proposals: insertion with idempotency and the per-agent cap, reads that expire, and
//! every lifecycle transition as one compare-and-set transaction.

use jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};
use serde_json::Value;

use super::rows::{self, RECORD_COLUMNS, RawRecord, millis};
use super::{Executing, Inserted, Reconciled, Store, StoreError, StoredProposal, Transition};
use crate::audit::canonical;
use crate::gateway::api::{
    self, Channel, FailureKind, OperationResult, Proposal, Status, StatusRecord,
};
use crate::gateway::server::lifecycle;

/// Proposal fields left out of the arguments hash: they differ between two sends of the
/// same intent (a fresh id hint, the send time, the key itself) or only explain it (a
/// retry that rephrases its reason is still the same operation; the card keeps the
/// first reason). `agentId` stays in: another agent reusing a key never reaches (or
/// learns the state of) someone else's proposal.
const NOT_ARGUMENTS: [&str; 4] = ["previewId", "requestedAt", "idempotencyKey", "reason"];

/// `sha256:…` of the proposal's arguments in canonical JSON.
pub fn args_hash(proposal: &Proposal) -> Result<String, StoreError> {
    let value = serde_json::to_value(proposal)
        .map_err(|e| StoreError::Corrupt(format!("encoding the proposal: {e}")))?;
    let Value::Object(map) = value else {
        return Err(StoreError::Corrupt("a proposal is not an object".into()));
    };
    Ok(canonical::sha256_tag(&canonical::object_without(
        &map,
        &NOT_ARGUMENTS,
    )))
}

/// The latest deadline a record can show (`9999-12-30T22:00:00Z`, the last millisecond
/// jiff accepts): a longer expiry or extension is clamped to it rather than stored as a
/// time no reader can render.
const LATEST: i64 = 253_402_207_200_000;

/// `span` in milliseconds, at most [`LATEST`] (so adding it to a stored time cannot overflow).
fn span_millis(span: std::time::Duration) -> i64 {
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
    /// Stores a new pending proposal under the canonical id `preview_id`, or finds the
    /// one an idempotent retry refers to.
    ///
    /// A proposal whose `(operationType, idempotencyKey)` is already stored resolves to
    /// that proposal when the arguments hash equal (whatever its state now), and is
    /// refused with [`StoreError::IdempotencyMismatch`] when they differ. A new proposal
    /// is refused with [`StoreError::QuotaExceeded`] when its agent already has the
    /// maximum of live pending ones.
    pub fn insert(
        &mut self,
        preview_id: &str,
        proposal: &Proposal,
        now: Timestamp,
    ) -> Result<Inserted, StoreError> {
        if !api::is_canonical_preview_id(preview_id) {
            return Err(StoreError::Invalid {
                field: "previewId",
                reason: "not a lowercase hyphenated UUID".into(),
            });
        }
        let hash = args_hash(proposal)?;
        let args = rows::to_json(proposal)?;
        let now_ms = millis(now);
        let expiry = span_millis(self.settings.expiry);
        let limit = self.settings.max_pending_per_agent;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;

        if let Some(key) = proposal.idempotency_key.as_deref() {
            let existing: Option<(String, String)> = tx
                .query_row(
                    "SELECT preview_id, args_hash FROM proposals
                     WHERE operation_type = ?1 AND idempotency_key = ?2",
                    params![proposal.operation_type, key],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            if let Some((id, stored_hash)) = existing {
                if stored_hash != hash {
                    return Err(StoreError::IdempotencyMismatch { preview_id: id });
                }
                expire_if_due(&tx, &id, now)?;
                let record = read_record(&tx, &id)?;
                tx.commit()?;
                return Ok(Inserted::Existing(record));
            }
        }

        let pending: i64 = tx.query_row(
            "SELECT count(*) FROM proposals
             WHERE agent_id = ?1 AND status = 'pending' AND expires_at > ?2",
            params![proposal.agent_id, now_ms],
            |r| r.get(0),
        )?;
        if pending >= i64::from(limit) {
            return Err(StoreError::QuotaExceeded {
                agent_id: proposal.agent_id.clone(),
                limit,
            });
        }
        tx.execute(
            "INSERT INTO proposals (preview_id, agent_id, operation_type, repo_path, reason,
                 requested_at, idempotency_key, args_json, args_hash, status, created_at,
                 expires_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'pending', ?10, ?11, ?10)",
            params![
                preview_id,
                proposal.agent_id,
                proposal.operation_type,
                proposal.repo_path,
                proposal.reason,
                proposal.requested_at,
                proposal.idempotency_key,
                args,
                hash,
                now_ms,
                now_ms.saturating_add(expiry).min(LATEST),
            ],
        )?;
        log_transition(&tx, preview_id, None, Status::Pending, now, None, None)?;
        let record = read_record(&tx, preview_id)?;
        tx.commit()?;
        Ok(Inserted::New(record))
    }

    /// The status record of `id`; a pending proposal past its deadline is expired first,
    /// in its own transaction, so the answer is never a stale `pending`.
    pub fn get(&mut self, id: &str, now: Timestamp) -> Result<StatusRecord, StoreError> {
        let record = read_record(&self.conn, id)?;
        if record.status != Status::Pending || !is_due(&self.conn, id, now)? {
            return Ok(record);
        }
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        expire_if_due(&tx, id, now)?;
        let record = read_record(&tx, id)?;
        tx.commit()?;
        Ok(record)
    }

    /// The proposal with its arguments, as stored (no expiry: the executor reads only
    /// proposals that left `pending`).
    pub fn proposal(&self, id: &str) -> Result<StoredProposal, StoreError> {
        let record = read_record(&self.conn, id)?;
        let (args, args_hash): (String, String) = self.conn.query_row(
            "SELECT args_json, args_hash FROM proposals WHERE preview_id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let proposal = serde_json::from_str(&args)
            .map_err(|e| StoreError::Corrupt(format!("proposal {id}: {e}")))?;
        Ok(StoredProposal {
            record,
            proposal,
            args_hash,
        })
    }

    /// Live pending proposals, oldest first: the approval queue.
    pub fn list_pending(
        &self,
        now: Timestamp,
        limit: u32,
    ) -> Result<Vec<StatusRecord>, StoreError> {
        let sql = format!(
            "SELECT {RECORD_COLUMNS} FROM proposals
             WHERE status = 'pending' AND expires_at > ?1
             ORDER BY created_at, preview_id LIMIT ?2"
        );
        collect(&self.conn, &sql, params![millis(now), limit])
    }

    /// Proposals that left `pending`, most recently changed first.
    pub fn list_history(&self, limit: u32) -> Result<Vec<StatusRecord>, StoreError> {
        let sql = format!(
            "SELECT {RECORD_COLUMNS} FROM proposals WHERE status != 'pending'
             ORDER BY updated_at DESC, preview_id LIMIT ?1"
        );
        collect(&self.conn, &sql, params![limit])
    }

    /// Every proposal in `status`, oldest first (`approved` ones to resume after a start).
    pub fn list_in(&self, status: Status) -> Result<Vec<StatusRecord>, StoreError> {
        let sql = format!(
            "SELECT {RECORD_COLUMNS} FROM proposals WHERE status = ?1
             ORDER BY created_at, preview_id"
        );
        collect(&self.conn, &sql, params![status.as_str()])
    }

    /// Proposals found `executing` (after a restart), each with its recorded intent, for
    /// reconciliation; they are never re-run.
    pub fn list_executing(&self) -> Result<Vec<Executing>, StoreError> {
        let mut out = Vec::new();
        for record in self.list_in(Status::Executing)? {
            let intent = self
                .conn
                .query_row(
                    "SELECT intent_json FROM intents WHERE preview_id = ?1",
                    [&record.preview_id],
                    |r| r.get::<_, String>(0),
                )
                .optional()?
                .map(|text| rows::json(&text))
                .transpose()?;
            out.push(Executing { record, intent });
        }
        Ok(out)
    }

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

    /// The transitions of `id`, in order.
    pub fn history(&self, id: &str) -> Result<Vec<Transition>, StoreError> {
        rows::transitions(
            &self.conn,
            "WHERE preview_id = ?1 ORDER BY seq",
            params![id],
        )
    }

    /// Up to `limit` transitions after `seq`, in order: what the audit writer has not
    /// yet recorded when it last saw `seq`.
    pub fn transitions_after(&self, seq: i64, limit: u32) -> Result<Vec<Transition>, StoreError> {
        rows::transitions(
            &self.conn,
            "WHERE seq > ?1 ORDER BY seq LIMIT ?2",
            params![seq, limit],
        )
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
fn expire_if_due(tx: &Transaction<'_>, id: &str, now: Timestamp) -> Result<bool, StoreError> {
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

fn is_due(conn: &Connection, id: &str, now: Timestamp) -> Result<bool, StoreError> {
    Ok(conn.query_row(
        "SELECT expires_at <= ?2 FROM proposals WHERE preview_id = ?1",
        params![id, millis(now)],
        |r| r.get(0),
    )?)
}

fn log_transition(
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

fn read_record(conn: &Connection, id: &str) -> Result<StatusRecord, StoreError> {
    rows::record_in(conn, id)?.ok_or_else(|| StoreError::NotFound {
        preview_id: id.to_owned(),
    })
}

fn collect(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<StatusRecord>, StoreError> {
    let mut stmt = conn.prepare(sql)?;
    let raws = stmt
        .query_map(params, RawRecord::read)?
        .collect::<Result<Vec<_>, _>>()?;
    raws.into_iter().map(RawRecord::into_record).collect()
}
