//! Active changes of one worktree, read from disk the way `openspec list --json` reads them.
//!
//! Listing is the hot path of `explore`, which covers up to sixteen folders and all their
//! worktrees. Starting the Node-based CLI once per worktree costs about half a second of
//! CPU each, so the listing is done here with OpenSpec 1.13.2's own rules (directories of
//! `openspec/changes/` except `archive`; task progress from `tasks.md` with its checkbox
//! grammar; last modification as the newest file anywhere in the change, else the
//! directory itself; most recent first) and the CLI is only started for the one change a
//! caller asks about.

use std::path::Path;
use std::time::SystemTime;

use super::tasks;

/// One active change, as `openspec list --json` describes it.
#[derive(Debug, Clone)]
pub struct Change {
    pub name: String,
    pub completed_tasks: usize,
    pub total_tasks: usize,
    pub last_modified: SystemTime,
}

impl Change {
    /// `no-tasks`, `complete` or `in-progress`.
    pub fn status(&self) -> &'static str {
        if self.total_tasks == 0 {
            "no-tasks"
        } else if self.completed_tasks == self.total_tasks {
            "complete"
        } else {
            "in-progress"
        }
    }

    /// Rounded to the nearest millisecond, as Node's `fs.Stats` dates are.
    pub fn last_modified_iso(&self) -> String {
        let nanos = self
            .last_modified
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let millis = ((nanos + 500_000) / 1_000_000) as i64;
        jiff::Timestamp::from_millisecond(millis)
            .map(|t| t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
            .unwrap_or_default()
    }
}

/// The active changes under `<worktree>/openspec/changes`, most recent first. A worktree
/// without that directory has none.
pub fn changes(worktree: &Path) -> std::io::Result<Vec<Change>> {
    let dir = worktree.join("openspec/changes");
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry?;
        if !entry.file_type()?.is_dir() || entry.file_name() == "archive" {
            continue;
        }
        let path = entry.path();
        let (completed, total) = match tasks::read(&path.join("tasks.md")) {
            Ok(text) => tasks::progress(&tasks::parse(&text)),
            Err(_) => (0, 0),
        };
        out.push(Change {
            name: entry.file_name().to_string_lossy().into_owned(),
            completed_tasks: completed,
            total_tasks: total,
            last_modified: last_modified(&path)?,
        });
    }
    out.sort_by_key(|c| std::cmp::Reverse(c.last_modified));
    Ok(out)
}

fn last_modified(dir: &Path) -> std::io::Result<SystemTime> {
    fn walk(dir: &Path, latest: &mut Option<SystemTime>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let path = entry.path();
            if entry.file_type()?.is_dir() {
                walk(&path, latest)?;
            } else if let Ok(meta) = std::fs::metadata(&path) {
                // A dangling link is skipped, as OpenSpec skips it.
                let m = meta.modified()?;
                if latest.is_none_or(|l| m > l) {
                    *latest = Some(m);
                }
            }
        }
        Ok(())
    }
    let mut latest = None;
    walk(dir, &mut latest)?;
    match latest {
        Some(t) => Ok(t),
        None => std::fs::metadata(dir)?.modified(),
    }
}
