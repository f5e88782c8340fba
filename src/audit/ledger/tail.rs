//! Where the next entry attaches: reading the end of the ledger back, repairing a torn
//! final line, and recovering from a broken end by recording a break.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::Value;

use super::super::{AuditError, breaks, canonical, strict};
use super::{HASH_EXCLUDED, Ledger, Link, MAX_LINE, Tail, open_active, rotated_path};

/// The end of the active segment (or of `.1`) is not valid entries.
#[derive(Debug)]
pub(super) struct Broken {
    in_rotated: bool,
    reason: String,
}

impl Ledger {
    /// Finds where the next entry attaches by reading the end of the active segment (or
    /// of `.1` when the active one holds no chained entry yet), dropping a torn final line.
    /// `Ok(Err(_))` when that end is broken.
    pub(super) fn read_tail(
        &mut self,
        file: &mut File,
        len: u64,
    ) -> Result<Result<(Tail, u64), Broken>, AuditError> {
        let broken = |in_rotated: bool| move |reason: String| Broken { in_rotated, reason };
        let (line, complete_len) = match last_line(file, len)? {
            Ok(found) => found,
            Err(why) => return Ok(Err(broken(false)(why.into()))),
        };
        let mut len = len;
        if complete_len < len {
            // A crash mid-append leaves a final line without its newline. It was never
            // written whole, so it was never acknowledged: drop it and chain from the last
            // complete entry.
            file.set_len(complete_len)?;
            file.sync_data()?;
            self.notices.push(format!(
                "removed an incomplete final line ({} bytes) left by an interrupted write in {}",
                len - complete_len,
                self.config.path.display()
            ));
            len = complete_len;
        }
        if let Some(line) = line {
            match parse_link(&line) {
                Ok(Some(link)) => {
                    return Ok(Ok((
                        Tail {
                            segment: Some(link.segment.clone()),
                            last: Some(link),
                            pending_break: None,
                        },
                        len,
                    )));
                }
                // An unchained record is legacy only before the chain begins; after
                // chained entries it is something else's line.
                Ok(None) => {
                    if let Some(scan) = breaks::scan(&self.config.path, in_chain_order())? {
                        return Ok(Err(broken(false)(scan.record.reason)));
                    }
                }
                Err(why) => return Ok(Err(broken(false)(why))),
            }
        }
        // No chained entry in the active segment: continue from the newest rotation.
        let last = match segment_tail(&rotated_path(&self.config.path, 1))? {
            Ok(last) => last,
            Err(why) => return Ok(Err(broken(true)(why))),
        };
        Ok(Ok((
            Tail {
                last,
                segment: None,
                pending_break: None,
            },
            len,
        )))
    }

    /// Keeps auditing past a broken segment end: the broken segment becomes `.1` (rotated
    /// out if it is the active one), and the next entry opens a new segment with a
    /// checkpoint that records the break and chains from the last valid entry before it.
    pub(super) fn recover(&mut self, broken: Broken) -> Result<(File, Tail, u64), AuditError> {
        let path = self.config.path.clone();
        let file = if broken.in_rotated {
            open_active(&path)?
        } else {
            self.rotate()?
        };
        let segment = rotated_path(&path, 1);
        let scan = breaks::scan(&segment, in_chain_order())?;
        let (last, record) = match scan {
            Some(scan) => (scan.last, scan.record),
            // Valid throughout when read from the start (a concurrent repair, say): an
            // empty break keeps the chain intact.
            None => {
                let mut old = File::open(&segment)?;
                let len = old.metadata()?.len();
                let last = segment_tail(&segment)?.ok().flatten();
                let record = breaks::hash_rest(len, &[], &mut old, broken.reason.clone())?;
                (last, record)
            }
        };
        let last = match last {
            Some(last) => Some(last),
            // Nothing valid in the broken segment: chain from the one before it.
            None => segment_tail(&rotated_path(&path, 2))?.ok().flatten(),
        };
        self.notices.push(format!(
            "{} is broken from byte {} ({}); it was set aside and a new segment records the \
             break (verify-audit reports it)",
            segment.display(),
            record.offset,
            record.reason
        ));
        let len = file.metadata()?.len();
        Ok((
            file,
            Tail {
                last,
                segment: None,
                pending_break: Some(record),
            },
            len,
        ))
    }
}

