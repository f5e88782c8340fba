//! `git log -z --format=<FORMAT>` (also `rev-list`-style walks and `show -s`).
//!
//! We ask git for a fixed list of fields, each ended by NUL ([`format()`]); with `-z` git
//! also ends each commit with a NUL. A commit is therefore exactly `FIELDS.len()`
//! NUL-terminated fields, then one empty record; nothing inside a field can contain NUL
//! (git refuses NUL in commit messages), so the grammar is unambiguous:
//!
//! ```text
//! commit := oid NUL parents NUL author-name NUL author-email NUL author-time NUL
//!           committer-name NUL committer-email NUL committer-time NUL subject NUL
//!           body NUL abbreviated-oid NUL NUL
//! ```
//!
//! `parents` is space-separated oids (empty for a root commit); times are Unix seconds.
//! The body is everything after the subject line, trimmed. The abbreviated oid is git's
//! own (`%h`): the shortest prefix, at least `core.abbrev`, unique in the repository.

use super::{ParseError, RecordParser};
use crate::model::Oid;
use crate::model::lossy;
use crate::sink::Flow;

/// Placeholders for each field, in order.
const FIELDS: [&str; 11] = [
    "%H", "%P", "%an", "%ae", "%at", "%cn", "%ce", "%ct", "%s", "%b", "%h",
];

/// The `--format=` argument this parser reads.
pub fn format() -> String {
    super::format_arg(&FIELDS, "%x00")
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    pub oid: Oid,
    /// Git's unique abbreviation of `oid`.
    pub short: String,
    pub parents: Vec<Oid>,
    pub author_name: String,
    pub author_email: String,
    pub author_time: i64,
    pub committer_name: String,
    pub committer_email: String,
    pub committer_time: i64,
    pub subject: String,
    pub body: String,
    /// True when the subject or body was not valid UTF-8 and is shown lossily.
    pub lossy: bool,
}

/// Collects up to `max` commits, counting every commit seen.
#[derive(Debug)]
pub struct Log {
    pub commits: Vec<Commit>,
    pub seen: u64,
    max: usize,
    fields: Vec<Vec<u8>>,
    start: usize,
}

impl Log {
    pub fn new(max: usize) -> Self {
        Log {
            commits: Vec::new(),
            seen: 0,
            max,
            fields: Vec::with_capacity(FIELDS.len()),
            start: 0,
        }
    }

    fn build(&mut self) -> Result<Commit, ParseError> {
        let at = self.start;
        let f = std::mem::take(&mut self.fields);
        let text = |i: usize| String::from_utf8_lossy(&f[i]).into_owned();
        let time = |i: usize| {
            std::str::from_utf8(&f[i])
                .ok()
                .and_then(|s| s.parse::<i64>().ok())
                .ok_or_else(|| ParseError::new(at, "bad timestamp"))
        };
        let oid = Oid::from_bytes(&f[0]).ok_or_else(|| ParseError::new(at, "bad commit id"))?;
        let parents = f[1]
            .split(|b| *b == b' ')
            .filter(|p| !p.is_empty())
            .map(|p| Oid::from_bytes(p).ok_or_else(|| ParseError::new(at, "bad parent id")))
            .collect::<Result<Vec<_>, _>>()?;
        let (subject, lossy_subject) = lossy(&f[8]);
        let (body, lossy_body) = lossy(f[9].trim_ascii());
        let (author_time, committer_time) = (time(4)?, time(7)?);
        let short = String::from_utf8(f[10].clone())
            .ok()
            .filter(|h| h.len() >= 4 && oid.as_str().starts_with(h.as_str()))
            .ok_or_else(|| ParseError::new(at, "bad abbreviated commit id"))?;
        Ok(Commit {
            oid,
            short,
            parents,
            author_name: text(2),
            author_email: text(3),
            author_time,
            committer_name: text(5),
            committer_email: text(6),
            committer_time,
            subject,
            body,
            lossy: lossy_subject || lossy_body,
        })
    }
}

impl RecordParser for Log {
    fn record(&mut self, record: &[u8], offset: usize) -> Result<Flow, ParseError> {
        if self.fields.len() == FIELDS.len() {
            // The empty record `-z` puts between commits.
            if !record.is_empty() {
                return Err(ParseError::new(offset, "expected the end of a commit"));
            }
            self.seen += 1;
            let commit = self.build()?;
            if self.commits.len() < self.max {
                self.commits.push(commit);
            }
            return Ok(Flow::More);
        }
        if self.fields.is_empty() {
            self.start = offset;
        }
        self.fields.push(record.to_vec());
        Ok(Flow::More)
    }

