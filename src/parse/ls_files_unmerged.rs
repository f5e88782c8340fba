//! Index entries with their stage: `git ls-files -u -z`, `git ls-files -s -z`, and the
//! conflicted-file lines of `git merge-tree --write-tree -z`.
//!
//! Grammar, one NUL-terminated record each (git-ls-files(1), "OUTPUT"):
//!
//! ```text
//! <mode> SP <object> SP <stage> TAB <path>
//! ```
//!
//! `<mode>` is octal (`100644`, `100755`, `120000`, `160000`), `<stage>` is 0 for a merged
//! entry and 1 (base), 2 (ours), 3 (theirs) for an unmerged one. With `-z` the path is
//! never quoted and may hold any byte but NUL.

use super::{ParseError, RecordParser, entry_fields, file_mode, object_id};
use crate::model::Oid;
use crate::sink::Flow;

/// The mode of a gitlink (a submodule's recorded commit).
pub const GITLINK: u32 = 0o160000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageEntry {
    pub mode: u32,
    pub oid: Oid,
    pub stage: u8,
    pub path: Vec<u8>,
}

/// Parses one record.
pub fn entry(record: &[u8], offset: usize) -> Result<StageEntry, ParseError> {
    let ([mode, oid, stage], path) = entry_fields(record, offset, "index entry")?;
    let mode = file_mode(mode, offset)?;
    let oid = object_id(oid, offset)?;
    let stage = match stage {
        "0" => 0,
        "1" => 1,
        "2" => 2,
        "3" => 3,
        other => return Err(ParseError::new(offset, format!("bad stage {other:?}"))),
    };
    Ok(StageEntry {
        mode,
        oid,
        stage,
        path: path.to_vec(),
    })
}

/// How an unmerged path came to conflict, from which of the three stages exist.
pub fn kind(stages: [bool; 3]) -> &'static str {
    match stages {
        [true, true, true] => "both-modified",
        [false, true, true] => "both-added",
        [true, true, false] => "deleted-by-them",
        [true, false, true] => "deleted-by-us",
        [false, true, false] => "added-by-us",
        [false, false, true] => "added-by-them",
        [true, false, false] => "both-deleted",
        [false, false, false] => "unknown",
    }
}

/// One path with every unmerged stage git listed for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmerged {
    pub path: Vec<u8>,
    /// Base, ours, theirs: `(mode, oid)` of each stage present.
    pub stages: [Option<(u32, Oid)>; 3],
}

impl Unmerged {
    pub fn kind(&self) -> &'static str {
        kind(self.stages.each_ref().map(Option::is_some))
    }
}

/// Collects entries: unmerged ones grouped by path (`-u`), or merged ones of one mode.
#[derive(Debug)]
pub struct Stages {
    /// Stage-0 entries kept (only those of `only_mode` when set).
    pub merged: Vec<StageEntry>,
    /// Unmerged paths kept, in git's order.
    pub unmerged: Vec<Unmerged>,
    /// Every unmerged path seen, kept or not.
    pub unmerged_total: u64,
    max: usize,
    only_mode: Option<u32>,
    last_path: Option<Vec<u8>>,
}

impl Stages {
    /// Keeps at most `max` unmerged paths and at most `max` merged entries.
    pub fn new(max: usize) -> Self {
        Stages {
            merged: Vec::new(),
            unmerged: Vec::new(),
            unmerged_total: 0,
            max,
            only_mode: None,
            last_path: None,
        }
    }

    /// Keeps only merged entries of this mode (gitlinks, say).
    pub fn only_mode(mut self, mode: u32) -> Self {
        self.only_mode = Some(mode);
        self
    }

    pub fn unmerged_truncated(&self) -> bool {
        self.unmerged_total > self.unmerged.len() as u64
    }

