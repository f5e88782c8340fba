//! Sorting `git status` entries into the staged, unstaged, untracked and conflicted
//! lists as they stream in.

use super::{ChangeEntry, SubmoduleFlags};
use crate::model::{OrigPathText, PathText};
use crate::parse::status_v2::{self, Kind};
use crate::parse::{ParseError, RecordParser};
use crate::process::Flow;

#[derive(Debug, Default)]
pub(super) struct List {
    pub(super) entries: Vec<ChangeEntry>,
    pub(super) total: u64,
}

/// Sorts status entries into the four lists as they stream in.
pub(super) struct Sorter {
    status: status_v2::Status,
    max: usize,
    pub(super) staged: List,
    pub(super) unstaged: List,
    pub(super) untracked: List,
    pub(super) conflicted: List,
}

fn conflict_kind(xy: [u8; 2]) -> &'static str {
    match &xy {
        b"UU" => "both-modified",
        b"AA" => "both-added",
        b"DD" => "both-deleted",
        b"AU" => "added-by-us",
        b"UA" => "added-by-them",
        b"DU" => "deleted-by-us",
        b"UD" => "deleted-by-them",
        _ => "unmerged",
    }
}

fn letter_kind(letter: u8) -> &'static str {
    match letter {
        b'M' => "modified",
        b'A' => "added",
        b'D' => "deleted",
        b'R' => "renamed",
        b'C' => "copied",
        b'T' => "typechange",
        _ => "changed",
    }
}

impl Sorter {
    /// Keeps at most `max` entries in each list, counting them all.
    pub(super) fn new(max: usize) -> Sorter {
        Sorter {
            status: status_v2::Status::new(usize::MAX),
            max,
            staged: List::default(),
            unstaged: List::default(),
            untracked: List::default(),
            conflicted: List::default(),
        }
    }

    fn add(list: &mut List, max: usize, entry: &status_v2::Entry, kind: &'static str) {
        list.total += 1;
        if list.entries.len() < max {
            list.entries.push(ChangeEntry {
                path: PathText::from_bytes(&entry.path),
                orig_path: entry.orig_path.as_deref().map(OrigPathText::from_bytes),
                index: char::from(entry.xy[0]).to_string(),
                worktree: char::from(entry.xy[1]).to_string(),
                kind,
                submodule: entry.submodule.map(|s| SubmoduleFlags {
                    commit_changed: s.commit_changed,
                    modified: s.modified,
                    untracked: s.untracked,
                }),
            });
        }
    }

    fn sort(&mut self, entry: status_v2::Entry) {
        let max = self.max;
        match entry.kind {
            Kind::Unmerged => Self::add(&mut self.conflicted, max, &entry, conflict_kind(entry.xy)),
            Kind::Untracked => Self::add(&mut self.untracked, max, &entry, "untracked"),
            Kind::Ignored => {}
            Kind::Changed | Kind::Renamed => {
                if entry.xy[0] != b'.' {
                    Self::add(&mut self.staged, max, &entry, letter_kind(entry.xy[0]));
                }
                if entry.xy[1] != b'.' {
                    Self::add(&mut self.unstaged, max, &entry, letter_kind(entry.xy[1]));
                }
            }
        }
    }
}

impl RecordParser for Sorter {
    fn record(&mut self, record: &[u8], offset: usize) -> Result<Flow, ParseError> {
        let flow = self.status.record(record, offset)?;
        // Entries are taken as soon as the status parser completes them, so it never
        // holds more than one.
        for entry in std::mem::take(&mut self.status.entries) {
            self.sort(entry);
        }
        Ok(flow)
    }

    fn finish(&mut self, rest: &[u8], offset: usize) -> Result<(), ParseError> {
        self.status.finish(rest, offset)?;
        for entry in std::mem::take(&mut self.status.entries) {
            self.sort(entry);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Records;

    const OID: &str = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";

    fn kinds(list: &List) -> Vec<(String, &'static str)> {
        list.entries
            .iter()
            .map(|e| (e.path.path.clone(), e.kind))
            .collect()
    }

    #[test]
    fn entries_land_in_every_list_they_belong_to() {
        let out = format!(
            "1 MM N... 100644 100644 100644 {OID} {OID} both.txt\0\
2 R. N... 100644 100644 100644 {OID} {OID} R100 new.txt\0old.txt\0\
u UD N... 100644 100644 000000 100644 {OID} {OID} {OID} gone.txt\0\
? new-file\0! ignored\0"
        );
        let s = Records::parse_all(Sorter::new(1), out.as_bytes()).unwrap();
        assert_eq!(kinds(&s.staged), [("both.txt".into(), "modified")]);
        assert_eq!(s.staged.total, 2, "the rename counts past the cap");
        assert_eq!(kinds(&s.unstaged), [("both.txt".into(), "modified")]);
        assert_eq!(
            kinds(&s.conflicted),
            [("gone.txt".into(), "deleted-by-them")]
        );
        assert_eq!(kinds(&s.untracked), [("new-file".into(), "untracked")]);
        assert_eq!(s.unstaged.total + s.untracked.total + s.conflicted.total, 3);
    }
}
