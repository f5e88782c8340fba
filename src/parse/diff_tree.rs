//! `git diff-tree -r -z --name-status` and `git diff-tree -r -z --numstat`.
//!
//! Name-status (`-z`): a status record, then one path record, or two for a rename or
//! copy (source first):
//!
//! ```text
//! change := status NUL path NUL                 status := [ADMTUX]
//!         | status score NUL old NUL new NUL    status := [RC], score := 0–100
//! ```
//!
//! Numstat (`-z`): added and deleted line counts (`-` for binary), a tab each, then the
//! path; for a rename or copy the path is empty and two records follow:
//!
//! ```text
//! stat := added TAB deleted TAB path NUL
//!       | added TAB deleted TAB NUL old NUL new NUL
//! ```

use super::{ParseError, RecordParser};
use crate::sink::Flow;

/// One changed path from `--name-status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// `A`, `C`, `D`, `M`, `R`, `T`, `U` or `X`.
    pub status: u8,
    /// Similarity of a rename or copy.
    pub score: Option<u8>,
    pub path: Vec<u8>,
    /// The source of a rename or copy.
    pub orig_path: Option<Vec<u8>>,
}

#[derive(Debug)]
enum Expect {
    Status,
    Path {
        status: u8,
        score: Option<u8>,
    },
    Orig {
        status: u8,
        score: u8,
    },
    New {
        status: u8,
        score: u8,
        orig: Vec<u8>,
    },
}

/// Keeps the first `max` changes and counts them all.
#[derive(Debug)]
pub struct NameStatus {
    pub changes: Vec<Change>,
    pub total: u64,
    max: usize,
    expect: Expect,
}

impl NameStatus {
    pub fn new(max: usize) -> Self {
        NameStatus {
            changes: Vec::new(),
            total: 0,
            max,
            expect: Expect::Status,
        }
    }

    fn push(&mut self, change: Change) {
        self.total += 1;
        if self.changes.len() < self.max {
            self.changes.push(change);
        }
    }
}

impl RecordParser for NameStatus {
    fn record(&mut self, record: &[u8], offset: usize) -> Result<Flow, ParseError> {
        self.expect = match std::mem::replace(&mut self.expect, Expect::Status) {
            Expect::Status => match record {
                [s @ (b'A' | b'D' | b'M' | b'T' | b'U' | b'X')] => Expect::Path {
                    status: *s,
                    score: None,
                },
                // Some statuses carry an optional score (`M` with break detection).
                [s @ (b'R' | b'C'), score @ ..] => Expect::Orig {
                    status: *s,
                    score: percent(score)
                        .ok_or_else(|| ParseError::new(offset, "bad rename score"))?,
                },
                [s @ (b'M' | b'T' | b'D' | b'A'), score @ ..] => Expect::Path {
                    status: *s,
                    score: Some(
                        percent(score)
                            .ok_or_else(|| ParseError::new(offset, "bad status score"))?,
                    ),
                },
                _ => return Err(ParseError::new(offset, "unknown change status")),
            },
            Expect::Path { status, score } => {
                self.push(Change {
                    status,
                    score,
                    path: record.to_vec(),
                    orig_path: None,
                });
                Expect::Status
            }
            Expect::Orig { status, score } => Expect::New {
                status,
                score,
                orig: record.to_vec(),
            },
            Expect::New {
                status,
                score,
                orig,
            } => {
                self.push(Change {
                    status,
                    score: Some(score),
                    path: record.to_vec(),
                    orig_path: Some(orig),
                });
                Expect::Status
            }
        };
        Ok(Flow::More)
    }

    fn finish(&mut self, rest: &[u8], offset: usize) -> Result<(), ParseError> {
        if !matches!(self.expect, Expect::Status) || !rest.is_empty() {
            return Err(ParseError::new(offset, "output ends inside a change"));
        }
        Ok(())
    }
}

fn percent(digits: &[u8]) -> Option<u8> {
    let n: u8 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    (n <= 100 && !digits.is_empty() && digits.iter().all(u8::is_ascii_digit)).then_some(n)
}

/// Line counts of one path; `None` for a binary file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    pub lines: Option<(u64, u64)>,
    pub path: Vec<u8>,
    pub orig_path: Option<Vec<u8>>,
}

#[derive(Debug)]
enum StatExpect {
    Stat,
    Orig(Option<(u64, u64)>),
    New(Option<(u64, u64)>, Vec<u8>),
}

/// Keeps the first `max` stats and totals them all.
#[derive(Debug)]
pub struct Numstat {
    pub stats: Vec<Stat>,
    pub files: u64,
    pub insertions: u64,
    pub deletions: u64,
    pub binary: u64,
    max: usize,
    expect: StatExpect,
}

impl Numstat {
    pub fn new(max: usize) -> Self {
        Numstat {
            stats: Vec::new(),
            files: 0,
            insertions: 0,
            deletions: 0,
            binary: 0,
            max,
            expect: StatExpect::Stat,
        }
    }

    fn push(&mut self, stat: Stat) {
        self.files += 1;
        match stat.lines {
            Some((added, deleted)) => {
                self.insertions = self.insertions.saturating_add(added);
                self.deletions = self.deletions.saturating_add(deleted);
            }
            None => self.binary += 1,
        }
        if self.stats.len() < self.max {
            self.stats.push(stat);
        }
    }
}

