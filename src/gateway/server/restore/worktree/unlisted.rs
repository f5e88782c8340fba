//! The index entries `diff-files` passes over although the disk may differ from the
//! index's tree there: skip-worktree entries (a sparse checkout) and files whose line
//! endings git converts.

use std::collections::HashSet;
use std::path::Path;

use super::{Candidate, Caps, Found, Listed, MODE_EXEC, MODE_FILE, MODE_LINK, OnDisk, on_disk};
use crate::git::Git;
use crate::git::index_lookup::Skipped;
use crate::operation::OpError;

impl Listed {
    /// Takes in index entries `diff-files` passes over although the disk may differ from
    /// the index's tree there. Skip-worktree entries (a sparse checkout): one absent from
    /// the disk is recorded as absent, so the point's worktree lacks it as the disk does
    /// and a restore neither writes it nor counts it as there; one present (left behind,
    /// or marked with `update-index --skip-worktree` while being edited) is stored like a
    /// changed file, so its bytes come back. A sparse index's directory entry present on
    /// disk is left as the index has it. Files whose line endings git converts
    /// ([`converted`]) are stored as they are on disk.
    pub async fn unlisted(
        &mut self,
        git: &Git<'_>,
        top: &Path,
        caps: &Caps,
        entries: Vec<Skipped>,
    ) -> Result<(), OpError> {
        if entries.is_empty() {
            return Ok(());
        }
        let mut seen: HashSet<Vec<u8>> = self
            .removed
            .iter()
            .chain(self.found.iter().map(|f| &f.candidate.path))
            .cloned()
            .collect();
        let (top, caps) = (top.to_owned(), caps.clone());
        let disk = crate::safe_file::off_thread(git.cancel(), move || {
            entries
                .into_iter()
                .filter_map(|mut e| {
                    if let Some(dir) = e.path.strip_suffix(b"/") {
                        e.path = dir.to_vec();
                    }
                    if !seen.insert(e.path.clone()) {
                        return None;
                    }
                    let d = on_disk(&top, &e.path, &caps);
                    Some((e, d))
                })
                .collect::<Vec<_>>()
        })
        .await
        .map_err(|e| OpError::Internal(e.to_string()))?;
        for (e, d) in disk {
            let (mode, bytes, len) = match d {
                OnDisk::Missing => {
                    self.removed.push(e.path);
                    continue;
                }
                OnDisk::Dir => continue,
                OnDisk::Skipped(reason) => {
                    self.skip(e.path, reason);
                    continue;
                }
                OnDisk::Link(target) => (MODE_LINK, Some(target), 0),
                OnDisk::File { exec, len } => (if exec { MODE_EXEC } else { MODE_FILE }, None, len),
            };
            let entry = e.oid.map(|oid| (e.mode, oid));
            self.found.push(Found {
                candidate: Candidate {
                    path: e.path,
                    untracked: false,
                    named: false,
                    entry,
                },
                mode,
                bytes,
                len,
            });
        }
        Ok(())
    }
}

/// The tracked files git counts unchanged whose bytes on disk differ from their index
/// blob by line-ending conversion, as entries for [`Listed::unlisted`].
pub async fn converted(git: &Git<'_>) -> Result<Vec<Skipped>, OpError> {
    let paths = crate::git::ls_files::converted(git).await?.ok_or_else(|| {
        OpError::Unsupported(
            "too many files with converted line endings for a restore point".into(),
        )
    })?;
    Ok(paths
        .into_iter()
        .map(|path| Skipped {
            path,
            mode: MODE_FILE,
            oid: None,
        })
        .collect())
}
