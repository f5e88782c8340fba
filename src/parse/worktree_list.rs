//! `git worktree list --porcelain -z`: every worktree of a repository.
//!
//! ```text
//! output    = { record NUL }
//! record    = "worktree " path NUL { attribute NUL }     (ends at an empty attribute)
//! attribute = "HEAD " oid | "branch " ref | "bare" | "detached"
//!           | "locked" [" " reason] | "prunable" [" " reason]
//! ```
//!
//! The first record is the main worktree. Paths are bytes, kept as they are.

use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use super::{ParseError, RecordParser};
use crate::process::Flow;

/// One worktree.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Worktree {
    pub path: PathBuf,
    pub head: Option<String>,
    /// Full ref name, e.g. `refs/heads/main`.
    pub branch: Option<String>,
    pub bare: bool,
    pub detached: bool,
    pub locked: bool,
    /// Git found its directory gone.
    pub prunable: bool,
}

/// Collects every record.
#[derive(Debug, Default)]
pub struct WorktreeList {
    pub worktrees: Vec<Worktree>,
    open: bool,
}

impl RecordParser for WorktreeList {
    fn record(&mut self, record: &[u8], offset: usize) -> Result<Flow, ParseError> {
        if record.is_empty() {
            if !self.open {
                return Err(ParseError::new(offset, "empty record outside a worktree"));
            }
            self.open = false;
            return Ok(Flow::More);
        }
        if let Some(path) = record.strip_prefix(b"worktree ") {
            if self.open {
                return Err(ParseError::new(offset, "worktree record not terminated"));
            }
            self.open = true;
            self.worktrees.push(Worktree {
                path: PathBuf::from(std::ffi::OsStr::from_bytes(path)),
                ..Worktree::default()
            });
            return Ok(Flow::More);
        }
        let Some(current) = self.worktrees.last_mut().filter(|_| self.open) else {
            return Err(ParseError::new(
                offset,
                "attribute before any worktree line",
            ));
        };
        let (name, value) = match record.iter().position(|b| *b == b' ') {
            Some(at) => (&record[..at], Some(&record[at + 1..])),
            None => (record, None),
        };
        let text = |v: &[u8]| super::utf8(v, offset, "worktree attribute");
        match (name, value) {
            (b"HEAD", Some(v)) => current.head = Some(text(v)?),
            (b"branch", Some(v)) => current.branch = Some(text(v)?),
            (b"bare", None) => current.bare = true,
            (b"detached", None) => current.detached = true,
            (b"locked", _) => current.locked = true,
            (b"prunable", _) => current.prunable = true,
            _ => {
                return Err(ParseError::new(
                    offset,
                    format!(
                        "unknown worktree attribute {:?}",
                        String::from_utf8_lossy(record)
                    ),
                ));
            }
        }
        Ok(Flow::More)
    }

    fn finish(&mut self, rest: &[u8], offset: usize) -> Result<(), ParseError> {
        if !rest.is_empty() || self.open {
            return Err(ParseError::new(
                offset,
                "output ends inside a worktree record",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Records;

    /// Captured from git 2.47: main, a linked worktree, a locked detached one and one
    /// whose directory was removed.
    const REAL: &[u8] = b"worktree /tmp/osp/w\0HEAD 77ef73eacefb5a492ddbcea6b1f78dbbf0f684ba\0branch refs/heads/master\0\0worktree /tmp/osp/w/.worktrees/a\0HEAD 77ef73eacefb5a492ddbcea6b1f78dbbf0f684ba\0branch refs/heads/proposal/a\0\0worktree /tmp/osp/w2\0HEAD 77ef73eacefb5a492ddbcea6b1f78dbbf0f684ba\0detached\0locked on usb\0\0worktree /tmp/osp/w3\0HEAD 77ef73eacefb5a492ddbcea6b1f78dbbf0f684ba\0branch refs/heads/gone\0prunable gitdir file points to non-existent location\0\0";

    #[test]
    fn real_output() {
        let list = Records::parse_all(WorktreeList::default(), REAL).unwrap();
        insta::assert_debug_snapshot!(list.worktrees.iter().map(|w| (w.path.display().to_string(), w.branch.clone(), w.detached, w.locked, w.prunable)).collect::<Vec<_>>(), @r#"
        [
            (
                "/tmp/osp/w",
                Some(
                    "refs/heads/master",
                ),
                false,
                false,
                false,
            ),
            (
                "/tmp/osp/w/.worktrees/a",
                Some(
                    "refs/heads/proposal/a",
                ),
                false,
                false,
                false,
            ),
            (
                "/tmp/osp/w2",
                None,
                true,
                true,
                false,
            ),
            (
                "/tmp/osp/w3",
                Some(
                    "refs/heads/gone",
                ),
                false,
                false,
                true,
            ),
        ]
        "#);
    }

    #[test]
    fn malformed() {
        for bad in [
            &b"HEAD abc\0\0"[..],
            b"worktree /a\0frobnicate\0\0",
            b"worktree /a\0HEAD abc\0",
            b"worktree /a\0worktree /b\0\0",
            b"\0",
        ] {
            assert!(
                Records::parse_all(WorktreeList::default(), bad).is_err(),
                "{bad:?}"
            );
        }
    }
}
