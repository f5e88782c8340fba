//! `git worktree list --porcelain -z`.
//!
//! Each worktree is a run of NUL-terminated attribute records closed by an empty record
//! (git-worktree(1), "Porcelain Format"); the first is the main worktree:
//!
//! ```text
//! worktree := "worktree " path NUL attr* NUL
//! attr     := "HEAD " oid | "branch " ref | "detached" | "bare"
//!           | "locked" ( " " reason )? | "prunable" ( " " reason )?
//! ```
//!
//! Paths and reasons are raw bytes (with `-z` nothing is quoted).

use super::{ParseError, RecordParser};
use crate::model::Oid;
use crate::sink::Flow;

#[derive(Clone, Default, PartialEq, Eq)]
pub struct Worktree {
    pub path: Vec<u8>,
    /// Absent for a bare repository; all zeros on an unborn branch.
    pub head: Option<Oid>,
    /// The full ref name, `refs/heads/<name>`, as bytes (a ref name need not be UTF-8).
    pub branch: Option<Vec<u8>>,
    pub detached: bool,
    pub bare: bool,
    /// `Some` when locked; the reason may be empty.
    pub locked: Option<Vec<u8>>,
    /// `Some` when prunable; the reason may be empty.
    pub prunable: Option<Vec<u8>>,
}

/// Byte fields print as escaped byte strings (`b"refs/heads/main"`), not number lists.
impl std::fmt::Debug for Worktree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        struct Bytes<'a>(&'a [u8]);
        impl std::fmt::Debug for Bytes<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "b\"{}\"", self.0.escape_ascii())
            }
        }
        fn bytes(b: &Option<Vec<u8>>) -> Option<Bytes<'_>> {
            b.as_deref().map(Bytes)
        }
        f.debug_struct("Worktree")
            .field("path", &Bytes(&self.path))
            .field("head", &self.head)
            .field("branch", &bytes(&self.branch))
            .field("detached", &self.detached)
            .field("bare", &self.bare)
            .field("locked", &bytes(&self.locked))
            .field("prunable", &bytes(&self.prunable))
            .finish()
    }
}

/// Keeps the first `max` worktrees and counts them all.
#[derive(Debug)]
pub struct Worktrees {
    pub worktrees: Vec<Worktree>,
    pub total: u64,
    max: usize,
    current: Option<Worktree>,
}

impl Worktrees {
    pub fn new(max: usize) -> Self {
        Worktrees {
            worktrees: Vec::new(),
            total: 0,
            max,
            current: None,
        }
    }
}

impl RecordParser for Worktrees {
    fn record(&mut self, record: &[u8], offset: usize) -> Result<Flow, ParseError> {
        let Some(wt) = self.current.as_mut() else {
            let path = record
                .strip_prefix(b"worktree ")
                .ok_or_else(|| ParseError::new(offset, "expected a worktree line"))?;
            self.current = Some(Worktree {
                path: path.to_vec(),
                ..Worktree::default()
            });
            return Ok(Flow::More);
        };
        let (key, value) = match record.iter().position(|b| *b == b' ') {
            Some(at) => (&record[..at], Some(&record[at + 1..])),
            None => (record, None),
        };
        match (key, value) {
            (b"", None) => {
                let wt = self.current.take().expect("checked above");
                self.total += 1;
                if self.worktrees.len() < self.max {
                    self.worktrees.push(wt);
                }
            }
            (b"HEAD", Some(oid)) => {
                wt.head = Some(
                    Oid::from_bytes(oid).ok_or_else(|| ParseError::new(offset, "bad HEAD id"))?,
                );
            }
            (b"branch", Some(name)) => wt.branch = Some(name.to_vec()),
            (b"detached", None) => wt.detached = true,
            (b"bare", None) => wt.bare = true,
            (b"locked", reason) => wt.locked = Some(reason.unwrap_or_default().to_vec()),
            (b"prunable", reason) => wt.prunable = Some(reason.unwrap_or_default().to_vec()),
            _ => return Err(ParseError::new(offset, "unknown worktree attribute")),
        }
        Ok(Flow::More)
    }

