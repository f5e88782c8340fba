//! Reflog entries, from the two places git exposes them.
//!
//! The files backend stores one line per update (`$GIT_DIR/logs/<ref>`, oldest first),
//! the only form that carries the *old* object id:
//!
//! ```text
//! line     := old-oid SP new-oid SP name SP '<' email '>' SP seconds SP tz [TAB message] LF
//! ```
//!
//! For the reftable backend (no log files) we read `git log -g -z --date=raw` with
//! [`WALK_FORMAT`], newest first; each entry is these NUL-terminated fields, then one empty
//! record (the last one may lack it):
//!
//! ```text
//! entry    := new-oid NUL selector NUL name NUL email NUL message NUL NUL
//! selector := ref '@{' seconds SP tz '}'           (what `%gD` prints under --date=raw)
//! ```
//!
//! `git log -g` has no placeholder for the old id; there it is inferred from the next
//! older entry and marked as such.

use super::{ParseError, RecordParser};
use crate::model::Oid;
use crate::model::lossy;
use crate::sink::Flow;

/// The `--format=` for `git log -g -z --date=raw` that [`Walk`] reads.
pub const WALK_FORMAT: &str = "--format=%H%x00%gD%x00%gn%x00%ge%x00%gs%x00";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// `None` when only `git log -g` was available and no older entry exists.
    pub old: Option<Oid>,
    pub new: Oid,
    /// True when `old` was taken from the next older entry instead of the log line.
    pub old_inferred: bool,
    pub name: String,
    pub email: String,
    /// Seconds since the epoch.
    pub time: i64,
    /// `+hhmm` / `-hhmm` as recorded.
    pub tz: String,
    pub message: String,
}

/// Parses one log-file line (without its newline).
pub fn parse_line(line: &[u8], offset: usize) -> Result<Entry, ParseError> {
    let bad = |why: &str| ParseError::new(offset, why.to_owned());
    let (head, message) = match line.iter().position(|b| *b == b'\t') {
        Some(tab) => (&line[..tab], &line[tab + 1..]),
        None => (line, &b""[..]),
    };
    let mut parts = head.splitn(3, |b| *b == b' ');
    let old = parts
        .next()
        .and_then(Oid::from_bytes)
        .ok_or_else(|| bad("bad old object id"))?;
    let new = parts
        .next()
        .and_then(Oid::from_bytes)
        .ok_or_else(|| bad("bad new object id"))?;
    let ident = parts.next().ok_or_else(|| bad("missing identity"))?;
    let open = ident
        .iter()
        .position(|b| *b == b'<')
        .ok_or_else(|| bad("identity without '<'"))?;
    let close = ident
        .iter()
        .rposition(|b| *b == b'>')
        .filter(|c| *c > open)
        .ok_or_else(|| bad("identity without '>'"))?;
    let name = lossy(ident[..open].trim_ascii()).0;
    let email = lossy(&ident[open + 1..close]).0;
    let when = std::str::from_utf8(ident[close + 1..].trim_ascii()).map_err(|_| bad("bad date"))?;
    let (time, tz) = split_date(when).ok_or_else(|| bad("bad date"))?;
    Ok(Entry {
        old: Some(old),
        new,
        old_inferred: false,
        name,
        email,
        time,
        tz,
        message: lossy(message).0,
    })
}

/// `"<seconds> <tz>"`.
fn split_date(text: &str) -> Option<(i64, String)> {
    let (secs, tz) = text.split_once(' ')?;
    let b = tz.as_bytes();
    let valid_tz =
        b.len() == 5 && matches!(b[0], b'+' | b'-') && b[1..].iter().all(u8::is_ascii_digit);
    if !valid_tz {
        return None;
    }
    Some((secs.parse().ok()?, tz.to_owned()))
}

/// The newest `max` entries of a log file's tail, newest first.
///
/// `tail` may start in the middle of a line (when only the end of a large file was read);
/// `complete` says whether it is the whole file, so its first line is whole too.
pub fn newest_lines(tail: &[u8], complete: bool, max: usize) -> Result<Vec<Entry>, ParseError> {
    let mut lines: Vec<(usize, &[u8])> = Vec::new();
    let mut start = 0;
    for (i, b) in tail.iter().enumerate() {
        if *b == b'\n' {
            lines.push((start, &tail[start..i]));
            start = i + 1;
        }
    }
    if start < tail.len() {
        return Err(ParseError::new(start, "log ends inside a line"));
    }
    if !complete && !lines.is_empty() {
        lines.remove(0);
    }
    lines
        .iter()
        .rev()
        .filter(|(_, l)| !l.is_empty())
        .take(max)
        .map(|(at, l)| parse_line(l, *at))
        .collect()
}

