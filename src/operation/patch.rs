//! `patch`: apply an agent-written unified diff to the worktree, or with `applyToIndex`
//! to the worktree and the index together (`git apply --index`).
//!
//! The patch is at most 1 MiB and names only repository-relative paths (checked before
//! anything is sent). The card shows the patch, its files and `git apply --check`, run
//! through the read door (filters disarmed); the pins are HEAD and the index entries and
//! worktree contents of exactly the paths the patch names. Execution is `git apply`
//! itself, which runs no hook; a patch that does not apply fails with git's message and
//! changes nothing (git apply is all or nothing).

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::commit::checked;
use super::fields::{ensure, parse, schema_of};
use super::pins::{self, Change};
use super::{Ctx, Expect, Fields, Intent, OpError, Operation, Pins, path_state};
use crate::gateway::api::FieldError;
use crate::git::write::GitWrite;
use crate::git::{Git, apply, ls_files};
use crate::parse::status_v2::Kind;

pub mod headers;

/// Largest patch accepted, in bytes.
pub const MAX_PATCH_BYTES: usize = 1024 * 1024;

/// The fields of a `patch` proposal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PatchFields {
    /// A unified diff as `git diff` prints it (a/ and b/ prefixes), at most 1 MiB.
    #[schemars(length(min = 1, max = 1048576))]
    pub patch_content: String,
    /// Apply to the index as well as the worktree (`git apply --index`).
    #[serde(default)]
    pub apply_to_index: bool,
}

const NAMES: &[&str] = &["patchContent", "applyToIndex"];

impl PatchFields {
    pub fn from_fields(fields: &Fields) -> Result<PatchFields, FieldError> {
        let f: PatchFields = parse(fields, NAMES)?;
        ensure(
            f.patch_content.len() <= MAX_PATCH_BYTES,
            "patchContent",
            || format!("longer than {MAX_PATCH_BYTES} bytes"),
        )?;
        ensure(!f.patch_content.contains('\0'), "patchContent", || {
            "must not contain NUL".into()
        })?;
        headers::touched(&f.patch_content)?;
        Ok(f)
    }

    /// The paths the patch names (validated by [`PatchFields::from_fields`]).
    pub fn paths(&self) -> Result<Vec<String>, FieldError> {
        headers::touched(&self.patch_content)
    }
}

/// The `patch` operation type.
pub struct Patch;

/// HEAD, and the index entries and worktree contents of the touched paths, read from the
/// index file and the files ([`path_state::records`]); git lists the entries only for an
/// index that reader does not follow.
async fn read_pins(ctx: Ctx<'_>, f: &PatchFields) -> Result<Value, OpError> {
    let top = ctx.repo.require_worktree()?;
    let git = Git::new(ctx.repo, ctx.cancel);
    let paths = f.paths()?;
    let (head, records) = tokio::join!(pins::head(&git), path_state::records(&git, top, &paths));
    let head = head?;
    if let Some(records) = records? {
        return Ok(json!({"head": head.to_json(), "paths": records}));
    }
    let index = ls_files::stages_raw_of(&git, &paths).await?;
    let changes = paths
        .into_iter()
        .map(|path| Change {
            path,
            xy: String::new(),
            kind: Kind::Changed,
        })
        .collect();
    let states = pins::change_states(&git, top, changes).await?;
    let contents: serde_json::Map<String, Value> = states
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v["content"].clone()))
        .collect();
    Ok(json!({
        "head": head.to_json(),
        "index": pins::sha256(&index),
        "paths": contents,
    }))
}

/// `git apply --check` through the read door: `{ok, message}`.
async fn check(ctx: Ctx<'_>, f: &PatchFields) -> Result<Value, OpError> {
    let git = Git::new(ctx.repo, ctx.cancel);
    let checked =
        apply::check(&git, f.patch_content.clone().into_bytes(), f.apply_to_index).await?;
    Ok(json!({"ok": checked.ok, "message": checked.message}))
}

/// `git apply --numstat`: each file's added and deleted lines (null for binary).
async fn numstat(ctx: Ctx<'_>, f: &PatchFields) -> Result<Vec<Value>, OpError> {
    let git = Git::new(ctx.repo, ctx.cancel);
    let files = apply::numstat(&git, f.patch_content.clone().into_bytes()).await?;
    Ok(files
        .into_iter()
        .map(|s| json!({"path": s.path, "additions": s.additions, "deletions": s.deletions}))
        .collect())
}