    fn finish(&mut self, rest: &[u8], offset: usize) -> Result<(), ParseError> {
        if self.current.is_some() || !rest.is_empty() {
            return Err(ParseError::new(offset, "output ends inside a worktree"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Records;

    /// Captured from `git worktree list --porcelain -z` (git 2.47): the main worktree and
    /// a locked linked one.
    const REAL: &[u8] = b"worktree /tmp/cap/r\0HEAD 1693ce18b7e122381fa1ae44ae67b5e57fbc5575\0\
branch refs/heads/main\0\0worktree /tmp/cap/wt\0HEAD 69f80fab8c19086b9f110a0c73951bdc90c9d7fe\0\
branch refs/heads/topic\0locked on usb\0\0";
    /// A bare repository with a detached, prunable worktree whose path has a newline.
    const BARE: &[u8] = b"worktree /tmp/b.git\0bare\0\0worktree /tmp/new\nline\0\
HEAD 69f80fab8c19086b9f110a0c73951bdc90c9d7fe\0detached\0prunable gitdir file points to non-existent location\0\0";

    #[test]
    fn branch_names_are_bytes() {
        let out = b"worktree /tmp/r\0HEAD 1693ce18b7e122381fa1ae44ae67b5e57fbc5575\0\
branch refs/heads/br\xff\0\0worktree /tmp/w\0HEAD 1693ce18b7e122381fa1ae44ae67b5e57fbc5575\0\
branch refs/heads/ok\0\0";
        let parsed = Records::parse_all(Worktrees::new(10), out).unwrap();
        let branches: Vec<_> = parsed.worktrees.iter().map(|w| w.branch.clone()).collect();
        assert_eq!(
            branches,
            [
                Some(b"refs/heads/br\xff".to_vec()),
                Some(b"refs/heads/ok".to_vec())
            ]
        );
    }

    #[test]
    fn real_output() {
        let parsed = Records::parse_all(Worktrees::new(10), REAL).unwrap();
        insta::assert_debug_snapshot!(parsed.worktrees, @r#"
        [
            Worktree {
                path: b"/tmp/cap/r",
                head: Some(
                    Oid(
                        "1693ce18b7e122381fa1ae44ae67b5e57fbc5575",
                    ),
                ),
                branch: Some(
                    b"refs/heads/main",
                ),
                detached: false,
                bare: false,
                locked: None,
                prunable: None,
            },
            Worktree {
                path: b"/tmp/cap/wt",
                head: Some(
                    Oid(
                        "69f80fab8c19086b9f110a0c73951bdc90c9d7fe",
                    ),
                ),
                branch: Some(
                    b"refs/heads/topic",
                ),
                detached: false,
                bare: false,
                locked: Some(
                    b"on usb",
                ),
                prunable: None,
            },
        ]
        "#);
        let bare = Records::parse_all(Worktrees::new(1), BARE).unwrap();
        assert_eq!(bare.total, 2);
        insta::assert_debug_snapshot!(bare.worktrees, @r#"
        [
            Worktree {
                path: b"/tmp/b.git",
                head: None,
                branch: None,
                detached: false,
                bare: true,
                locked: None,
                prunable: None,
            },
        ]
        "#);
    }

    #[test]
    fn malformed() {
        let err = |b: &[u8]| Records::parse_all(Worktrees::new(10), b).unwrap_err();
        insta::assert_debug_snapshot!([
            err(b"HEAD abc\0\0"),
            err(b"worktree /x\0HEAD abc\0\0"),
            err(b"worktree /x\0shiny\0\0"),
            err(b"worktree /x\0bare\0"),
        ], @r#"
        [
            ParseError {
                offset: 0,
                reason: "expected a worktree line",
            },
            ParseError {
                offset: 12,
                reason: "bad HEAD id",
            },
            ParseError {
                offset: 12,
                reason: "unknown worktree attribute",
            },
            ParseError {
                offset: 17,
                reason: "output ends inside a worktree",
            },
        ]
        "#);
    }
}