/// Collects entries from `git log -g -z --date=raw` ([`WALK_FORMAT`]).
#[derive(Debug)]
pub struct Walk {
    pub entries: Vec<Entry>,
    max: usize,
    fields: Vec<Vec<u8>>,
    start: usize,
}

const WALK_FIELDS: usize = 5;

impl Walk {
    /// Keeps `max` entries, plus one more to infer the last one's old id.
    pub fn new(max: usize) -> Self {
        Walk {
            entries: Vec::new(),
            max,
            fields: Vec::new(),
            start: 0,
        }
    }

    fn build(&mut self) -> Result<Flow, ParseError> {
        let at = self.start;
        let f = std::mem::take(&mut self.fields);
        let new = Oid::from_bytes(&f[0]).ok_or_else(|| ParseError::new(at, "bad object id"))?;
        let selector =
            std::str::from_utf8(&f[1]).map_err(|_| ParseError::new(at, "bad selector"))?;
        let (time, tz) = selector
            .rsplit_once("@{")
            .and_then(|(_, d)| d.strip_suffix('}'))
            .and_then(split_date)
            .ok_or_else(|| ParseError::new(at, "selector without a raw date"))?;
        if let Some(newer) = self.entries.last_mut() {
            newer.old = Some(new.clone());
        }
        self.entries.push(Entry {
            old: None,
            new,
            old_inferred: true,
            name: lossy(&f[2]).0,
            email: lossy(&f[3]).0,
            time,
            tz,
            message: lossy(&f[4]).0,
        });
        Ok(if self.entries.len() > self.max {
            Flow::Enough
        } else {
            Flow::More
        })
    }

    /// The newest `max` entries, newest first.
    pub fn into_entries(mut self) -> Vec<Entry> {
        self.entries.truncate(self.max);
        self.entries
    }

    /// True when the walk saw more than `max` entries.
    pub fn more(&self) -> bool {
        self.entries.len() > self.max
    }
}

impl RecordParser for Walk {
    fn record(&mut self, record: &[u8], offset: usize) -> Result<Flow, ParseError> {
        if self.fields.len() == WALK_FIELDS {
            if !record.is_empty() {
                return Err(ParseError::new(offset, "expected the end of an entry"));
            }
            return self.build();
        }
        if self.fields.is_empty() {
            self.start = offset;
        }
        self.fields.push(record.to_vec());
        Ok(Flow::More)
    }

