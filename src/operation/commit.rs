//! `commit`: stage the listed paths (or everything, or nothing more) and commit them with
//! the given message — never an amend — through git's own `commit`, so hooks and signing
//! apply exactly as to a manual commit. The result carries the new commit's id.
//!
//! What gets committed is exact:
//! - `paths`: only those paths, as they are in the worktree (`git add -- paths` then
//!   `git commit --only -- paths`); anything else already staged stays staged, uncommitted;
//! - `stageAll`: every change, untracked non-ignored files included (`git add -A`);
//! - neither: the index as it stands.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::fields::{ensure, parse, schema_of};
use super::path_state::{self, Want};
use super::paths::{MAX_PATHS, check_rel_path};
use super::{Ctx, Fields, Intent, OpError, Operation, Pins, pins, preview};
use crate::gateway::api::FieldError;
use crate::git::Git;
use crate::git::write::{GitWrite, Ran};
use crate::process::RunError;

/// Longest commit message accepted, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;

/// The fields of a `commit` proposal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommitFields {
    /// The commit message (amend is not supported).
    #[schemars(length(min = 1, max = 65536))]
    pub message: String,
    /// Repository-relative paths to stage and commit; only these are committed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1000))]
    pub paths: Option<Vec<String>>,
    /// Stage every change (untracked, non-ignored files included) and commit it all.
    #[serde(default)]
    pub stage_all: bool,
}

const NAMES: &[&str] = &["message", "paths", "stageAll"];

impl CommitFields {
    /// Parses and checks `fields`.
    pub fn from_fields(fields: &Fields) -> Result<CommitFields, FieldError> {
        let f: CommitFields = parse(fields, NAMES)?;
        ensure(!f.message.trim().is_empty(), "message", || {
            "say what the commit does".into()
        })?;
        ensure(f.message.len() <= MAX_MESSAGE_BYTES, "message", || {
            format!("longer than {MAX_MESSAGE_BYTES} bytes")
        })?;
        ensure(!f.message.contains('\0'), "message", || {
            "must not contain NUL".into()
        })?;
        if let Some(paths) = &f.paths {
            ensure(!paths.is_empty(), "paths", || {
                "list at least one path, or leave it out".into()
            })?;
            ensure(paths.len() <= MAX_PATHS, "paths", || {
                format!("at most {MAX_PATHS} paths")
            })?;
            ensure(!f.stage_all, "stageAll", || {
                "give either paths or stageAll, not both".into()
            })?;
            for p in paths {
                check_rel_path("paths", p)?;
            }
        }
        Ok(f)
    }
}

/// The `commit` operation type.
pub struct Commit;

#[async_trait]
impl Operation for Commit {
    fn kind(&self) -> &'static str {
        "commit"
    }

    fn title(&self) -> &'static str {
        "Propose a commit"
    }

    fn description(&self) -> &'static str {
        "Propose staging and committing paths with a message (no amend), through the normal commit pipeline (hooks, signing); completion returns the new SHA."
    }

    fn fields_schema(&self) -> Value {
        schema_of::<CommitFields>()
    }

    fn validate(&self, fields: &Fields) -> Result<(), FieldError> {
        CommitFields::from_fields(fields).map(|_| ())
    }

    fn touched_paths(&self, fields: &Fields) -> Vec<String> {
        CommitFields::from_fields(fields)
            .ok()
            .and_then(|f| f.paths)
            .unwrap_or_default()
    }

    fn touched_refs(&self, fields: &Fields, pins: &Pins) -> Result<Vec<String>, OpError> {
        Ok(self.intent(fields, pins)?.moved_refs())
    }

    async fn pin(&self, ctx: Ctx<'_>, fields: &Fields) -> Result<Pins, OpError> {
        let f = CommitFields::from_fields(fields)?;
        let pins = read_pins(ctx, &f).await?;
        check_something_to_commit(ctx, &f, &pins).await?;
        Ok(Pins(pins))
    }

    async fn preview(&self, ctx: Ctx<'_>, fields: &Fields, _pins: &Pins) -> Result<Value, OpError> {
        let f = CommitFields::from_fields(fields)?;
        preview::commit(ctx, &f).await
    }

    async fn revalidate(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<(), OpError> {
        let f = CommitFields::from_fields(fields)?;
        let now = read_pins(ctx, &f).await?;
        pins::compare(&pins.0, &now)
    }

    fn intent(&self, _fields: &Fields, pins: &Pins) -> Result<Intent, OpError> {
        Intent::new_commit(&pins.0["head"])
    }

    async fn execute(
        &self,
        ctx: Ctx<'_>,
        fields: &Fields,
        _pins: &Pins,
    ) -> Result<Fields, OpError> {
        let f = CommitFields::from_fields(fields)?;
        let top = ctx.repo.require_worktree()?;
        let w = GitWrite::new(top, ctx.cancel);
        if let Some(paths) = &f.paths {
            checked(w.add(Some(paths)).await)?;
            super::crash::point(super::crash::MID_WRITE);
        } else if f.stage_all {
            checked(w.add(None).await)?;
            super::crash::point(super::crash::MID_WRITE);
        }
        checked(w.commit(&f.message, f.paths.as_deref()).await)?;
        let git = Git::new(ctx.repo, ctx.cancel);
        let sha = git
            .head()
            .await?
            .ok_or_else(|| OpError::git("the commit left HEAD unborn"))?;
        let mut out = Fields::new();
        out.insert("commitSha".into(), json!(sha.as_str()));
        Ok(out)
    }
}

