//! `archive-change`: preview, the OpenSpec archive, the metadata write and git finalization.
//!
//! Order of effects, each only after the previous one succeeded:
//!
//! 1. `openspec archive <name> --yes --json` (null stdin, deadline). Success is the JSON's
//!    own confirmation for this change and an archive path inside
//!    `openspec/changes/archive/`; the path is taken from the reply, never predicted.
//! 2. `status: archived` in the archived `.openspec.yaml`. If that fails, the archive's
//!    partial success is reported (`archive.ok: true`) with `archive-metadata-update`
//!    recovery, and no git step runs. Calling again resumes from here without running
//!    OpenSpec a second time.
//! 3. Commit only the paths the archive touched (the old and new change folders, the
//!    synced specs, and OpenSpec's own config when the proposal bootstrapped it), refusing
//!    to sweep in anything else that is staged.
//! 4. Linked mode: fast-forward `proposal/<name>` into the main branch, rebasing the
//!    proposal first when main moved on with clean trees; remove the worktree; delete the
//!    branch with `-d`. Every git command is recorded, and a failed step returns a named
//!    recovery with what is done and what remains.
//!
//! [`steps`] names every step and the plan each stopping point leaves; `finalize` runs
//! steps 3 and 4, one function per step.

mod finalize;
mod resume;
pub mod steps;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use self::finalize::{Archived, finalize, place};
use self::steps::{ARCHIVED, Recovery, Stop, recovery};
use super::target::{self, Mode, Owner, Target};
use super::{SpecError, metadata, openspec, tasks};
use crate::config::Config;
use crate::git::{Git, GitError, RepoRelPath, repo, worktree_state};
use crate::process::CancellationToken;
use crate::progress::Progress;

pub struct Request {
    pub change: String,
    pub confirm: bool,
    pub commit_message: Option<String>,
    /// Told each step of a confirmed archive as it is done.
    pub progress: Progress,
}

/// A commit subject `type(scope): summary`, scope required.
pub fn valid_commit_message(message: &str) -> bool {
    let first = message.lines().next().unwrap_or_default();
    let Some((kind, rest)) = first.split_once('(') else {
        return false;
    };
    let kind_ok = !kind.is_empty()
        && kind
            .split('-')
            .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase()));
    let Some((scope, summary)) = rest.split_once("): ") else {
        return false;
    };
    let scope_ok = !scope.is_empty()
        && scope
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    kind_ok && scope_ok && !summary.trim().is_empty()
}

fn err(code: &str, message: impl Into<String>, retry: &str) -> Value {
    json!({ "code": code, "message": message.into(), "retryHint": retry })
}

fn errors(e: SpecError) -> Value {
    json!({ "errors": [e] })
}

/// The fields every archive state carries around its `archive` and `finalization`.
struct Report<'a> {
    target: &'a Target,
    name: &'a str,
    mode: &'static str,
    deltas: &'a [String],
}

impl Report<'_> {
    fn state(&self, status: &str, archive: Value, finalization: Value) -> Value {
        json!({
            "target": self.target,
            "changeName": self.name,
            "status": status,
            "mode": self.mode,
            "deltaSpecs": self.deltas,
            "archive": archive,
            "finalization": finalization,
        })
    }

    /// `done` or `failed` after the finalization ran.
    fn finished(&self, archive: Value, fin: Value) -> Value {
        let ok = fin["ok"] == true;
        self.state(if ok { "done" } else { "failed" }, archive, fin)
    }
}

/// The `archive` part of a state: OpenSpec's side of the work.
struct ArchiveFacts<'a> {
    conflicts: &'a [String],
    incomplete: usize,
}

impl ArchiveFacts<'_> {
    fn state(&self, ok: bool, at: Value, raw: Value, error: Option<Value>) -> Value {
        let mut a = json!({
            "ok": ok, "archiveTarget": at, "archiveRawOutput": raw,
            "conflicts": self.conflicts, "incompleteTasks": self.incomplete,
        });
        if let Some(e) = error {
            a["error"] = e;
        }
        a
    }
}

