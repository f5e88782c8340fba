//! The cross-check of a gateway store against the audit ledger (`gitward verify-audit
//! --store`): every transition the store holds must be in the ledger exactly once. A
//! verified chain proves nothing was altered; only this shows nothing was left out (a
//! ledger that refused entries while the gateway moved on) or written twice.

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{Connection, OpenFlags, OptionalExtension};
use serde::Serialize;

use super::audit::EVENT_TYPE;
use crate::audit::scan;

/// At most this many sequence numbers are listed per finding.
const LISTED: usize = 20;

/// What the cross-check found.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreCheck {
    /// Transitions in the store.
    pub transitions: u64,
    /// The store's audit cursor: the last transition it counts as audited.
    pub audited_through: i64,
    /// Transitions at or before the cursor that the ledger does not hold: lost.
    pub missing: u64,
    /// Transitions after the cursor that the ledger does not hold: not written yet (a
    /// gateway that is stopped, or waits for a ledger that refuses entries).
    pub pending: u64,
    /// Transitions the ledger holds more than once.
    pub duplicates: u64,
    /// Transitions older than the ledger's oldest retained entry (rotated out).
    pub before_retained: u64,
    /// The first few sequence numbers of each finding.
    pub missing_seqs: Vec<i64>,
    pub pending_seqs: Vec<i64>,
    pub duplicate_seqs: Vec<i64>,
}

impl StoreCheck {
    pub fn ok(&self) -> bool {
        self.missing == 0 && self.pending == 0 && self.duplicates == 0
    }

    /// One sentence for stderr when not [`StoreCheck::ok`].
    pub fn reason(&self) -> String {
        format!(
            "the gateway store has {} transition(s) missing from the ledger, {} not yet written \
             and {} written more than once",
            self.missing, self.pending, self.duplicates
        )
    }
}

/// Cross-checks the store at `db` against the ledger at `ledger`. Only reads both.
pub fn cross_check(ledger: &Path, db: &Path) -> Result<StoreCheck, String> {
    let mut held: HashMap<(String, i64), u32> = HashMap::new();
    // When the oldest retained segment opens with a checkpoint after earlier entries,
    // older history was rotated out: transitions before it cannot be looked for.
    let mut retained_from: Option<Option<i64>> = None;
    scan::for_each_entry(ledger, |entry| {
        if retained_from.is_none() {
            let rotated = entry.get("event_type").and_then(|v| v.as_str()) == Some("checkpoint")
                && entry
                    .get("lastSequence")
                    .and_then(|v| v.as_u64())
                    .is_some_and(|s| s > 0);
            let ts = entry.get("timestamp").and_then(|v| v.as_i64());
            retained_from = Some(ts.filter(|_| rotated));
        }
        if let Some(key) = scan::transition_key(entry, EVENT_TYPE) {
            *held.entry(key).or_default() += 1;
        }
    })
    .map_err(|e| format!("reading the audit ledger: {e}"))?;
    let retained_from = retained_from.flatten();

    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| format!("opening the gateway store {}: {e}", db.display()))?;
    let sql_error = |e: rusqlite::Error| format!("reading the gateway store: {e}");
    let cursor: i64 = conn
        .query_row("SELECT seq FROM audit_cursor WHERE id = 1", [], |r| {
            r.get(0)
        })
        .optional()
        .map_err(sql_error)?
        .unwrap_or(0);
    let mut check = StoreCheck {
        audited_through: cursor,
        ..StoreCheck::default()
    };
    let mut stmt = conn
        .prepare("SELECT seq, preview_id, at FROM transitions ORDER BY seq")
        .map_err(sql_error)?;
    let mut rows = stmt.query([]).map_err(sql_error)?;
    while let Some(row) = rows.next().map_err(sql_error)? {
        let seq: i64 = row.get(0).map_err(sql_error)?;
        let id: String = row.get(1).map_err(sql_error)?;
        let at: i64 = row.get(2).map_err(sql_error)?;
        check.transitions += 1;
        match held.get(&(id, seq)).copied().unwrap_or(0) {
            0 if retained_from.is_some_and(|from| at < from) => check.before_retained += 1,
            0 if seq <= cursor => note(&mut check.missing, &mut check.missing_seqs, seq),
            0 => note(&mut check.pending, &mut check.pending_seqs, seq),
            1 => {}
            _ => note(&mut check.duplicates, &mut check.duplicate_seqs, seq),
        }
    }
    Ok(check)
}

fn note(count: &mut u64, listed: &mut Vec<i64>, seq: i64) {
    *count += 1;
    if listed.len() < LISTED {
        listed.push(seq);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::{AuditConfig, Ledger, ledger::ROTATE_BYTES};
    use crate::gateway::server::audit::transition_entry;
    use crate::gateway::server::store::tests::{db, fresh, new_pending};

    #[test]
    fn a_transition_twice_missing_or_not_yet_written_fails_the_cross_check() {
        let (dir, mut store) = fresh();
        new_pending(&mut store, 1, "a");
        new_pending(&mut store, 2, "b");
        let written = store.transitions_after(0, 10).unwrap();
        assert_eq!(written.len(), 2);
        store.set_audit_cursor(2).unwrap();
        new_pending(&mut store, 3, "c");

        let path = dir.path().join("audit").join("mcp.jsonl");
        let mut ledger = Ledger::open(AuditConfig {
            path: path.clone(),
            signer: None,
            rotate_bytes: ROTATE_BYTES,
        })
        .unwrap();
        let first = &written[0];
        let record = store.proposal(&first.preview_id).unwrap().record;
        ledger
            .append(transition_entry(first, &record, "low"))
            .unwrap();
        let clean = cross_check(&path, &db(&dir)).unwrap();
        assert_eq!((clean.missing, clean.pending, clean.duplicates), (1, 1, 0));
        assert_eq!(clean.missing_seqs, [written[1].seq]);

        ledger
            .append(transition_entry(first, &record, "low"))
            .unwrap();
        let twice = cross_check(&path, &db(&dir)).unwrap();
        assert_eq!(twice.duplicates, 1);
        assert_eq!(twice.duplicate_seqs, [first.seq]);
        assert_eq!(twice.transitions, 3);
        assert_eq!(twice.audited_through, 2);
        assert!(!twice.ok());
    }
}
