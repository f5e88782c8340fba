//! Resuming an archive OpenSpec already made: the change is gone from
//! `openspec/changes/` but its finalization is unfinished, so the metadata is repaired and
//! the git steps continue without running OpenSpec again.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::finalize::{Archived, finalize};
use super::{
    ArchiveFacts, Report, Request, changed_paths, delta_specs, err, errors, metadata_error,
    metadata_recovery, no_finalization, rel, valid_commit_message,
};
use crate::config::Config;
use crate::process::CancellationToken;
use crate::specs::target::{self, Mode, Owner};
use crate::specs::{SpecError, metadata, tasks};

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
        return errors(match finished_archive(owner, name) {
            Some(at) => already_archived(&owner.folder.folder_id, name, &at),
            None => target::not_found(&owner.folder.folder_id, name),
        });
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
        check: Value::Null,
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

/// The newest finished archive of `name` in main, for the answer to a repeated call.
fn finished_archive(owner: &Owner, name: &str) -> Option<PathBuf> {
    (!owner.main_refused)
        .then(|| newest_archive(&owner.path, name))
        .flatten()
        .filter(|a| owner.confine(a).is_ok())
}

fn already_archived(folder_id: &str, name: &str, at: &Path) -> SpecError {
    SpecError::new(
        "ProposalError",
        "PROPOSAL_ALREADY_ARCHIVED",
        format!(
            "change {name:?} was already archived at {}; its finalization is complete and there is nothing left to do",
            at.display()
        ),
    )
    .with(json!({ "folderId": folder_id, "changeId": name, "archivePath": at.display().to_string() }))
}

/// Finds `openspec/changes/archive/<date>-<name>` whose finalization is unfinished: in the
/// change's own linked worktree `.worktrees/<name>`, which finalization removes last, or in
/// main while the archive folder is uncommitted. A committed archive is history, whatever
/// its metadata says, and is never rewritten. Without git, where nothing is committed, an
/// archive made today that is not yet marked archived counts.
async fn pending_archive(
    config: &Config,
    owner: &Owner,
    name: &str,
    cancel: &CancellationToken,
) -> Option<(Mode, PathBuf, PathBuf)> {
    let own = std::fs::canonicalize(owner.path.join(".worktrees").join(name)).ok();
    for (mode, dir) in owner.candidates() {
        if mode == Mode::Linked && own.as_deref() != Some(dir.as_path()) {
            continue;
        }
        let Some(archived) = newest_archive(&dir, name) else {
            continue;
        };
        if owner.confine(&archived).is_err() {
            continue;
        }
        let pending = match (mode, owner.is_git()) {
            (Mode::Linked, _) => true,
            (Mode::Main, false) => {
                let status = metadata::read_status(&archived.join(".openspec.yaml"))
                    .ok()
                    .flatten();
                let today = format!("{}-{name}", crate::specs::local_date());
                status.as_deref() != Some("archived")
                    && archived.file_name().is_some_and(|n| *n == *today)
            }
            (Mode::Main, true) => {
                !changed_paths(config, &dir, Some(&[rel(&dir, &archived)]), cancel)
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
