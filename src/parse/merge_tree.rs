//! `git merge-tree --write-tree -z <ours> <theirs>` (git ≥ 2.38), with messages.
//!
//! Grammar (git-merge-tree(1), "OUTPUT"), every item NUL-terminated:
//!
//! ```text
//! output   := tree-oid [ conflict* NUL message* ]
//! conflict := <mode> SP <oid> SP <stage> TAB <path>        (see `ls_files_unmerged`)
//! message  := <count> NUL <path>{count} <conflict-type> NUL <text>
//! ```
//!
//! A clean merge prints only the tree. With conflicts, the conflicted-file section lists
//! each unmerged stage; an empty record ends it; then each informational message names
//! its paths, a stable type (`Auto-merging`, `CONFLICT (contents)`,
//! `CONFLICT (modify/delete)`, …) and free text we do not interpret. Conflicted paths are
//! kept up to a cap with a true total; `CONFLICT (…)` types are attached to kept paths.

use super::ls_files_unmerged::{self, Stages, Unmerged};
use super::{ParseError, RecordParser};
use crate::model::Oid;
use crate::sink::Flow;

#[derive(Debug)]
enum State {
    Tree,
    Conflicts,
    Count,
    Paths { left: usize },
    Type,
    Text,
}

/// Types attached to one path at most; a path rarely has more than two.
const MAX_TYPES: usize = 8;

#[derive(Debug)]
pub struct MergeTree {
    /// The merged tree; with conflicts it holds the files with markers.
    pub tree: Option<Oid>,
    pub stages: Stages,
    /// Conflict types per kept unmerged path (parallel to `stages.unmerged`), such as
    /// `contents`, `modify/delete`, `rename/delete`.
    pub types: Vec<Vec<String>>,
    /// Paths named by a `CONFLICT` message that have no unmerged stage (a rename
    /// conflict's other side, say), with their types; capped like the rest.
    pub other: Vec<(Vec<u8>, Vec<String>)>,
    /// Every such path seen.
    pub other_total: u64,
    max: usize,
    state: State,
    message_paths: Vec<Vec<u8>>,
}

impl MergeTree {
    pub fn new(max: usize) -> Self {
        MergeTree {
            tree: None,
            stages: Stages::new(max),
            types: Vec::new(),
            other: Vec::new(),
            other_total: 0,
            max,
            state: State::Tree,
            message_paths: Vec::new(),
        }
    }

    /// Kept unmerged paths with their types.
    pub fn conflicts(&self) -> impl Iterator<Item = (&Unmerged, &[String])> {
        self.stages
            .unmerged
            .iter()
            .zip(self.types.iter().map(Vec::as_slice))
    }

    fn attach(&mut self, kind: &str) {
        let Some(inner) = kind
            .strip_prefix("CONFLICT (")
            .and_then(|k| k.strip_suffix(')'))
        else {
            return;
        };
        for path in std::mem::take(&mut self.message_paths) {
            let types = match self.stages.unmerged.iter().position(|u| u.path == path) {
                Some(i) => &mut self.types[i],
                None if self.stages.unmerged_truncated() => continue,
                None => match self.other.iter().position(|(p, _)| *p == path) {
                    Some(i) => &mut self.other[i].1,
                    None => {
                        self.other_total += 1;
                        if self.other.len() >= self.max {
                            continue;
                        }
                        self.other.push((path, Vec::new()));
                        &mut self.other.last_mut().expect("just pushed").1
                    }
                },
            };
            if types.len() < MAX_TYPES && !types.iter().any(|t| t == inner) {
                types.push(inner.to_owned());
            }
        }
    }
}

impl RecordParser for MergeTree {
    fn record(&mut self, record: &[u8], offset: usize) -> Result<Flow, ParseError> {
        match self.state {
            State::Tree => {
                let oid = Oid::from_bytes(record).ok_or_else(|| {
                    ParseError::new(offset, "expected the merged tree's object id")
                })?;
                self.tree = Some(oid);
                self.state = State::Conflicts;
            }
            State::Conflicts if record.is_empty() => {
                self.types = vec![Vec::new(); self.stages.unmerged.len()];
                self.state = State::Count;
            }
            State::Conflicts => self.stages.push(ls_files_unmerged::entry(record, offset)?),
            State::Count => {
                let left = std::str::from_utf8(record)
                    .ok()
                    .and_then(|n| n.parse::<usize>().ok())
                    .filter(|n| *n > 0)
                    .ok_or_else(|| {
                        ParseError::new(offset, "expected the path count of a message")
                    })?;
                self.message_paths.clear();
                self.state = State::Paths { left };
            }
            State::Paths { left } => {
                if self.message_paths.len() < 64 {
                    self.message_paths.push(record.to_vec());
                }
                self.state = match left - 1 {
                    0 => State::Type,
                    left => State::Paths { left },
                };
            }
            State::Type => {
                let kind = String::from_utf8_lossy(record).into_owned();
                self.attach(&kind);
                self.message_paths.clear();
                self.state = State::Text;
            }
            State::Text => self.state = State::Count,
        }
        Ok(Flow::More)
    }

