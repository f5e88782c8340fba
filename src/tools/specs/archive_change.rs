//! `archive-change`: preview, archive with OpenSpec, then commit, merge and clean up.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{SpecReply, change_name, folder_id, workspace};
use crate::config::Toolset;
use crate::error::ToolError;
use crate::specs::{archive, target};
use crate::tools::{Annotations, CallCtx, Tool};

/// `archive-change`: preview, archive with OpenSpec, then commit, merge and clean up.
pub struct ArchiveChange;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArchiveChangeInput {
    /// The change, from its proposalRef.
    pub change_name: String,
    /// The owning folder, from the proposalRef.
    pub folder_id: String,
    /// False (default) previews and writes nothing; true archives and finalizes.
    #[serde(default)]
    pub confirm: Option<bool>,
    /// Required with confirm: first line `type(scope): summary`, describing the work.
    #[serde(default)]
    pub commit_message: Option<String>,
    /// Include the workflow instruction (default true; keep it on first use).
    #[serde(default)]
    pub include_instruction: Option<bool>,
}

impl Tool for ArchiveChange {
    type Input = ArchiveChangeInput;
    type Output = SpecReply;
    const NAME: &'static str = "archive-change";
    const TITLE: &'static str = "Archive a change";
    const DESCRIPTION: &'static str = "Archive a change: a preview by default; with confirm and a commitMessage it archives, commits, fast-forwards proposal/<changeName> into main and removes the worktree. Calling again resumes.";
    const TOOLSET: Toolset = Toolset::Specs;
    const ANNOTATIONS: Annotations = Annotations {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: false,
    };

    async fn call(ctx: CallCtx, input: ArchiveChangeInput) -> Result<SpecReply, ToolError> {
        let ws = workspace(&ctx)?;
        change_name("changeName", &input.change_name)?;
        folder_id(Some(&input.folder_id))?;
        let include = input.include_instruction;
        let Some(folder) = ws.folder(&input.folder_id) else {
            return Ok(SpecReply::errors(
                vec![target::unauthorized(&ws, &input.folder_id)],
                include,
            ));
        };
        let owner = match target::open(&ctx.config, folder, &ctx.cancel).await {
            Ok(o) => o,
            Err(e) => return Ok(SpecReply::errors(vec![e], include)),
        };
        let request = archive::Request {
            change: input.change_name,
            confirm: input.confirm.unwrap_or(false),
            commit_message: input.commit_message,
            progress: ctx.progress.clone(),
        };
        let state = archive::run(&ctx.config, &owner, &request, &ctx.cancel).await;
        Ok(SpecReply::new(state, include))
    }

    fn text_of(output: &SpecReply) -> Option<String> {
        Some(output.render(include_str!("../../specs/instructions/archive-change.md")))
    }
}