/// The last chained entry of a segment file: `Ok(None)` when there is none (or no file),
/// `Err` when its end is broken.
fn segment_tail(path: &Path) -> Result<Result<Option<Link>, String>, AuditError> {
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Ok(None)),
        Err(e) => return Err(e.into()),
    };
    let len = file.metadata()?.len();
    Ok(match last_line(&mut file, len)? {
        Ok((Some(line), n)) if n == len => parse_link(&line),
        Ok((None, 0)) => Ok(None),
        Ok(_) => Err("the segment ends with an incomplete line".into()),
        Err(why) => Err(why.into()),
    })
}

/// [`parse_link`] for reading a segment from its start: an unchained record after a
/// chained entry is invalid there, as `verify-audit` holds.
fn in_chain_order() -> impl FnMut(&[u8]) -> Result<Option<Link>, String> {
    let mut chained = false;
    move |line| match parse_link(line)? {
        Some(link) => {
            chained = true;
            Ok(Some(link))
        }
        None if chained => Err("unchained record after the chain began".into()),
        None => Ok(None),
    }
}

/// Reads a chained entry's link fields, checking its hash. `Ok(None)` for a legacy
/// (unchained) record.
fn parse_link(line: &[u8]) -> Result<Option<Link>, String> {
    let map = strict::parse_object(line)?;
    if !map.contains_key("auditChainVersion") {
        return Ok(None);
    }
    let sequence = map
        .get("sequence")
        .and_then(Value::as_u64)
        .ok_or("no sequence")?;
    let segment = map
        .get("segmentId")
        .and_then(Value::as_str)
        .ok_or("no segmentId")?
        .to_owned();
    let hash = map
        .get("entryHash")
        .and_then(Value::as_str)
        .ok_or("no entryHash")?
        .to_owned();
    if canonical::sha256_tag(&canonical::object_without(&map, &HASH_EXCLUDED)) != hash {
        return Err("entryHash does not match the entry".into());
    }
    let key_id = map
        .get("signature")
        .and_then(|_| map.get("signatureKeyId"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok(Some(Link {
        sequence,
        hash,
        segment,
        key_id,
    }))
}

/// The last complete line (without its newline) and the length up to and including it.
type LastLine = (Option<Vec<u8>>, u64);

/// The last complete line of the first `len` bytes of `file` (without its newline), and
/// the length up to and including that line's newline; `Err` for a tail this writer never
/// leaves, which is a break rather than something to repair. Reads backwards in growing
/// chunks, never more than two lines' worth.
fn last_line(file: &mut File, len: u64) -> std::io::Result<Result<LastLine, &'static str>> {
    if len == 0 {
        return Ok(Ok((None, 0)));
    }
    let limit = (2 * MAX_LINE as u64 + 2).min(len);
    let mut chunk = 8 * 1024u64;
    loop {
        let take = chunk.min(limit);
        let start = len - take;
        let mut buf = vec![0u8; take as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buf)?;
        // The end of the last complete line: the last newline in the file.
        let complete_end = buf.iter().rposition(|&b| b == b'\n');
        if let Some(end) = complete_end {
            let line_start = buf[..end].iter().rposition(|&b| b == b'\n').map(|p| p + 1);
            match line_start {
                Some(s) => return Ok(Ok((Some(buf[s..end].to_vec()), start + end as u64 + 1))),
                None if start == 0 => return Ok(Ok((Some(buf[..end].to_vec()), end as u64 + 1))),
                None => {}
            }
        } else if start == 0 {
            // No newline at all: the whole file is one torn line.
            return Ok(Ok((None, 0)));
        }
        if take == limit {
            // Longer than any line this writer produces: not something to repair blindly.
            return Ok(Err(if complete_end.is_none() {
                "the segment ends with more than a line's worth of bytes without a newline"
            } else {
                "the last line is longer than the line limit"
            }));
        }
        chunk *= 4;
    }
}
