//! Verifying a whole ledger: the retained rotations oldest first, then the active segment,
//! streamed line by line with bounded memory. Checks every entry's hash, the sequence and
//! hash linkage (across segments, through checkpoints), segment ids and signatures.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use ed25519_dalek::VerifyingKey;
use serde::Serialize;
use serde_json::{Map, Value};

use super::canonical;
use super::ledger::{
    BREAK_FIELD, CHAIN_VERSION, GENESIS_HASH, HASH_EXCLUDED, KEY_CHANGE, MAX_LINE,
    PREVIOUS_KEY_FIELD, RETAINED, SCHEMA_VERSION, lock_path, rotated_path,
};
use super::signing::{SignatureProblem, verify_audit_event_signature};
use super::{breaks, strict};
use crate::progress::Progress;

/// Counters only: a verification report never repeats ledger content.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifyReport {
    pub entries: u64,
    pub chained: u64,
    pub legacy: u64,
    pub signed: u64,
    pub unsigned: u64,
    pub segments: u64,
    /// Ledger records of a change of signing key (see `docs/audit-format.md`).
    pub key_changes: u64,
    /// Broken segment ends that a later checkpoint records (see `docs/audit-format.md`).
    pub breaks: u64,
    /// The retained sequence range (chained entries).
    pub first_sequence: Option<u64>,
    pub last_sequence: Option<u64>,
}

/// Why a ledger did not verify, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VerifyFailure {
    /// The segment's file name (`mcp.jsonl.2`).
    pub segment: Option<String>,
    /// 1-based line within that segment.
    pub line: Option<u64>,
    pub reason: String,
}

impl std::fmt::Display for VerifyFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.segment, self.line) {
            (Some(s), Some(l)) => write!(f, "{s} line {l}: {}", self.reason),
            (Some(s), None) => write!(f, "{s}: {}", self.reason),
            _ => f.write_str(&self.reason),
        }
    }
}

/// How verification ended.
#[derive(Debug)]
pub enum VerifyError {
    /// No active segment and no rotation exists at the path.
    NotFound(PathBuf),
    /// The ledger is malformed, broken or badly signed; the counters are as far as it got.
    Failed(Box<(VerifyFailure, VerifyReport)>),
}

/// The last chained entry seen.
struct Link {
    sequence: u64,
    hash: String,
    segment: String,
    /// The key id of its signature, when signed.
    key: Option<String>,
}

/// Verifies the ledger whose active segment is `path`. Signed entries must verify under
/// one of `keys` (matched by key id); with `require_signed`, any unsigned entry fails.
pub fn verify_audit_ledger(
    path: &Path,
    keys: &[VerifyingKey],
    require_signed: bool,
) -> Result<VerifyReport, VerifyError> {
    verify_audit_ledger_watched(path, keys, require_signed, &Progress::none())
}

/// [`verify_audit_ledger`], telling `progress` how many of the ledger's bytes are checked.
pub fn verify_audit_ledger_watched(
    path: &Path,
    keys: &[VerifyingKey],
    require_signed: bool,
    progress: &Progress,
) -> Result<VerifyReport, VerifyError> {
    let mut segments: Vec<PathBuf> = (1..=RETAINED)
        .rev()
        .map(|n| rotated_path(path, n))
        .filter(|p| p.exists())
        .collect();
    let has_active = path.exists();
    if has_active {
        segments.push(path.to_owned());
    }
    if segments.is_empty() {
        return Err(VerifyError::NotFound(path.to_owned()));
    }
    // Writers rotate under this lock; holding it shared keeps segments from moving while
    // they are read. Without it (a read-only copy), verify what is there.
    let lock = File::open(lock_path(path)).ok();
    if let Some(lock) = &lock {
        let _ = rustix::fs::flock(lock, rustix::fs::FlockOperation::LockShared);
    }

    let mut v = Verifier {
        keys,
        report: VerifyReport::default(),
        prev: None,
        seen_segments: HashSet::new(),
        chain_started: false,
        pending: None,
        checked: Checked {
            progress: progress.clone(),
            total: segments
                .iter()
                .filter_map(|s| s.metadata().ok())
                .map(|m| m.len())
                .sum(),
            ..Checked::default()
        },
    };
    let count = segments.len();
    for (i, segment) in segments.iter().enumerate() {
        let name = segment
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let is_active = has_active && i + 1 == count;
        let has_next = i + 1 < count;
        v.segment(segment, &name, is_active, has_next)
            .map_err(|(line, reason)| {
                // A failure that a break record was expected to cover is reported where
                // it is, not where the record was missing.
                let failure = match v.pending.take() {
                    Some(pending) => pending.failure,
                    None => VerifyFailure {
                        segment: Some(name.clone()),
                        line,
                        reason,
                    },
                };
                VerifyError::Failed(Box::new((failure, v.report.clone())))
            })?;
    }
    if let Some(pending) = v.pending.take() {
        return Err(VerifyError::Failed(Box::new((pending.failure, v.report))));
    }
    if require_signed && v.report.unsigned > 0 {
        return Err(VerifyError::Failed(Box::new((
            VerifyFailure {
                segment: None,
                line: None,
                reason: format!(
                    "{} unsigned entries, and signatures are required",
                    v.report.unsigned
                ),
            },
            v.report,
        ))));
    }
    Ok(v.report)
}

