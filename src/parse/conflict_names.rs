//! `git merge-tree --write-tree --name-only --no-messages -z <a> <b>`: would merging two
//! commits conflict, and in which paths.
//!
//! Grammar (git-merge-tree(1), "OUTPUT"), each item NUL-terminated:
//!
//! ```text
//! output := tree-oid NUL { path NUL }
//! ```
//!
//! Exit status 0 means a clean merge (no paths follow), 1 a conflicted one. With
//! `--name-only` a path is listed once per conflict record; the collector keeps each path
//! once, at most `max` of them, and counts them all.

use super::{ParseError, RecordParser};
use crate::git::Oid;
use crate::process::Flow;

#[derive(Debug, Default)]
pub struct ConflictNames {
    /// The tree git wrote for the merge result (with conflict markers where it conflicted).
    pub tree: Option<Oid>,
    /// Distinct conflicted paths, in git's order, at most `max`.
    pub paths: Vec<Vec<u8>>,
    /// How many distinct conflicted paths there are.
    pub total: u64,
    max: usize,
    last: Option<Vec<u8>>,
}

impl ConflictNames {
    pub fn new(max: usize) -> Self {
        ConflictNames {
            max,
            ..ConflictNames::default()
        }
    }
}

impl RecordParser for ConflictNames {
    fn record(&mut self, record: &[u8], offset: usize) -> Result<Flow, ParseError> {
        if self.tree.is_none() {
            self.tree = Some(
                Oid::from_bytes(record)
                    .ok_or_else(|| ParseError::new(offset, "expected the merged tree's id"))?,
            );
            return Ok(Flow::More);
        }
        if record.is_empty() {
            return Err(ParseError::new(offset, "empty path"));
        }
        // Records for one path arrive together, so comparing with the previous one dedupes.
        if self.last.as_deref() == Some(record) {
            return Ok(Flow::More);
        }
        self.total += 1;
        if self.paths.len() < self.max {
            self.paths.push(record.to_vec());
        }
        self.last = Some(record.to_vec());
        Ok(Flow::More)
    }

    fn finish(&mut self, rest: &[u8], offset: usize) -> Result<(), ParseError> {
        if !rest.is_empty() {
            return Err(ParseError::new(offset, "output ends inside a record"));
        }
        if self.tree.is_none() {
            return Err(ParseError::new(offset, "no merged tree in the output"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Records;

    /// git 2.47: content conflicts in `d i r/f` and `f`, a modify/delete in `g`; and a
    /// clean merge.
    const CONFLICTED: &[u8] = b"bb8e080423940a67275d91d22ea5162ed5a4d4bb\x00d i r/f\x00f\x00g\x00";
    const CLEAN: &[u8] = b"9eb0931a344de6978dc391dcb7c0bf094de55801\x00";

    #[test]
    fn real_output() {
        let clean = Records::parse_all(ConflictNames::new(10), CLEAN).unwrap();
        assert_eq!(clean.total, 0);
        assert!(clean.tree.is_some());
        let conflicted = Records::parse_all(ConflictNames::new(2), CONFLICTED).unwrap();
        let paths: Vec<_> = conflicted
            .paths
            .iter()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect();
        insta::assert_debug_snapshot!((conflicted.total, paths), @r#"
        (
            3,
            [
                "d i r/f",
                "f",
            ],
        )
        "#);
    }

    #[test]
    fn malformed() {
        let cases: [&[u8]; 4] = [
            b"",
            b"not-an-oid\x00f\x00",
            b"9eb0931a344de6978dc391dcb7c0bf094de55801\x00\x00",
            b"9eb0931a344de6978dc391dcb7c0bf094de55801\x00f",
        ];
        let errors: Vec<_> = cases
            .iter()
            .map(|c| {
                Records::parse_all(ConflictNames::new(10), c)
                    .unwrap_err()
                    .to_string()
            })
            .collect();
        insta::assert_debug_snapshot!(errors, @r#"
        [
            "unexpected git output at byte 0: no merged tree in the output",
            "unexpected git output at byte 0: expected the merged tree's id",
            "unexpected git output at byte 41: empty path",
            "unexpected git output at byte 41: output ends inside a record",
        ]
        "#);
    }
}