#[async_trait]
impl Operation for Patch {
    fn kind(&self) -> &'static str {
        "patch"
    }

    fn title(&self) -> &'static str {
        "Propose applying a patch"
    }

    fn description(&self) -> &'static str {
        "Propose applying a unified diff (at most 1 MiB) to the worktree, or with applyToIndex to the index too. The card shows the patch and `git apply --check`."
    }

    fn fields_schema(&self) -> Value {
        schema_of::<PatchFields>()
    }

    fn validate(&self, fields: &Fields) -> Result<(), FieldError> {
        PatchFields::from_fields(fields).map(|_| ())
    }

    fn touched_paths(&self, fields: &Fields) -> Vec<String> {
        fields
            .get("patchContent")
            .and_then(Value::as_str)
            .and_then(|patch| headers::touched(patch).ok())
            .unwrap_or_default()
    }

    fn touched_refs(&self, fields: &Fields, pins: &Pins) -> Result<Vec<String>, OpError> {
        Ok(self.intent(fields, pins)?.moved_refs())
    }

    async fn pin(&self, ctx: Ctx<'_>, fields: &Fields) -> Result<Pins, OpError> {
        let f = PatchFields::from_fields(fields)?;
        Ok(Pins(read_pins(ctx, &f).await?))
    }

    async fn preview(&self, ctx: Ctx<'_>, fields: &Fields, _pins: &Pins) -> Result<Value, OpError> {
        let f = PatchFields::from_fields(fields)?;
        let (checked, files) = tokio::join!(check(ctx, &f), numstat(ctx, &f));
        Ok(json!({
            "patch": f.patch_content,
            "applyToIndex": f.apply_to_index,
            "paths": f.paths()?,
            "files": files?,
            "check": checked?,
        }))
    }

    async fn revalidate(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<(), OpError> {
        let f = PatchFields::from_fields(fields)?;
        let now = read_pins(ctx, &f).await?;
        pins::compare(&pins.0, &now)
    }

    fn intent(&self, _fields: &Fields, pins: &Pins) -> Result<Intent, OpError> {
        let head = &pins.0["head"];
        let expect = match (head["symbolic"].as_str(), head.as_str()) {
            (Some(target), _) => Expect::Symbolic {
                target: target.to_owned(),
            },
            (None, Some(oid)) => Expect::Detached {
                oid: oid.to_owned(),
            },
            _ => Expect::Absent,
        };
        // Applying moves no ref: HEAD is the same on both sides.
        let mut intent = Intent::default();
        intent.pre.insert("HEAD".into(), expect.clone());
        intent.post.insert("HEAD".into(), expect);
        Ok(intent)
    }

    async fn execute(
        &self,
        ctx: Ctx<'_>,
        fields: &Fields,
        _pins: &Pins,
    ) -> Result<Fields, OpError> {
        let f = PatchFields::from_fields(fields)?;
        let top = ctx.repo.require_worktree()?;
        let w = GitWrite::new(top, ctx.cancel);
        checked(
            w.apply(
                f.patch_content.clone().into_bytes(),
                f.apply_to_index,
                false,
            )
            .await,
        )?;
        let mut out = Fields::new();
        out.insert("appliedPaths".into(), json!(f.paths()?));
        out.insert("appliedToIndex".into(), json!(f.apply_to_index));
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
    fn size_nul_and_headers_name_the_field() {
        let ok = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n";
        let f = PatchFields::from_fields(&fields(json!({"patchContent": ok}))).unwrap();
        assert!(!f.apply_to_index);
        let big = format!("{ok}{}", "+".repeat(MAX_PATCH_BYTES));
        for (v, field) in [
            (json!({}), "patchContent"),
            (json!({"patchContent": big}), "patchContent"),
            (
                json!({"patchContent": "--- a/x\n+++ b/x\0"}),
                "patchContent",
            ),
            (
                json!({"patchContent": "--- /etc/x\n+++ /etc/x\n"}),
                "patchContent",
            ),
            (
                json!({"patchContent": ok, "applyToIndex": "yes"}),
                "applyToIndex",
            ),
            (json!({"patchContent": ok, "reverse": true}), "fields"),
        ] {
            let err = PatchFields::from_fields(&fields(v.clone())).unwrap_err();
            assert_eq!(err.field, field, "{v} → {err}");
        }
    }
}
