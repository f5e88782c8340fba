//! `git config --null --get-regexp <pattern>`.
//!
//! With `--null` each entry is one NUL-terminated record: the key, then (unless the key
//! has no value, as `[x] flag` does) a newline and the value, which may itself contain
//! newlines:
//!
//! ```text
//! entry := key ( "\n" value )? NUL
//! ```
//!
//! Keys are lowercase ASCII apart from the subsection (`remote.<name>.url`), which may be
//! any bytes but a newline.

use super::{ParseError, RecordParser, utf8};
use crate::sink::Flow;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub key: String,
    /// `None` for a key written without `=`.
    pub value: Option<Vec<u8>>,
}

/// Keeps the first `max` entries and counts them all.
#[derive(Debug)]
pub struct Entries {
    pub entries: Vec<Entry>,
    pub total: u64,
    max: usize,
}

impl Entries {
    pub fn new(max: usize) -> Self {
        Entries {
            entries: Vec::new(),
            total: 0,
            max,
        }
    }
}

impl RecordParser for Entries {
    fn record(&mut self, record: &[u8], offset: usize) -> Result<Flow, ParseError> {
        let (key, value) = match record.iter().position(|b| *b == b'\n') {
            Some(at) => (&record[..at], Some(record[at + 1..].to_vec())),
            None => (record, None),
        };
        if key.is_empty() || !key.contains(&b'.') {
            return Err(ParseError::new(offset, "config entry without a dotted key"));
        }
        self.total += 1;
        if self.entries.len() < self.max {
            let key = utf8(key, offset, "config key")?;
            self.entries.push(Entry { key, value });
        }
        Ok(Flow::More)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Records;

    /// Captured from `git config --null --get-regexp '^remote\..*\.url$'` (git 2.47).
    const REAL: &[u8] = b"remote.origin.url\nhttps://user:s3cret@example.com/x.git\0\
remote.up.url\ngit@github.com:o/r.git\0";

    #[test]
    fn real_output() {
        let parsed = Records::parse_all(Entries::new(10), REAL).unwrap();
        insta::assert_debug_snapshot!(parsed.entries, @r#"
        [
            Entry {
                key: "remote.origin.url",
                value: Some(
                    [
                        104,
                        116,
                        116,
                        112,
                        115,
                        58,
                        47,
                        47,
                        117,
                        115,
                        101,
                        114,
                        58,
                        115,
                        51,
                        99,
                        114,
                        101,
                        116,
                        64,
                        101,
                        120,
                        97,
                        109,
                        112,
                        108,
                        101,
                        46,
                        99,
                        111,
                        109,
                        47,
                        120,
                        46,
                        103,
                        105,
                        116,
                    ],
                ),
            },
            Entry {
                key: "remote.up.url",
                value: Some(
                    [
                        103,
                        105,
                        116,
                        64,
                        103,
                        105,
                        116,
                        104,
                        117,
                        98,
                        46,
                        99,
                        111,
                        109,
                        58,
                        111,
                        47,
                        114,
                        46,
                        103,
                        105,
                        116,
                    ],
                ),
            },
        ]
        "#);
    }

    #[test]
    fn malformed() {
        let err = |b: &[u8]| Records::parse_all(Entries::new(10), b).unwrap_err();
        insta::assert_debug_snapshot!([err(b"\nvalue\0"), err(b"nodot\nv\0"), err(b"a.b\nv")], @r#"
        [
            ParseError {
                offset: 0,
                reason: "config entry without a dotted key",
            },
            ParseError {
                offset: 0,
                reason: "config entry without a dotted key",
            },
            ParseError {
                offset: 0,
                reason: "output ends inside a record",
            },
        ]
        "#);
    }
}
