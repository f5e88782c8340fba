//! `git status --porcelain=v2 -z --branch` (optionally `--show-stash`).
//!
//! Grammar, one NUL-terminated record each (git-status(1), "Porcelain Format Version 2"):
//!
//! ```text
//! # branch.oid <commit> | (initial)
//! # branch.head <name> | (detached)
//! # branch.upstream <upstream>
//! # branch.ab +<ahead> -<behind>
//! # stash <count>
//! 1 <XY> <sub> <mH> <mI> <mW> <hH> <hI> <path>
//! 2 <XY> <sub> <mH> <mI> <mW> <hH> <hI> <X><score> <path>   followed by the record <origPath>
//! u <XY> <sub> <m1> <m2> <m3> <mW> <h1> <h2> <h3> <path>
//! ? <path>
//! ! <path>
//! ```
//!
//! `<XY>` uses `.` for unchanged; `<sub>` is `N...` or `S<c><m><u>` for a submodule. Other
//! `#` headers are skipped (git documents that new ones may appear); any other record is an
//! error. The collector keeps counts of everything and at most `max_entries` entries.

use super::{ParseError, RecordParser, utf8};
use crate::model::Oid;
use crate::sink::Flow;

/// The `# branch.*` headers.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Branch {
    /// `None` on an unborn branch (`(initial)`).
    pub oid: Option<Oid>,
    /// `None` when HEAD is detached. Ref names are bytes: git allows any but a few.
    pub head: Option<Vec<u8>>,
    pub upstream: Option<Vec<u8>>,
    /// Present when the upstream exists (`branch.ab`).
    pub ahead_behind: Option<(u64, u64)>,
    /// From `# stash`, only with `--show-stash`.
    pub stashes: Option<u64>,
}

/// What kind of record an entry came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Changed,
    /// Renamed or copied; the score is `R<n>` or `C<n>`.
    Renamed,
    Unmerged,
    Untracked,
    Ignored,
}

/// Submodule state from the `<sub>` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SubmoduleFlags {
    pub commit_changed: bool,
    pub modified: bool,
    pub untracked: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub kind: Kind,
    /// Index and worktree status letters; `.` means unchanged, `?`/`!` for untracked/ignored.
    pub xy: [u8; 2],
    pub submodule: Option<SubmoduleFlags>,
    pub path: Vec<u8>,
    pub orig_path: Option<Vec<u8>>,
    /// `R100`, `C75`: the rename or copy score.
    pub score: Option<String>,
}

/// Totals over every entry, kept or not.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub entries: u64,
    pub staged: u64,
    pub unstaged: u64,
    pub untracked: u64,
    pub ignored: u64,
    pub conflicted: u64,
    pub renamed: u64,
    pub submodules: u64,
}

/// Parses status records as they stream in.
#[derive(Debug)]
pub struct Status {
    pub branch: Branch,
    pub counts: Counts,
    pub entries: Vec<Entry>,
    max_entries: usize,
    /// A rename record waiting for its `<origPath>` record.
    awaiting_orig: Option<Entry>,
}

impl Status {
    pub fn new(max_entries: usize) -> Self {
        Status {
            branch: Branch::default(),
            counts: Counts::default(),
            entries: Vec::new(),
            max_entries,
            awaiting_orig: None,
        }
    }

    /// True when some entries were counted but not kept.
    pub fn truncated(&self) -> bool {
        self.counts.entries > self.entries.len() as u64
    }

    fn header(&mut self, raw: &[u8], offset: usize) -> Result<(), ParseError> {
        let (key, raw_value) = match raw.iter().position(|b| *b == b' ') {
            Some(at) => (&raw[..at], &raw[at + 1..]),
            None => (raw, &b""[..]),
        };
        // Branch names are kept as bytes; every other header is ASCII.
        match key {
            b"branch.head" => {
                self.branch.head = (raw_value != b"(detached)").then(|| raw_value.to_vec());
                return Ok(());
            }
            b"branch.upstream" => {
                self.branch.upstream = Some(raw_value.to_vec());
                return Ok(());
            }
            _ => {}
        }
        // Garbage in the ASCII headers fails their own checks below.
        let value = String::from_utf8_lossy(raw_value);
        let value = value.as_ref();
        match &*String::from_utf8_lossy(key) {
            "branch.oid" => {
                self.branch.oid = match value {
                    "(initial)" => None,
                    oid => Some(
                        Oid::parse(oid).ok_or_else(|| ParseError::new(offset, "bad branch.oid"))?,
                    ),
                }
            }
            "branch.ab" => {
                let parsed = value.split_once(' ').and_then(|(a, b)| {
                    Some((
                        a.strip_prefix('+')?.parse().ok()?,
                        b.strip_prefix('-')?.parse().ok()?,
                    ))
                });
                self.branch.ahead_behind =
                    Some(parsed.ok_or_else(|| ParseError::new(offset, "bad branch.ab"))?);
            }
            "stash" => {
                self.branch.stashes = Some(
                    value
                        .parse()
                        .map_err(|_| ParseError::new(offset, "bad stash count"))?,
                );
            }
            // git reserves the right to add headers; unknown ones carry nothing we use.
            _ => {}
        }
        Ok(())
    }

