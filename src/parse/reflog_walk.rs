//! `git log -g -z --date=raw --format=<FORMAT> <ref>...`: reflog entries read through git,
//! for repositories whose refs live in a reftable rather than in files.
//!
//! Every field ends with NUL ([`format()`]) and `-z` ends every entry with one more NUL, so
//! an entry is exactly five NUL-terminated fields, then one empty record:
//!
//! ```text
//! entry    := new-oid NUL selector NUL name NUL email NUL subject NUL NUL
//! selector := full-refname "@{" unix-seconds SP tz "}"
//! ```
//!
//! A walk over several refs interleaves them by time; within one ref, entries come newest
//! first. git does not print the old object id of an entry: for files-backend
//! repositories we read it from the file ([`super::reflog_file`]), here the caller takes it
//! from the next older entry of the same ref.

use super::{ParseError, RecordParser};
use crate::model::Oid;
use crate::sink::Flow;

const FIELDS: [&str; 5] = ["%H", "%gD", "%gn", "%ge", "%gs"];

/// The `--format=` argument this parser reads (use with `--date=raw` and `-z`).
pub fn format() -> String {
    super::format_arg(&FIELDS, "%x00")
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub new: Oid,
    /// The full ref name (`HEAD`, `refs/heads/main`).
    pub refname: String,
    pub time: i64,
    pub tz: String,
    pub name: Vec<u8>,
    pub email: Vec<u8>,
    pub message: Vec<u8>,
}

/// Collects entries; stops git once `max` entries have arrived.
#[derive(Debug)]
pub struct Walk {
    pub entries: Vec<Entry>,
    /// True when git was stopped before the walk ended.
    pub truncated: bool,
    max: usize,
    fields: Vec<Vec<u8>>,
    start: usize,
}

impl Walk {
    pub fn new(max: usize) -> Self {
        Walk {
            entries: Vec::new(),
            truncated: false,
            max,
            fields: Vec::with_capacity(FIELDS.len()),
            start: 0,
        }
    }

    fn entry(&mut self, offset: usize) -> Result<Entry, ParseError> {
        let [new, selector, name, email, message]: [Vec<u8>; 5] = std::mem::take(&mut self.fields)
            .try_into()
            .map_err(|_| ParseError::new(offset, "wrong number of fields"))?;
        let new = Oid::from_bytes(&new).ok_or_else(|| ParseError::new(offset, "bad object id"))?;
        let selector = String::from_utf8(selector)
            .map_err(|_| ParseError::new(offset, "reflog selector is not UTF-8"))?;
        let (refname, stamp) = selector
            .strip_suffix('}')
            .and_then(|s| s.rsplit_once("@{"))
            .ok_or_else(|| ParseError::new(offset, "bad reflog selector"))?;
        let (secs, tz) = stamp
            .split_once(' ')
            .ok_or_else(|| ParseError::new(offset, "reflog selector has no raw date"))?;
        let time = secs
            .parse()
            .map_err(|_| ParseError::new(offset, "bad reflog time"))?;
        if refname.is_empty() {
            return Err(ParseError::new(offset, "empty ref name"));
        }
        Ok(Entry {
            new,
            refname: refname.to_owned(),
            time,
            tz: tz.to_owned(),
            name,
            email,
            message,
        })
    }
}

impl RecordParser for Walk {
    fn record(&mut self, record: &[u8], offset: usize) -> Result<Flow, ParseError> {
        if self.fields.is_empty() {
            self.start = offset;
        }
        if self.fields.len() < FIELDS.len() {
            self.fields.push(record.to_vec());
            return Ok(Flow::More);
        }
        if !record.is_empty() {
            return Err(ParseError::new(offset, "expected the end of an entry"));
        }
        if self.entries.len() == self.max {
            self.truncated = true;
            return Ok(Flow::Enough);
        }
        let entry = self.entry(self.start)?;
        self.entries.push(entry);
        Ok(Flow::More)
    }

