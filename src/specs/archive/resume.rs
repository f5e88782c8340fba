//! Resuming an archive OpenSpec already made: the change is gone from
//! `openspec/changes/` but its finalization is unfinished, so the metadata is repaired and
//! the git steps continue without running OpenSpec again.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::finalize::{Archived, finalize};
use super::{
    ArchiveFacts, Report, Request, changed_paths, delta_specs, err, errors, metadata_error,
    metadata_recovery, no_finalization, rel, valid_commit_message,
};
use crate::config::Config;
use crate::process::CancellationToken;
use crate::specs::target::{self, Mode, Owner};
use crate::specs::{metadata, tasks};

/// A change already moved by OpenSpec whose finalization is not finished: repair the
/// metadata and continue; OpenSpec is not run again.
pub(super) async fn resume(
    config: &Config,
    owner: &Owner,
    req: &Request,
    cancel: &CancellationToken,
) -> Value {
    let name = req.change.as_str();
    let Some((mode, dir, archived)) = pending_archive(config, owner, name, cancel).await else {
        return errors(target::not_found(&owner.folder.folder_id, name));
    };
    let target = owner.target(name, mode, &dir);
    let deltas = delta_specs(&archived);
    let incomplete = tasks::read(&archived.join("tasks.md"))
        .map(|t| tasks::parse(&t).iter().filter(|t| !t.done).count())
        .unwrap_or(0);
    let report = Report {
        target: &target,
        name,
        mode: "resume",
        deltas: &deltas,
    };
    let facts = ArchiveFacts {
        conflicts: &[],
        incomplete,
    };
    let archive = |error: Option<Value>| {
        let at = Value::String(archived.display().to_string());
        facts.state(true, at, Value::Null, error)
    };
    if !req.confirm {
        return report.state(
            "done",
            archive(None),
            no_finalization(&target, owner, false),
        );
    }
    let msg = req.commit_message.as_deref().unwrap_or_default();
    if !valid_commit_message(msg) {
        let error = err(
            "invalid-commit-message",
            "confirm needs a commitMessage whose first line is `type(scope): summary`",
            "Call again with a valid commitMessage.",
        );
        return report.state(
            "failed",
            archive(Some(error)),
            no_finalization(&target, owner, false),
        );
    }
    if let Err(e) =
        metadata::set_status(&archived.join(".openspec.yaml"), metadata::Status::Archived)
    {
        let e = metadata_error(&e);
        return report.state(
            "failed",
            archive(Some(e.clone())),
            metadata_recovery(&target, owner, &archived, e),
        );
    }
    let work = Archived {
        owner,
        target: &target,
        folder: &archived,
        deltas: &deltas,
        message: msg,
        progress: &req.progress,
    };
    let fin = finalize(config, &work, cancel).await;
    report.finished(archive(None), fin)
}

/// Finds `openspec/changes/archive/<date>-<name>` whose finalization is unfinished: in a
/// linked worktree that still exists, or in main while its archive is uncommitted or not
/// yet marked archived.
async fn pending_archive(
    config: &Config,
    owner: &Owner,
    name: &str,
    cancel: &CancellationToken,
) -> Option<(Mode, PathBuf, PathBuf)> {
    for (mode, dir) in owner.candidates() {
        let Some(archived) = newest_archive(&dir, name) else {
            continue;
        };
        if owner.confine(&archived).is_err() {
            continue;
        }
        let status = metadata::read_status(&archived.join(".openspec.yaml"))
            .ok()
            .flatten();
        let pending = match (mode, owner.is_git()) {
            (Mode::Linked, _) => true,
            (Mode::Main, false) => status.as_deref() != Some("archived"),
            (Mode::Main, true) => {
                status.as_deref() != Some("archived")
                    || !changed_paths(config, &dir, Some(&[rel(&dir, &archived)]), cancel)
                        .await
                        .unwrap_or_default()
                        .is_empty()
            }
        };
        if pending {
            return Some((mode, dir, archived));
        }
    }
    None
}

fn newest_archive(dir: &Path, name: &str) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir.join("openspec/changes/archive"))
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            crate::specs::has_date_prefix(&n) && n[11..] == *name && e.path().is_dir()
        })
        .map(|e| e.path())
        .collect();
    found.sort();
    found.pop().and_then(|p| std::fs::canonicalize(p).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_dated_archive_of_the_change_wins() {
        let dir = tempfile::tempdir().expect("temp dir");
        let archive = dir.path().join("openspec/changes/archive");
        for d in [
            "2024-01-02-add-auth",
            "2024-03-04-add-auth",
            "2024-05-06-add-auth-v2",
            "add-auth",
        ] {
            std::fs::create_dir_all(archive.join(d)).expect("dir");
        }
        let found = newest_archive(dir.path(), "add-auth").expect("found");
        assert!(
            found.ends_with("2024-03-04-add-auth"),
            "{}",
            found.display()
        );
        assert_eq!(newest_archive(dir.path(), "other"), None);
    }
}