    fn push(&mut self, entry: Entry) {
        let c = &mut self.counts;
        c.entries += 1;
        match entry.kind {
            Kind::Untracked => c.untracked += 1,
            Kind::Ignored => c.ignored += 1,
            Kind::Unmerged => c.conflicted += 1,
            Kind::Changed | Kind::Renamed => {
                c.staged += u64::from(entry.xy[0] != b'.');
                c.unstaged += u64::from(entry.xy[1] != b'.');
                c.renamed += u64::from(entry.kind == Kind::Renamed);
            }
        }
        c.submodules += u64::from(entry.submodule.is_some());
        if self.entries.len() < self.max_entries {
            self.entries.push(entry);
        }
    }
}

/// Splits off `n` space-separated fields; the remainder (a path, which may contain spaces)
/// is returned last.
fn fields(text: &[u8], n: usize, offset: usize) -> Result<(Vec<&[u8]>, &[u8]), ParseError> {
    let mut out = Vec::with_capacity(n);
    let mut rest = text;
    for _ in 0..n {
        let at = rest
            .iter()
            .position(|b| *b == b' ')
            .ok_or_else(|| ParseError::new(offset, "record has too few fields"))?;
        out.push(&rest[..at]);
        rest = &rest[at + 1..];
    }
    Ok((out, rest))
}

fn xy(field: &[u8], offset: usize) -> Result<[u8; 2], ParseError> {
    match field {
        [x, y] => Ok([*x, *y]),
        _ => Err(ParseError::new(offset, "bad XY field")),
    }
}

fn submodule(field: &[u8], offset: usize) -> Result<Option<SubmoduleFlags>, ParseError> {
    match field {
        b"N..." => Ok(None),
        [b'S', c, m, u] => Ok(Some(SubmoduleFlags {
            commit_changed: *c == b'C',
            modified: *m == b'M',
            untracked: *u == b'U',
        })),
        _ => Err(ParseError::new(offset, "bad submodule field")),
    }
}

impl RecordParser for Status {
    fn record(&mut self, record: &[u8], offset: usize) -> Result<Flow, ParseError> {
        if let Some(mut entry) = self.awaiting_orig.take() {
            entry.orig_path = Some(record.to_vec());
            self.push(entry);
            return Ok(Flow::More);
        }
        let (tag, body) = match record {
            [tag, b' ', body @ ..] => (*tag, body),
            _ => return Err(ParseError::new(offset, "record without a type tag")),
        };
        match tag {
            b'#' => self.header(body, offset)?,
            b'1' => {
                let (f, path) = fields(body, 7, offset)?;
                let entry = Entry {
                    kind: Kind::Changed,
                    xy: xy(f[0], offset)?,
                    submodule: submodule(f[1], offset)?,
                    path: path.to_vec(),
                    orig_path: None,
                    score: None,
                };
                self.push(entry);
            }
            b'2' => {
                let (f, path) = fields(body, 8, offset)?;
                self.awaiting_orig = Some(Entry {
                    kind: Kind::Renamed,
                    xy: xy(f[0], offset)?,
                    submodule: submodule(f[1], offset)?,
                    path: path.to_vec(),
                    orig_path: None,
                    score: Some(utf8(f[7], offset, "score")?),
                });
            }
            b'u' => {
                let (f, path) = fields(body, 9, offset)?;
                self.push(Entry {
                    kind: Kind::Unmerged,
                    xy: xy(f[0], offset)?,
                    submodule: submodule(f[1], offset)?,
                    path: path.to_vec(),
                    orig_path: None,
                    score: None,
                });
            }
            b'?' | b'!' => self.push(Entry {
                kind: if tag == b'?' {
                    Kind::Untracked
                } else {
                    Kind::Ignored
                },
                xy: [tag, tag],
                submodule: None,
                path: body.to_vec(),
                orig_path: None,
                score: None,
            }),
            other => {
                return Err(ParseError::new(
                    offset,
                    format!("unknown record type {:?}", other as char),
                ));
            }
        }
        Ok(Flow::More)
    }

