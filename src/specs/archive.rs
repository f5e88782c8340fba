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

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::target::{self, Mode, Owner, Target};
use super::{SpecError, metadata, openspec, tasks};
use crate::config::Config;
use crate::error::ToolError;
use crate::git::write::{GitWrite, Ran};
use crate::git::{Git, repo};
use crate::process::CancellationToken;

pub struct Request {
    pub change: String,
    pub confirm: bool,
    pub commit_message: Option<String>,
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

/// Runs the tool and returns its state.
pub async fn run(owner: &Owner, req: &Request, cancel: &CancellationToken) -> Value {
    let name = req.change.as_str();
    let target = match target::find(owner, name) {
        Ok(Some(t)) => t,
        Ok(None) => return resume(owner, req, cancel).await,
        Err(e) => return errors(e),
    };
    let change_dir = target.change_dir();
    let base = |status: &str, archive: Value, finalization: Value, deltas: &[String]| {
        json!({
            "target": target,
            "changeName": name,
            "status": status,
            "mode": if req.confirm { "confirm" } else { "preview" },
            "deltaSpecs": deltas,
            "archive": archive,
            "finalization": finalization,
        })
    };
    if req.confirm {
        let msg = req.commit_message.as_deref().unwrap_or_default();
        if !valid_commit_message(msg) {
            return base(
                "failed",
                json!({
                    "ok": false, "archiveTarget": null, "archiveRawOutput": null, "conflicts": [], "incompleteTasks": 0,
                    "error": err("invalid-commit-message",
                        "confirm needs a commitMessage whose first line is `type(scope): summary`, for example `feat(auth): add token refresh`",
                        "Call again with a commitMessage that describes the delivered work."),
                }),
                no_finalization(&target, owner, true),
                &[],
            );
        }
    }
    let deltas = delta_specs(&change_dir);
    // OpenSpec reads the change and writes the archive and the synced specs: each place
    // must lead inside the folder before it runs.
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
    if let Some(e) = touched.filter_map(|p| owner.confine(&p).err()).next() {
        return json!({ "target": target, "errors": [e] });
    }
    let incomplete = match tasks::read(&change_dir.join("tasks.md")) {
        Ok(text) => tasks::parse(&text).iter().filter(|t| !t.done).count(),
        Err(e) => {
            return json!({
                "target": target,
                "errors": [SpecError::new("Error", if e.kind() == std::io::ErrorKind::NotFound { "ENOENT" } else { "EIO" },
                    format!("cannot read {}: {e}", change_dir.join("tasks.md").display()))],
            });
        }
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
    let archive_state = |ok: bool, at: Value, raw: Value, error: Option<Value>| {
        let mut a = json!({
            "ok": ok, "archiveTarget": at, "archiveRawOutput": raw,
            "conflicts": conflicts, "incompleteTasks": incomplete,
        });
        if let Some(e) = error {
            a["error"] = e;
        }
        a
    };
    let conflict_error = || {
        err(
            "archive-target-conflict",
            format!("the archive target {} already exists", predicted.display()),
            "Rename or remove the existing archived change (with the user's agreement), then preview again.",
        )
    };
    if !req.confirm {
        let (status, error) = if conflicts.is_empty() {
            ("done", None)
        } else {
            ("failed", Some(conflict_error()))
        };
        return base(
            status,
            archive_state(conflicts.is_empty(), Value::Null, Value::Null, error),
            no_finalization(&target, owner, true),
            &deltas,
        );
    }
    if !conflicts.is_empty() {
        return base(
            "failed",
            archive_state(false, Value::Null, Value::Null, Some(conflict_error())),
            no_finalization(&target, owner, false),
            &deltas,
        );
    }

    // 1. OpenSpec archive.
    let dir = target.path();
    let out = match openspec::run(dir, &["archive", name, "--yes", "--json"], cancel).await {
        Ok(out) => out,
        Err(e) => {
            return base(
                "failed",
                archive_state(
                    false,
                    Value::Null,
                    Value::Null,
                    Some(err(
                        "openspec-archive-failed",
                        e.message,
                        "Fix the cause, then confirm again.",
                    )),
                ),
                no_finalization(&target, owner, false),
                &deltas,
            );
        }
    };
    let raw = Value::String(openspec::clip(&out.stdout, 64 * 1024));
    let archived = match confirmed(dir, name, out) {
        Ok(path) => path,
        Err(e) => {
            return base(
                "failed",
                archive_state(false, Value::Null, raw, Some(e)),
                no_finalization(&target, owner, false),
                &deltas,
            );
        }
    };
    let at = Value::String(archived.display().to_string());

    // 2. Metadata, then 3–4. git.
    if let Err(e) =
        metadata::set_status(&archived.join(".openspec.yaml"), metadata::Status::Archived)
    {
        let e = metadata_error(&e);
        return base(
            "failed",
            archive_state(true, at, raw, Some(e.clone())),
            metadata_recovery(&target, owner, &archived, e),
            &deltas,
        );
    }
    let fin = finalize(
        owner,
        &target,
        &archived,
        &deltas,
        req.commit_message.as_deref().unwrap_or_default(),
        cancel,
    )
    .await;
    let ok = fin["ok"] == true;
    base(
        if ok { "done" } else { "failed" },
        archive_state(true, at, raw, None),
        fin,
        &deltas,
    )
}

/// Checks OpenSpec's reply; the archive path on success, the state's error otherwise.
fn confirmed(dir: &Path, name: &str, out: openspec::Output) -> Result<PathBuf, Value> {
    let rc = out.code;
    match openspec::payload(dir, out) {
        Err(e) if e.code == "archive_target_exists" => Err(err(
            "archive-target-conflict",
            e.message,
            "Rename or remove the existing archived change (with the user's agreement), then preview again.",
        )),
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

fn main_path(owner: &Owner) -> String {
    owner.path.display().to_string()
}

fn proposal_branch(name: &str) -> String {
    format!("proposal/{name}")
}

fn recovery(
    kind: &str,
    target: &Target,
    owner: &Owner,
    main_branch: Option<&str>,
    completed: &[&str],
    remaining: &[&str],
    instructions: Vec<String>,
) -> Value {
    json!({
        "required": if kind == "none" { "none" } else { "agent" },
        "kind": kind,
        "mainPath": main_path(owner),
        "workspacePath": target.worktree_path,
        "mainBranch": main_branch,
        "proposalBranch": proposal_branch(&target.proposal_ref.change_id),
        "completedSteps": completed,
        "remainingSteps": remaining,
        "instructions": instructions,
    })
}

fn no_finalization(target: &Target, owner: &Owner, ok: bool) -> Value {
    json!({
        "ok": ok,
        "gitOps": [],
        "failedStep": null,
        "mainPath": main_path(owner),
        "workspacePath": target.worktree_path,
        "recovery": recovery("none", target, owner, None, &[], &[], Vec::new()),
    })
}

fn metadata_recovery(target: &Target, owner: &Owner, archived: &Path, error: Value) -> Value {
    let mut remaining = vec!["repair-archive-metadata", "commit"];
    if target.worktree_mode == Mode::Linked {
        remaining.extend(["merge-to-main", "worktree-remove", "branch-delete"]);
    }
    json!({
        "ok": false,
        "gitOps": [],
        "failedStep": null,
        "mainPath": main_path(owner),
        "workspacePath": target.worktree_path,
        "error": error,
        "recovery": recovery("archive-metadata-update", target, owner, None,
            &["openspec-archive", "spec-sync"], &remaining, vec![
                "The OpenSpec archive already succeeded and the specs are synced: do not run the archive again and do not move any files back.".into(),
                format!("Repair {} so that its single top-level `status` is `archived`, keeping every other field and value.", archived.join(".openspec.yaml").display()),
                "Then call archive-change again with the same folderId, changeName, confirm: true and commitMessage; it resumes with the commit and the remaining steps.".into(),
            ]),
    })
}

/// A change already moved by OpenSpec whose finalization is not finished: repair the
/// metadata and continue; OpenSpec is not run again.
async fn resume(owner: &Owner, req: &Request, cancel: &CancellationToken) -> Value {
    let name = req.change.as_str();
    let Some((mode, dir, archived)) = pending_archive(owner, name, cancel).await else {
        return errors(target::not_found(&owner.folder.folder_id, name));
    };
    let target = owner.target(name, mode, &dir);
    let deltas = delta_specs(&archived);
    let incomplete = tasks::read(&archived.join("tasks.md"))
        .map(|t| tasks::parse(&t).iter().filter(|t| !t.done).count())
        .unwrap_or(0);
    let archive = |error: Option<Value>| {
        let mut a = json!({
            "ok": true, "archiveTarget": archived.display().to_string(), "archiveRawOutput": null,
            "conflicts": [], "incompleteTasks": incomplete,
        });
        if let Some(e) = error {
            a["error"] = e;
        }
        a
    };
    let base = |status: &str, archive: Value, fin: Value| {
        json!({
            "target": target, "changeName": name, "status": status, "mode": "resume",
            "deltaSpecs": deltas, "archive": archive, "finalization": fin,
        })
    };
    if !req.confirm {
        return base(
            "done",
            archive(None),
            no_finalization(&target, owner, false),
        );
    }
    let msg = req.commit_message.as_deref().unwrap_or_default();
    if !valid_commit_message(msg) {
        return base(
            "failed",
            archive(Some(err(
                "invalid-commit-message",
                "confirm needs a commitMessage whose first line is `type(scope): summary`",
                "Call again with a valid commitMessage.",
            ))),
            no_finalization(&target, owner, false),
        );
    }
    if let Err(e) =
        metadata::set_status(&archived.join(".openspec.yaml"), metadata::Status::Archived)
    {
        let e = metadata_error(&e);
        return base(
            "failed",
            archive(Some(e.clone())),
            metadata_recovery(&target, owner, &archived, e),
        );
    }
    let fin = finalize(owner, &target, &archived, &deltas, msg, cancel).await;
    let ok = fin["ok"] == true;
    base(if ok { "done" } else { "failed" }, archive(None), fin)
}

/// Finds `openspec/changes/archive/<date>-<name>` whose finalization is unfinished: in a
/// linked worktree that still exists, or in main while its archive is uncommitted or not
/// yet marked archived.
async fn pending_archive(
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
                    || !porcelain(&dir, &[&rel(&dir, &archived)], cancel)
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
            super::has_date_prefix(&n) && n[11..] == *name && e.path().is_dir()
        })
        .map(|e| e.path())
        .collect();
    found.sort();
    found.pop().and_then(|p| std::fs::canonicalize(p).ok())
}

fn rel(base: &Path, path: &Path) -> String {
    path.strip_prefix(base)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.display().to_string())
}

/// Changed paths (untracked included) in `dir`, limited to `paths` when given.
async fn porcelain(
    dir: &Path,
    paths: &[&str],
    cancel: &CancellationToken,
) -> Result<Vec<String>, String> {
    let repo = repo::open(
        &Config::default(),
        "worktree",
        &dir.to_string_lossy(),
        cancel,
    )
    .await
    .map_err(|e| ToolError::from(e).message)?;
    let mut args = vec!["status", "--porcelain", "-z", "--untracked-files=all", "--"];
    args.extend_from_slice(paths);
    let out = Git::new(&repo, cancel)
        .cmd(args)
        .capture(4 * 1024 * 1024)
        .await
        .map_err(|e| ToolError::from(e).message)?;
    Ok(porcelain_paths(&out.sink.bytes))
}

/// The paths of `git status --porcelain -z` output. Each record is `XY path`; a rename or
/// copy (`R`/`C` in either column) is followed by one more record holding its source path
/// with no status in front, which is a changed path too.
fn porcelain_paths(bytes: &[u8]) -> Vec<String> {
    let mut paths = Vec::new();
    let mut records = bytes.split(|b| *b == 0).filter(|r| !r.is_empty());
    while let Some(record) = records.next() {
        let (Some(status), Some(path)) = (record.get(..2), record.get(3..)) else {
            continue;
        };
        paths.push(String::from_utf8_lossy(path).into_owned());
        if status.iter().any(|c| matches!(c, b'R' | b'C')) {
            if let Some(source) = records.next() {
                paths.push(String::from_utf8_lossy(source).into_owned());
            }
        }
    }
    paths
}

/// Records git steps and builds the finalization state.
struct Finalizer<'a> {
    owner: &'a Owner,
    target: &'a Target,
    cancel: &'a CancellationToken,
    ops: Vec<Value>,
    completed: Vec<&'static str>,
    main_branch: Option<String>,
}

