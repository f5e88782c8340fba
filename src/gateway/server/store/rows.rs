//! Rows to wire records, and the time and JSON encodings the columns use.
//!
//! Columns are read into plain values first and converted afterwards, so a value this
//! build cannot have written (an unknown state, broken JSON, a time out of range) is a
//! [`StoreError::Corrupt`], never a panic.

use jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension, Row};
use serde_json::Value;

use super::{StoreError, Transition};
use crate::gateway::api::{Channel, DecidedBy, OperationResult, Status, StatusRecord};

/// The columns [`RawRecord::read`] expects, in order.
pub(super) const RECORD_COLUMNS: &str = "preview_id, operation_type, status, agent_id, \
     repo_path, reason, created_at, expires_at, decided_at, decided_by, reject_reason, result_json";

/// Milliseconds since the epoch, the store's time column.
pub(super) fn millis(ts: Timestamp) -> i64 {
    ts.as_millisecond()
}

/// `ms` as a timestamp.
pub(super) fn timestamp(ms: i64) -> Result<Timestamp, StoreError> {
    Timestamp::from_millisecond(ms).map_err(|e| StoreError::Corrupt(format!("time {ms}: {e}")))
}

/// `ms` as the wire's RFC 3339 UTC with milliseconds (`2026-05-28T11:47:09.512Z`).
pub(super) fn wire_time(ms: i64) -> Result<String, StoreError> {
    Ok(timestamp(ms)?
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string())
}

/// A stored state name as a [`Status`].
pub(super) fn status(name: &str) -> Result<Status, StoreError> {
    Status::parse(name).ok_or_else(|| StoreError::Corrupt(format!("unknown state {name:?}")))
}

/// A JSON column.
pub(super) fn json(text: &str) -> Result<Value, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(format!("stored JSON: {e}")))
}

/// A value as the text of a JSON column.
pub(super) fn to_json<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Corrupt(format!("encoding JSON: {e}")))
}

/// One proposal row as stored.
pub(super) struct RawRecord {
    preview_id: String,
    operation_type: String,
    status: String,
    agent_id: String,
    repo_path: Option<String>,
    reason: String,
    created_at: i64,
    expires_at: i64,
    decided_at: Option<i64>,
    decided_by: Option<String>,
    reject_reason: Option<String>,
    result_json: Option<String>,
}

impl RawRecord {
    /// Reads a row selected with [`RECORD_COLUMNS`].
    pub(super) fn read(row: &Row<'_>) -> rusqlite::Result<RawRecord> {
        Ok(RawRecord {
            preview_id: row.get(0)?,
            operation_type: row.get(1)?,
            status: row.get(2)?,
            agent_id: row.get(3)?,
            repo_path: row.get(4)?,
            reason: row.get(5)?,
            created_at: row.get(6)?,
            expires_at: row.get(7)?,
            decided_at: row.get(8)?,
            decided_by: row.get(9)?,
            reject_reason: row.get(10)?,
            result_json: row.get(11)?,
        })
    }

    pub(super) fn into_record(self) -> Result<StatusRecord, StoreError> {
        let decided_by = match self.decided_by.as_deref() {
            None => None,
            Some(name) => Some(DecidedBy {
                channel: Channel::parse(name)
                    .ok_or_else(|| StoreError::Corrupt(format!("unknown channel {name:?}")))?,
            }),
        };
        let result = match self.result_json.as_deref() {
            None => None,
            Some(text) => Some(
                serde_json::from_str::<OperationResult>(text)
                    .map_err(|e| StoreError::Corrupt(format!("result JSON: {e}")))?,
            ),
        };
        Ok(StatusRecord {
            status: status(&self.status)?,
            created_at: wire_time(self.created_at)?,
            expires_at: wire_time(self.expires_at)?,
            decided_at: self.decided_at.map(wire_time).transpose()?,
            preview_id: self.preview_id,
            operation_type: self.operation_type,
            agent_id: self.agent_id,
            repo_path: self.repo_path,
            reason: self.reason,
            decided_by,
            reject_reason: self.reject_reason,
            result,
        })
    }
}

/// The status record of `id`, if the proposal exists.
pub(super) fn record_in(conn: &Connection, id: &str) -> Result<Option<StatusRecord>, StoreError> {
    let sql = format!("SELECT {RECORD_COLUMNS} FROM proposals WHERE preview_id = ?1");
    conn.query_row(&sql, [id], RawRecord::read)
        .optional()?
        .map(RawRecord::into_record)
        .transpose()
}

/// Transitions selected by `clause` (`WHERE … ORDER BY …`).
pub(super) fn transitions(
    conn: &Connection,
    clause: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<Transition>, StoreError> {
    type Raw = (
        i64,
        String,
        Option<String>,
        String,
        i64,
        Option<String>,
        Option<String>,
    );
    let sql = format!(
        "SELECT seq, preview_id, from_status, to_status, at, channel, note FROM transitions {clause}"
    );
    let mut stmt = conn.prepare(&sql)?;
    let raws = stmt
        .query_map(params, |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
            ))
        })?
        .collect::<Result<Vec<Raw>, _>>()?;
    raws.into_iter()
        .map(|(seq, preview_id, from, to, at, channel, note)| {
            Ok(Transition {
                seq,
                preview_id,
                from: from.as_deref().map(status).transpose()?,
                to: status(&to)?,
                at: timestamp(at)?,
                channel: match channel.as_deref() {
                    None => None,
                    Some(name) => {
                        Some(Channel::parse(name).ok_or_else(|| {
                            StoreError::Corrupt(format!("unknown channel {name:?}"))
                        })?)
                    }
                },
                note,
            })
        })
        .collect()
}
