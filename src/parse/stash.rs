//! `git log -g -z --format=%H%x00%gs refs/stash`: the stash list.
//!
//! Each stash entry is two NUL-terminated records, its commit id and its reflog subject
//! (a single line, `On main: message` or `WIP on main: …`), newest first:
//!
//! ```text
//! entry := oid NUL subject NUL
//! ```
//!
//! The position in the output is the stash index (`stash@{<index>}`).

use super::{ParseError, RecordParser};
use crate::model::Oid;
use crate::model::lossy;
use crate::sink::Flow;

/// The `--format=` argument this parser reads.
pub const FORMAT: &str = "--format=%H%x00%gs";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stash {
    pub index: u64,
    pub oid: Oid,
    pub message: String,
}

/// Keeps the first `max` stashes and counts them all.
#[derive(Debug)]
pub struct Stashes {
    pub stashes: Vec<Stash>,
    pub total: u64,
    max: usize,
    oid: Option<Oid>,
}

impl Stashes {
    pub fn new(max: usize) -> Self {
        Stashes {
            stashes: Vec::new(),
            total: 0,
            max,
            oid: None,
        }
    }
}

impl RecordParser for Stashes {
    fn record(&mut self, record: &[u8], offset: usize) -> Result<Flow, ParseError> {
        match self.oid.take() {
            None => {
                self.oid = Some(
                    Oid::from_bytes(record)
                        .ok_or_else(|| ParseError::new(offset, "bad stash commit id"))?,
                );
            }
            Some(oid) => {
                if record.contains(&b'\n') {
                    return Err(ParseError::new(offset, "stash subject spans lines"));
                }
                if self.stashes.len() < self.max {
                    self.stashes.push(Stash {
                        index: self.total,
                        oid,
                        message: lossy(record).0,
                    });
                }
                self.total += 1;
            }
        }
        Ok(Flow::More)
    }

    fn finish(&mut self, rest: &[u8], offset: usize) -> Result<(), ParseError> {
        if self.oid.is_some() || !rest.is_empty() {
            return Err(ParseError::new(offset, "output ends inside a stash entry"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Records;

    /// Captured from `git log -g -z --format=%H%x00%gs refs/stash` with two stashes.
    const REAL: &[u8] = b"8d3c1f0b2e4a5968778695a4b3c2d1e0f9a8b7c6\0WIP on main: 1693ce1 second\0\
0ee67a06762e2272ccbb2949c68b7399602e45b7\0On main: keep this\0";

    #[test]
    fn real_output() {
        let parsed = Records::parse_all(Stashes::new(1), REAL).unwrap();
        assert_eq!(parsed.total, 2);
        insta::assert_debug_snapshot!(parsed.stashes, @r#"
        [
            Stash {
                index: 0,
                oid: Oid(
                    "8d3c1f0b2e4a5968778695a4b3c2d1e0f9a8b7c6",
                ),
                message: "WIP on main: 1693ce1 second",
            },
        ]
        "#);
    }

    #[test]
    fn malformed() {
        let err = |b: &[u8]| Records::parse_all(Stashes::new(10), b).unwrap_err();
        insta::assert_debug_snapshot!([
            err(b"zz\0msg\0"),
            err(b"0ee67a06762e2272ccbb2949c68b7399602e45b7\0"),
        ], @r#"
        [
            ParseError {
                offset: 0,
                reason: "bad stash commit id",
            },
            ParseError {
                offset: 41,
                reason: "output ends inside a stash entry",
            },
        ]
        "#);
    }
}
