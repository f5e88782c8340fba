//! The tamper-evident audit ledger: one JSONL entry per `tools/call` (and per human
//! decision, written by the approval gateway), hash-chained across rotated segments and
//! optionally Ed25519-signed. The byte-level format is frozen in `docs/audit-format.md`.
//!
//! `ledger` appends under a cross-process lock, `writer` moves that work off the request
//! path, `record` turns a tool call into an entry, `verify` checks a whole ledger.

pub mod breaks;
pub mod canonical;
pub mod flood;
pub mod ledger;
pub mod record;
pub mod signing;
pub mod strict;
pub mod verify;
pub mod writer;

use std::path::PathBuf;
use std::sync::Arc;

use crate::config::{self, vars};

pub use ledger::{Entry, Ledger};
pub use signing::{AuditSigner, verify_audit_event_signature};
pub use verify::{VerifyReport, verify_audit_ledger};

/// Test-only knob: rotate the active segment at this many bytes instead of 4 MiB, so
/// rotation can be exercised without writing megabytes. Not part of the product contract.
pub const ROTATE_BYTES_VAR: &str = "GITWARD_AUDIT_ROTATE_BYTES";

/// Where and how to write the ledger.
#[derive(Debug, Clone)]
pub struct AuditConfig {
    /// The active segment; rotations sit beside it as `<name>.1` … `<name>.4`.
    pub path: PathBuf,
    pub signer: Option<Arc<AuditSigner>>,
    pub rotate_bytes: u64,
}

/// Why audit cannot be configured.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The signing key variable is set but the key is unusable: the server must not start.
    #[error("audit signing key {path}: {reason}")]
    SigningKey { path: String, reason: String },
    /// Neither an explicit path nor a run directory could be worked out.
    #[error(
        "the audit ledger has no location: set {} or {}",
        vars::AUDIT_LOG,
        vars::RUN_DIR
    )]
    NoLocation,
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// An entry cannot be made to fit the line limit.
    #[error("an entry is larger than the line limit even with an empty summary")]
    TooLong,
}

impl AuditConfig {
    /// Reads the audit settings from the environment. `Ok(None)` when audit is disabled.
    pub fn from_env() -> Result<Option<AuditConfig>, AuditError> {
        if config::flag(vars::AUDIT_DISABLED) {
            return Ok(None);
        }
        let signer = match std::env::var_os(vars::AUDIT_SIGN_KEY) {
            None => None,
            Some(path) => {
                let path = PathBuf::from(path);
                let signer = AuditSigner::load(&path).map_err(|reason| AuditError::SigningKey {
                    path: format!("{}={}", vars::AUDIT_SIGN_KEY, path.display()),
                    reason,
                })?;
                Some(Arc::new(signer))
            }
        };
        let path = match std::env::var_os(vars::AUDIT_LOG).filter(|p| !p.is_empty()) {
            Some(path) => PathBuf::from(path),
            None => config::run_dir()
                .ok_or(AuditError::NoLocation)?
                .join("audit")
                .join("mcp.jsonl"),
        };
        let rotate_bytes = std::env::var(ROTATE_BYTES_VAR)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|&n| n > 0)
            .unwrap_or(ledger::ROTATE_BYTES);
        Ok(Some(AuditConfig {
            path,
            signer,
            rotate_bytes,
        }))
    }
}