const CONFLICT_HINT: &str = "Rename or remove the existing archived change (with the user's agreement), then preview again.";

/// Runs the tool and returns its state.
pub async fn run(
    config: &Config,
    owner: &Owner,
    req: &Request,
    cancel: &CancellationToken,
) -> Value {
    let name = req.change.as_str();
    let target = match target::find(owner, name) {
        Ok(Some(t)) => t,
        Ok(None) => return resume::resume(config, owner, req, cancel).await,
        Err(e) => return errors(e),
    };
    let change_dir = target.change_dir();
    let mode = if req.confirm { "confirm" } else { "preview" };
    if req.confirm && !valid_commit_message(req.commit_message.as_deref().unwrap_or_default()) {
        let report = Report {
            target: &target,
            name,
            mode,
            deltas: &[],
        };
        let facts = ArchiveFacts {
            conflicts: &[],
            incomplete: 0,
        };
        let error = err(
            "invalid-commit-message",
            "confirm needs a commitMessage whose first line is `type(scope): summary`, for example `feat(auth): add token refresh`",
            "Call again with a commitMessage that describes the delivered work.",
        );
        return report.state(
            "failed",
            facts.state(false, Value::Null, Value::Null, Some(error)),
            no_finalization(&target, owner, true),
        );
    }
    let deltas = delta_specs(&change_dir);
    if let Err(e) = confine_touched(owner, &target, &deltas) {
        return json!({ "target": target, "errors": [e] });
    }
    let incomplete = match incomplete_tasks(&change_dir) {
        Ok(n) => n,
        Err(e) => return json!({ "target": target, "errors": [e] }),
    };
    let predicted = target
        .path()
        .join("openspec/changes/archive")
        .join(format!("{}-{name}", super::local_date()));
    let conflicts: Vec<String> = if predicted.exists() {
        vec![predicted.display().to_string()]
    } else {
        Vec::new()
    };
    let report = Report {
        target: &target,
        name,
        mode,
        deltas: &deltas,
    };
    let facts = ArchiveFacts {
        conflicts: &conflicts,
        incomplete,
    };
    let conflict_error = || {
        err(
            "archive-target-conflict",
            format!("the archive target {} already exists", predicted.display()),
            CONFLICT_HINT,
        )
    };
    if !req.confirm {
        let (status, error) = if conflicts.is_empty() {
            ("done", None)
        } else {
            ("failed", Some(conflict_error()))
        };
        return report.state(
            status,
            facts.state(conflicts.is_empty(), Value::Null, Value::Null, error),
            no_finalization(&target, owner, true),
        );
    }
    if !conflicts.is_empty() {
        return report.state(
            "failed",
            facts.state(false, Value::Null, Value::Null, Some(conflict_error())),
            no_finalization(&target, owner, false),
        );
    }
    let message = req.commit_message.as_deref().unwrap_or_default();
    archive_and_finish(
        config,
        owner,
        &report,
        &facts,
        message,
        &req.progress,
        cancel,
    )
    .await
}