impl<'a> Finalizer<'a> {
    async fn git(&mut self, step: &str, dir: &Path, args: Vec<String>) -> Result<Ran, String> {
        let ran = GitWrite::new(dir, self.cancel).run(args.clone()).await;
        match ran {
            Ok(ran) => {
                self.ops.push(json!({
                    "step": step,
                    "cwd": ran.cwd.display().to_string(),
                    "command": ran.command,
                    "exitCode": ran.code,
                    "stdout": openspec::clip(&ran.stdout, 4000),
                    "stderr": openspec::clip(&ran.stderr, 4000),
                    "ok": ran.ok(),
                }));
                Ok(ran)
            }
            Err(e) => {
                self.ops.push(json!({
                    "step": step, "cwd": dir.display().to_string(),
                    "command": std::iter::once("git".to_owned()).chain(args).collect::<Vec<_>>(),
                    "exitCode": null, "stdout": "", "stderr": e.to_string(), "ok": false,
                }));
                Err(e.to_string())
            }
        }
    }

    fn outcome(&mut self, outcome: &str) {
        if let Some(last) = self.ops.last_mut() {
            last["outcome"] = outcome.into();
        }
    }

    fn done(self) -> Value {
        let rec = recovery(
            "none",
            self.target,
            self.owner,
            self.main_branch.as_deref(),
            &self.completed,
            &[],
            Vec::new(),
        );
        json!({
            "ok": true, "gitOps": self.ops, "failedStep": null,
            "mainPath": main_path(self.owner), "workspacePath": self.target.worktree_path,
            "recovery": rec,
        })
    }

