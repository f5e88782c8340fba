//! What `serve` and `call` both start: the async runtime and the audit writer.

use std::process::ExitCode;
use std::sync::Arc;

use crate::audit::{self, AuditConfig, AuditError, Ledger};
use crate::config::Config;

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("the async runtime must start")
}

/// Opens the audit ledger and its writer thread; `Ok(None)` when audit is off.
pub fn start_audit(config: &Config) -> Result<Option<Arc<audit::writer::AuditWriter>>, ExitCode> {
    open_audit(config)?.map(spawn_audit).transpose()
}

/// Checks the audit configuration and opens the ledger, without its writer thread:
/// `Ok(None)` when audit is off. A bad configuration is reported here.
pub fn open_audit(config: &Config) -> Result<Option<Ledger>, ExitCode> {
    let config = match AuditConfig::from_config(config) {
        Ok(Some(config)) => config,
        Ok(None) => return Ok(None),
        Err(AuditError::NoLocation) => {
            eprintln!("gitward: {}; audit is off", AuditError::NoLocation);
            return Ok(None);
        }
        Err(e) => {
            eprintln!("gitward: {e}; refusing to start");
            return Err(ExitCode::FAILURE);
        }
    };
    Ledger::open(config).map(Some).map_err(|e| {
        eprintln!("gitward: cannot start the audit writer: {e}; refusing to start");
        ExitCode::FAILURE
    })
}

/// Starts the writer thread of an opened ledger.
pub fn spawn_audit(ledger: Ledger) -> Result<Arc<audit::writer::AuditWriter>, ExitCode> {
    audit::writer::AuditWriter::spawn(ledger).map_err(|e| {
        eprintln!("gitward: cannot start the audit writer: {e}; refusing to start");
        ExitCode::FAILURE
    })
}