impl RecordParser for Numstat {
    fn record(&mut self, record: &[u8], offset: usize) -> Result<Flow, ParseError> {
        self.expect = match std::mem::replace(&mut self.expect, StatExpect::Stat) {
            StatExpect::Stat => {
                let mut parts = record.splitn(3, |b| *b == b'\t');
                let (Some(added), Some(deleted), Some(path)) =
                    (parts.next(), parts.next(), parts.next())
                else {
                    return Err(ParseError::new(offset, "numstat record without two tabs"));
                };
                let lines = match (added, deleted) {
                    (b"-", b"-") => None,
                    (a, d) => Some((
                        count(a).ok_or_else(|| ParseError::new(offset, "bad added count"))?,
                        count(d).ok_or_else(|| ParseError::new(offset, "bad deleted count"))?,
                    )),
                };
                if path.is_empty() {
                    StatExpect::Orig(lines)
                } else {
                    self.push(Stat {
                        lines,
                        path: path.to_vec(),
                        orig_path: None,
                    });
                    StatExpect::Stat
                }
            }
            StatExpect::Orig(lines) => StatExpect::New(lines, record.to_vec()),
            StatExpect::New(lines, orig) => {
                self.push(Stat {
                    lines,
                    path: record.to_vec(),
                    orig_path: Some(orig),
                });
                StatExpect::Stat
            }
        };
        Ok(Flow::More)
    }

    fn finish(&mut self, rest: &[u8], offset: usize) -> Result<(), ParseError> {
        if !matches!(self.expect, StatExpect::Stat) || !rest.is_empty() {
            return Err(ParseError::new(
                offset,
                "output ends inside a numstat entry",
            ));
        }
        Ok(())
    }
}

fn count(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Records;

    /// Captured from `git diff-tree -r -z --no-commit-id --name-status -M --root <c>`:
    /// a rename to a name with a space, a binary change, a non-UTF-8 addition.
    const NAME_STATUS: &[u8] = b"R100\0a.txt\0b c.txt\0M\0bin.dat\0A\0caf\xe9.txt\0";
    /// The same commit with `--numstat`.
    const NUMSTAT: &[u8] = b"0\t0\t\0a.txt\0b c.txt\0-\t-\tbin.dat\0\x31\t0\tcaf\xe9.txt\0";

    #[test]
    fn real_name_status() {
        let parsed = Records::parse_all(NameStatus::new(2), NAME_STATUS).unwrap();
        assert_eq!(parsed.total, 3);
        insta::assert_debug_snapshot!(parsed.changes, @"
        [
            Change {
                status: 82,
                score: Some(
                    100,
                ),
                path: [
                    98,
                    32,
                    99,
                    46,
                    116,
                    120,
                    116,
                ],
                orig_path: Some(
                    [
                        97,
                        46,
                        116,
                        120,
                        116,
                    ],
                ),
            },
            Change {
                status: 77,
                score: None,
                path: [
                    98,
                    105,
                    110,
                    46,
                    100,
                    97,
                    116,
                ],
                orig_path: None,
            },
        ]
        ");
    }

    #[test]
    fn numstat_totals_saturate_instead_of_overflowing() {
        let huge = b"18446744073709551615\t18446744073709551615\ta\x0018446744073709551615\t1\tb\0";
        let parsed = Records::parse_all(Numstat::new(10), huge).unwrap();
        assert_eq!((parsed.insertions, parsed.deletions), (u64::MAX, u64::MAX));
    }

    #[test]
    fn real_numstat() {
        let parsed = Records::parse_all(Numstat::new(10), NUMSTAT).unwrap();
        assert_eq!(
            (
                parsed.files,
                parsed.insertions,
                parsed.deletions,
                parsed.binary
            ),
            (3, 1, 0, 1)
        );
        insta::assert_debug_snapshot!(parsed.stats, @"
        [
            Stat {
                lines: Some(
                    (
                        0,
                        0,
                    ),
                ),
                path: [
                    98,
                    32,
                    99,
                    46,
                    116,
                    120,
                    116,
                ],
                orig_path: Some(
                    [
                        97,
                        46,
                        116,
                        120,
                        116,
                    ],
                ),
            },
            Stat {
                lines: None,
                path: [
                    98,
                    105,
                    110,
                    46,
                    100,
                    97,
                    116,
                ],
                orig_path: None,
            },
            Stat {
                lines: Some(
                    (
                        1,
                        0,
                    ),
                ),
                path: [
                    99,
                    97,
                    102,
                    233,
                    46,
                    116,
                    120,
                    116,
                ],
                orig_path: None,
            },
        ]
        ");
    }

    #[test]
    fn malformed() {
        let ns = |b: &[u8]| Records::parse_all(NameStatus::new(10), b).unwrap_err();
        let num = |b: &[u8]| Records::parse_all(Numstat::new(10), b).unwrap_err();
        insta::assert_debug_snapshot!([
            ns(b"Q\0x\0"),
            ns(b"R1x0\0a\0b\0"),
            ns(b"R100\0a\0"),
            num(b"1 2 x\0"),
            num(b"x\t2\tp\0"),
            num(b"1\t2\t\0old\0"),
        ], @r#"
        [
            ParseError {
                offset: 0,
                reason: "unknown change status",
            },
            ParseError {
                offset: 0,
                reason: "bad rename score",
            },
            ParseError {
                offset: 7,
                reason: "output ends inside a change",
            },
            ParseError {
                offset: 0,
                reason: "numstat record without two tabs",
            },
            ParseError {
                offset: 0,
                reason: "bad added count",
            },
            ParseError {
                offset: 9,
                reason: "output ends inside a numstat entry",
            },
        ]
        "#);
    }
}