    fn failed(
        self,
        step: &str,
        kind: &str,
        message: String,
        remaining: &[&str],
        mut instructions: Vec<String>,
        details: Value,
    ) -> Value {
        instructions.insert(0, "The OpenSpec archive already succeeded and its metadata says archived: never run the OpenSpec archive again.".into());
        let rec = recovery(
            kind,
            self.target,
            self.owner,
            self.main_branch.as_deref(),
            &self.completed,
            remaining,
            instructions,
        );
        let mut error = err(
            &format!("git-{step}-failed"),
            message,
            "Follow finalization.recovery, then call archive-change again with confirm: true to finish the remaining steps.",
        );
        if kind == "missing-branch" {
            error["code"] = "git-missing-branch".into();
        }
        if !details.is_null() {
            error["details"] = details;
        }
        json!({
            "ok": false, "gitOps": self.ops, "failedStep": step,
            "mainPath": main_path(self.owner), "workspacePath": self.target.worktree_path,
            "error": error, "recovery": rec,
        })
    }
}

fn first_line(ran: &Ran) -> String {
    let text = if ran.stderr.trim().is_empty() {
        &ran.stdout
    } else {
        &ran.stderr
    };
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("git failed")
        .trim()
        .to_owned()
}

async fn finalize(
    owner: &Owner,
    target: &Target,
    archived: &Path,
    deltas: &[String],
    message: &str,
    cancel: &CancellationToken,
) -> Value {
    let mut f = Finalizer {
        owner,
        target,
        cancel,
        ops: Vec::new(),
        completed: vec!["openspec-archive", "spec-sync", "archive-metadata"],
        main_branch: None,
    };
    if !owner.is_git() {
        let mut v = f.done();
        v["skipped"] = "not a git repository".into();
        return v;
    }
    let ws = target.path().to_owned();
    let name = target.proposal_ref.change_id.clone();

    // The paths this archive touched, relative to the workspace.
    let mut paths: Vec<String> = vec![rel(&ws, archived)];
    let old = format!("openspec/changes/{name}");
    if tracked(&ws, &old, cancel).await {
        paths.push(old);
    }
    for cap in deltas {
        let p = format!("openspec/specs/{cap}");
        if ws.join(&p).exists() || tracked(&ws, &p, cancel).await {
            paths.push(p);
        }
    }
    for own in ["openspec/config.yaml"] {
        if ws.join(own).exists() && !tracked(&ws, own, cancel).await {
            paths.push(own.to_owned());
        }
    }
    let staged_other: Vec<String> = staged(&ws, cancel)
        .await
        .into_iter()
        .filter(|p| {
            !paths
                .iter()
                .any(|ours| p == ours || p.starts_with(&format!("{ours}/")))
        })
        .collect();
    if !staged_other.is_empty() {
        let shown = staged_other.join(", ");
        return f.failed(
            "commit",
            "dirty-workspace",
            format!("other changes are already staged and would be swept into the archive commit: {shown}"),
            &["protect-and-clean-workspaces", "commit", "merge-to-main", "worktree-remove", "branch-delete"],
            vec![format!("Unstage or commit these paths yourself first (ask the user): {shown}.")],
            json!({ "paths": staged_other }),
        );
    }
    // Staging belongs to the `commit` step: one `commit` entry in gitOps, which is the
    // staging command when that fails or leaves nothing to commit, else the commit itself.
    let mut add = vec!["add".to_owned(), "-A".into(), "--".into()];
    add.extend(paths.iter().cloned());
    match f.git("commit", &ws, add).await {
        Ok(r) if r.ok() => {}
        Ok(r) => {
            let m = first_line(&r);
            return f.failed(
                "commit",
                "unknown-git-error",
                m,
                &["commit"],
                vec!["Inspect `git status` in the workspace and stage the archive paths.".into()],
                Value::Null,
            );
        }
        Err(e) => {
            return f.failed(
                "commit",
                "unknown-git-error",
                e,
                &["commit"],
                Vec::new(),
                Value::Null,
            );
        }
    }
    let nothing = staged(&ws, cancel).await.is_empty();
    if nothing {
        f.outcome("noop");
    } else {
        f.ops.pop();
        match f
            .git(
                "commit",
                &ws,
                vec!["commit".into(), "-m".into(), message.to_owned()],
            )
            .await
        {
            Ok(r) if r.ok() => f.outcome("created"),
            Ok(r) => {
                f.outcome("failed");
                let m = first_line(&r);
                return f.failed(
                    "commit",
                    "unknown-git-error",
                    m,
                    &["commit"],
                    vec![
                        "Fix what blocked the commit (a hook, identity, a lock) and call again."
                            .into(),
                    ],
                    Value::Null,
                );
            }
            Err(e) => {
                return f.failed(
                    "commit",
                    "unknown-git-error",
                    e,
                    &["commit"],
                    Vec::new(),
                    Value::Null,
                );
            }
        }
    }
    f.completed.push("commit");
    if target.worktree_mode == Mode::Main {
        return f.done();
    }

    let main = owner.path.clone();
    let branch = proposal_branch(&name);
    f.main_branch = current_branch(&main, cancel).await;
    let merge = vec!["merge".to_owned(), "--ff-only".into(), branch.clone()];
    let merged = f.git("merge-to-main", &main, merge.clone()).await;
    let merged_ok = matches!(&merged, Ok(r) if r.ok());
    if !merged_ok {
        let output = merged
            .as_ref()
            .map(Ran::combined)
            .unwrap_or_else(|e| e.clone());
        let dirty_main = porcelain(&main, &[], cancel).await.unwrap_or_default();
        let dirty_ws = porcelain(&ws, &[], cancel).await.unwrap_or_default();
        if !dirty_main.is_empty() || !dirty_ws.is_empty() {
            return f.failed(
                "merge-to-main",
                "dirty-workspace",
                format!("the fast-forward failed and uncommitted changes are present (main: {}; workspace: {})", dirty_main.join(", "), dirty_ws.join(", ")),
                &["protect-and-clean-workspaces", "rebase-onto-main", "merge-to-main-retry", "worktree-remove", "branch-delete"],
                vec![
                    "Ask the user how to protect the listed uncommitted changes (commit or stash them); never discard them.".into(),
                    "Then call archive-change again with confirm: true; it rebases the proposal branch if needed, merges and cleans up.".into(),
                ],
                json!({ "main": dirty_main, "workspace": dirty_ws }),
            );
        }
        if !branch_exists(&main, &branch, cancel).await {
            return f.failed(
                "merge-to-main",
                "missing-branch",
                format!("the proposal branch {branch} does not exist"),
                &["restore-or-identify-proposal-branch", "merge-to-main-retry", "cleanup"],
                vec![format!("Find where the proposal's commits are (the worktree {} or the reflog) and restore {branch}.", ws.display())],
                Value::Null,
            );
        }
        let rebasing = rebase_in_progress(&ws, cancel).await;
        let ff = output.contains("Not possible to fast-forward")
            || output.contains("not possible to fast-forward")
            || output.contains("non-fast-forward");
        let Some(main_branch) = f.main_branch.clone().filter(|_| ff && !rebasing) else {
            let m = output
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("merge failed")
                .to_owned();
            return f.failed(
                "merge-to-main",
                "unknown-git-error",
                m,
                &[
                    "inspect-git-state",
                    "merge-to-main-retry",
                    "worktree-remove",
                    "branch-delete",
                ],
                vec!["Inspect the git state of both worktrees before retrying.".into()],
                Value::Null,
            );
        };
        match f
            .git(
                "rebase-onto-main",
                &ws,
                vec!["rebase".into(), main_branch.clone()],
            )
            .await
        {
            Ok(r) if r.ok() => f.outcome("rebased"),
            other => {
                let text = match &other {
                    Ok(r) => r.combined(),
                    Err(e) => e.clone(),
                };
                let rebasing = rebase_in_progress(&ws, cancel).await;
                let conflict = text.contains("CONFLICT")
                    || text.contains("conflict")
                    || text.contains("could not apply")
                    || text.contains("resolve all conflicts")
                    || rebasing;
                if conflict {
                    return f.failed(
                        "rebase-onto-main",
                        "rebase-conflict",
                        format!("rebasing {branch} onto {main_branch} stopped on a conflict"),
                        &["resolve-or-abort-rebase", "merge-to-main-retry", "worktree-remove", "branch-delete"],
                        vec![
                            format!("In {}, resolve the conflicts and run `git rebase --continue`, or run `git rebase --abort` (ask the user which).", ws.display()),
                            "Then call archive-change again with confirm: true to merge and clean up.".into(),
                        ],
                        Value::Null,
                    );
                }
                let m = text
                    .lines()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("rebase failed")
                    .to_owned();
                return f.failed(
                    "rebase-onto-main",
                    "unknown-git-error",
                    m,
                    &[
                        "inspect-git-state",
                        "merge-to-main-retry",
                        "worktree-remove",
                        "branch-delete",
                    ],
                    Vec::new(),
                    Value::Null,
                );
            }
        }
        f.completed.push("rebase-onto-main");
        match f.git("merge-to-main-retry", &main, merge).await {
            Ok(r) if r.ok() => {}
            Ok(r) => {
                let m = first_line(&r);
                return f.failed(
                    "merge-to-main-retry",
                    "unknown-git-error",
                    m,
                    &["inspect-git-state", "worktree-remove", "branch-delete"],
                    Vec::new(),
                    Value::Null,
                );
            }
            Err(e) => {
                return f.failed(
                    "merge-to-main-retry",
                    "unknown-git-error",
                    e,
                    &["inspect-git-state", "worktree-remove", "branch-delete"],
                    Vec::new(),
                    Value::Null,
                );
            }
        }
    }
    f.outcome("fast-forward");
    f.completed.push("merge-to-main");

    match f
        .git(
            "worktree-remove",
            &main,
            vec![
                "worktree".into(),
                "remove".into(),
                "--".into(),
                ws.display().to_string(),
            ],
        )
        .await
    {
        Ok(r) if r.ok() => {}
        other => {
            let m = match &other {
                Ok(r) => first_line(r),
                Err(e) => e.clone(),
            };
            let dirty = porcelain(&ws, &[], cancel).await.unwrap_or_default();
            if !dirty.is_empty() {
                let shown = dirty.join(", ");
                return f.failed(
                    "worktree-remove",
                    "dirty-workspace",
                    format!("the linked worktree still has uncommitted changes that are not part of the archive: {shown}"),
                    &["complete-worktree-and-branch-cleanup"],
                    vec![
                        format!("The archive is merged. Ask the user what to do with these files in {}: {shown}. Never discard them unasked.", ws.display()),
                        "Then call archive-change again with confirm: true to remove the worktree and delete the branch.".into(),
                    ],
                    json!({ "workspace": dirty }),
                );
            }
            return f.failed(
                "worktree-remove",
                "unknown-git-error",
                m,
                &["complete-worktree-and-branch-cleanup"],
                Vec::new(),
                Value::Null,
            );
        }
    }
    f.completed.push("worktree-remove");
    match f
        .git(
            "branch-delete",
            &main,
            vec!["branch".into(), "-d".into(), branch],
        )
        .await
    {
        Ok(r) if r.ok() => {}
        Ok(r) => {
            let m = first_line(&r);
            return f.failed(
                "branch-delete",
                "unknown-git-error",
                m,
                &["complete-worktree-and-branch-cleanup"],
                Vec::new(),
                Value::Null,
            );
        }
        Err(e) => {
            return f.failed(
                "branch-delete",
                "unknown-git-error",
                e,
                &["complete-worktree-and-branch-cleanup"],
                Vec::new(),
                Value::Null,
            );
        }
    }
    f.completed.push("branch-delete");
    f.done()
}