    fn finish(&mut self, rest: &[u8], offset: usize) -> Result<(), ParseError> {
        if self.awaiting_orig.is_some() {
            return Err(ParseError::new(
                offset,
                "rename record without its original path",
            ));
        }
        if !rest.is_empty() {
            return Err(ParseError::new(offset, "output ends inside a record"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Records;

    /// Captured from git 2.47 on a repository with a staged rename, a modified file with a
    /// space in its name, a conflict, a dirty submodule and an untracked file.
    const REAL: &[u8] = b"# branch.oid 3f1c2b9d6e0a4f5b8c7d9e1f2a3b4c5d6e7f8091\0\
# branch.head main\0\
# branch.upstream origin/main\0\
# branch.ab +2 -1\0\
# stash 3\0\
1 .M N... 100644 100644 100644 e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 with space.txt\0\
2 R. N... 100644 100644 100644 e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 R100 new name.txt\0old name.txt\0\
u UU N... 100644 100644 100644 100644 257cc5642cb1a054f08cc83f2d943e56fd3ebe99 5716ca5987cbf97d6bb54920bea6adde242d87e6 3b18e512dba79e4c8300dd08aeb37f8e728b8dad conflict.txt\0\
1 .M SC.U 160000 160000 160000 0c8b5a3e9d0f1a2b3c4d5e6f708192a3b4c5d6e7 0c8b5a3e9d0f1a2b3c4d5e6f708192a3b4c5d6e7 sub\0\
? caf\xe9.txt\0";

    #[test]
    fn branch_names_are_bytes() {
        let out = b"# branch.oid 3f1c2b9d6e0a4f5b8c7d9e1f2a3b4c5d6e7f8091\0\
# branch.head br\xff\0# branch.upstream origin/br\xff\0# branch.ab +0 -0\0";
        let status = Records::parse_all(Status::new(10), out).unwrap();
        assert_eq!(status.branch.head.as_deref(), Some(&b"br\xff"[..]));
        assert_eq!(
            status.branch.upstream.as_deref(),
            Some(&b"origin/br\xff"[..])
        );
        assert_eq!(status.branch.ahead_behind, Some((0, 0)));
    }

    #[test]
    fn real_output() {
        let status = Records::parse_all(Status::new(10), REAL).unwrap();
        insta::assert_debug_snapshot!((status.branch, status.counts), @r#"
        (
            Branch {
                oid: Some(
                    Oid(
                        "3f1c2b9d6e0a4f5b8c7d9e1f2a3b4c5d6e7f8091",
                    ),
                ),
                head: Some(
                    [
                        109,
                        97,
                        105,
                        110,
                    ],
                ),
                upstream: Some(
                    [
                        111,
                        114,
                        105,
                        103,
                        105,
                        110,
                        47,
                        109,
                        97,
                        105,
                        110,
                    ],
                ),
                ahead_behind: Some(
                    (
                        2,
                        1,
                    ),
                ),
                stashes: Some(
                    3,
                ),
            },
            Counts {
                entries: 5,
                staged: 1,
                unstaged: 2,
                untracked: 1,
                ignored: 0,
                conflicted: 1,
                renamed: 1,
                submodules: 1,
            },
        )
        "#);
        let rename = &status.entries[1];
        assert_eq!(rename.path, b"new name.txt");
        assert_eq!(rename.orig_path.as_deref(), Some(&b"old name.txt"[..]));
        assert_eq!(rename.score.as_deref(), Some("R100"));
        assert_eq!(status.entries[0].path, b"with space.txt");
        assert_eq!(
            status.entries[3].submodule,
            Some(SubmoduleFlags {
                commit_changed: true,
                modified: false,
                untracked: true
            })
        );
        assert_eq!(status.entries[4].path, b"caf\xe9.txt");
    }

    #[test]
    fn unborn_and_detached() {
        let status = Records::parse_all(
            Status::new(10),
            b"# branch.oid (initial)\0# branch.head (detached)\0",
        )
        .unwrap();
        assert_eq!(status.branch.oid, None);
        assert_eq!(status.branch.head, None);
    }

    #[test]
    fn streaming_in_tiny_chunks_gives_the_same_result() {
        use crate::sink::Sink;
        let whole = Records::parse_all(Status::new(10), REAL).unwrap();
        let mut records = Records::new(Status::new(10));
        for byte in REAL.chunks(3) {
            records.accept(byte);
        }
        let streamed = records.finish(true).unwrap();
        assert_eq!(whole.entries, streamed.entries);
        assert_eq!(whole.counts, streamed.counts);
    }

    #[test]
    fn caps_entries_but_counts_all() {
        let status = Records::parse_all(Status::new(2), REAL).unwrap();
        assert_eq!(status.entries.len(), 2);
        assert_eq!(status.counts.entries, 5);
        assert!(status.truncated());
    }

    #[test]
    fn malformed() {
        let err = |bytes: &[u8]| Records::parse_all(Status::new(10), bytes).unwrap_err();
        insta::assert_debug_snapshot!(
            [
                err(b"X what\0"),
                err(b"1 .M N... 100644\0"),
                err(b"2 R. N... 100644 100644 100644 a b R100 new\0"),
                err(b"# branch.ab 2 1\0"),
                err(b"? tail-without-nul"),
            ],
            @r#"
        [
            ParseError {
                offset: 0,
                reason: "unknown record type 'X'",
            },
            ParseError {
                offset: 0,
                reason: "record has too few fields",
            },
            ParseError {
                offset: 44,
                reason: "rename record without its original path",
            },
            ParseError {
                offset: 0,
                reason: "bad branch.ab",
            },
            ParseError {
                offset: 0,
                reason: "output ends inside a record",
            },
        ]
        "#
        );
    }
}
