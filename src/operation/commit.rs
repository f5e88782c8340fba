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
use serde_json::Value;

use super::fields::{ensure, parse, schema_of};
use super::paths::{MAX_PATHS, check_rel_path};
use super::{Ctx, Fields, Intent, OpError, Operation, Pins, Risk};
use crate::gateway::api::FieldError;

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

    fn risk(&self) -> Risk {
        Risk::Low
    }

    fn title(&self) -> &'static str {
        "Propose a commit"
    }

    fn description(&self) -> &'static str {
        "Propose staging + committing with a message (non-destructive; amend not supported). \
         The approval card lists the exact files that will be staged and committed; it runs \
         through the normal commit pipeline (hooks, signing, policy); completion returns the \
         new SHA."
    }

    fn fields_schema(&self) -> Value {
        schema_of::<CommitFields>()
    }

    fn validate(&self, fields: &Fields) -> Result<(), FieldError> {
        CommitFields::from_fields(fields).map(|_| ())
    }

    async fn pin(&self, _ctx: Ctx<'_>, fields: &Fields) -> Result<Pins, OpError> {
        CommitFields::from_fields(fields)?;
        Err(OpError::Unsupported(
            "commit pins are not implemented yet".into(),
        ))
    }

    async fn preview(
        &self,
        _ctx: Ctx<'_>,
        _fields: &Fields,
        _pins: &Pins,
    ) -> Result<Value, OpError> {
        Err(OpError::Unsupported(
            "commit preview is not implemented yet".into(),
        ))
    }

    async fn revalidate(
        &self,
        _ctx: Ctx<'_>,
        _fields: &Fields,
        _pins: &Pins,
    ) -> Result<(), OpError> {
        Err(OpError::Unsupported(
            "commit revalidation is not implemented yet".into(),
        ))
    }

    fn intent(&self, _fields: &Fields, _pins: &Pins) -> Result<Intent, OpError> {
        Err(OpError::Unsupported(
            "commit intent is not implemented yet".into(),
        ))
    }

    async fn execute(
        &self,
        _ctx: Ctx<'_>,
        _fields: &Fields,
        _pins: &Pins,
    ) -> Result<Fields, OpError> {
        Err(OpError::Unsupported(
            "commit execution is not implemented yet".into(),
        ))
    }
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