async fn read_git(
    dir: &Path,
    args: &[&str],
    ok: &[i32],
    cancel: &CancellationToken,
) -> Option<(Option<i32>, Vec<u8>)> {
    let repo = repo::open(
        &Config::default(),
        "worktree",
        &dir.to_string_lossy(),
        cancel,
    )
    .await
    .ok()?;
    let out = Git::new(&repo, cancel)
        .cmd(args.iter().copied())
        .capture_allowing(4 * 1024 * 1024, ok)
        .await
        .ok()?;
    Some((out.code, out.sink.bytes))
}

async fn tracked(dir: &Path, path: &str, cancel: &CancellationToken) -> bool {
    read_git(dir, &["ls-files", "-z", "--", path], &[0], cancel)
        .await
        .is_some_and(|(_, out)| !out.is_empty())
}

/// Paths staged in the index (against HEAD, or everything on an unborn branch).
async fn staged(dir: &Path, cancel: &CancellationToken) -> Vec<String> {
    read_git(
        dir,
        &["diff", "--cached", "--name-only", "-z", "--no-renames"],
        &[0],
        cancel,
    )
    .await
    .map(|(_, out)| {
        out.split(|b| *b == 0)
            .filter(|r| !r.is_empty())
            .map(|r| String::from_utf8_lossy(r).into_owned())
            .collect()
    })
    .unwrap_or_default()
}

