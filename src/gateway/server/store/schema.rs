//! The store's schema as an ordered list of migrations; `PRAGMA user_version` counts the
//! ones applied.
//!
//! A migration is only ever appended, never edited: a file at version N was built by
//! exactly the first N entries. A file with a higher version than this build knows was
//! written by a newer gitward, and reading it with an older schema could silently drop
//! what the newer one records — so it is refused. `PRAGMA application_id` marks the file
//! as ours, so pointing `--db` at some other SQLite database fails instead of adding
//! tables to it.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use super::StoreError;

/// `gwgw` in ASCII.
pub(super) const APPLICATION_ID: i64 = 0x6777_6777;

/// Every migration, in order. Index `i` takes the schema from version `i` to `i + 1`.
pub(super) const MIGRATIONS: &[&str] = &[V1, V2, V3, V4, V5, V6];

/// The first schema.
///
/// Times are milliseconds since the Unix epoch (UTC). States are the wire names, checked.
/// `args_json` is the proposal as received; `args_hash` the hash idempotent retries are
/// compared by. The idempotency scope is `(operation_type, idempotency_key)` (from V5 also
/// the agent's).
const V1: &str = "
CREATE TABLE proposals (
    preview_id      TEXT PRIMARY KEY NOT NULL,
    agent_id        TEXT NOT NULL,
    operation_type  TEXT NOT NULL,
    repo_path       TEXT,
    reason          TEXT NOT NULL,
    requested_at    TEXT NOT NULL,
    idempotency_key TEXT,
    args_json       TEXT NOT NULL,
    args_hash       TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'executing',
                        'completed', 'failed', 'rejected', 'cancelled', 'expired')),
    created_at      INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    decided_at      INTEGER,
    decided_by      TEXT CHECK (decided_by IN ('web', 'tty')),
    reject_reason   TEXT,
    result_json     TEXT
) STRICT;
CREATE UNIQUE INDEX proposals_idempotency
    ON proposals (operation_type, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX proposals_status_expiry ON proposals (status, expires_at);
CREATE INDEX proposals_agent_status ON proposals (agent_id, status);
CREATE INDEX proposals_updated ON proposals (updated_at);

CREATE TABLE transitions (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    preview_id  TEXT NOT NULL REFERENCES proposals (preview_id),
    from_status TEXT,
    to_status   TEXT NOT NULL,
    at          INTEGER NOT NULL,
    channel     TEXT,
    note        TEXT
) STRICT;
CREATE INDEX transitions_preview ON transitions (preview_id, seq);

CREATE TABLE intents (
    preview_id  TEXT PRIMARY KEY NOT NULL REFERENCES proposals (preview_id),
    intent_json TEXT NOT NULL,
    recorded_at INTEGER NOT NULL
) STRICT;

CREATE TABLE restore_points (
    id             TEXT PRIMARY KEY NOT NULL,
    repo_path      TEXT NOT NULL,
    preview_id     TEXT REFERENCES proposals (preview_id),
    operation_type TEXT,
    created_at     INTEGER NOT NULL,
    captured_json  TEXT NOT NULL,
    skipped_json   TEXT NOT NULL
) STRICT;
CREATE INDEX restore_points_repo ON restore_points (repo_path, created_at);
";

/// The preconditions pinned when a proposal arrived (compared again before its write)
/// and the preview computed for its card, each the operation type's own JSON.
const V2: &str = "
ALTER TABLE proposals ADD COLUMN pins_json TEXT;
ALTER TABLE proposals ADD COLUMN preview_json TEXT;
";

/// How far the audit ledger has followed the transition log: the last transition `seq`
/// written to it, so a restart audits exactly what it had not yet.
const V3: &str = "
CREATE TABLE audit_cursor (
    id  INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
    seq INTEGER NOT NULL
) STRICT;
";

/// The other agents found in a proposal's repository when it arrived (`otherAgents` on
/// its card), detected after the proposal was answered.
const V4: &str = "
ALTER TABLE proposals ADD COLUMN others_json TEXT;
";

/// Idempotency keys belong to the agent that sent them: another agent's key is a new
/// proposal, never a way to read or reach the first one.
const V5: &str = "
DROP INDEX proposals_idempotency;
CREATE UNIQUE INDEX proposals_idempotency
    ON proposals (agent_id, operation_type, idempotency_key) WHERE idempotency_key IS NOT NULL;
";

/// The identity of the repository a proposal was made for (canonical git directories with
/// device and inode), compared right before its write.
const V6: &str = "
ALTER TABLE proposals ADD COLUMN identity_json TEXT;
";

/// The schema version this build writes.
pub(super) fn supported() -> i64 {
    MIGRATIONS.len() as i64
}

/// Brings the file to [`supported`], or refuses a newer or foreign one.
pub(super) fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let found = check(conn, path)?;
    if found == supported() {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Another connection may have migrated while this one waited for the lock.
    let found = check(&tx, path)?;
    let applied = usize::try_from(found).unwrap_or(usize::MAX);
    for migration in MIGRATIONS.iter().skip(applied) {
        tx.execute_batch(migration)?;
    }
    tx.pragma_update(None, "application_id", APPLICATION_ID)?;
    tx.pragma_update(None, "user_version", supported())?;
    tx.commit()?;
    Ok(())
}

/// The file's schema version, once it is known to be ours and not from the future.
fn check(conn: &Connection, path: &Path) -> Result<i64, StoreError> {
    let found: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    let app: i64 = conn.pragma_query_value(None, "application_id", |r| r.get(0))?;
    let foreign = || StoreError::Foreign {
        path: path.to_owned(),
    };
    if app != APPLICATION_ID && app != 0 {
        return Err(foreign());
    }
    if found == 0 {
        let tables: i64 = conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))?;
        if tables != 0 {
            return Err(foreign());
        }
    } else if app == 0 || found < 0 {
        return Err(foreign());
    }
    if found > supported() {
        return Err(StoreError::NewerSchema {
            found,
            supported: supported(),
        });
    }
    Ok(found)
}
