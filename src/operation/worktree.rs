//! `worktree`: add a linked worktree for a parallel task, on an existing branch or a new
//! one started at the current HEAD. Never touches history or the current worktree.
//!
//! The target path must be absent and, resolved through its deepest existing ancestor,
//! inside the allowed roots. Without `path` the worktree goes next to the repository:
//! `<parent>/<repo>.worktrees/<branch with '/' as '-'>`.

use std::path::{Component, Path, PathBuf};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::commit::checked;
use super::fields::{parse, schema_of};
use super::intent::{Found, read_ref};
use super::paths::check_branch;
use super::{Ctx, Expect, Fields, Intent, OpError, Operation, Pins, pins};
use crate::config::Config;
use crate::gateway::api::FieldError;
use crate::git::write::GitWrite;
use crate::git::{Git, Repo};

/// Longest target path accepted, in bytes.
const MAX_PATH: usize = 4096;
/// Worktrees listed at most when looking for a checked-out branch.
const MAX_WORKTREES: usize = 100_000;

/// The fields of a `worktree` proposal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorktreeFields {
    /// The branch to check out there; created at HEAD when it does not exist.
    #[schemars(length(min = 1, max = 255))]
    pub branch: String,
    /// Absolute path of the new worktree; next to the repository when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 4096))]
    pub path: Option<String>,
}

const NAMES: &[&str] = &["branch", "path"];

impl WorktreeFields {
    pub fn from_fields(fields: &Fields) -> Result<WorktreeFields, FieldError> {
        let f: WorktreeFields = parse(fields, NAMES)?;
        check_branch("branch", &f.branch)?;
        if let Some(p) = &f.path {
            let refuse = |reason: &str| FieldError {
                field: "path",
                reason: reason.into(),
            };
            if p.len() > MAX_PATH || p.chars().any(char::is_control) {
                return Err(refuse(
                    "expected an absolute path without control characters",
                ));
            }
            let path = Path::new(p);
            if !path.is_absolute() {
                return Err(refuse("must be an absolute path"));
            }
            if path
                .components()
                .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
            {
                return Err(refuse("must not contain '.' or '..' segments"));
            }
        }
        Ok(f)
    }

    fn refname(&self) -> String {
        format!("refs/heads/{}", self.branch)
    }
}

/// Where the worktree goes: the given path, or next to the repository.
fn target(repo: &Repo, f: &WorktreeFields) -> Result<PathBuf, OpError> {
    if let Some(p) = &f.path {
        return Ok(PathBuf::from(p));
    }
    let top = repo.require_worktree()?;
    let (Some(parent), Some(name)) = (top.parent(), top.file_name()) else {
        return Err(OpError::invalid(
            "path",
            "give the path: the repository has no parent directory",
        ));
    };
    let mut dir = name.to_owned();
    dir.push(".worktrees");
    Ok(parent.join(dir).join(f.branch.replace('/', "-")))
}

/// `path` with its deepest existing ancestor canonicalised; refused when it exists or
/// when it lies outside the allowed roots.
fn resolve(config: &Config, repo: &Repo, path: &Path) -> Result<PathBuf, OpError> {
    if std::fs::symlink_metadata(path).is_ok() {
        return Err(OpError::invalid(
            "path",
            format!("{} already exists", path.display()),
        ));
    }
    let mut rest = Vec::new();
    let mut base = path.to_owned();
    let canonical = loop {
        if let Ok(c) = std::fs::canonicalize(&base) {
            break c;
        }
        match (base.file_name(), base.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_owned());
                base = parent.to_owned();
            }
            _ => return Err(OpError::invalid("path", "no part of it exists")),
        }
    };
    let full = rest.iter().rev().fold(canonical, |p, c| p.join(c));
    if !config.allows(&full) {
        return Err(OpError::invalid("path", "is outside the allowed roots"));
    }
    // A worktree's files inside a git directory would be read by git as its own (a branch
    // whose files land in `.git/hooks` becomes hooks that run).
    if super::paths::inside_git_dir(repo, &full) {
        return Err(OpError::invalid(
            "path",
            format!("{} is inside a git directory", full.display()),
        ));
    }
    Ok(full)
}

/// The branches checked out in some worktree (`branch refs/heads/…` records).
async fn checked_out(git: &Git<'_>) -> Result<Vec<String>, OpError> {
    Ok(crate::git::worktree::checked_out(git, MAX_WORKTREES).await?)
}

async fn read_pins(ctx: Ctx<'_>, f: &WorktreeFields, path: &Path) -> Result<Value, OpError> {
    let git = Git::new(ctx.repo, ctx.cancel);
    let branch = read_ref(&git, &f.refname()).await?;
    let mut out = json!({
        "branch": branch.to_json(),
        "pathExists": std::fs::symlink_metadata(path).is_ok(),
        "path": path.to_string_lossy(),
    });
    if branch == Found::Absent {
        let head = pins::head_commit(&git).await?.ok_or_else(|| {
            OpError::invalid(
                "branch",
                "HEAD is unborn: nothing to start the new branch at",
            )
        })?;
        out["startOid"] = json!(head.as_str());
    }
    Ok(out)
}