    /// Adds a parsed entry; git lists a path's stages next to each other.
    pub fn push(&mut self, e: StageEntry) {
        if e.stage == 0 {
            if self.only_mode.is_none_or(|m| m == e.mode) && self.merged.len() < self.max {
                self.merged.push(e);
            }
            return;
        }
        let slot = usize::from(e.stage - 1);
        if self.last_path.as_deref() == Some(e.path.as_slice()) {
            // Another stage of the path just seen: only kept paths record it.
            if let Some(last) = self.unmerged.last_mut().filter(|u| u.path == e.path) {
                last.stages[slot] = Some((e.mode, e.oid));
            }
            return;
        }
        self.unmerged_total += 1;
        self.last_path = Some(e.path.clone());
        if self.unmerged.len() < self.max {
            let mut stages = [None, None, None];
            stages[slot] = Some((e.mode, e.oid));
            self.unmerged.push(Unmerged {
                path: e.path,
                stages,
            });
        }
    }
}

impl RecordParser for Stages {
    fn record(&mut self, record: &[u8], offset: usize) -> Result<Flow, ParseError> {
        self.push(entry(record, offset)?);
        Ok(Flow::More)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Records;

    /// `git ls-files -u -z` after a merge with a content, an add/add and a modify/delete
    /// conflict, followed by `ls-files -s -z` gitlink and file entries.
    const UNMERGED: &[u8] = b"100644 01e79c32a8c99c557f0757da7cb6d65b3414466d 1\ta.txt\0\
100644 e95635a8eae8594d2b02938195eb45a8e170a8cd 2\ta.txt\0\
100644 425b96cf59fb03832372cc2bf90366dda1880601 3\ta.txt\0\
100644 28ce6a8b26aa170e1de65536fe8abe1832bd3242 2\tadd.txt\0\
100644 6a69f92020f5df77af6e8813ff1232493383b708 3\tadd.txt\0\
100644 587be6b4c3f93f93c489c0111bba5596147a26cb 1\tdel \xe9.txt\0\
100644 28ce6a8b26aa170e1de65536fe8abe1832bd3242 2\tdel \xe9.txt\0";

    #[test]
    fn unmerged_paths_are_grouped_and_classified() {
        let s = Records::parse_all(Stages::new(10), UNMERGED).unwrap();
        let got: Vec<_> = s
            .unmerged
            .iter()
            .map(|u| format!("{} {}", String::from_utf8_lossy(&u.path), u.kind()))
            .collect();
        insta::assert_debug_snapshot!(got, @r#"
        [
            "a.txt both-modified",
            "add.txt both-added",
            "del �.txt deleted-by-them",
        ]
        "#);
        assert_eq!(s.unmerged_total, 3);
        assert!(!s.unmerged_truncated());
    }

    #[test]
    fn cap_keeps_true_total() {
        let s = Records::parse_all(Stages::new(1), UNMERGED).unwrap();
        assert_eq!(s.unmerged.len(), 1);
        assert_eq!(s.unmerged[0].stages.iter().flatten().count(), 3);
        assert_eq!(s.unmerged_total, 3);
        assert!(s.unmerged_truncated());
    }

    #[test]
    fn gitlinks_only() {
        let out = b"100644 e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 0\t.gitmodules\0\
160000 1f0b5c3e0d5c2a4a25b3bb2a1f2a4b9c1d8e7f60 0\tlib/sub\0";
        let s = Records::parse_all(Stages::new(10).only_mode(GITLINK), out).unwrap();
        assert_eq!(s.merged.len(), 1);
        assert_eq!(s.merged[0].path, b"lib/sub");
    }

    #[test]
    fn malformed_records_name_their_offset() {
        for bad in [
            &b"100644 e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 0 a\0"[..],
            b"10064 e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 0\ta\0",
            b"100644 xyz 0\ta\0",
            b"100644 e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 4\ta\0",
            b"100644 e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 0\t\0",
            b"100644 e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 0\ta",
        ] {
            assert!(Records::parse_all(Stages::new(10), bad).is_err(), "{bad:?}");
        }
        let err = Records::parse_all(
            Stages::new(10),
            b"100644 e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 0\ta\0junk\0",
        )
        .unwrap_err();
        assert_eq!(err.offset, 52);
    }
}
