//! The operation git has stopped in the middle of, read from the marker files it leaves
//! in a worktree's git directory.
//!
//! This is the one reader: every tool that reports or reacts to an operation in progress
//! asks here, so two tools never disagree about one repository. Files are read through
//! `crate::safe_file` (no symlink followed, no FIFO waited on, bounded); the caller runs
//! it off the async workers.

use std::path::Path;

use super::Oid;

/// Marker files hold a ref name, an object id or a number.
const MARKER_CAP: u64 = 4096;

/// What is in progress and what git recorded about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InProgress {
    /// `rebase`, `am`, `merge`, `cherry-pick`, `revert` or `bisect`.
    pub kind: &'static str,
    /// The branch being rebased.
    pub branch: Option<String>,
    /// The commit a rebase replays onto.
    pub onto: Option<String>,
    /// The step git is at (1-based) and how many there are.
    pub step: Option<u64>,
    pub total: Option<u64>,
    /// The commit being merged, picked or reverted (the first word of its `*_HEAD`).
    pub incoming: Option<String>,
    /// A multi-commit cherry-pick or revert stopped between commits.
    pub sequencer_only: bool,
}

impl InProgress {
    fn blank(kind: &'static str) -> Self {
        InProgress {
            kind,
            branch: None,
            onto: None,
            step: None,
            total: None,
            incoming: None,
            sequencer_only: false,
        }
    }

    /// Whether the operation applies commits and so can stop on a conflict (bisect and a
    /// sequencer between commits cannot).
    pub fn can_conflict(&self) -> bool {
        !self.sequencer_only && self.kind != "bisect"
    }

    /// The file under the git directory naming the commit being applied, if git keeps one.
    pub fn head_file(&self) -> Option<&'static str> {
        match self.kind {
            _ if !self.can_conflict() => None,
            "rebase" => Some("REBASE_HEAD"),
            "merge" => Some("MERGE_HEAD"),
            "cherry-pick" => Some("CHERRY_PICK_HEAD"),
            "revert" => Some("REVERT_HEAD"),
            _ => None,
        }
    }

    /// The commit being applied, from the first line of [`InProgress::head_file`] (an
    /// octopus merge lists several; the first is taken).
    pub fn applying(&self, git_dir: &Path) -> Option<Oid> {
        let bytes =
            crate::safe_file::read_prefix_in(git_dir, self.head_file()?, MARKER_CAP).ok()?;
        let text = String::from_utf8_lossy(&bytes);
        Oid::parse(text.lines().next()?.split_whitespace().next()?)
    }
}

/// Reads `git_dir` (a worktree's own git directory). Rebase is checked first: a conflicted
/// rebase step also leaves `CHERRY_PICK_HEAD`-like state behind.
pub fn in_progress(git_dir: &Path) -> Option<InProgress> {
    if git_dir.join("rebase-merge").is_dir() {
        return Some(InProgress {
            branch: branch_name(read_trimmed(git_dir, "rebase-merge/head-name")),
            onto: read_trimmed(git_dir, "rebase-merge/onto"),
            step: read_number(git_dir, "rebase-merge/msgnum"),
            total: read_number(git_dir, "rebase-merge/end"),
            ..InProgress::blank("rebase")
        });
    }
    let apply = git_dir.join("rebase-apply");
    if apply.is_dir() {
        let am = apply.join("applying").exists();
        return Some(InProgress {
            branch: if am {
                None
            } else {
                branch_name(read_trimmed(git_dir, "rebase-apply/head-name"))
            },
            onto: if am {
                None
            } else {
                read_trimmed(git_dir, "rebase-apply/onto")
            },
            step: read_number(git_dir, "rebase-apply/next"),
            total: read_number(git_dir, "rebase-apply/last"),
            ..InProgress::blank(if am { "am" } else { "rebase" })
        });
    }
    for (file, kind) in [
        ("MERGE_HEAD", "merge"),
        ("CHERRY_PICK_HEAD", "cherry-pick"),
        ("REVERT_HEAD", "revert"),
    ] {
        if let Some(incoming) = first_word(git_dir, file) {
            return Some(InProgress {
                incoming: Some(incoming),
                ..InProgress::blank(kind)
            });
        }
    }
    if let Ok(todo) = crate::safe_file::read_prefix_in(git_dir, "sequencer/todo", 64 * 1024) {
        let first = String::from_utf8_lossy(&todo);
        let command = first
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('#'))
            .and_then(|l| l.split_whitespace().next())
            .unwrap_or("");
        let kind = if matches!(command, "revert" | "r") {
            "revert"
        } else {
            "cherry-pick"
        };
        return Some(InProgress {
            sequencer_only: true,
            ..InProgress::blank(kind)
        });
    }
    if git_dir.join("BISECT_LOG").is_file() || git_dir.join("BISECT_START").is_file() {
        return Some(InProgress::blank("bisect"));
    }
    None
}

