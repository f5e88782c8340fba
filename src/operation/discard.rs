//! `discard`: throw away the working-tree changes under the listed paths — modified and
//! deleted tracked files go back to their staged state (`git restore --worktree`),
//! untracked non-ignored files are removed (`git clean -f`). Staged changes stay staged:
//! the discard takes only what the worktree holds beyond the index.
//!
//! Before anything is discarded a safety stash is recorded (`git stash list` shows it,
//! `git stash apply` brings the work back; see `git::safety_stash`). The card lists
//! exactly what is lost: each file, the diff of the tracked ones, the size of the
//! untracked ones.

use std::path::Path;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::commit::checked;
use super::fields::{ensure, parse, schema_of};
use super::path_state::{self, Want};
use super::paths::{MAX_PATHS, check_rel_path};
use super::{Ctx, Expect, Fields, Intent, OpError, Operation, Pins, pins, preview};
use crate::gateway::api::FieldError;
use crate::git::index_copy::IndexCopy;
use crate::git::write::GitWrite;
use crate::git::{Git, Oid, on_copy};

/// The ref the safety stash is recorded in.
pub const STASH_REF: &str = "refs/stash";

/// The fields of a `discard` proposal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DiscardFields {
    /// Repository-relative paths whose working-tree changes are discarded.
    #[schemars(length(min = 1, max = 1000))]
    pub paths: Vec<String>,
}

const NAMES: &[&str] = &["paths"];

impl DiscardFields {
    pub fn from_fields(fields: &Fields) -> Result<DiscardFields, FieldError> {
        let f: DiscardFields = parse(fields, NAMES)?;
        ensure(!f.paths.is_empty(), "paths", || {
            "list at least one path".into()
        })?;
        ensure(f.paths.len() <= MAX_PATHS, "paths", || {
            format!("at most {MAX_PATHS} paths")
        })?;
        for p in &f.paths {
            check_rel_path("paths", p)?;
        }
        Ok(f)
    }
}

/// The `discard` operation type.
pub struct Discard;

/// HEAD, the stash ref, and every change under the paths: index entries, worktree state
/// and contents of each ([`path_state`]; `status` letters where git had to decide).
async fn read_pins(ctx: Ctx<'_>, f: &DiscardFields) -> Result<Value, OpError> {
    let top = ctx.repo.require_worktree()?;
    let git = Git::new(ctx.repo, ctx.cancel);
    let (head, stash, reading) = tokio::join!(
        pins::head(&git),
        super::intent::read_ref(&git, STASH_REF),
        path_state::read(&git, top, &f.paths, Want::AnyState, false)
    );
    Ok(json!({"head": head?.to_json(), "stash": stash?.to_json(), "changes": reading?.changes}))
}

/// What one pinned change is: `status` letters from git, or the worktree state read
/// beside the index entries.
fn state_of(state: &Value) -> (&str, &str) {
    (
        state["status"].as_str().unwrap_or_default(),
        state["worktree"].as_str().unwrap_or_default(),
    )
}

/// The files a discard takes: `(tracked with a worktree change, untracked)`.
pub(crate) fn lost(pins: &Value) -> (Vec<String>, Vec<String>) {
    let mut tracked = Vec::new();
    let mut untracked = Vec::new();
    for (path, state) in pins["changes"].as_object().into_iter().flatten() {
        match state_of(state) {
            ("??", _) | (_, "untracked") => untracked.push(path.clone()),
            (_, "modified" | "deleted") => tracked.push(path.clone()),
            (xy, _) if xy.len() == 2 && !xy.ends_with('.') => tracked.push(path.clone()),
            _ => {}
        }
    }
    (tracked, untracked)
}

/// Refuses paths that resolve into a git directory (through a symbolic link, or a git
/// directory under another name): git would not discard them, and neither the card nor
/// the result may say it did.
fn outside_git_dirs(ctx: Ctx<'_>, f: &DiscardFields) -> Result<(), OpError> {
    let top = ctx.repo.require_worktree()?;
    match f
        .paths
        .iter()
        .find(|p| super::paths::inside_git_dir(ctx.repo, &top.join(p)))
    {
        Some(p) => Err(OpError::invalid(
            "paths",
            format!("`{p}` is inside a git directory, which no write touches"),
        )),
        None => Ok(()),
    }
}