    fn finish(&mut self, rest: &[u8], offset: usize) -> Result<(), ParseError> {
        if !rest.is_empty() {
            return Err(ParseError::new(offset, "output ends inside a record"));
        }
        match self.state {
            State::Conflicts if self.tree.is_some() => {
                // Clean (no section separator) or a conflict list without messages.
                self.types = vec![Vec::new(); self.stages.unmerged.len()];
                Ok(())
            }
            State::Count => Ok(()),
            _ => Err(ParseError::new(offset, "output ends inside a message")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Records;

    /// Real output: a content conflict, an add/add and a modify/delete.
    const CONFLICTS: &[u8] = b"fa41495621597659973f3f7bb5085412b8b51ca1\0\
100644 01e79c32a8c99c557f0757da7cb6d65b3414466d 1\ta.txt\0\
100644 e95635a8eae8594d2b02938195eb45a8e170a8cd 2\ta.txt\0\
100644 425b96cf59fb03832372cc2bf90366dda1880601 3\ta.txt\0\
100644 28ce6a8b26aa170e1de65536fe8abe1832bd3242 2\tadd.txt\0\
100644 6a69f92020f5df77af6e8813ff1232493383b708 3\tadd.txt\0\
100644 587be6b4c3f93f93c489c0111bba5596147a26cb 1\tdel.txt\0\
100644 28ce6a8b26aa170e1de65536fe8abe1832bd3242 2\tdel.txt\0\
\0\
1\0a.txt\0Auto-merging\0Auto-merging a.txt\n\0\
1\0a.txt\0CONFLICT (contents)\0CONFLICT (content): Merge conflict in a.txt\n\0\
1\0add.txt\0Auto-merging\0Auto-merging add.txt\n\0\
1\0add.txt\0CONFLICT (contents)\0CONFLICT (add/add): Merge conflict in add.txt\n\0\
1\0del.txt\0CONFLICT (modify/delete)\0CONFLICT (modify/delete): del.txt deleted in feat and modified in main.  Version main of del.txt left in tree.\n\0";

    fn summary(m: &MergeTree) -> Vec<String> {
        m.conflicts()
            .map(|(u, t)| format!("{} {} {t:?}", String::from_utf8_lossy(&u.path), u.kind()))
            .collect()
    }

    #[test]
    fn conflicts_with_kinds_and_types() {
        let m = Records::parse_all(MergeTree::new(100), CONFLICTS).unwrap();
        assert_eq!(
            m.tree.as_ref().unwrap().as_str(),
            "fa41495621597659973f3f7bb5085412b8b51ca1"
        );
        insta::assert_debug_snapshot!(summary(&m), @r#"
        [
            "a.txt both-modified [\"contents\"]",
            "add.txt both-added [\"contents\"]",
            "del.txt deleted-by-them [\"modify/delete\"]",
        ]
        "#);
        assert!(m.other.is_empty());
    }

    #[test]
    fn clean_merge_is_only_a_tree() {
        let m = Records::parse_all(
            MergeTree::new(100),
            b"742177dd1bfaf9f3d60f83e6c0eaa7e45c11ebba\0",
        )
        .unwrap();
        assert!(m.tree.is_some());
        assert_eq!(m.stages.unmerged_total, 0);
    }

    #[test]
    fn capped_paths_keep_the_total() {
        let m = Records::parse_all(MergeTree::new(1), CONFLICTS).unwrap();
        assert_eq!(summary(&m), ["a.txt both-modified [\"contents\"]"]);
        assert_eq!(m.stages.unmerged_total, 3);
        assert!(m.other.is_empty(), "truncated lists do not grow `other`");
    }

    #[test]
    fn malformed_output_is_an_error() {
        for bad in [
            &b"not-an-oid\0"[..],
            b"742177dd1bfaf9f3d60f83e6c0eaa7e45c11ebba\0garbage\0",
            b"742177dd1bfaf9f3d60f83e6c0eaa7e45c11ebba\0\0x\0",
            b"742177dd1bfaf9f3d60f83e6c0eaa7e45c11ebba\0\x001\0a\0CONFLICT (contents)\0",
            b"742177dd1bfaf9f3d60f83e6c0eaa7e45c11ebba",
        ] {
            assert!(
                Records::parse_all(MergeTree::new(10), bad).is_err(),
                "{bad:?}"
            );
        }
    }
}
