//! Appending to the ledger: chain, sign, rotate and checkpoint under one cross-process
//! lock, so several servers and the gateway can share one file.
//!
//! Every append batch runs, under an exclusive `flock` on `<log>.lock` (never the log
//! itself, which rotation renames): find the chain tail (cached from our own last write
//! when the file is untouched, otherwise read back from disk and validated), drop an
//! incomplete final line left by a crash, rotate when the segment would pass the size
//! limit, write the complete lines, `fdatasync`.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use uuid::Uuid;

use super::signing::{AuditSigner, SIGNATURE_VERSION};
use super::{AuditConfig, AuditError};
use super::{breaks, canonical};

mod tail;

/// `previousHash` of the very first chained entry.
pub const GENESIS_HASH: &str =
    "sha256:0000000000000000000000000000000000000000000000000000000000000000";
/// No line (entry plus newline) is longer than this.
pub const MAX_LINE: usize = 256 * 1024;
/// The active segment rotates before it would grow past this.
pub const ROTATE_BYTES: u64 = 4 * 1024 * 1024;
/// Rotated segments kept: `<log>.1` (newest) … `<log>.4` (oldest).
pub const RETAINED: u32 = 4;
pub const SCHEMA_VERSION: u64 = 1;
pub const CHAIN_VERSION: u64 = 1;
/// Fields `entryHash` does not cover.
pub const HASH_EXCLUDED: [&str; 4] = [
    "entryHash",
    "signature",
    "signatureKeyId",
    "signatureVersion",
];
/// `event_type` of the record that notes a change of signing key inside a segment.
pub const KEY_CHANGE: &str = "key_change";
/// On a checkpoint or key change: the key id that signed the previous entry (`null` when
/// it was unsigned).
pub const PREVIOUS_KEY_FIELD: &str = "previousSignatureKeyId";
/// Event types only the ledger writes.
const LEDGER_EVENTS: [&str; 2] = ["checkpoint", KEY_CHANGE];
/// On the checkpoint after a broken segment end: what was found there.
pub const BREAK_FIELD: &str = "break";
/// Event fields only the ledger writes (on its own records).
const LEDGER_FIELDS: [&str; 2] = [PREVIOUS_KEY_FIELD, BREAK_FIELD];
/// Fields the ledger owns; an entry's own fields with these names are ignored.
const RESERVED: [&str; 11] = [
    "id",
    "timestamp",
    "auditSchemaVersion",
    "auditChainVersion",
    "sequence",
    "segmentId",
    "previousHash",
    "entryHash",
    "signature",
    "signatureKeyId",
    "signatureVersion",
];

/// One event to record. The ledger adds the chain and signature fields when it appends.
#[derive(Debug, Clone)]
pub struct Entry {
    id: Uuid,
    timestamp_ms: u64,
    fields: Map<String, Value>,
}

impl Entry {
    /// An entry stamped now, with a fresh id.
    pub fn now() -> Entry {
        Entry {
            id: Uuid::new_v4(),
            timestamp_ms: now_ms(),
            fields: Map::new(),
        }
    }

    /// Sets an event field (`tool`, `event_type`, …). Ledger-owned names are ignored, and
    /// so are the event types only the ledger writes (`checkpoint`, `key_change`).
    pub fn set(&mut self, key: &str, value: impl Into<Value>) -> &mut Entry {
        let value = value.into();
        let forged = key == "event_type" && LEDGER_EVENTS.iter().any(|e| value == *e);
        if !RESERVED.contains(&key) && !LEDGER_FIELDS.contains(&key) && !forged {
            self.fields.insert(key.to_owned(), value);
        }
        self
    }

    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Entry {
        self.set(key, value);
        self
    }

    pub fn fields(&self) -> &Map<String, Value> {
        &self.fields
    }

    /// When the event happened, in milliseconds since the Unix epoch.
    pub fn timestamp_ms(&self) -> u64 {
        self.timestamp_ms
    }
}

pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The last chained entry.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Link {
    sequence: u64,
    hash: String,
    segment: String,
    /// The key id that signed it, if signed.
    key_id: Option<String>,
}

/// Where the next entry attaches.
#[derive(Debug, Clone, Default)]
struct Tail {
    last: Option<Link>,
    /// The active segment's id, once it holds a chained entry; until then the next
    /// entry opens a new segment (with a checkpoint first, if a chain exists).
    segment: Option<String>,
    /// A broken end of the previous segment, for the next checkpoint to record.
    pending_break: Option<breaks::Break>,
}

