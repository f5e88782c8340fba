//! `git for-each-ref --format=<f1>%00<f2>%00…<fn>%00` for any list of fields.
//!
//! for-each-ref has no `-z`; it ends each ref with a newline. Asking for every field to
//! end with NUL makes the output unambiguous anyway, because no field we read can hold a
//! NUL, and the newline can only appear as the first byte after a ref's last NUL:
//!
//! ```text
//! output := ( ref "\n" )*
//! ref    := ( field NUL ){n}
//! ```
//!
//! So the first record of every ref but the first starts with the previous ref's `\n`,
//! and the output ends with a lone `\n`. A ref-name field never starts with a newline
//! (git forbids control characters in ref names), so put `%(refname)` first when other
//! fields might.

use super::{ParseError, RecordParser};
use crate::sink::Flow;

/// The `--format=` argument for `fields` (placeholders such as `%(refname)`).
pub fn format(fields: &[&str]) -> String {
    super::format_arg(fields, "%00")
}

/// Receives each ref's fields, in the order they were asked for.
pub trait Rows: Send + 'static {
    fn row(&mut self, fields: Vec<Vec<u8>>, offset: usize) -> Result<Flow, ParseError>;
}

/// Splits for-each-ref output into rows of `width` fields.
#[derive(Debug)]
pub struct ForEachRef<R> {
    pub rows: R,
    width: usize,
    fields: Vec<Vec<u8>>,
    start: usize,
    refs: u64,
}

impl<R: Rows> ForEachRef<R> {
    pub fn new(width: usize, rows: R) -> Self {
        assert!(width > 0, "a ref has at least one field");
        ForEachRef {
            rows,
            width,
            fields: Vec::with_capacity(width),
            start: 0,
            refs: 0,
        }
    }
}

impl<R: Rows> RecordParser for ForEachRef<R> {
    fn record(&mut self, record: &[u8], offset: usize) -> Result<Flow, ParseError> {
        let mut field = record;
        if self.fields.is_empty() {
            self.start = offset;
            if self.refs > 0 {
                field = record
                    .strip_prefix(b"\n")
                    .ok_or_else(|| ParseError::new(offset, "expected a newline between refs"))?;
            }
        }
        self.fields.push(field.to_vec());
        if self.fields.len() < self.width {
            return Ok(Flow::More);
        }
        self.refs += 1;
        let fields = std::mem::replace(&mut self.fields, Vec::with_capacity(self.width));
        self.rows.row(fields, self.start)
    }

    fn finish(&mut self, rest: &[u8], offset: usize) -> Result<(), ParseError> {
        let expected: &[u8] = if self.refs > 0 { b"\n" } else { b"" };
        if !self.fields.is_empty() || rest != expected {
            return Err(ParseError::new(offset, "output ends inside a ref"));
        }
        Ok(())
    }
}

/// Keeps the first `max` rows and counts them all.
#[derive(Debug, Default)]
pub struct Collect {
    pub rows: Vec<Vec<Vec<u8>>>,
    pub total: u64,
    max: usize,
}

impl Collect {
    pub fn new(max: usize) -> Self {
        Collect {
            rows: Vec::new(),
            total: 0,
            max,
        }
    }
}

impl Rows for Collect {
    fn row(&mut self, fields: Vec<Vec<u8>>, _offset: usize) -> Result<Flow, ParseError> {
        self.total += 1;
        if self.rows.len() < self.max {
            self.rows.push(fields);
        }
        Ok(Flow::More)
    }
}

/// A branch's relation to its upstream, from `%(upstream:track,nobracket)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Track {
    /// Commits ahead and behind (both 0 when in sync or without an upstream).
    Counts(u64, u64),
    /// The upstream is configured but its ref is missing.
    Gone,
}