/// OpenSpec reads the change and writes the archive and the synced specs: each place must
/// lead inside the folder before it runs.
fn confine_touched(owner: &Owner, target: &Target, deltas: &[String]) -> Result<(), SpecError> {
    let change_dir = target.change_dir();
    let specs = target.path().join("openspec/specs");
    let touched = [
        change_dir.join("tasks.md"),
        change_dir.join("specs"),
        target.path().join("openspec/changes/archive"),
        specs.clone(),
    ]
    .into_iter()
    .chain(deltas.iter().flat_map(|cap| {
        [
            change_dir.join("specs").join(cap).join("spec.md"),
            specs.join(cap).join("spec.md"),
        ]
    }));
    match touched.filter_map(|p| owner.confine(&p).err()).next() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn incomplete_tasks(change_dir: &Path) -> Result<usize, SpecError> {
    let path = change_dir.join("tasks.md");
    match tasks::read(&path) {
        Ok(text) => Ok(tasks::parse(&text).iter().filter(|t| !t.done).count()),
        Err(e) => Err(SpecError::new(
            "Error",
            if e.kind() == std::io::ErrorKind::NotFound {
                "ENOENT"
            } else {
                "EIO"
            },
            format!("cannot read {}: {e}", path.display()),
        )),
    }
}

/// Steps 1 and 2 (OpenSpec archive, then the metadata), then the git steps.
async fn archive_and_finish(
    config: &Config,
    owner: &Owner,
    report: &Report<'_>,
    facts: &ArchiveFacts<'_>,
    message: &str,
    progress: &Progress,
    cancel: &CancellationToken,
) -> Value {
    let (target, name) = (report.target, report.name);
    let dir = target.path();
    finalize::started(progress, target);
    let out = match openspec::archive(dir, name, cancel).await {
        Ok(out) => out,
        Err(e) => {
            let error = err(
                "openspec-archive-failed",
                e.message,
                "Fix the cause, then confirm again.",
            );
            return report.state(
                "failed",
                facts.state(false, Value::Null, Value::Null, Some(error)),
                no_finalization(target, owner, false),
            );
        }
    };
    let raw = Value::String(openspec::clip(&out.stdout, 64 * 1024));
    let archived = match confirmed(dir, name, out) {
        Ok(path) => path,
        Err(e) => {
            return report.state(
                "failed",
                facts.state(false, Value::Null, raw, Some(e)),
                no_finalization(target, owner, false),
            );
        }
    };
    let at = Value::String(archived.display().to_string());
    if let Err(e) =
        metadata::set_status(&archived.join(".openspec.yaml"), metadata::Status::Archived)
    {
        let e = metadata_error(&e);
        return report.state(
            "failed",
            facts.state(true, at, raw, Some(e.clone())),
            metadata_recovery(target, owner, &archived, e),
        );
    }
    let work = Archived {
        owner,
        target,
        folder: &archived,
        deltas: report.deltas,
        message,
        progress,
    };
    let fin = finalize(config, &work, cancel).await;
    report.finished(facts.state(true, at, raw, None), fin)
}

/// Checks OpenSpec's reply; the archive path on success, the state's error otherwise.
fn confirmed(dir: &Path, name: &str, out: openspec::Output) -> Result<PathBuf, Value> {
    let rc = out.code;
    match openspec::payload(dir, out) {
        Err(e) if e.code == "archive_target_exists" => {
            Err(err("archive-target-conflict", e.message, CONFLICT_HINT))
        }
        Err(e) if rc == Some(0) => Err(err(
            "openspec-archive-not-confirmed",
            format!(
                "OpenSpec exited 0 without confirming the archive ({}: {})",
                e.code, e.message
            ),
            "Nothing was written. Inspect the change with explore, then preview again.",
        )),
        Err(e) => Err(json!({
            "code": "openspec-archive-failed",
            "message": format!("openspec archive failed ({}): {}", e.code, e.message),
            "retryHint": "Nothing was archived. Fix what OpenSpec reported, then confirm again.",
            "details": e.details(),
        })),
        Ok(v) => {
            let a = &v["archive"];
            let path = a["path"].as_str().map(PathBuf::from);
            let inside = path
                .as_ref()
                .and_then(|p| std::fs::canonicalize(p).ok())
                .filter(|p| {
                    std::fs::canonicalize(dir.join("openspec/changes/archive"))
                        .is_ok_and(|root| p.parent() == Some(root.as_path()))
                        && p.is_dir()
                });
            match (a["change"].as_str() == Some(name), inside) {
                (true, Some(p)) => Ok(p),
                _ => Err(err(
                    "openspec-archive-not-confirmed",
                    format!(
                        "OpenSpec's reply does not confirm archiving {name:?} into openspec/changes/archive (signal: success-marker-missing)"
                    ),
                    "Nothing was written. Inspect the change with explore, then preview again.",
                )),
            }
        }
    }
}

fn metadata_error(e: &metadata::MetaError) -> Value {
    err(
        "archive-metadata-update-failed",
        format!("OpenSpec archive metadata update failed: {e}"),
        "Repair the archived .openspec.yaml, then call archive-change again with confirm: true; it continues commit and workspace finalization without rerunning OpenSpec archive.",
    )
}

/// Capabilities with a delta spec in the change (`specs/<cap>/…`).
fn delta_specs(change_dir: &Path) -> Vec<String> {
    let mut caps: Vec<String> = std::fs::read_dir(change_dir.join("specs"))
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    caps.sort();
    caps
}

fn proposal_branch(name: &str) -> String {
    format!("proposal/{name}")
}

fn no_finalization(target: &Target, owner: &Owner, ok: bool) -> Value {
    let place = place(owner, target);
    json!({
        "ok": ok,
        "gitOps": [],
        "failedStep": null,
        "mainPath": place.main_path,
        "workspacePath": target.worktree_path,
        "recovery": recovery(Recovery::None, &place, None, &[], &[], Vec::new()),
    })
}

fn metadata_recovery(target: &Target, owner: &Owner, archived: &Path, error: Value) -> Value {
    let place = place(owner, target);
    let stop = Stop::Metadata {
        linked: target.worktree_mode == Mode::Linked,
    };
    json!({
        "ok": false,
        "gitOps": [],
        "failedStep": null,
        "mainPath": place.main_path,
        "workspacePath": target.worktree_path,
        "error": error,
        "recovery": recovery(Recovery::ArchiveMetadataUpdate, &place, None,
            &ARCHIVED, &stop.remaining(), vec![
                "The OpenSpec archive already succeeded and the specs are synced: do not run the archive again and do not move any files back.".into(),
                format!("Repair {} so that its single top-level `status` is `archived`, keeping every other field and value.", archived.join(".openspec.yaml").display()),
                "Then call archive-change again with the same folderId, changeName, confirm: true and commitMessage; it resumes with the commit and the remaining steps.".into(),
            ]),
    })
}

fn rel(base: &Path, path: &Path) -> String {
    path.strip_prefix(base)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.display().to_string())
}