/// Identity and length of the active file after our own last append: if it still
/// matches, nobody else wrote and the tail need not be read back.
#[derive(Debug)]
struct Cached {
    /// Held open so that its inode number cannot pass to another file. Once another
    /// writer has rotated the segment away and the oldest is deleted, ext4 gives the freed
    /// number to the next segment it creates, which can reach this very length too.
    _held: File,
    dev: u64,
    ino: u64,
    len: u64,
    tail: Tail,
}

/// An open ledger. Appends are synchronous; see `writer` for the off-thread form.
pub struct Ledger {
    config: AuditConfig,
    lock: Option<File>,
    cached: Option<Cached>,
    /// Messages about repairs (a dropped torn line), for the caller to report.
    notices: Vec<String>,
}

impl std::fmt::Debug for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledger")
            .field("path", &self.config.path)
            .finish()
    }
}

/// Holds the exclusive lock; unlocks on drop (closing the file would too).
struct Locked<'a>(&'a File);

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        let _ = rustix::fs::flock(self.0, rustix::fs::FlockOperation::Unlock);
    }
}

impl Ledger {
    /// Opens a ledger. Nothing touches the disk yet: a directory that cannot be created or
    /// written shows up as an append error later, which callers treat as degraded.
    pub fn open(config: AuditConfig) -> Result<Ledger, AuditError> {
        Ok(Ledger {
            config,
            lock: None,
            cached: None,
            notices: Vec::new(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.config.path
    }

    /// The id of the key this writer signs with.
    fn key_id(&self) -> Option<&str> {
        self.config.signer.as_deref().map(AuditSigner::key_id)
    }

    /// Repairs made during appends since the last call (for stderr).
    pub fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    /// Appends one entry durably.
    pub fn append(&mut self, entry: Entry) -> Result<(), AuditError> {
        self.append_batch(vec![entry])
    }

    /// Appends entries in order under one lock and one sync. An entry that cannot fit
    /// the line limit is skipped (the others are written) and reported as `TooLong`.
    pub fn append_batch(&mut self, entries: Vec<Entry>) -> Result<(), AuditError> {
        self.append_batch_then(entries, || {})
    }

    /// As [`Ledger::append_batch`], calling `written` once every line is in the file
    /// (`write(2)` done, so a crash of this process can no longer lose it) and before the
    /// sync that makes it survive a crash of the machine.
    pub fn append_batch_then(
        &mut self,
        entries: Vec<Entry>,
        written: impl FnOnce(),
    ) -> Result<(), AuditError> {
        if entries.is_empty() {
            written();
            return Ok(());
        }
        let result = self.append_locked(&entries, written);
        if result
            .as_ref()
            .is_err_and(|e| !matches!(e, AuditError::TooLong))
        {
            self.cached = None;
        }
        result
    }

    fn lock_file(&mut self) -> Result<&File, AuditError> {
        if self.lock.is_none() {
            if let Some(dir) = self
                .config
                .path
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
            {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(dir)?;
            }
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o600)
                .custom_flags(NOFOLLOW)
                .open(lock_path(&self.config.path))?;
            self.lock = Some(file);
        }
        Ok(self.lock.as_ref().expect("set above"))
    }

    fn append_locked(
        &mut self,
        entries: &[Entry],
        written: impl FnOnce(),
    ) -> Result<(), AuditError> {
        let lock = self.lock_file()?.try_clone()?;
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive)
            .map_err(std::io::Error::from)?;
        let _guard = Locked(&lock);

        let mut file = open_active(&self.config.path)?;
        let meta = file.metadata()?;
        let (mut tail, mut len) = match &self.cached {
            Some(c) if c.dev == meta.dev() && c.ino == meta.ino() && c.len == meta.len() => {
                (c.tail.clone(), meta.len())
            }
            _ => match self.read_tail(&mut file, meta.len())? {
                Ok(found) => found,
                Err(broken) => {
                    let (active, tail, len) = self.recover(broken)?;
                    file = active;
                    (tail, len)
                }
            },
        };

        let mut buf: Vec<u8> = Vec::with_capacity(entries.len() * 800);
        let mut too_long = false;
        for entry in entries {
            let mut rotated = false;
            loop {
                let mut next = tail.clone();
                let mut lines = Vec::new();
                // A change of signing key is recorded where it happens, so that a signed
                // chain continuing unsigned is never mistaken for stripped signatures.
                let key_changed = next
                    .last
                    .as_ref()
                    .is_some_and(|l| l.key_id.as_deref() != self.key_id());
                if next.segment.is_none() && (next.last.is_some() || next.pending_break.is_some()) {
                    let broken = next.pending_break.take();
                    let entry = checkpoint(next.last.as_ref(), key_changed, broken.as_ref());
                    lines.extend(self.seal(&entry, &mut next, true)?);
                } else if let Some(last) = next.last.as_ref().filter(|_| key_changed) {
                    let entry = key_change(last);
                    lines.extend(self.seal(&entry, &mut next, true)?);
                }
                match self.seal(entry, &mut next, false) {
                    Ok(line) => lines.extend(line),
                    Err(AuditError::TooLong) => {
                        too_long = true;
                        break;
                    }
                    Err(e) => return Err(e),
                }
                let used = len + buf.len() as u64;
                if !rotated && used > 0 && used + lines.len() as u64 > self.config.rotate_bytes {
                    write_synced(&mut file, &mut buf, len)?;
                    file = self.rotate()?;
                    len = 0;
                    tail.segment = None;
                    rotated = true;
                    continue;
                }
                buf.extend_from_slice(&lines);
                tail = next;
                break;
            }
        }
        let created = len == 0 && !buf.is_empty();
        write_then_sync(&mut file, &mut buf, len, written)?;
        if created {
            // A new segment's directory entry must be as durable as its first line.
            sync_dir(&self.config.path);
        }
        let meta = file.metadata()?;
        self.cached = Some(Cached {
            _held: file,
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            tail,
        });
        if too_long {
            return Err(AuditError::TooLong);
        }
        Ok(())
    }

    /// Completes an entry against `tail` (advancing it) and returns its line.
    fn seal(
        &self,
        entry: &Entry,
        tail: &mut Tail,
        ledger_record: bool,
    ) -> Result<Vec<u8>, AuditError> {
        let segment = tail
            .segment
            .clone()
            .unwrap_or_else(|| Uuid::new_v4().to_string());
        let sequence = tail.last.as_ref().map_or(1, |l| l.sequence + 1);
        let previous = tail
            .last
            .as_ref()
            .map_or(GENESIS_HASH.to_owned(), |l| l.hash.clone());
        let mut summary_limit: Option<usize> = None;
        for _ in 0..3 {
            let mut map = Map::with_capacity(entry.fields.len() + 12);
            map.insert("id".into(), entry.id.to_string().into());
            map.insert("timestamp".into(), entry.timestamp_ms.into());
            map.insert("auditSchemaVersion".into(), SCHEMA_VERSION.into());
            map.insert("auditChainVersion".into(), CHAIN_VERSION.into());
            map.insert("sequence".into(), sequence.into());
            map.insert("segmentId".into(), segment.clone().into());
            map.insert("previousHash".into(), previous.clone().into());
            map.insert("entryHash".into(), Value::Null);
            for (key, value) in &entry.fields {
                if RESERVED.contains(&key.as_str()) {
                    continue;
                }
                match (key.as_str(), value, summary_limit) {
                    ("summary", Value::String(s), Some(limit)) => {
                        map.insert(key.clone(), shorten(s, limit).into());
                    }
                    ("event_type", v, _)
                        if !ledger_record && LEDGER_EVENTS.iter().any(|e| v == *e) => {}
                    (k, _, _) if !ledger_record && LEDGER_FIELDS.contains(&k) => {}
                    _ => {
                        map.insert(key.clone(), value.clone());
                    }
                }
            }
            if let Some(signer) = &self.config.signer {
                map.insert("signature".into(), Value::Null);
                map.insert("signatureKeyId".into(), signer.key_id().into());
                map.insert("signatureVersion".into(), SIGNATURE_VERSION.into());
            }
            let hash = canonical::sha256_tag(&canonical::object_without(&map, &HASH_EXCLUDED));
            map.insert("entryHash".into(), hash.clone().into());
            if let Some(signer) = &self.config.signer {
                let signature = signer.sign(&canonical::object_without(&map, &["signature"]));
                map.insert("signature".into(), signature.into());
            }
            let mut line = serde_json::to_vec(&map).expect("a JSON map serializes");
            line.push(b'\n');
            if line.len() <= MAX_LINE {
                tail.last = Some(Link {
                    sequence,
                    hash,
                    segment: segment.clone(),
                    key_id: self.key_id().map(str::to_owned),
                });
                tail.segment = Some(segment);
                return Ok(line);
            }
            let summary_len = entry
                .fields
                .get("summary")
                .and_then(Value::as_str)
                .map_or(0, str::len);
            let excess = line.len() - MAX_LINE;
            summary_limit = Some(summary_len.saturating_sub(excess + 16));
        }
        Err(AuditError::TooLong)
    }

    /// Shifts `.1`…`.3` up by one (dropping `.4`), renames the active segment to `.1`,
    /// and opens a new, empty active segment.
    fn rotate(&self) -> Result<File, AuditError> {
        let path = &self.config.path;
        match std::fs::remove_file(rotated_path(path, RETAINED)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e.into()),
        }
        for n in (1..RETAINED).rev() {
            match std::fs::rename(rotated_path(path, n), rotated_path(path, n + 1)) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e.into()),
            }
        }
        std::fs::rename(path, rotated_path(path, 1))?;
        let file = open_active(path)?;
        sync_dir(path);
        Ok(file)
    }
}