    fn finish(&mut self, rest: &[u8], offset: usize) -> Result<(), ParseError> {
        if rest.is_empty() && self.fields.is_empty() {
            Ok(())
        } else {
            Err(ParseError::new(offset, "output ends inside an entry"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Records;
    use crate::sink::Sink;

    /// `git log -g -z --date=raw` over `HEAD refs/heads/feat` of a reftable repository
    /// (git 2.47): commit, checkout -b, initial commit.
    const REAL: &[u8] = b"211fba55bd0402a7fe39f49990d1d8607b9050d0\x00HEAD@{1767225720 +0000}\x00Test Author\x00author@example.com\x00commit: two\x00\x00211fba55bd0402a7fe39f49990d1d8607b9050d0\x00refs/heads/feat@{1767225720 +0000}\x00Test Author\x00author@example.com\x00commit: two\x00\x00a9cc161e9583339c121b99ae221cbfce5e5f29a7\x00HEAD@{1767225660 +0200}\x00Test Author\x00author@example.com\x00checkout: moving from main to feat\x00\x00a9cc161e9583339c121b99ae221cbfce5e5f29a7\x00refs/heads/feat@{1767225660 +0200}\x00Test Author\x00author@example.com\x00branch: Created from HEAD\x00\x00a9cc161e9583339c121b99ae221cbfce5e5f29a7\x00HEAD@{1767225600 +0000}\x00Test Author\x00author@example.com\x00commit (initial): one\x00\x00";

    #[test]
    fn real_walk() {
        let walk = Records::parse_all(Walk::new(100), REAL).unwrap();
        let shown: Vec<_> = walk
            .entries
            .iter()
            .map(|e| {
                format!(
                    "{} {} {} {} {:?}",
                    e.new.short(),
                    e.refname,
                    e.time,
                    e.tz,
                    String::from_utf8_lossy(&e.message)
                )
            })
            .collect();
        insta::assert_debug_snapshot!(shown, @r#"
        [
            "211fba5 HEAD 1767225720 +0000 \"commit: two\"",
            "211fba5 refs/heads/feat 1767225720 +0000 \"commit: two\"",
            "a9cc161 HEAD 1767225660 +0200 \"checkout: moving from main to feat\"",
            "a9cc161 refs/heads/feat 1767225660 +0200 \"branch: Created from HEAD\"",
            "a9cc161 HEAD 1767225600 +0000 \"commit (initial): one\"",
        ]
        "#);
        let mut records = Records::new(Walk::new(2));
        assert_eq!(records.accept(REAL), Flow::Enough);
        let capped = records.finish(false).unwrap();
        assert_eq!(capped.entries.len(), 2);
        assert!(capped.truncated);
    }

    #[test]
    fn malformed() {
        let cases: [&[u8]; 5] = [
            b"nothex\x00HEAD@{1 +0000}\x00n\x00e\x00m\x00\x00",
            b"211fba55bd0402a7fe39f49990d1d8607b9050d0\x00HEAD@{1}\x00n\x00e\x00m\x00\x00",
            b"211fba55bd0402a7fe39f49990d1d8607b9050d0\x00HEAD\x00n\x00e\x00m\x00\x00",
            b"211fba55bd0402a7fe39f49990d1d8607b9050d0\x00HEAD@{1 +0000}\x00n\x00e\x00m\x00x\x00",
            b"211fba55bd0402a7fe39f49990d1d8607b9050d0\x00HEAD@{1 +0000}\x00n\x00",
        ];
        let errors: Vec<_> = cases
            .iter()
            .map(|c| {
                Records::parse_all(Walk::new(10), c)
                    .unwrap_err()
                    .to_string()
            })
            .collect();
        insta::assert_debug_snapshot!(errors, @r#"
        [
            "unexpected git output at byte 0: bad object id",
            "unexpected git output at byte 0: reflog selector has no raw date",
            "unexpected git output at byte 0: bad reflog selector",
            "unexpected git output at byte 62: expected the end of an entry",
            "unexpected git output at byte 58: output ends inside an entry",
        ]
        "#);
    }
}