/// A write that ran and exited non-zero is git's refusal, with its message.
pub(crate) fn checked(ran: Result<Ran, RunError>) -> Result<Ran, OpError> {
    let ran = ran.map_err(|e| OpError::git(e.to_string()))?;
    if ran.ok() {
        Ok(ran)
    } else {
        let text = ran.combined();
        Err(OpError::git(text.trim().to_owned()))
    }
}

/// HEAD, the whole index, and (for `paths`/`stageAll`) every change that would be staged,
/// read side by side. Listed paths are read from the index file and the files themselves
/// ([`path_state`]), so a proposal costs the same in a large repository as in a small
/// one; `stageAll` depends on every path and asks `status`.
async fn read_pins(ctx: Ctx<'_>, f: &CommitFields) -> Result<Value, OpError> {
    let top = ctx.repo.require_worktree()?;
    let git = Git::new(ctx.repo, ctx.cancel);
    if let Some(paths) = &f.paths {
        let (head, reading) = tokio::join!(
            pins::head(&git),
            path_state::read(&git, top, paths, Want::WorktreeChange, true)
        );
        let reading = reading?;
        return Ok(json!({
            "head": head?.to_json(),
            "index": reading.index,
            "changes": reading.changes,
        }));
    }
    let changes = async {
        if !f.stage_all {
            return Ok(None);
        }
        let changes = pins::changes(&git, None).await?;
        pins::change_states(&git, top, changes).await.map(Some)
    };
    let (head, index, changes) = tokio::join!(pins::head(&git), pins::index_digest(&git), changes);
    let mut out = json!({"head": head?.to_json(), "index": index?});
    if let Some(changes) = changes? {
        out["changes"] = changes;
    }
    Ok(out)
}

/// Refuses a proposal that would commit nothing, naming the field to fix.
async fn check_something_to_commit(
    ctx: Ctx<'_>,
    f: &CommitFields,
    pins: &Value,
) -> Result<(), OpError> {
    let changes = pins["changes"].as_object();
    if let (Some(paths), Some(changes)) = (&f.paths, changes) {
        for p in paths {
            let p = p.trim_end_matches('/').trim_start_matches("./");
            let prefix = format!("{p}/");
            if !changes.keys().any(|c| c == p || c.starts_with(&prefix)) {
                return Err(OpError::invalid(
                    "paths",
                    format!("`{p}` has no change to commit"),
                ));
            }
        }
        return Ok(());
    }
    if f.stage_all {
        if changes.is_none_or(|c| c.is_empty()) {
            return Err(OpError::invalid("stageAll", "there is no change to commit"));
        }
        return Ok(());
    }
    let git = Git::new(ctx.repo, ctx.cancel);
    if !crate::git::diff::anything_staged(&git).await? {
        return Err(OpError::invalid(
            "paths",
            "nothing is staged: list the paths to commit or set stageAll",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(v: Value) -> Fields {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn valid_fields_parse() {
        let f =
            CommitFields::from_fields(&fields(json!({"message": "Fix it", "paths": ["src/a.rs"]})))
                .unwrap();
        assert_eq!(f.paths.unwrap(), ["src/a.rs"]);
        assert!(!f.stage_all);
        let all =
            CommitFields::from_fields(&fields(json!({"message": "m", "stageAll": true}))).unwrap();
        assert!(all.stage_all);
    }

    #[test]
    fn bad_fields_name_the_field() {
        for (v, field) in [
            (json!({}), "message"),
            (json!({"message": "  "}), "message"),
            (json!({"message": 3}), "message"),
            (json!({"message": "m", "paths": []}), "paths"),
            (json!({"message": "m", "paths": ["../x"]}), "paths"),
            (json!({"message": "m", "paths": ["/etc/passwd"]}), "paths"),
            (
                json!({"message": "m", "paths": ["a"], "stageAll": true}),
                "stageAll",
            ),
            (json!({"message": "m", "amend": true}), "fields"),
            (json!({"message": "m", "paths": [1]}), "paths"),
        ] {
            let err = CommitFields::from_fields(&fields(v.clone())).unwrap_err();
            assert_eq!(err.field, field, "{v} → {err}");
        }
        let unknown =
            CommitFields::from_fields(&fields(json!({"message": "m", "amend": true}))).unwrap_err();
        assert!(unknown.reason.contains("amend"), "{unknown}");
    }

    #[test]
    fn schema_is_closed_with_the_three_fields() {
        let schema = Commit.fields_schema();
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["required"], json!(["message"]));
        let props = schema["properties"].as_object().unwrap();
        assert_eq!(
            props.keys().collect::<Vec<_>>(),
            ["message", "paths", "stageAll"]
        );
    }
}
