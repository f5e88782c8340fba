//! Development builds only: `GITWARD_DEBUG_CRASH_AT=<point>` aborts the process (no
//! unwinding, no destructors, like `kill -9`) when execution reaches that named point, so
//! tests can prove a crash there loses nothing and runs nothing twice. Release builds
//! contain none of this.

/// The named points, in the order an execution passes them.
pub const POINTS: &[&str] = &[
    AFTER_INTENT,
    RESTORE_REFS_WRITTEN,
    RESTORE_POINT_RECORDED,
    AFTER_RESTORE_POINT,
    MID_WRITE,
    AFTER_WRITE,
];

/// The intent record is stored; nothing is written yet.
pub const AFTER_INTENT: &str = "after-intent";
/// The restore point's refs are written; its record is not.
pub const RESTORE_REFS_WRITTEN: &str = "restore-refs-written";
/// The restore point's record is written; the intent record does not name it yet.
pub const RESTORE_POINT_RECORDED: &str = "restore-point-recorded";
/// The restore point is taken; the operation's write has not started.
pub const AFTER_RESTORE_POINT: &str = "after-restore-point";
/// Inside the write, between its steps (a commit: staged, not committed; a rebase:
/// stopped at a conflict, not yet aborted — git is mid-rebase).
pub const MID_WRITE: &str = "mid-write";
/// The write is done; the proposal is not yet marked completed.
pub const AFTER_WRITE: &str = "after-write";
/// The gateway wrote transitions to the audit ledger; its store does not yet record that
/// they are audited. Not an execution point, so not in [`POINTS`].
pub const AUDIT_WRITTEN: &str = "audit-written";

#[cfg(debug_assertions)]
pub const VAR: &str = crate::config::vars::DEBUG_CRASH_AT;

/// Aborts when `GITWARD_DEBUG_CRASH_AT` names `point` (development builds only).
#[cfg(debug_assertions)]
pub fn point(point: &str) {
    let knobs = crate::config::debug_knobs();
    if knobs.crash_at.as_deref().is_some_and(|v| v == point) {
        std::process::abort();
    }
}

#[cfg(not(debug_assertions))]
pub fn point(_: &str) {}
