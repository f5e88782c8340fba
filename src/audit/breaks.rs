//! A segment whose tail is not valid entries: where the valid part ends, and a record of
//! what follows it.
//!
//! A writer that finds the ledger's last line broken (not JSON, a duplicate key, a hash
//! that does not match, a line past the limit) does not stop auditing: it moves the broken
//! segment aside like a rotation and opens a new segment whose checkpoint carries a
//! `break` record — the byte offset where the invalid part starts, its length and SHA-256,
//! and why it is invalid — chained from the last valid entry before it. `verify-audit`
//! accepts a segment that ends in exactly the recorded bytes, and counts the break.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::ledger::MAX_LINE;

/// Where a segment stops being valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan<L> {
    /// The last valid chained entry before the break.
    pub last: Option<L>,
    /// The break as recorded on the checkpoint.
    pub record: Break,
}

/// The invalid tail of a segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Break {
    pub offset: u64,
    pub length: u64,
    pub sha256: String,
    pub reason: String,
}

impl Break {
    /// The checkpoint's `break` field.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("offset".into(), self.offset.into());
        map.insert("length".into(), self.length.into());
        map.insert("sha256".into(), self.sha256.clone().into());
        map.insert("reason".into(), self.reason.clone().into());
        Value::Object(map)
    }

    /// Whether a checkpoint's `break` field records exactly this break.
    pub fn matches(&self, recorded: &Value) -> bool {
        recorded.get("offset").and_then(Value::as_u64) == Some(self.offset)
            && recorded.get("length").and_then(Value::as_u64) == Some(self.length)
            && recorded.get("sha256").and_then(Value::as_str) == Some(self.sha256.as_str())
    }
}

/// Reads `path` from the start and stops at the first line `parse` refuses (or that is
/// incomplete or too long). `parse` gives `Ok(Some(link))` for a chained entry and
/// `Ok(None)` for a line to pass over. `None` when every line is valid.
pub fn scan<L>(
    path: &Path,
    mut parse: impl FnMut(&[u8]) -> Result<Option<L>, String>,
) -> std::io::Result<Option<Scan<L>>> {
    let mut reader = BufReader::with_capacity(64 * 1024, File::open(path)?);
    let mut buf = Vec::with_capacity(4096);
    let mut offset = 0u64;
    let mut last = None;
    loop {
        buf.clear();
        let n = (&mut reader)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut buf)?;
        if n == 0 {
            return Ok(None);
        }
        let reason = match buf.split_last() {
            Some((b'\n', line)) if buf.len() <= MAX_LINE => match parse(line) {
                Ok(Some(link)) => {
                    last = Some(link);
                    None
                }
                Ok(None) => None,
                Err(why) => Some(why),
            },
            _ if buf.len() > MAX_LINE => Some("line is longer than the line limit".to_owned()),
            _ => Some("incomplete final line".to_owned()),
        };
        if let Some(reason) = reason {
            let record = hash_rest(offset, &buf, &mut reader, reason)?;
            return Ok(Some(Scan { last, record }));
        }
        offset += n as u64;
    }
}

/// The break starting at `offset`, whose first bytes are `head` and the rest `reader`'s.
pub fn hash_rest(
    offset: u64,
    head: &[u8],
    reader: &mut impl Read,
    reason: String,
) -> std::io::Result<Break> {
    let mut hasher = Sha256::new();
    hasher.update(head);
    let mut length = head.len() as u64;
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = reader.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        hasher.update(chunk.get(..n).unwrap_or_default());
        length += n as u64;
    }
    let mut sha256 = String::from("sha256:");
    super::canonical::push_hex(&mut sha256, &hasher.finalize());
    Ok(Break {
        offset,
        length,
        sha256,
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &[u8]) -> Result<Option<usize>, String> {
        match line {
            b"legacy" => Ok(None),
            l if l.starts_with(b"ok") => Ok(Some(l.len())),
            _ => Err("bad".into()),
        }
    }

    #[test]
    fn stops_at_the_first_bad_line_and_hashes_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("seg");
        std::fs::write(&path, b"legacy\nok1\nok22\nxx\nok3\n").unwrap();
        let scan = scan(&path, parse).unwrap().unwrap();
        assert_eq!(scan.last, Some(4));
        assert_eq!(scan.record.offset, 16);
        assert_eq!(scan.record.length, 7);
        assert_eq!(
            scan.record.sha256,
            crate::audit::canonical::sha256_tag(b"xx\nok3\n")
        );
        assert!(scan.record.matches(&scan.record.to_value()));

        std::fs::write(&path, b"ok1\nok2").unwrap();
        let torn = super::scan(&path, parse).unwrap().unwrap();
        assert_eq!((torn.record.offset, torn.record.length), (4, 3));
        assert_eq!(torn.record.reason, "incomplete final line");

        std::fs::write(&path, b"ok1\n").unwrap();
        assert_eq!(super::scan(&path, parse).unwrap(), None);
    }
}