/// Parses the tracking text: empty, `gone`, `ahead N`, `behind N` or
/// `ahead N, behind M`. `None` for anything else.
pub fn track(text: &[u8]) -> Option<Track> {
    let text = std::str::from_utf8(text).ok()?;
    if text == "gone" {
        return Some(Track::Gone);
    }
    let (mut ahead, mut behind) = (0, 0);
    if text.is_empty() {
        return Some(Track::Counts(0, 0));
    }
    for part in text.split(", ") {
        match part.split_once(' ') {
            Some(("ahead", n)) => ahead = n.parse().ok()?,
            Some(("behind", n)) => behind = n.parse().ok()?,
            _ => return None,
        }
    }
    Some(Track::Counts(ahead, behind))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Records;

    /// Captured (git 2.47) with the fields refname, objectname, objecttype, *objectname,
    /// upstream, upstream:track,nobracket, symref.
    const REAL: &[u8] = b"refs/heads/main\x001693ce18b7e122381fa1ae44ae67b5e57fbc5575\0commit\0\0\0\0\0\
\nrefs/heads/topic\x0069f80fab8c19086b9f110a0c73951bdc90c9d7fe\0commit\0\0refs/heads/main\0behind 1\0\0\
\nrefs/remotes/origin/HEAD\x0069f80fab8c19086b9f110a0c73951bdc90c9d7fe\0commit\0\0\0\0refs/remotes/origin/main\0\
\nrefs/tags/v2\x0047c949b9b8bbfd68d018a97e9b63fb27be4ac82b\0tag\x0069f80fab8c19086b9f110a0c73951bdc90c9d7fe\0\0\0\0\n";

    fn text(rows: &[Vec<Vec<u8>>]) -> Vec<Vec<String>> {
        rows.iter()
            .map(|r| {
                r.iter()
                    .map(|f| String::from_utf8_lossy(f).into_owned())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn real_output() {
        let parsed = Records::parse_all(ForEachRef::new(7, Collect::new(3)), REAL).unwrap();
        assert_eq!(parsed.rows.total, 4);
        insta::assert_debug_snapshot!(text(&parsed.rows.rows), @r#"
        [
            [
                "refs/heads/main",
                "1693ce18b7e122381fa1ae44ae67b5e57fbc5575",
                "commit",
                "",
                "",
                "",
                "",
            ],
            [
                "refs/heads/topic",
                "69f80fab8c19086b9f110a0c73951bdc90c9d7fe",
                "commit",
                "",
                "refs/heads/main",
                "behind 1",
                "",
            ],
            [
                "refs/remotes/origin/HEAD",
                "69f80fab8c19086b9f110a0c73951bdc90c9d7fe",
                "commit",
                "",
                "",
                "",
                "refs/remotes/origin/main",
            ],
        ]
        "#);
    }

    #[test]
    fn no_refs_at_all() {
        let parsed = Records::parse_all(ForEachRef::new(2, Collect::new(3)), b"").unwrap();
        assert_eq!(parsed.rows.total, 0);
    }

    #[test]
    fn malformed() {
        let err =
            |b: &[u8]| Records::parse_all(ForEachRef::new(2, Collect::new(3)), b).unwrap_err();
        insta::assert_debug_snapshot!([
            err(b"refs/heads/a\0x\0refs/heads/b\0y\0\n"),
            err(b"refs/heads/a\0x\0\nrefs/heads/b\0"),
            err(b"refs/heads/a\0x\0"),
        ], @r#"
        [
            ParseError {
                offset: 15,
                reason: "expected a newline between refs",
            },
            ParseError {
                offset: 29,
                reason: "output ends inside a ref",
            },
            ParseError {
                offset: 15,
                reason: "output ends inside a ref",
            },
        ]
        "#);
    }

    #[test]
    fn tracking_text() {
        assert_eq!(track(b""), Some(Track::Counts(0, 0)));
        assert_eq!(track(b"gone"), Some(Track::Gone));
        assert_eq!(track(b"ahead 2"), Some(Track::Counts(2, 0)));
        assert_eq!(track(b"ahead 2, behind 13"), Some(Track::Counts(2, 13)));
        assert_eq!(track(b"sideways 1"), None);
        assert_eq!(track(b"ahead x"), None);
    }
}