fn read_trimmed(git_dir: &Path, rel: &str) -> Option<String> {
    crate::safe_file::text_in(git_dir, rel, MARKER_CAP)
}

fn read_number(git_dir: &Path, rel: &str) -> Option<u64> {
    read_trimmed(git_dir, rel)?.parse().ok()
}

fn first_word(git_dir: &Path, rel: &str) -> Option<String> {
    read_trimmed(git_dir, rel)?
        .split_whitespace()
        .next()
        .map(str::to_owned)
}

fn branch_name(head_name: Option<String>) -> Option<String> {
    head_name.filter(|n| n != "detached HEAD").map(|n| {
        n.strip_prefix("refs/heads/")
            .map(str::to_owned)
            .unwrap_or(n)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_from_marker_files() {
        let dir = tempfile::tempdir().unwrap();
        let g = dir.path();
        assert!(in_progress(g).is_none());
        std::fs::write(g.join("BISECT_LOG"), "x").unwrap();
        let op = in_progress(g).unwrap();
        assert_eq!((op.kind, op.head_file()), ("bisect", None));
        std::fs::create_dir(g.join("sequencer")).unwrap();
        std::fs::write(g.join("sequencer/todo"), "# c\nrevert abc x\n").unwrap();
        let op = in_progress(g).unwrap();
        assert_eq!((op.kind, op.sequencer_only), ("revert", true));
        assert!(!op.can_conflict());
        std::fs::write(g.join("CHERRY_PICK_HEAD"), "abc\n").unwrap();
        let op = in_progress(g).unwrap();
        assert_eq!(op.head_file(), Some("CHERRY_PICK_HEAD"));
        assert_eq!(op.incoming.as_deref(), Some("abc"));
        std::fs::create_dir(g.join("rebase-apply")).unwrap();
        std::fs::write(g.join("rebase-apply/applying"), "").unwrap();
        std::fs::write(g.join("rebase-apply/next"), "2\n").unwrap();
        std::fs::write(g.join("rebase-apply/last"), "5\n").unwrap();
        let op = in_progress(g).unwrap();
        assert_eq!((op.kind, op.step, op.total), ("am", Some(2), Some(5)));
        assert_eq!(op.head_file(), None);
    }

    #[test]
    fn the_commit_being_applied_is_the_first_id_of_its_head_file() {
        let dir = tempfile::tempdir().unwrap();
        let g = dir.path();
        let (a, b) = ("a".repeat(40), "b".repeat(40));
        std::fs::write(g.join("MERGE_HEAD"), format!("{a}\n{b}\n")).unwrap();
        let op = in_progress(g).unwrap();
        assert_eq!(op.applying(g).map(|o| o.to_string()), Some(a));
        std::fs::write(g.join("MERGE_HEAD"), "not-an-id\n").unwrap();
        assert_eq!(in_progress(g).unwrap().applying(g), None);
        std::fs::write(g.join("BISECT_LOG"), "x").unwrap();
        std::fs::remove_file(g.join("MERGE_HEAD")).unwrap();
        assert_eq!(in_progress(g).unwrap().applying(g), None);
    }

    #[test]
    fn an_empty_or_unreadable_head_file_is_no_operation() {
        let dir = tempfile::tempdir().unwrap();
        let g = dir.path();
        std::fs::write(g.join("MERGE_HEAD"), "").unwrap();
        assert!(in_progress(g).is_none());
        std::fs::create_dir(g.join("REVERT_HEAD")).unwrap();
        assert!(in_progress(g).is_none());
    }
}