struct Verifier<'k> {
    keys: &'k [VerifyingKey],
    report: VerifyReport,
    prev: Option<Link>,
    seen_segments: HashSet<String>,
    chain_started: bool,
    /// A segment ended in invalid bytes: the next segment must open with a checkpoint
    /// that records exactly them.
    pending: Option<Pending>,
    checked: Checked,
}

/// The ledger's bytes checked so far, reported every [`Checked::STEP`] bytes.
#[derive(Default)]
struct Checked {
    progress: Progress,
    done: u64,
    reported: u64,
    total: u64,
}

impl Checked {
    const STEP: u64 = 1 << 20;

    fn add(&mut self, n: u64) {
        self.done += n;
        if self.done - self.reported >= Self::STEP || self.done == self.total {
            self.reported = self.done;
            let (done, total) = (self.done, self.total.max(self.done));
            let mib = |b: u64| b as f64 / f64::from(1 << 20);
            self.progress.report(done, Some(total), || {
                format!("verify-audit: {:.1} of {:.1} MiB", mib(done), mib(total))
            });
        }
    }
}

struct Pending {
    failure: VerifyFailure,
    found: breaks::Break,
}

type Failure = (Option<u64>, String);

impl Verifier<'_> {
    fn segment(
        &mut self,
        path: &Path,
        name: &str,
        is_active: bool,
        has_next: bool,
    ) -> Result<(), Failure> {
        let file = File::open(path).map_err(|e| (None, format!("cannot be read: {e}")))?;
        let mut reader = BufReader::with_capacity(64 * 1024, file);
        let mut buf = Vec::with_capacity(4096);
        let mut line_no = 0u64;
        let mut offset = 0u64;
        let mut segment_id: Option<String> = None;
        loop {
            buf.clear();
            let n = (&mut reader)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut buf)
                .map_err(|e| (Some(line_no + 1), format!("cannot be read: {e}")))?;
            if n == 0 {
                break;
            }
            line_no += 1;
            let at = Some(line_no);
            let checked = self.line(&buf, &mut segment_id);
            if let Err(reason) = checked {
                if !has_next || self.pending.is_some() {
                    return Err((at, reason));
                }
                // Perhaps a broken end that the next segment's checkpoint records: hash
                // it, and let that checkpoint decide.
                let found = breaks::hash_rest(offset, &buf, &mut reader, reason.clone())
                    .map_err(|e| (at, format!("cannot be read: {e}")))?;
                self.pending = Some(Pending {
                    failure: VerifyFailure {
                        segment: Some(name.to_owned()),
                        line: at,
                        reason,
                    },
                    found,
                });
                break;
            }
            offset += n as u64;
            self.checked.add(n as u64);
        }
        if line_no == 0 && !is_active {
            return Err((None, "rotated segment is empty".into()));
        }
        self.report.segments += 1;
        Ok(())
    }

    /// Checks one line (with its newline, if it has one).
    fn line(&mut self, buf: &[u8], segment_id: &mut Option<String>) -> Result<(), String> {
        let Some((b'\n', line)) = buf.split_last() else {
            return Err(if buf.len() > MAX_LINE {
                "line is longer than the line limit".into()
            } else {
                "incomplete final line (truncated or interrupted write)".into()
            });
        };
        if buf.len() > MAX_LINE {
            return Err("line is longer than the line limit".into());
        }
        let map = strict::parse_object(line)?;
        self.report.entries += 1;
        self.entry(&map, segment_id)
    }

    /// A checkpoint's `break` field against the broken end of the previous segment.
    fn break_record(&mut self, map: &Map<String, Value>, anchor: bool) -> Result<(), String> {
        match (map.get(BREAK_FIELD), self.pending.take()) {
            (None, None) => Ok(()),
            (Some(recorded), Some(pending)) if pending.found.matches(recorded) => {
                self.report.breaks += 1;
                Ok(())
            }
            (Some(_), Some(pending)) => {
                self.pending = Some(pending);
                Err("the recorded break does not match the previous segment's end".into())
            }
            (None, Some(pending)) => {
                self.pending = Some(pending);
                Err("the previous segment's broken end is not recorded".into())
            }
            // The broken segment itself is no longer retained.
            (Some(_), None) if anchor => {
                self.report.breaks += 1;
                Ok(())
            }
            (Some(_), None) => {
                Err("checkpoint records a break the previous segment does not have".into())
            }
        }
    }

    fn entry(
        &mut self,
        map: &Map<String, Value>,
        segment_id: &mut Option<String>,
    ) -> Result<(), String> {
        if !map.contains_key("auditChainVersion") {
            if self.chain_started {
                return Err("unchained record after the chain began".into());
            }
            self.report.legacy += 1;
            return self.signature(map);
        }
        let u64_field = |key: &str| u64_of(map, key);
        let str_field = |key: &str| str_of(map, key);
        if u64_field("auditChainVersion")? != CHAIN_VERSION {
            return Err("unsupported auditChainVersion".into());
        }
        if u64_field("auditSchemaVersion")? != SCHEMA_VERSION {
            return Err("unsupported auditSchemaVersion".into());
        }
        str_field("id")?;
        u64_field("timestamp")?;
        let sequence = u64_field("sequence")?;
        let segment = str_field("segmentId")?;
        if uuid::Uuid::parse_str(segment).is_err() {
            return Err("segmentId is not a UUID".into());
        }
        let previous = str_field("previousHash")?;
        let hash = str_field("entryHash")?;
        if !canonical::is_sha256_tag(previous) || !canonical::is_sha256_tag(hash) {
            return Err("previousHash or entryHash is not sha256:<64 hex>".into());
        }
        if canonical::sha256_tag(&canonical::object_without(map, &HASH_EXCLUDED)) != hash {
            return Err("entryHash does not match the entry".into());
        }
        let is_checkpoint = map.get("event_type").and_then(Value::as_str) == Some("checkpoint");
        if is_checkpoint {
            let anchor = self.prev.is_none() && segment_id.is_none();
            self.break_record(map, anchor)?;
        } else if self.pending.is_some() {
            return Err("the previous segment's broken end is not recorded".into());
        }
        let first_in_segment = match segment_id {
            None => {
                if !self.seen_segments.insert(segment.to_owned()) {
                    return Err("segmentId already used by an earlier segment".into());
                }
                *segment_id = Some(segment.to_owned());
                true
            }
            Some(id) if id == segment => false,
            Some(_) => return Err("entry carries another segment's segmentId".into()),
        };
        match (&self.prev, first_in_segment, is_checkpoint) {
            (_, false, true) => return Err("checkpoint inside a segment".into()),
            (Some(prev), false, false) => link(prev, sequence, previous)?,
            (None, false, false) => unreachable!("a segment's later entries follow its first"),
            (prev, true, true) => checkpoint_link(map, prev.as_ref(), segment, sequence, previous)?,
            (Some(_), true, false) => {
                return Err("segment does not open with a checkpoint".into());
            }
            (None, true, false) => {
                if sequence != 1 || previous != GENESIS_HASH {
                    return Err(
                        "the oldest retained segment neither starts the chain nor opens with a checkpoint"
                            .into(),
                    );
                }
            }
        }
        if map.contains_key("signature") && !map.contains_key("signatureVersion") {
            return Err("chained entry signed without a signatureVersion".into());
        }
        self.signature(map)?;
        let key = map
            .get("signature")
            .and_then(|_| map.get("signatureKeyId"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        self.key_change(map, is_checkpoint, key.as_deref())?;
        self.report.chained += 1;
        self.report.first_sequence.get_or_insert(sequence);
        self.report.last_sequence = Some(sequence);
        self.prev = Some(Link {
            sequence,
            hash: hash.to_owned(),
            segment: segment.to_owned(),
            key,
        });
        self.chain_started = true;
        Ok(())
    }

    /// A chain that was signed stays signed unless the ledger recorded the change: otherwise
    /// stripping the signatures off the newest entries and recomputing their hashes would
    /// leave a ledger that verifies.
    fn key_change(
        &mut self,
        map: &Map<String, Value>,
        is_checkpoint: bool,
        key: Option<&str>,
    ) -> Result<(), String> {
        let is_key_change = map.get("event_type").and_then(Value::as_str) == Some(KEY_CHANGE);
        let prev_key = self.prev.as_ref().map(|p| p.key.as_deref());
        match map.get(PREVIOUS_KEY_FIELD) {
            Some(recorded) => {
                if !is_checkpoint && !is_key_change {
                    return Err(format!("{PREVIOUS_KEY_FIELD} outside a checkpoint"));
                }
                if !recorded.is_string() && !recorded.is_null() {
                    return Err(format!("{PREVIOUS_KEY_FIELD} is not a string or null"));
                }
                // With no earlier entry retained there is nothing to compare against.
                if prev_key.is_some_and(|prev| prev != recorded.as_str()) {
                    return Err(
                        "the recorded key change does not match the previous entry's key".into(),
                    );
                }
                self.report.key_changes += 1;
            }
            None if is_key_change => {
                return Err(format!("key_change without {PREVIOUS_KEY_FIELD}"));
            }
            None => {
                if prev_key.flatten().is_some() && key.is_none() {
                    return Err(
                        "unsigned entry after a signed one, with no key change recorded (signatures stripped?)"
                            .into(),
                    );
                }
            }
        }
        Ok(())
    }

    fn signature(&mut self, map: &Map<String, Value>) -> Result<(), String> {
        match verify_audit_event_signature(map, self.keys) {
            Ok(true) => self.report.signed += 1,
            Ok(false) => self.report.unsigned += 1,
            Err(SignatureProblem::Invalid) => return Err("bad signature".into()),
            Err(SignatureProblem::UnknownKey(id)) if id.is_empty() => {
                return Err("signed, but no public key was given".into());
            }
            Err(SignatureProblem::UnknownKey(id)) => {
                return Err(format!("signed by key {id}, which was not given"));
            }
            Err(SignatureProblem::Malformed(why)) => return Err(why.into()),
        }
        Ok(())
    }
}

fn link(prev: &Link, sequence: u64, previous: &str) -> Result<(), String> {
    if prev.sequence.checked_add(1) != Some(sequence) {
        return Err(format!(
            "sequence {sequence} does not follow {}",
            prev.sequence
        ));
    }
    if previous != prev.hash {
        return Err("previousHash does not match the previous entry".into());
    }
    Ok(())
}

/// The link a segment-opening checkpoint makes to the segment before it.
fn checkpoint_link(
    map: &Map<String, Value>,
    prev: Option<&Link>,
    segment: &str,
    sequence: u64,
    previous: &str,
) -> Result<(), String> {
    if u64_of(map, "lastSequence")?.checked_add(1) != Some(sequence)
        || str_of(map, "lastEntryHash")? != previous
    {
        return Err("checkpoint fields disagree with its chain fields".into());
    }
    // After a break with nothing valid left before it, the chain restarts at
    // genesis and there is no previous segment to name.
    let restarts = map.contains_key(BREAK_FIELD)
        && sequence == 1
        && previous == GENESIS_HASH
        && !map.contains_key("previousSegmentId");
    let previous_segment = if restarts {
        None
    } else {
        Some(str_of(map, "previousSegmentId")?)
    };
    if previous_segment == Some(segment) {
        return Err("checkpoint names its own segment as the previous one".into());
    }
    // With no earlier segment retained, the checkpoint is the anchor.
    match (prev, previous_segment) {
        (Some(prev), Some(previous_segment)) => {
            if previous_segment != prev.segment {
                return Err("checkpoint does not follow the previous retained segment".into());
            }
            link(prev, sequence, previous)?;
        }
        (Some(_), None) => {
            return Err("checkpoint restarts the chain after retained entries".into());
        }
        (None, _) => {}
    }
    Ok(())
}

fn u64_of(map: &Map<String, Value>, key: &str) -> Result<u64, String> {
    map.get(key)
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("{key} is missing or not a non-negative integer"))
}

