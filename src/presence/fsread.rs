//! Bounded, read-only file access for the detector.
//!
//! Every file is opened without following a final symlink and without blocking on a
//! FIFO, must be a regular file, and is read within byte caps. Every byte read is counted
//! in a [`Meter`], so the cost of a call is observable.

use std::fs::{File, Metadata};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// A JSONL tail is read in steps of this size...
pub const TAIL_STEP: u64 = 256 * 1024;
/// ...up to this much per file. A longer line is skipped unparsed.
pub const TAIL_MAX: u64 = 1024 * 1024;
/// Store bytes read per call, all sources together.
pub const CALL_BYTES_MAX: u64 = 24 * 1024 * 1024;

/// Shared per-call limits and counters.
pub struct Meter {
    pub deadline: Instant,
    pub bytes_read: AtomicU64,
    pub files_read: AtomicU64,
}

impl Meter {
    pub fn new(deadline: Instant) -> Meter {
        Meter {
            deadline,
            bytes_read: AtomicU64::new(0),
            files_read: AtomicU64::new(0),
        }
    }

    pub fn expired(&self) -> bool {
        Instant::now() >= self.deadline
    }

    /// The deadline passed or the call's byte budget is used up.
    pub fn spent(&self) -> bool {
        self.over_bytes() || self.expired()
    }

    pub fn over_bytes(&self) -> bool {
        self.bytes_read.load(Ordering::Relaxed) >= CALL_BYTES_MAX
    }

    /// Why a source stopped early, if it did.
    pub fn stop_reason(&self) -> Option<&'static str> {
        if self.expired() {
            Some("deadline")
        } else if self.over_bytes() {
            Some("byteBudget")
        } else {
            None
        }
    }

    fn count(&self, bytes: usize) {
        self.bytes_read.fetch_add(bytes as u64, Ordering::Relaxed);
    }
}

/// Opens a regular file for reading: no final symlink, no blocking open of a FIFO.
pub fn open_regular(path: &Path) -> Option<(File, Metadata)> {
    crate::safe_file::open_regular(path).ok()
}

/// Modification time in ms of a path that is not a symlink.
pub fn mtime_ms(path: &Path) -> Option<u64> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    (!meta.file_type().is_symlink()).then(|| meta_mtime_ms(&meta))
}

pub fn meta_mtime_ms(meta: &Metadata) -> u64 {
    (meta.mtime().max(0) as u64) * 1000 + (meta.mtime_nsec().max(0) as u64) / 1_000_000
}

/// The whole file when it is at most `cap` bytes.
pub fn read_small(path: &Path, cap: u64) -> Option<Vec<u8>> {
    let (file, meta) = open_regular(path)?;
    if meta.len() > cap {
        return None;
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(cap).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// Like [`read_small`], counting the bytes.
pub fn read_small_metered(path: &Path, cap: u64, meter: &Meter) -> Option<Vec<u8>> {
    let bytes = read_small(path, cap)?;
    meter.count(bytes.len());
    meter.files_read.fetch_add(1, Ordering::Relaxed);
    Some(bytes)
}

/// The first line of a file (without its newline) if it ends within `cap` bytes.
pub fn head_line(path: &Path, cap: u64, meter: &Meter) -> Option<Vec<u8>> {
    if meter.spent() {
        return None;
    }
    let (file, _) = open_regular(path)?;
    let mut bytes = Vec::new();
    let mut reader = file.take(cap);
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let n = reader.read(&mut chunk).ok()?;
        if n == 0 {
            break;
        }
        meter.count(n);
        let start = bytes.len();
        bytes.extend_from_slice(&chunk[..n]);
        if let Some(at) = bytes[start..].iter().position(|b| *b == b'\n') {
            bytes.truncate(start + at);
            return Some(bytes);
        }
    }
    None
}

/// Visits the complete lines of a file from the newest backwards, reading at most
/// [`TAIL_MAX`] bytes from the end, until `visit` returns false. A trailing line without
/// a newline may be a write in progress and is not visited; a line that does not fit in
/// the budget is never visited.
pub fn tail_lines(
    path: &Path,
    meter: &Meter,
    mut visit: impl FnMut(&[u8]) -> bool,
) -> Option<Metadata> {
    let (mut file, meta) = open_regular(path)?;
    meter.files_read.fetch_add(1, Ordering::Relaxed);
    let size = meta.len();
    let mut end = size;
    // Bytes after `end` that begin in the middle of a line we have not reached yet.
    let mut carry: Vec<u8> = Vec::new();
    let mut first = true;
    let mut total = 0u64;
    while end > 0 && total < TAIL_MAX && !meter.spent() {
        let start = end.saturating_sub(TAIL_STEP);
        let len = (end - start) as usize;
        let mut buf = vec![0u8; len];
        file.seek(SeekFrom::Start(start)).ok()?;
        file.read_exact(&mut buf).ok()?;
        meter.count(len);
        total += len as u64;
        buf.extend_from_slice(&carry);
        let mut region: &[u8] = &buf;
        if first {
            // Drop an unterminated final line.
            match region.iter().rposition(|b| *b == b'\n') {
                Some(at) => region = &region[..=at],
                None => region = &[],
            }
            first = false;
        }
        // Lines are complete from the first newline on (or from 0 at the file start).
        let complete_from = if start == 0 {
            0
        } else {
            match region.iter().position(|b| *b == b'\n') {
                Some(at) => at + 1,
                None => {
                    carry = region.to_vec();
                    end = start;
                    continue;
                }
            }
        };
        let body = &region[complete_from..];
        for line in body.split(|b| *b == b'\n').rev() {
            if line.is_empty() {
                continue;
            }
            if !visit(line) {
                return Some(meta);
            }
        }
        carry = region[..complete_from].to_vec();
        end = start;
    }
    Some(meta)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(content: &[u8]) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.jsonl");
        std::fs::write(&path, content).unwrap();
        let meter = Meter::new(Instant::now() + std::time::Duration::from_secs(60));
        let mut seen = Vec::new();
        tail_lines(&path, &meter, |l| {
            seen.push(String::from_utf8_lossy(l).into_owned());
            true
        })
        .unwrap();
        seen
    }

    #[test]
    fn newest_first_without_the_unterminated_line() {
        assert_eq!(lines_of(b"a\nb\n\nc\npartial"), ["c", "b", "a"]);
        assert!(lines_of(b"only partial").is_empty());
    }

    #[test]
    fn lines_across_steps_and_the_budget() {
        let long = "x".repeat(300 * 1024);
        let content = format!("first\n{long}\nlast\n");
        assert_eq!(
            lines_of(content.as_bytes()),
            ["last", long.as_str(), "first"]
        );
        // A line longer than the whole budget is never visited, nor is anything before it.
        let huge = "y".repeat(2 * 1024 * 1024);
        let content = format!("old\n{huge}\nnew\n");
        assert_eq!(lines_of(content.as_bytes()), ["new"]);
    }

    #[test]
    fn symlinks_and_fifos_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t");
        std::fs::write(&target, "x\n").unwrap();
        let link = dir.path().join("l");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(open_regular(&target).is_some());
        assert!(open_regular(&link).is_none());
        assert!(open_regular(dir.path()).is_none());
    }
}