/// The checkpoint that opens a new segment after `last` (the genesis when no valid entry
/// is left to chain from), noting a change of signing key and a broken previous segment.
fn checkpoint(last: Option<&Link>, key_changed: bool, broken: Option<&breaks::Break>) -> Entry {
    let mut entry = Entry::now();
    let fields = &mut entry.fields;
    fields.insert("event_type".into(), "checkpoint".into());
    if let Some(last) = last {
        fields.insert("previousSegmentId".into(), last.segment.clone().into());
    }
    fields.insert("lastSequence".into(), last.map_or(0, |l| l.sequence).into());
    fields.insert(
        "lastEntryHash".into(),
        last.map_or(GENESIS_HASH.to_owned(), |l| l.hash.clone())
            .into(),
    );
    if let (Some(last), true) = (last, key_changed) {
        fields.insert(PREVIOUS_KEY_FIELD.into(), last.key_id.clone().into());
    }
    if let Some(broken) = broken {
        fields.insert(BREAK_FIELD.into(), broken.to_value());
    }
    entry
}

/// The record of a change of signing key after `last`, inside a segment.
fn key_change(last: &Link) -> Entry {
    let mut entry = Entry::now();
    entry.fields.insert("event_type".into(), KEY_CHANGE.into());
    entry
        .fields
        .insert(PREVIOUS_KEY_FIELD.into(), last.key_id.clone().into());
    entry
}

