//! Exporting a ledger for other tools: verified entries as JSON lines or CSV, filtered by
//! time and event type, streamed with bounded memory whatever the ledger's size.
//!
//! The whole ledger is verified first; a ledger that does not verify exports nothing,
//! unless the caller accepts a broken one, and then every row says it is unverified.
//! Only entries up to the last one verified are exported: what a writer appends while the
//! export runs was not checked, so it is left for the next export.

use std::io::Write;
use std::path::Path;

use ed25519_dalek::VerifyingKey;
use serde_json::{Map, Value};

use super::scan;
use super::verify::{VerifyError, VerifyReport, verify_audit_ledger};

/// The output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One entry per line, byte for byte as in the ledger (hashes can be checked again).
    Jsonl,
    /// One row per entry with the fields in [`CSV_COLUMNS`].
    Csv,
}

/// Which entries to export.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// At or after, in milliseconds since the Unix epoch.
    pub since_ms: Option<u64>,
    /// Before, in milliseconds since the Unix epoch.
    pub until_ms: Option<u64>,
    /// Only these `event_type`s (all when empty).
    pub event_types: Vec<String>,
}

impl Filter {
    fn admits(&self, entry: &Map<String, Value>) -> bool {
        let ts = entry.get("timestamp").and_then(Value::as_u64).unwrap_or(0);
        if self.since_ms.is_some_and(|s| ts < s) || self.until_ms.is_some_and(|u| ts >= u) {
            return false;
        }
        self.event_types.is_empty()
            || entry
                .get("event_type")
                .and_then(Value::as_str)
                .is_some_and(|t| self.event_types.iter().any(|e| e == t))
    }
}

/// The CSV columns after `verified`, each an entry field (empty when absent).
pub const CSV_COLUMNS: [&str; 16] = [
    "sequence",
    "timestamp",
    "id",
    "event_type",
    "tool",
    "result",
    "risk",
    "approval",
    "agentId",
    "previewId",
    "transition",
    "channel",
    "repo_scope",
    "summary",
    "segmentId",
    "entryHash",
];

/// What an export did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Exported {
    pub rows: u64,
    /// False when the ledger did not verify and the rows were exported anyway.
    pub verified: bool,
    /// Why it did not verify.
    pub failure: Option<String>,
    pub report: VerifyReport,
}

/// Why nothing (or not everything) was exported.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("no audit ledger at {}", .0.display())]
    NotFound(std::path::PathBuf),
    #[error("the audit ledger does not verify ({0}); nothing exported")]
    Broken(String, Box<VerifyReport>),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Verifies the ledger at `path`, then writes its entries that `filter` admits to `out`.
pub fn export(
    path: &Path,
    keys: &[VerifyingKey],
    format: Format,
    filter: &Filter,
    allow_broken: bool,
    out: &mut impl Write,
) -> Result<Exported, ExportError> {
    let (report, failure) = match verify_audit_ledger(path, keys, false) {
        Ok(report) => (report, None),
        Err(VerifyError::NotFound(p)) => return Err(ExportError::NotFound(p)),
        Err(VerifyError::Failed(failed)) => {
            let (failure, report) = *failed;
            if !allow_broken {
                return Err(ExportError::Broken(failure.to_string(), Box::new(report)));
            }
            (report, Some(failure.to_string()))
        }
    };
    let verified = failure.is_none();
    // Entries appended after the verification are not exported: they were not checked.
    let last = report.last_sequence;
    let mut exported = Exported {
        rows: 0,
        verified,
        failure,
        report,
    };
    if format == Format::Csv {
        out.write_all(b"verified")?;
        for column in CSV_COLUMNS {
            out.write_all(b",")?;
            out.write_all(column.as_bytes())?;
        }
        out.write_all(b"\n")?;
    }
    let mut row = Vec::with_capacity(1024);
    let mut done = false;
    scan::for_each_line(path, |line, entry| {
        if done {
            return Ok(());
        }
        let sequence = entry.get("sequence").and_then(Value::as_u64);
        if verified
            && let (Some(seq), Some(last)) = (sequence, last)
            && seq > last
        {
            done = true;
            return Ok(());
        }
        if !filter.admits(entry) {
            return Ok(());
        }
        row.clear();
        match format {
            Format::Jsonl if verified => row.extend_from_slice(line),
            Format::Jsonl => {
                // Marked, not altered: the entry inside is the ledger's line.
                row.extend_from_slice(br#"{"verified":false,"entry":"#);
                row.extend_from_slice(line);
                row.push(b'}');
            }
            Format::Csv => csv_row(&mut row, verified, entry),
        }
        row.push(b'\n');
        out.write_all(&row)?;
        exported.rows += 1;
        Ok(())
    })?;
    out.flush()?;
    Ok(exported)
}

fn csv_row(row: &mut Vec<u8>, verified: bool, entry: &Map<String, Value>) {
    row.extend_from_slice(if verified { b"true" } else { b"false" });
    for column in CSV_COLUMNS {
        row.push(b',');
        let text = match entry.get(column) {
            None | Some(Value::Null) => continue,
            Some(Value::String(s)) => std::borrow::Cow::Borrowed(s.as_str()),
            Some(other) => std::borrow::Cow::Owned(other.to_string()),
        };
        csv_field(row, &text);
    }
}

/// One CSV field (RFC 4180 quoting). Text a spreadsheet would run as a formula (leading
/// `=`, `+`, `-`, `@`, tab or carriage return) gets a leading `'`: ledger fields carry
/// agents' text, and an export is opened in spreadsheets.
fn csv_field(row: &mut Vec<u8>, text: &str) {
    let formula = text
        .chars()
        .next()
        .is_some_and(|c| matches!(c, '=' | '+' | '-' | '@' | '\t' | '\r'))
        && text.parse::<f64>().is_err();
    let quote = formula || text.contains([',', '"', '\n', '\r']);
    if quote {
        row.push(b'"');
    }
    if formula {
        row.push(b'\'');
    }
    for b in text.bytes() {
        if b == b'"' {
            row.push(b'"');
        }
        row.push(b);
    }
    if quote {
        row.push(b'"');
    }
}

#[cfg(test)]
#[path = "export_tests.rs"]
mod tests;
