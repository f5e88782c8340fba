//! Presence: this server's own record of which repositories its client used
//! ([`own`]), and the detector behind `agents.presence` that finds other coding agents
//! working in a repository from local sources only ([`detect`]).

pub mod detect;
pub mod overlap;
pub mod own;

mod editors;
mod extensions;
mod finding;
mod fsread;
mod kinds;
mod procscan;
mod records;
mod stores;

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The directory holding one presence record per running server.
pub fn presence_dir(run_dir: &Path) -> PathBuf {
    run_dir.join("presence").join("mcp")
}

/// Whether a process with this id exists on this host (ours or another user's).
pub(crate) fn pid_alive(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        Err(e) => e == rustix::io::Errno::PERM,
    }
}
