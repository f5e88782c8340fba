//! The gateway's durable memory: proposals, their transition history, execution intents and
//! restore-point metadata, in one SQLite file.
//!
//! Durability and races are the store's job, not its callers': the file is WAL with
//! `synchronous=FULL` (a committed transition survives power loss), and every transition
//! is one `BEGIN IMMEDIATE` transaction that re-reads the state and moves it with a
//! compare-and-set, so of two requests racing one proposal exactly one wins and the other
//! gets [`StoreError::Conflict`] with the state it lost to. Only the moves in
//! [`super::lifecycle`] are possible.
//!
//! Time is always a `now` argument, never read here, so expiry is testable without
//! sleeping and one request sees one instant. A pending proposal past its deadline is
//! expired the moment anything touches it (a read, a decision, an idempotent retry) and
//! by [`Store::expire_due`] for the timer; it is reported as `expired`, never as a
//! rejection.
//!
//! The transitions table is append-only and ordered by `seq`: it is the record the audit
//! writer follows ([`Store::transitions_after`]), so no transition can be committed
//! without leaving a trace to audit.

mod file;
mod others;
mod pins;
mod preview;
mod proposals;
mod restore_points;
mod rows;
mod schema;
#[cfg(test)]
pub(crate) mod tests;
#[cfg(test)]
mod tests_file;
#[cfg(test)]
mod tests_races;
mod transition;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;
use serde_json::Value;

use crate::gateway::api::{Channel, OperationResult, Proposal, Status, StatusRecord};

pub use preview::CardData;
pub use restore_points::{RestorePoint, is_restore_point_id};

/// Limits the store enforces.
#[derive(Debug, Clone)]
pub struct Settings {
    /// How long a new proposal stays pending before it expires.
    pub expiry: Duration,
    /// Live pending proposals one agent may have at once.
    pub max_pending_per_agent: u32,
    /// Live pending proposals of all agents together: the agent id is self-declared, so
    /// the per-agent bound alone bounds nothing.
    pub max_pending: u32,
    /// How long a transaction waits for another connection's write lock.
    pub busy_timeout: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            expiry: Duration::from_secs(30 * 60),
            max_pending_per_agent: 20,
            max_pending: 100,
            busy_timeout: Duration::from_secs(10),
        }
    }
}

/// Why a store call did not happen.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no proposal {preview_id}")]
    NotFound { preview_id: String },
    /// A compare-and-set lost: the proposal is no longer in the state the call needs.
    #[error("the proposal is already {}", current_state.as_str())]
    Conflict { current_state: Status },
    #[error("only the agent that proposed it may cancel a proposal")]
    NotOwner,
    #[error("agent {agent_id} already has {limit} pending proposals")]
    QuotaExceeded { agent_id: String, limit: u32 },
    /// The agent's `(operationType, idempotencyKey)` pair belongs to one of its proposals
    /// with other arguments. Which one is not said: the answer names nothing a caller
    /// could not already know.
    #[error("idempotency key already used with different arguments; use a new key")]
    IdempotencyMismatch,
    #[error("{limit} proposals are already pending, from all agents together")]
    QueueFull { limit: u32 },
    /// A caller asked for a move the lifecycle does not have: a bug, not a race.
    #[error("no transition from {} to {}", from.as_str(), to.as_str())]
    Illegal { from: Status, to: Status },
    #[error("invalid {field}: {reason}")]
    Invalid { field: &'static str, reason: String },
    #[error(
        "the gateway store has schema version {found}, newer than this gitward knows ({supported}); \
         refusing to open it rather than guess — use the newer gitward or another --db"
    )]
    NewerSchema { found: i64, supported: i64 },
    #[error("{} is not a gitward gateway store", path.display())]
    Foreign { path: PathBuf },
    #[error("refusing the gateway store at {}: {reason}", path.display())]
    Unsafe { path: PathBuf, reason: &'static str },
    /// A row that this build cannot have written.
    #[error("corrupt gateway store: {0}")]
    Corrupt(String),
    #[error("gateway store: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("gateway store: {0}")]
    Io(#[from] std::io::Error),
}

/// What [`Store::insert`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Inserted {
    /// A new pending proposal.
    New(StatusRecord),
    /// An idempotent retry: the proposal that already holds this key and these arguments.
    Existing(StatusRecord),
}

impl Inserted {
    pub fn record(&self) -> &StatusRecord {
        match self {
            Inserted::New(r) | Inserted::Existing(r) => r,
        }
    }
}

/// A proposal with everything the executor needs.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredProposal {
    pub record: StatusRecord,
    pub proposal: Proposal,
    /// `sha256:…` of the normalized arguments (see [`Store::insert`]).
    pub args_hash: String,
}

/// An `executing` proposal found at start, with the intent its executor recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Executing {
    pub record: StatusRecord,
    pub intent: Option<Value>,
}

/// How reconciliation after a restart ended an `executing` proposal.
#[derive(Debug, Clone, PartialEq)]
pub enum Reconciled {
    /// The repository is in the intended post-state: the write finished before the crash.
    Completed(OperationResult),
    /// It is not: the proposal fails with `failure: "interrupted"` and what was found.
    Interrupted(OperationResult),
}

/// One row of the transition history.
#[derive(Debug, Clone, PartialEq)]
pub struct Transition {
    /// Strictly increasing across the whole store.
    pub seq: i64,
    pub preview_id: String,
    /// `None` for the insertion.
    pub from: Option<Status>,
    pub to: Status,
    pub at: jiff::Timestamp,
    pub channel: Option<Channel>,
    pub note: Option<String>,
}

/// One connection to the store. Open one per thread or request; they coordinate through
/// SQLite's locks.
pub struct Store {
    conn: Connection,
    settings: Settings,
    /// Set when the connection could not be put back to syncing every commit; the pool
    /// then drops it rather than reuse it.
    broken: bool,
}

impl Store {
    /// Opens (creating if needed) the store at `path`: a private regular file in a private
    /// directory of the current user, migrated to this build's schema.
    pub fn open(path: &Path, settings: Settings) -> Result<Store, StoreError> {
        let mut conn = file::open(path, settings.busy_timeout)?;
        schema::migrate(&mut conn, path)?;
        Ok(Store {
            conn,
            settings,
            broken: false,
        })
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// False once the connection may no longer sync every commit: never reuse it.
    pub fn is_sound(&self) -> bool {
        !self.broken
    }

    /// Runs `work` with commits that do not wait for the disk. Only for what is derived
    /// and recomputed when lost (a card's preview, the audit cursor): the write-ahead log
    /// is ordered, so such a commit is lost in a power cut only together with everything
    /// after it, and the next synced commit (any transition) makes it durable too.
    fn unsynced<T>(
        &mut self,
        work: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.conn.pragma_update(None, "synchronous", "NORMAL")?;
        let result = work(&self.conn);
        if let Err(e) = self.conn.pragma_update(None, "synchronous", "FULL") {
            self.broken = true;
            return Err(e.into());
        }
        result
    }
}