fn str_of<'a>(map: &'a Map<String, Value>, key: &str) -> Result<&'a str, String> {
    map.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{key} is missing or not a string"))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use ed25519_dalek::SigningKey;
    use serde_json::json;

    use super::*;
    use crate::audit::{AuditConfig, AuditSigner, Entry, Ledger};

    fn key() -> SigningKey {
        SigningKey::from_bytes(&[9; 32])
    }

    fn write(dir: &Path, n: usize) -> PathBuf {
        let path = dir.join("mcp.jsonl");
        let mut ledger = Ledger::open(AuditConfig {
            path: path.clone(),
            signer: Some(Arc::new(AuditSigner::new(key()))),
            rotate_bytes: 1 << 20,
        })
        .unwrap();
        for i in 0..n {
            ledger.append(Entry::now().with("n", i)).unwrap();
        }
        path
    }

    fn failure(path: &Path) -> String {
        match verify_audit_ledger(path, &[key().verifying_key()], false) {
            Err(VerifyError::Failed(f)) => f.0.reason,
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    #[test]
    fn legacy_signed_records_before_the_chain() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp.jsonl");
        let signer = AuditSigner::new(key());
        let Value::Object(mut legacy) =
            json!({ "id": "mcp-tool-1-repo-status", "tool": "repo.status" })
        else {
            unreachable!()
        };
        legacy.insert("signatureKeyId".into(), signer.key_id().into());
        let signature = signer.sign(&crate::audit::signing::signed_bytes(&legacy));
        legacy.insert("signature".into(), signature.into());
        std::fs::write(&path, format!("{}\n", Value::Object(legacy.clone()))).unwrap();
        write(dir.path(), 2);
        let report = verify_audit_ledger(&path, &[key().verifying_key()], true).unwrap();
        assert_eq!(
            (
                report.legacy,
                report.chained,
                report.signed,
                report.unsigned
            ),
            (1, 2, 3, 0)
        );

        // After the chain began, a legacy record is out of place.
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(&format!("{}\n", Value::Object(legacy)));
        std::fs::write(&path, text).unwrap();
        assert_eq!(failure(&path), "unchained record after the chain began");
    }

    #[test]
    fn structural_failures_name_their_reason() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), 3);
        let original = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = original.lines().collect();
        let case = |text: String| {
            std::fs::write(&path, text).unwrap();
            failure(&path)
        };
        assert_eq!(case(format!("{}\n\n", lines[0])), "not a JSON object");
        assert_eq!(
            case(format!("{}\n{}\n", lines[1], lines[2])),
            "the oldest retained segment neither starts the chain nor opens with a checkpoint"
        );
        assert_eq!(
            case(format!("{}\n{}\n", lines[0], lines[2])),
            "sequence 3 does not follow 1"
        );
        assert_eq!(
            case(format!(
                "{}\n",
                lines[0].replace("\"signatureVersion\":3", "\"signatureVersion\":7")
            )),
            "unsupported signatureVersion"
        );
        assert_eq!(
            case(format!("{}\n", lines[0].replace("\"n\":0", "\"n\":1"))),
            "entryHash does not match the entry"
        );
        let err = verify_audit_ledger(&dir.path().join("nothing"), &[], false);
        assert!(matches!(err, Err(VerifyError::NotFound(_))));
    }
}