    fn finish(&mut self, rest: &[u8], offset: usize) -> Result<(), ParseError> {
        if self.fields.len() == WALK_FIELDS && rest.is_empty() {
            self.build()?;
            return Ok(());
        }
        if !self.fields.is_empty() || !rest.is_empty() {
            return Err(ParseError::new(offset, "output ends inside an entry"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Records;

    /// Captured from `.git/logs/HEAD` (git 2.47): a commit, a reset, a checkout whose
    /// identity has an empty name, and a line without a message.
    const FILE: &[u8] = b"0000000000000000000000000000000000000000 6a4e5328780da6f0da64e1caa079505a3f2069c4 A U Thor <a@x> 1795988174 +0000\tcommit (initial): one\n\
6a4e5328780da6f0da64e1caa079505a3f2069c4 30909cd2be90deaa1baa9c71cc686454be73b256 A U Thor <a@x> 1795988175 +0100\tcommit: three\n\
30909cd2be90deaa1baa9c71cc686454be73b256 6a4e5328780da6f0da64e1caa079505a3f2069c4 <b@y> 1795988176 -0230\treset: moving to HEAD~2\n\
6a4e5328780da6f0da64e1caa079505a3f2069c4 5ce3d0130b768a35612b525329786c651c13fbfb A <a@x> 1795988177 +0000\n";

    #[test]
    fn file_lines_newest_first() {
        let entries = newest_lines(FILE, true, 3).unwrap();
        insta::assert_debug_snapshot!(entries, @r#"
        [
            Entry {
                old: Some(
                    Oid(
                        "6a4e5328780da6f0da64e1caa079505a3f2069c4",
                    ),
                ),
                new: Oid(
                    "5ce3d0130b768a35612b525329786c651c13fbfb",
                ),
                old_inferred: false,
                name: "A",
                email: "a@x",
                time: 1795988177,
                tz: "+0000",
                message: "",
            },
            Entry {
                old: Some(
                    Oid(
                        "30909cd2be90deaa1baa9c71cc686454be73b256",
                    ),
                ),
                new: Oid(
                    "6a4e5328780da6f0da64e1caa079505a3f2069c4",
                ),
                old_inferred: false,
                name: "",
                email: "b@y",
                time: 1795988176,
                tz: "-0230",
                message: "reset: moving to HEAD~2",
            },
            Entry {
                old: Some(
                    Oid(
                        "6a4e5328780da6f0da64e1caa079505a3f2069c4",
                    ),
                ),
                new: Oid(
                    "30909cd2be90deaa1baa9c71cc686454be73b256",
                ),
                old_inferred: false,
                name: "A U Thor",
                email: "a@x",
                time: 1795988175,
                tz: "+0100",
                message: "commit: three",
            },
        ]
        "#);
    }

    #[test]
    fn a_partial_first_line_is_dropped() {
        let tail = &FILE[50..];
        let entries = newest_lines(tail, false, 10).unwrap();
        assert_eq!(entries.len(), 3);
        assert_eq!(entries[2].message, "commit: three");
    }

    /// Captured from `git log -g -z --date=raw` with [`WALK_FORMAT`] (git 2.47).
    const WALK: &[u8] = b"5ce3d0130b768a35612b525329786c651c13fbfb\0HEAD@{1795988177 +0000}\0A\0a@x\0commit: four\0\0\
6a4e5328780da6f0da64e1caa079505a3f2069c4\0HEAD@{1795988176 -0230}\0\0b@y\0reset: moving to HEAD~2\0\0\
30909cd2be90deaa1baa9c71cc686454be73b256\0HEAD@{1795988175 +0100}\0A\0a@x\0commit: three\0";

    #[test]
    fn walk_infers_old_ids() {
        let walk = Records::parse_all(Walk::new(2), WALK).unwrap();
        assert!(walk.more());
        insta::assert_debug_snapshot!(walk.into_entries(), @r#"
        [
            Entry {
                old: Some(
                    Oid(
                        "6a4e5328780da6f0da64e1caa079505a3f2069c4",
                    ),
                ),
                new: Oid(
                    "5ce3d0130b768a35612b525329786c651c13fbfb",
                ),
                old_inferred: true,
                name: "A",
                email: "a@x",
                time: 1795988177,
                tz: "+0000",
                message: "commit: four",
            },
            Entry {
                old: Some(
                    Oid(
                        "30909cd2be90deaa1baa9c71cc686454be73b256",
                    ),
                ),
                new: Oid(
                    "6a4e5328780da6f0da64e1caa079505a3f2069c4",
                ),
                old_inferred: true,
                name: "",
                email: "b@y",
                time: 1795988176,
                tz: "-0230",
                message: "reset: moving to HEAD~2",
            },
        ]
        "#);
    }

    #[test]
    fn malformed() {
        let line = |b: &[u8]| parse_line(b, 7).unwrap_err();
        let walk = |b: &[u8]| Records::parse_all(Walk::new(5), b).unwrap_err();
        insta::assert_debug_snapshot!([
            line(b"zz 5ce3d0130b768a35612b525329786c651c13fbfb A <a> 1 +0000"),
            line(b"5ce3d0130b768a35612b525329786c651c13fbfb 5ce3d0130b768a35612b525329786c651c13fbfb A a 1 +0000"),
            line(b"5ce3d0130b768a35612b525329786c651c13fbfb 5ce3d0130b768a35612b525329786c651c13fbfb A <a> soon +0000"),
            newest_lines(b"no newline", true, 1).unwrap_err(),
            walk(b"5ce3d0130b768a35612b525329786c651c13fbfb\0HEAD@{0}\0A\0a\0m\0\0"),
            walk(b"5ce3d0130b768a35612b525329786c651c13fbfb\0HEAD@{1 +0000}\0A\0"),
        ], @r#"
        [
            ParseError {
                offset: 7,
                reason: "bad old object id",
            },
            ParseError {
                offset: 7,
                reason: "identity without '<'",
            },
            ParseError {
                offset: 7,
                reason: "bad date",
            },
            ParseError {
                offset: 0,
                reason: "log ends inside a line",
            },
            ParseError {
                offset: 0,
                reason: "selector without a raw date",
            },
            ParseError {
                offset: 58,
                reason: "output ends inside an entry",
            },
        ]
        "#);
    }
}