/// Refuses paths with nothing to discard, in a conflict, or naming a submodule.
fn check_discardable(f: &DiscardFields, pins: &Value) -> Result<(), OpError> {
    let empty = Map::new();
    let changes = pins["changes"].as_object().unwrap_or(&empty);
    for (path, state) in changes {
        let (status, worktree) = state_of(state);
        if ["DD", "AU", "UD", "UA", "DU", "AA", "UU"].contains(&status) || worktree == "conflicted"
        {
            return Err(OpError::invalid(
                "paths",
                format!("`{path}` is in a conflict: resolve it or reset instead"),
            ));
        }
        if state["content"] == "dir" && status != "??" {
            return Err(OpError::invalid(
                "paths",
                format!("`{path}` is a submodule: discard inside it instead"),
            ));
        }
    }
    let (tracked, untracked) = lost(pins);
    for p in &f.paths {
        let p = p.trim_end_matches('/').trim_start_matches("./");
        let prefix = format!("{p}/");
        let hit = |c: &String| c == p || c.starts_with(&prefix);
        if !tracked.iter().chain(&untracked).any(hit) {
            return Err(OpError::invalid(
                "paths",
                format!("`{p}` has no working-tree change to discard"),
            ));
        }
    }
    Ok(())
}

#[async_trait]
impl Operation for Discard {
    fn kind(&self) -> &'static str {
        "discard"
    }

    fn title(&self) -> &'static str {
        "Propose discarding working-tree changes"
    }

    fn description(&self) -> &'static str {
        "Propose discarding the working-tree changes under paths (staged changes stay). A safety stash is recorded before anything is discarded."
    }

    fn fields_schema(&self) -> Value {
        schema_of::<DiscardFields>()
    }

    fn validate(&self, fields: &Fields) -> Result<(), FieldError> {
        DiscardFields::from_fields(fields).map(|_| ())
    }

    fn touched_paths(&self, fields: &Fields) -> Vec<String> {
        DiscardFields::from_fields(fields)
            .map(|f| f.paths)
            .unwrap_or_default()
    }

    fn needs_confirmation(&self, _fields: &Fields) -> bool {
        true
    }

    fn touched_refs(&self, fields: &Fields, pins: &Pins) -> Result<Vec<String>, OpError> {
        Ok(self.intent(fields, pins)?.moved_refs())
    }

    async fn pin(&self, ctx: Ctx<'_>, fields: &Fields) -> Result<Pins, OpError> {
        let f = DiscardFields::from_fields(fields)?;
        outside_git_dirs(ctx, &f)?;
        let pins = read_pins(ctx, &f).await?;
        if pins["head"].is_null() || pins["head"]["oid"].is_null() && !pins["head"].is_string() {
            return Err(OpError::Unsupported(
                "the branch has no commit yet: a safety stash needs one".into(),
            ));
        }
        check_discardable(&f, &pins)?;
        Ok(Pins(pins))
    }

    async fn preview(&self, ctx: Ctx<'_>, _fields: &Fields, pins: &Pins) -> Result<Value, OpError> {
        preview_lost(ctx, &pins.0).await
    }

    async fn revalidate(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<(), OpError> {
        let f = DiscardFields::from_fields(fields)?;
        outside_git_dirs(ctx, &f)?;
        let now = read_pins(ctx, &f).await?;
        pins::compare(&pins.0, &now)
    }

    fn intent(&self, _fields: &Fields, pins: &Pins) -> Result<Intent, OpError> {
        let head_oid = pinned_head(&pins.0)?;
        let mut intent = Intent::default();
        let head = match pins.0["head"]["symbolic"].as_str() {
            Some(target) => Expect::Symbolic {
                target: target.to_owned(),
            },
            None => Expect::Detached {
                oid: head_oid.as_str().to_owned(),
            },
        };
        intent.pre.insert("HEAD".into(), head.clone());
        intent.post.insert("HEAD".into(), head);
        let stash = match pins.0["stash"].as_str() {
            Some(oid) => Expect::At {
                oid: oid.to_owned(),
            },
            None => Expect::Absent,
        };
        intent.pre.insert(STASH_REF.into(), stash);
        intent.post.insert(
            STASH_REF.into(),
            Expect::Descends {
                from: head_oid.as_str().to_owned(),
            },
        );
        Ok(intent)
    }

    async fn execute(
        &self,
        ctx: Ctx<'_>,
        _fields: &Fields,
        pins: &Pins,
    ) -> Result<Fields, OpError> {
        let top = ctx.repo.require_worktree()?;
        let git = Git::new(ctx.repo, ctx.cancel);
        let head = pinned_head(&pins.0)?;
        let (tracked, untracked) = lost(&pins.0);
        let message = format!(
            "gitward safety stash before discarding {} file(s)",
            tracked.len() + untracked.len()
        );
        let stash =
            crate::git::safety_stash::build(&git, ctx.repo, &head, &tracked, &untracked, &message)
                .await?;
        let w = GitWrite::new(top, ctx.cancel);
        checked(w.stash_store(stash.as_str(), &message).await)?;
        super::crash::point(super::crash::MID_WRITE);
        if !tracked.is_empty() {
            checked(w.restore_worktree(&tracked).await)?;
        }
        if !untracked.is_empty() {
            checked(w.clean_files(&untracked).await)?;
        }
        let mut out = Fields::new();
        out.insert("stashSha".into(), json!(stash.as_str()));
        out.insert("discarded".into(), json!(tracked));
        out.insert("removed".into(), json!(untracked));
        Ok(out)
    }
}