/// Changed paths (untracked included) in the worktree at `dir`, limited to `paths`
/// (relative to it) when given.
async fn changed_paths(
    config: &Config,
    dir: &Path,
    paths: Option<&[String]>,
    cancel: &CancellationToken,
) -> Result<Vec<String>, GitError> {
    let repo = repo::open(config, "worktree", &dir.to_string_lossy(), cancel).await?;
    let paths = paths
        .map(|list| {
            list.iter()
                .map(|p| RepoRelPath::parse("path", p))
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    worktree_state::changed_paths(&Git::new(&repo, cancel), paths.as_deref()).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_subjects_need_type_and_scope() {
        for ok in [
            "feat(auth): add token refresh",
            "fix-up(api-v2): x\n\nbody",
            "docs(readme): explain setup",
        ] {
            assert!(valid_commit_message(ok), "{ok}");
        }
        for bad in [
            "",
            "archive change",
            "feat: no scope",
            "Feat(auth): capital",
            "feat(): empty scope",
            "feat(Auth): capital scope",
            "feat(auth):missing space",
            "feat(auth): ",
            "-feat(a): x",
        ] {
            assert!(!valid_commit_message(bad), "{bad:?}");
        }
    }

    #[test]
    fn delta_specs_are_the_sorted_capability_folders() {
        let dir = tempfile::tempdir().expect("temp dir");
        for cap in ["zeta", "alpha"] {
            std::fs::create_dir_all(dir.path().join("specs").join(cap)).expect("dir");
        }
        std::fs::write(dir.path().join("specs/README.md"), "x").expect("file");
        assert_eq!(delta_specs(dir.path()), ["alpha", "zeta"]);
        assert!(delta_specs(&dir.path().join("none")).is_empty());
    }
}