    fn finish(&mut self, rest: &[u8], offset: usize) -> Result<(), ParseError> {
        // The last commit's terminating NUL may be missing (`git log -z` omits it at the
        // end of output), leaving a complete field list and no tail.
        if self.fields.len() == FIELDS.len() && rest.is_empty() {
            self.seen += 1;
            let commit = self.build()?;
            if self.commits.len() < self.max {
                self.commits.push(commit);
            }
            return Ok(());
        }
        if !self.fields.is_empty() || !rest.is_empty() {
            return Err(ParseError::new(offset, "output ends inside a commit"));
        }
        Ok(())
    }
}

impl From<Commit> for crate::model::HistoryCommit {
    fn from(c: Commit) -> Self {
        crate::model::HistoryCommit {
            short_oid: c.short,
            oid: c.oid,
            parents: c.parents,
            author_name: c.author_name,
            author_email: c.author_email,
            author_time: c.author_time,
            committer_name: c.committer_name,
            committer_email: c.committer_email,
            committer_time: c.committer_time,
            subject: c.subject,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Records;

    /// Captured from `git log -z --format=<format()>` (git 2.47): a merge with a body, then
    /// a root commit whose subject contains a unit separator and a non-UTF-8 byte.
    const REAL: &[u8] = b"4b0c5b6a1d2e3f405162738495a6b7c8d9e0f1a2\0\
1111111111111111111111111111111111111111 2222222222222222222222222222222222222222\0\
Ann Author\0ann@example.com\x001767225600\0Cid Committer\0cid@example.com\x001767225660\0\
Merge branch 'topic'\0Body line one\n\nBody line two\n\x004b0c5b6\0\0\
1111111111111111111111111111111111111111\0\0A\0a@x\x001767225500\0A\0a@x\x001767225500\0\
root \x1f caf\xe9\0\x001111111\0\0";

    #[test]
    fn real_output() {
        let log = Records::parse_all(Log::new(10), REAL).unwrap();
        assert_eq!(log.seen, 2);
        insta::assert_debug_snapshot!(log.commits, @r#"
        [
            Commit {
                oid: Oid(
                    "4b0c5b6a1d2e3f405162738495a6b7c8d9e0f1a2",
                ),
                short: "4b0c5b6",
                parents: [
                    Oid(
                        "1111111111111111111111111111111111111111",
                    ),
                    Oid(
                        "2222222222222222222222222222222222222222",
                    ),
                ],
                author_name: "Ann Author",
                author_email: "ann@example.com",
                author_time: 1767225600,
                committer_name: "Cid Committer",
                committer_email: "cid@example.com",
                committer_time: 1767225660,
                subject: "Merge branch 'topic'",
                body: "Body line one\n\nBody line two",
                lossy: false,
            },
            Commit {
                oid: Oid(
                    "1111111111111111111111111111111111111111",
                ),
                short: "1111111",
                parents: [],
                author_name: "A",
                author_email: "a@x",
                author_time: 1767225500,
                committer_name: "A",
                committer_email: "a@x",
                committer_time: 1767225500,
                subject: "root \u{1f} caf�",
                body: "",
                lossy: true,
            },
        ]
        "#);
    }

    #[test]
    fn counts_beyond_the_cap() {
        let log = Records::parse_all(Log::new(1), REAL).unwrap();
        assert_eq!((log.commits.len(), log.seen), (1, 2));
    }

    #[test]
    fn malformed() {
        let err = |b: &[u8]| Records::parse_all(Log::new(10), b).unwrap_err();
        insta::assert_debug_snapshot!([
            err(b"nothex\0\0a\0b\x001\0c\0d\x002\0s\0\0nothex\0\0"),
            err(b"1111111111111111111111111111111111111111\0\0a\0b\0soon\0c\0d\x002\0s\0\x001111111\0\0"),
            err(b"1111111111111111111111111111111111111111\0\0a\0b\x001\0c\0d\x002\0s\0\x002222222\0\0"),
            err(b"1111111111111111111111111111111111111111\0\0a\0"),
        ], @r#"
        [
            ParseError {
                offset: 0,
                reason: "bad commit id",
            },
            ParseError {
                offset: 0,
                reason: "bad timestamp",
            },
            ParseError {
                offset: 0,
                reason: "bad abbreviated commit id",
            },
            ParseError {
                offset: 44,
                reason: "output ends inside a commit",
            },
        ]
        "#);
    }
}