fn shorten(s: &str, limit: usize) -> String {
    if s.len() <= limit {
        return s.to_owned();
    }
    let mut end = limit.saturating_sub('…'.len_utf8());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Opens (creating) the active segment. A symlink in its place is refused: appends must
/// not be redirected into some other file.
fn open_active(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(NOFOLLOW)
        .open(path)
}

const NOFOLLOW: i32 = rustix::fs::OFlags::NOFOLLOW.bits() as i32;

/// Writes `buf` at the end of `file` and syncs it; on failure, cuts the file back to
/// `len` so no partial line is left for the next writer.
fn write_synced(file: &mut File, buf: &mut Vec<u8>, len: u64) -> Result<(), AuditError> {
    write_then_sync(file, buf, len, || {})
}

/// As [`write_synced`], calling `written` between the write and the sync.
fn write_then_sync(
    file: &mut File,
    buf: &mut Vec<u8>,
    len: u64,
    written: impl FnOnce(),
) -> Result<(), AuditError> {
    if buf.is_empty() {
        written();
        return Ok(());
    }
    let result = file.write_all(buf);
    buf.clear();
    if let Err(e) = result {
        let _ = file.set_len(len);
        return Err(e.into());
    }
    written();
    file.sync_data()?;
    Ok(())
}

fn sync_dir(path: &Path) {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
}

/// `<log>.lock`.
pub fn lock_path(log: &Path) -> PathBuf {
    let mut name = log.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// `<log>.<n>`.
pub fn rotated_path(log: &Path, n: u32) -> PathBuf {
    let mut name = log.as_os_str().to_owned();
    name.push(format!(".{n}"));
    PathBuf::from(name)
}

#[cfg(test)]
mod tests;