/// The `worktree` operation type.
pub struct Worktree;

#[async_trait]
impl Operation for Worktree {
    fn kind(&self) -> &'static str {
        "worktree"
    }

    fn title(&self) -> &'static str {
        "Propose a worktree"
    }

    fn description(&self) -> &'static str {
        "Propose creating an isolated worktree for a parallel task (non-destructive; never touches history)."
    }

    fn fields_schema(&self) -> Value {
        schema_of::<WorktreeFields>()
    }

    fn validate(&self, fields: &Fields) -> Result<(), FieldError> {
        WorktreeFields::from_fields(fields).map(|_| ())
    }

    fn touched_refs(&self, fields: &Fields, _pins: &Pins) -> Result<Vec<String>, OpError> {
        // The branch the new worktree checks out, created or not: every commit made there
        // moves it.
        Ok(vec![WorktreeFields::from_fields(fields)?.refname()])
    }

    async fn pin(&self, ctx: Ctx<'_>, fields: &Fields) -> Result<Pins, OpError> {
        let f = WorktreeFields::from_fields(fields)?;
        let path = resolve(ctx.config, ctx.repo, &target(ctx.repo, &f)?)?;
        let git = Git::new(ctx.repo, ctx.cancel);
        let (checked, pins) = tokio::join!(checked_out(&git), read_pins(ctx, &f, &path));
        if checked?.contains(&f.refname()) {
            return Err(OpError::invalid(
                "branch",
                format!("`{}` is already checked out in a worktree", f.branch),
            ));
        }
        Ok(Pins(pins?))
    }

    async fn preview(&self, _ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<Value, OpError> {
        let f = WorktreeFields::from_fields(fields)?;
        let new = pins.0["branch"].is_null();
        Ok(json!({
            "path": pins.0["path"],
            "branch": f.branch,
            "newBranch": new,
            "startOid": if new { pins.0["startOid"].clone() } else { pins.0["branch"].clone() },
        }))
    }

    async fn revalidate(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<(), OpError> {
        let f = WorktreeFields::from_fields(fields)?;
        let path = PathBuf::from(pins.0["path"].as_str().unwrap_or_default());
        let mut now = read_pins(ctx, &f, &path).await?;
        if pins.0.get("startOid").is_none() {
            if let Some(o) = now.as_object_mut() {
                o.remove("startOid");
            }
        }
        pins::compare(&pins.0, &now)
    }

    fn intent(&self, fields: &Fields, pins: &Pins) -> Result<Intent, OpError> {
        let f = WorktreeFields::from_fields(fields)?;
        let mut intent = Intent {
            worktree: pins.0["path"].as_str().map(str::to_owned),
            ..Intent::default()
        };
        let tip = match pins.0["branch"].as_str() {
            Some(oid) => {
                intent.pre.insert(
                    f.refname(),
                    Expect::At {
                        oid: oid.to_owned(),
                    },
                );
                oid
            }
            None => {
                intent.pre.insert(f.refname(), Expect::Absent);
                pins.0["startOid"].as_str().unwrap_or_default()
            }
        };
        intent.post.insert(
            f.refname(),
            Expect::At {
                oid: tip.to_owned(),
            },
        );
        Ok(intent)
    }

    async fn execute(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<Fields, OpError> {
        let f = WorktreeFields::from_fields(fields)?;
        let path = pins.0["path"]
            .as_str()
            .ok_or_else(|| OpError::Internal("no path pinned".into()))?;
        let new = pins.0["branch"].is_null();
        let w = GitWrite::new(&ctx.repo.path, ctx.cancel);
        // A new branch starts at HEAD, named as such (HEAD was revalidated against the
        // pinned `startOid` just before, and the intent check after the write holds the
        // branch to it), so its reflog reads `branch: Created from HEAD`, as after the same
        // `git worktree add -b` typed by hand.
        let start = new.then_some("HEAD");
        checked(w.worktree_add(path, &f.branch, start).await)?;
        let mut out = Fields::new();
        out.insert("worktreePath".into(), json!(path));
        out.insert("branch".into(), json!(f.branch));
        out.insert("newBranch".into(), json!(new));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(v: Value) -> Fields {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn refusals_name_the_field() {
        for (v, field) in [
            (json!({}), "branch"),
            (json!({"branch": "-b"}), "branch"),
            (json!({"branch": "x", "path": "rel/dir"}), "path"),
            (json!({"branch": "x", "path": "/a/../b"}), "path"),
            (json!({"branch": "x", "path": "/a\nb"}), "path"),
            (json!({"branch": "x", "force": true}), "fields"),
        ] {
            let err = WorktreeFields::from_fields(&fields(v.clone())).unwrap_err();
            assert_eq!(err.field, field, "{v} → {err}");
        }
        assert!(
            WorktreeFields::from_fields(&fields(json!({"branch": "a/b", "path": "/tmp/x"})))
                .is_ok()
        );
    }
}
