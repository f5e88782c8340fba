//! Proposals: insertion with idempotency and the per-agent cap, reads that expire, the
//! lists the queue, the history and restart reconciliation need, and the transition log.

use jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde_json::Value;

use super::rows::{self, RECORD_COLUMNS, RawRecord, millis};
use super::transition::{LATEST, expire_if_due, log_transition, span_millis};
use super::{Executing, Inserted, Store, StoreError, StoredProposal, Transition};
use crate::audit::canonical;
use crate::gateway::api::{self, Proposal, Status, StatusRecord};

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

impl Store {
    /// Stores a new pending proposal under the canonical id `preview_id`, or finds the
    /// one an idempotent retry refers to.
    ///
    /// A proposal whose `(agentId, operationType, idempotencyKey)` is already stored resolves to
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
        self.insert_pinned(preview_id, proposal, now, None, None)
    }

    /// [`Store::insert`] storing a new proposal's `pins` and its repository's `identity`
    /// in the same transaction (one commit, one `fsync`); an existing proposal keeps its
    /// own.
    pub fn insert_pinned(
        &mut self,
        preview_id: &str,
        proposal: &Proposal,
        now: Timestamp,
        pins: Option<&Value>,
        identity: Option<&Value>,
    ) -> Result<Inserted, StoreError> {
        let pins = pins.map(rows::to_json).transpose()?;
        let identity = identity.map(rows::to_json).transpose()?;
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
                     WHERE agent_id = ?1 AND operation_type = ?2 AND idempotency_key = ?3",
                    params![proposal.agent_id, proposal.operation_type, key],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            if let Some((id, stored_hash)) = existing {
                if stored_hash != hash {
                    return Err(StoreError::IdempotencyMismatch);
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
        let all = self.settings.max_pending;
        if count_pending(&tx, now_ms)? >= i64::from(all) {
            return Err(StoreError::QueueFull { limit: all });
        }
        tx.execute(
            "INSERT INTO proposals (preview_id, agent_id, operation_type, repo_path, reason,
                 requested_at, idempotency_key, args_json, args_hash, status, created_at,
                 expires_at, updated_at, pins_json, identity_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'pending', ?10, ?11, ?10, ?12, ?13)",
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
                pins,
                identity,
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

    /// Live pending proposals, oldest first: the approval queue. Beyond `limit` the
    /// oldest are left out, never the newest (a new proposal is always on the list).
    pub fn list_pending(
        &self,
        now: Timestamp,
        limit: u32,
    ) -> Result<Vec<StatusRecord>, StoreError> {
        let sql = format!(
            "SELECT * FROM (SELECT {RECORD_COLUMNS}, created_at AS c, preview_id AS p
                 FROM proposals WHERE status = 'pending' AND expires_at > ?1
                 ORDER BY created_at DESC, preview_id DESC LIMIT ?2)
             ORDER BY c, p"
        );
        collect(&self.conn, &sql, params![millis(now), limit])
    }

    /// How many live pending proposals there are, from all agents.
    pub fn count_pending(&self, now: Timestamp) -> Result<u32, StoreError> {
        let n = count_pending(&self.conn, millis(now))?;
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
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

    /// How many transitions come after `seq`.
    pub fn transitions_count_after(&self, seq: i64) -> Result<u64, StoreError> {
        let count: i64 = self.conn.query_row(
            "SELECT count(*) FROM transitions WHERE seq > ?1",
            params![seq],
            |r| r.get(0),
        )?;
        Ok(u64::try_from(count).unwrap_or(0))
    }
}

fn is_due(conn: &Connection, id: &str, now: Timestamp) -> Result<bool, StoreError> {
    Ok(conn.query_row(
        "SELECT expires_at <= ?2 FROM proposals WHERE preview_id = ?1",
        params![id, millis(now)],
        |r| r.get(0),
    )?)
}

pub(super) fn read_record(conn: &Connection, id: &str) -> Result<StatusRecord, StoreError> {
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

/// Live pending proposals of all agents at `now_ms`.
fn count_pending(conn: &rusqlite::Connection, now_ms: i64) -> Result<i64, StoreError> {
    Ok(conn.query_row(
        "SELECT count(*) FROM proposals WHERE status = 'pending' AND expires_at > ?1",
        [now_ms],
        |r| r.get(0),
    )?)
}
