//! `apply-change`: a change's tasks and context, marking it `applying`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::status::status_of;
use super::{SpecReply, change_name, folder_id, workspace};
use crate::config::Toolset;
use crate::error::ToolError;
use crate::process::CancellationToken;
use crate::specs::apply_status::ApplyStatus;
use crate::specs::target::{self, Owner, Target};
use crate::specs::{SpecError, metadata, tasks};
use crate::tools::{Annotations, CallCtx, Tool};

/// `apply-change`: a change's tasks and context, marking it `applying`.
pub struct ApplyChange;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApplyChangeInput {
    /// proposalRef.changeId.
    #[serde(alias = "changeId")]
    pub change_name: String,
    /// proposalRef.folderId.
    pub folder_id: String,
    /// Default true; keep it on first use.
    #[serde(default)]
    pub include_instruction: Option<bool>,
}

impl Tool for ApplyChange {
    type Input = ApplyChangeInput;
    type Output = SpecReply;
    const NAME: &'static str = "apply-change";
    const TITLE: &'static str = "Apply a change";
    const DESCRIPTION: &'static str = "Start implementing a change: its artifacts, tasks (with line numbers), context files and progress; sets its status to applying.";
    const TOOLSET: Toolset = Toolset::Specs;
    const ANNOTATIONS: Annotations = Annotations {
        read_only: false,
        destructive: false,
        idempotent: true,
        open_world: false,
    };

    async fn call(ctx: CallCtx, input: ApplyChangeInput) -> Result<SpecReply, ToolError> {
        let ws = workspace(&ctx)?;
        change_name("changeName", &input.change_name)?;
        folder_id(Some(&input.folder_id))?;
        let include = input.include_instruction;
        let name = input.change_name.as_str();
        let fail = |e: SpecError| Ok(SpecReply::errors(vec![e], include));
        let Some(folder) = ws.folder(&input.folder_id) else {
            return fail(target::unauthorized(&ws, &input.folder_id));
        };
        let owner = match target::open(&ctx.config, folder, &ctx.cancel).await {
            Ok(o) => o,
            Err(e) => return fail(e),
        };
        let target = match target::resolve(&owner, name) {
            Ok(t) => t,
            Err(e) => return fail(e),
        };
        let state = apply(&owner, &target, name, &ctx.cancel)
            .await
            .unwrap_or_else(|e| json!({ "target": target, "errors": [e] }));
        Ok(SpecReply::new(state, include))
    }

    fn text_of(output: &SpecReply) -> Option<String> {
        Some(output.render(include_str!("../../specs/instructions/apply-change.md")))
    }
}

/// Reads the tasks, checks the metadata and OpenSpec's status, and only then marks the
/// change `applying`; the state on success, the error to report otherwise.
async fn apply(
    owner: &Owner,
    target: &Target,
    name: &str,
    cancel: &CancellationToken,
) -> Result<Value, SpecError> {
    let tasks_path = target.change_dir().join("tasks.md");
    let meta = target.change_dir().join(".openspec.yaml");
    if let Some(e) = [&tasks_path, &meta]
        .into_iter()
        .find_map(|p| owner.confine(p).err())
    {
        return Err(e);
    }
    let task_list = match tasks::read(&tasks_path) {
        Ok(text) => tasks::parse(&text),
        Err(e) => {
            let code = if e.kind() == std::io::ErrorKind::NotFound {
                "ENOENT"
            } else {
                "EIO"
            };
            return Err(SpecError::new(
                "Error",
                code,
                format!("cannot read {}: {e}", tasks_path.display()),
            ));
        }
    };
    // The metadata must be editable before anything else reads or writes it.
    metadata::read_status(&meta).map_err(|e| SpecError::from_meta(&e))?;
    // Everything needed from OpenSpec is checked before the status is written, so an
    // unexpected reply leaves the change exactly as it was.
    let status = status_of(target.path(), name, cancel)
        .await
        .and_then(|reply| ApplyStatus::parse(&reply))?;
    metadata::set_status(&meta, metadata::Status::Applying)
        .map_err(|e| SpecError::from_meta(&e))?;
    let missing = status.missing();
    let (complete, total) = tasks::progress(&task_list);
    let context = status.context.unwrap_or_default();
    Ok(json!({
        "target": target,
        "changeName": name,
        "schemaName": status.schema_name,
        "applyState": apply_state(missing.is_empty(), complete, total),
        "missingArtifacts": missing,
        "contextFiles": context,
        "tasksPath": tasks_path.display().to_string(),
        "tasks": task_list,
        "progress": { "total": total, "complete": complete, "remaining": total.saturating_sub(complete) },
    }))
}

/// `blocked` while an artifact the apply step needs is missing, then `all_done` once
/// every task is checked, else `ready`.
fn apply_state(nothing_missing: bool, complete: usize, total: usize) -> &'static str {
    if !nothing_missing {
        "blocked"
    } else if complete == total {
        "all_done"
    } else {
        "ready"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_artifact_blocks_even_when_every_task_is_done() {
        assert_eq!(apply_state(false, 3, 3), "blocked");
        assert_eq!(apply_state(true, 3, 3), "all_done");
        assert_eq!(apply_state(true, 0, 0), "all_done");
        assert_eq!(apply_state(true, 1, 3), "ready");
    }
}
