//! Reading a ledger's entries in order (the retained rotations oldest first, then the
//! active segment), line by line with bounded memory, for readers that look at what is
//! recorded rather than check it: the gateway finding the transitions already written,
//! and the cross-check against its store. Lines that are not JSON objects are skipped;
//! whether the ledger is intact is `verify`'s question.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::ledger::{MAX_LINE, RETAINED, lock_path, rotated_path};

/// The segments of the ledger at `path`, oldest first.
pub fn segments(path: &Path) -> Vec<PathBuf> {
    let mut all: Vec<PathBuf> = (1..=RETAINED)
        .rev()
        .map(|n| rotated_path(path, n))
        .filter(|p| p.exists())
        .collect();
    if path.exists() {
        all.push(path.to_owned());
    }
    all
}

/// Calls `each` with every entry of the ledger at `path`, in order. A missing ledger has
/// no entries. Segments are held still (the writers' lock, shared) while they are read.
pub fn for_each_entry(
    path: &Path,
    mut each: impl FnMut(&Map<String, Value>),
) -> std::io::Result<()> {
    for_each_line(path, |_, entry| {
        each(entry);
        Ok(())
    })
}

/// As [`for_each_entry`], with each entry's line as written (without its newline); an
/// error from `each` stops the reading and is returned.
pub fn for_each_line(
    path: &Path,
    mut each: impl FnMut(&[u8], &Map<String, Value>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let lock = File::open(lock_path(path)).ok();
    if let Some(lock) = &lock {
        let _ = rustix::fs::flock(lock, rustix::fs::FlockOperation::LockShared);
    }
    let mut line = Vec::with_capacity(4096);
    for segment in segments(path) {
        let file = match File::open(&segment) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        let mut reader = BufReader::with_capacity(256 * 1024, file);
        loop {
            line.clear();
            // A line longer than any entry can be is not one; reading stops at the limit
            // so a corrupt segment cannot make this hold it all.
            let n = (&mut reader)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut line)?;
            if n == 0 {
                break;
            }
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            if let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(text) {
                each(text, &map)?;
            }
        }
    }
    Ok(())
}

/// The `(previewId, transitionSeq)` of every entry of `event_type` in the ledger whose
/// `transitionSeq` is above `after`.
pub fn transitions_recorded(
    path: &Path,
    event_type: &str,
    after: i64,
) -> std::io::Result<std::collections::HashSet<(String, i64)>> {
    let mut found = std::collections::HashSet::new();
    for_each_entry(path, |entry| {
        if let Some(key) = transition_key(entry, event_type).filter(|(_, seq)| *seq > after) {
            found.insert(key);
        }
    })?;
    Ok(found)
}

/// `(previewId, transitionSeq)` when `entry` is of `event_type` and names both.
pub fn transition_key(entry: &Map<String, Value>, event_type: &str) -> Option<(String, i64)> {
    if entry.get("event_type").and_then(Value::as_str) != Some(event_type) {
        return None;
    }
    let id = entry.get("previewId")?.as_str()?;
    let seq = entry.get("transitionSeq")?.as_i64()?;
    Some((id.to_owned(), seq))
}
