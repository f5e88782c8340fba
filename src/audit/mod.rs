//! The tamper-evident audit ledger: one JSONL entry per `tools/call` (and per human
//! decision, written by the approval gateway), hash-chained across rotated segments and
//! optionally Ed25519-signed. The byte-level format is frozen in `docs/audit-format.md`.
//!
//! `ledger` appends under a cross-process lock, `writer` moves that work off the request
//! path, `record` turns a tool call into an entry, `verify` checks a whole ledger.

pub mod breaks;
pub mod canonical;
mod checked;
pub mod export;
pub mod flood;
pub mod ledger;
pub mod record;
pub mod scan;
pub mod signing;
pub mod strict;
pub mod verify;
pub mod writer;

use std::path::PathBuf;
use std::sync::Arc;

use crate::config::{Config, vars};

pub use ledger::{Entry, Ledger};
pub use signing::{AuditSigner, verify_audit_event_signature};
pub use verify::{VerifyReport, verify_audit_ledger, verify_audit_ledger_watched};

/// Where and how to write the ledger.
#[derive(Debug, Clone)]
pub struct AuditConfig {
    /// The active segment; rotations sit beside it as `<name>.1` … `<name>.4`.
    pub path: PathBuf,
    pub signer: Option<Arc<AuditSigner>>,
    /// Rotate the active segment at this many bytes (4 MiB; a test knob can lower it so
    /// rotation is exercised without writing megabytes).
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
    /// The audit settings of the configuration. `Ok(None)` when audit is disabled.
    pub fn from_config(config: &Config) -> Result<Option<AuditConfig>, AuditError> {
        let audit = &config.audit;
        if audit.disabled {
            return Ok(None);
        }
        let signer = match &audit.sign_key {
            None => None,
            Some(path) => {
                let signer = AuditSigner::load(path).map_err(|reason| AuditError::SigningKey {
                    path: format!("{}={}", vars::AUDIT_SIGN_KEY, path.display()),
                    reason,
                })?;
                Some(Arc::new(signer))
            }
        };
        let path = match &audit.log {
            Some(path) => path.clone(),
            None => config
                .run_dir
                .as_ref()
                .ok_or(AuditError::NoLocation)?
                .join("audit")
                .join("mcp.jsonl"),
        };
        Ok(Some(AuditConfig {
            path,
            signer,
            rotate_bytes: audit.rotate_bytes.unwrap_or(ledger::ROTATE_BYTES),
        }))
    }
}
