//! Transitions the audit ledger has not taken: while the ledger cannot be appended to (a
//! full disk, a missing directory), the follower keeps the transitions it could not write,
//! retries them, and says so here for stderr and the approval page, instead of moving on
//! as if they were recorded.

use std::sync::Mutex;

use serde::Serialize;

/// An open gap: transitions from `first_seq` on are waiting for the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Gap {
    /// The first transition not yet in the ledger.
    pub first_seq: i64,
    /// Transitions waiting (all those after the last one the ledger holds).
    pub waiting: u64,
    /// When the ledger first refused, in milliseconds since the Unix epoch.
    pub since: u64,
    /// The ledger's last error.
    pub error: String,
}

/// The current gap, if any.
#[derive(Debug, Default)]
pub struct AuditGap {
    current: Mutex<Option<Gap>>,
}

impl AuditGap {
    /// Records that the ledger refused; returns true when this opens a new gap (so it is
    /// reported once, not on every retry).
    pub fn open(&self, first_seq: i64, waiting: u64, error: String) -> bool {
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        let opened = current.is_none();
        let since = current
            .as_ref()
            .map_or_else(crate::audit::ledger::now_ms, |g| g.since);
        *current = Some(Gap {
            first_seq,
            waiting,
            since,
            error,
        });
        opened
    }

    /// Records that everything waiting is written; returns the gap that closed.
    pub fn close(&self) -> Option<Gap> {
        self.current
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    pub fn current(&self) -> Option<Gap> {
        self.current
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}