async fn current_branch(dir: &Path, cancel: &CancellationToken) -> Option<String> {
    read_git(dir, &["branch", "--show-current"], &[0], cancel)
        .await
        .map(|(_, out)| String::from_utf8_lossy(&out).trim().to_owned())
        .filter(|b| !b.is_empty())
}

async fn branch_exists(dir: &Path, branch: &str, cancel: &CancellationToken) -> bool {
    let full = format!("refs/heads/{branch}");
    read_git(
        dir,
        &["rev-parse", "--verify", "--quiet", &full],
        &[0, 1],
        cancel,
    )
    .await
    .is_some_and(|(code, _)| code == Some(0))
}

async fn rebase_in_progress(dir: &Path, cancel: &CancellationToken) -> bool {
    let Ok(repo) = repo::open(
        &Config::default(),
        "worktree",
        &dir.to_string_lossy(),
        cancel,
    )
    .await
    else {
        return false;
    };
    repo.git_dir.join("rebase-merge").exists() || repo.git_dir.join("rebase-apply").exists()
}

#[cfg(test)]
mod tests {

    #[test]
    fn porcelain_paths_keep_a_rename_source_whole() {
        let out = b"R  new name.txt\0old name.txt\0 M a.txt\0?? dir/b.txt\0";
        assert_eq!(
            porcelain_paths(out),
            ["new name.txt", "old name.txt", "a.txt", "dir/b.txt"]
        );
    }

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
}
