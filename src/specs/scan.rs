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

    /// In milliseconds as Node's `fs.Stats` dates are, so it reads as OpenSpec's own.
    pub fn last_modified_iso(&self) -> String {
        let millis = node_millis(self.last_modified);
        jiff::Timestamp::from_millisecond(millis)
            .map(|t| t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
            .unwrap_or_default()
    }
}

/// Node's `Math.round(sec * 1e3 + nsec / 1e6)`, in the same doubles: at today's times a
/// double holds a millisecond count to about 0.24 µs, so a time just under the half
/// rounds up there, and exact integer rounding would disagree with OpenSpec.
fn node_millis(t: SystemTime) -> i64 {
    let since = t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    let ms = since.as_secs() as f64 * 1e3 + f64::from(since.subsec_nanos()) / 1e6;
    ms.round() as i64
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

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::node_millis;

    #[test]
    fn milliseconds_round_in_doubles_as_node_does() {
        let at = |nanos| SystemTime::UNIX_EPOCH + Duration::new(1_796_181_535, nanos);
        // node -e 'Math.round(1796181535*1000 + 869499950/1e6)' → 1796181535870
        assert_eq!(node_millis(at(869_499_950)), 1_796_181_535_870);
        assert_eq!(node_millis(at(869_499_000)), 1_796_181_535_869);
        assert_eq!(node_millis(at(869_500_000)), 1_796_181_535_870);
        assert_eq!(node_millis(at(0)), 1_796_181_535_000);
    }
}
