//! `gitward verify-audit PATH [--store DB]`: exit 0 verified, 3 not, 2 usage.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::Value;

use crate::audit;
use crate::gateway::server::audit_check;

/// Verify an audit ledger (exit 0 ok, 3 broken, 2 usage).
#[derive(Debug, Args)]
#[command(args_override_self = true)]
pub struct VerifyAuditArgs {
    /// The ledger file (its rotated segments are found beside it).
    #[arg(value_name = "PATH")]
    path: PathBuf,
    /// A public key the signatures may be made with (repeatable).
    #[arg(long, value_name = "PEM")]
    pubkey: Vec<PathBuf>,
    /// Fail on any unsigned entry.
    #[arg(long)]
    require_signed: bool,
    /// Fail on any recorded break.
    #[arg(long)]
    require_unbroken: bool,
    /// A gateway store (`gateway.db`) whose every transition must be in the ledger,
    /// exactly once.
    #[arg(long, value_name = "DB")]
    store: Option<PathBuf>,
}

impl VerifyAuditArgs {
    pub fn run(self) -> ExitCode {
        let mut keys = Vec::with_capacity(self.pubkey.len());
        for file in &self.pubkey {
            match audit::signing::load_public_key(file) {
                Ok(key) => keys.push(key),
                Err(why) => return super::usage_error("verify-audit", &format!("--pubkey {why}")),
            }
        }
        if let Some(db) = &self.store
            && !db.is_file()
        {
            return super::usage_error(
                "verify-audit",
                &format!("--store: no gateway store at {}", db.display()),
            );
        }
        verify(
            &self.path,
            &keys,
            self.require_signed,
            self.require_unbroken,
            self.store.as_deref(),
        )
    }
}

fn verify(
    path: &std::path::Path,
    keys: &[ed25519_dalek::VerifyingKey],
    require_signed: bool,
    require_unbroken: bool,
    store: Option<&std::path::Path>,
) -> ExitCode {
    // On a terminal, how much of the ledger is checked, as a line on stderr.
    let progress = super::progress_line::on_stderr();
    let verified = audit::verify_audit_ledger_watched(path, keys, require_signed, &progress);
    progress.close();
    let mut out = std::io::stdout().lock();
    let verified = verified.and_then(|report| {
        if report.breaks == 0 {
            return Ok(report);
        }
        eprintln!(
            "gitward: the audit ledger has {} recorded break(s): a segment ended in bytes that \
             were not valid entries; the writer that found them recorded their hash and went on \
             in a new segment",
            report.breaks
        );
        if !require_unbroken {
            return Ok(report);
        }
        let failure = audit::verify::VerifyFailure {
            segment: None,
            line: None,
            reason: format!("{} recorded break(s), and none are allowed", report.breaks),
        };
        Err(audit::verify::VerifyError::Failed(Box::new((
            failure, report,
        ))))
    });
    match verified {
        Ok(report) => {
            let mut line = serde_json::json!({ "ok": true });
            merge(&mut line, &report);
            let Some(db) = store else {
                let _ = writeln!(out, "{line}");
                return ExitCode::SUCCESS;
            };
            match audit_check::cross_check(path, db) {
                Ok(check) => {
                    let ok = check.ok();
                    if !ok {
                        eprintln!(
                            "gitward: audit ledger does not match the store: {}",
                            check.reason()
                        );
                        line["ok"] = false.into();
                        line["failure"] = serde_json::json!({"reason": check.reason()});
                    }
                    line["store"] = serde_json::to_value(&check).unwrap_or_default();
                    let _ = writeln!(out, "{line}");
                    if ok {
                        ExitCode::SUCCESS
                    } else {
                        ExitCode::from(3)
                    }
                }
                Err(why) => super::usage_error("verify-audit", &format!("--store: {why}")),
            }
        }
        Err(audit::verify::VerifyError::NotFound(path)) => super::usage_error(
            "verify-audit",
            &format!("no audit ledger at {}", path.display()),
        ),
        Err(audit::verify::VerifyError::Failed(failed)) => {
            let (failure, report) = *failed;
            eprintln!("gitward: audit ledger does not verify: {failure}");
            let mut line = serde_json::json!({ "ok": false, "failure": failure });
            merge(&mut line, &report);
            let _ = writeln!(out, "{line}");
            ExitCode::from(3)
        }
    }
}

fn merge(line: &mut Value, report: &audit::VerifyReport) {
    if let (Value::Object(line), Ok(Value::Object(counters))) = (line, serde_json::to_value(report))
    {
        line.extend(counters);
    }
}