fn pinned_head(pins: &Value) -> Result<Oid, OpError> {
    pins["head"]["oid"]
        .as_str()
        .or_else(|| pins["head"].as_str())
        .and_then(Oid::parse)
        .ok_or_else(|| OpError::Internal("no HEAD commit pinned".into()))
}

/// The card: every file lost, the diff of the tracked ones against the index, the size
/// of the untracked ones.
async fn preview_lost(ctx: Ctx<'_>, pins: &Value) -> Result<Value, OpError> {
    let top = ctx.repo.require_worktree()?;
    let git = Git::new(ctx.repo, ctx.cancel);
    let (tracked, untracked) = lost(pins);
    let mut files: Vec<Value> = Vec::new();
    for path in &tracked {
        let (status, worktree) = state_of(&pins["changes"][path]);
        let what = if status.ends_with('D') || worktree == "deleted" {
            "deleted"
        } else {
            "modified"
        };
        files.push(json!({"path": path, "status": what}));
    }
    for path in &untracked {
        let bytes = std::fs::symlink_metadata(top.join(Path::new(path)))
            .map(|m| m.len())
            .ok();
        files.push(json!({"path": path, "status": "untracked", "bytes": bytes}));
    }
    let (diff, truncated) = if tracked.is_empty() {
        (String::new(), false)
    } else {
        let index = IndexCopy::new(ctx.repo).await?;
        let out = on_copy::worktree_patch(&git, &index, &tracked, preview::DIFF_CAP).await?;
        (
            String::from_utf8_lossy(&out.bytes).into_owned(),
            out.truncated,
        )
    };
    Ok(json!({
        "files": files,
        "filesTotal": files.len(),
        "diff": diff,
        "diffTruncated": truncated,
        "safetyStash": true,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(v: Value) -> Fields {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn refusals_name_paths() {
        assert!(DiscardFields::from_fields(&fields(json!({"paths": ["a.txt"]}))).is_ok());
        for v in [
            json!({}),
            json!({"paths": []}),
            json!({"paths": ["../x"]}),
            json!({"paths": ["/etc"]}),
            json!({"paths": [3]}),
        ] {
            let err = DiscardFields::from_fields(&fields(v.clone())).unwrap_err();
            assert_eq!(err.field, "paths", "{v} → {err}");
        }
        let err =
            DiscardFields::from_fields(&fields(json!({"paths": ["a"], "hard": true}))).unwrap_err();
        assert_eq!(err.field, "fields");
    }

    #[test]
    fn lost_splits_worktree_changes_from_staged_ones() {
        let pins = json!({"changes": {
            "a": {"status": ".M"}, "b": {"status": "M."}, "c": {"status": "??"},
            "d": {"status": "AD"}, "e": {"status": "MM"}}});
        let (tracked, untracked) = lost(&pins);
        assert_eq!(tracked, ["a", "d", "e"]);
        assert_eq!(untracked, ["c"]);
        let read = json!({"changes": {
            "a": {"worktree": "modified"}, "b": {"worktree": "clean"},
            "c": {"worktree": "untracked"}, "d": {"worktree": "deleted"}}});
        assert_eq!(
            lost(&read),
            (vec!["a".into(), "d".into()], vec!["c".into()])
        );
    }
}
