//! The spec workflow tools: `explore`, `create-plan`, `create-proposal`, `apply-change`,
//! `archive-change`, one file each.
//!
//! Each answers with one text block, `<tool_instruction>` (the workflow the agent must
//! follow at this step) then `<state>` (pretty JSON), or the bare JSON state when the
//! caller passes `includeInstruction: false`. `structuredContent` is always the state.
//! Bad arguments (unknown fields, a name that is not kebab-case) are `-32602` errors;
//! everything that goes wrong in the workflow itself is reported inside the state, as
//! `{"errors": [...]}` or, for create and archive, a `status: "failed"` state, so the
//! agent keeps the instruction that tells it what to do next.

mod apply_change;
mod archive_change;
mod artifacts;
mod branch;
mod create_plan;
mod create_proposal;
mod explore;
mod layout;
mod reply;
mod status;

use std::sync::Arc;

pub use apply_change::{ApplyChange, ApplyChangeInput};
pub use archive_change::{ArchiveChange, ArchiveChangeInput};
pub use create_plan::{CreatePlan, CreatePlanInput};
pub use create_proposal::{CreateProposal, CreateProposalInput, WorktreeMode};
pub use explore::{Explore, ExploreInput};
pub use reply::SpecReply;

use super::{Annotations, CallCtx};
use crate::error::ToolError;
use crate::specs::workspace::Workspace;

const WRITE: Annotations = Annotations {
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: false,
};

fn workspace(ctx: &CallCtx) -> Result<Arc<Workspace>, ToolError> {
    ctx.config.workspace.clone().ok_or_else(|| {
        ToolError::unsupported(
            "the spec tools have no workspace (FYLLO_WORKSPACE_JSON or --workspace)",
        )
    })
}

fn change_name(field: &str, value: &str) -> Result<(), ToolError> {
    crate::specs::check_change_name(value).map_err(|why| ToolError::invalid(field, why))
}

fn folder_id(value: Option<&str>) -> Result<(), ToolError> {
    match value {
        Some(v) if v.trim().is_empty() => Err(ToolError::invalid("folderId", "must not be empty")),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_name_error_names_the_field() {
        assert!(change_name("changeName", "add-auth").is_ok());
        let err = change_name("changeName", "Add_Auth").expect_err("refused");
        assert_eq!(err.code, -32602);
        assert!(err.message.contains("changeName"), "{}", err.message);
        assert!(err.message.contains("kebab-case"), "{}", err.message);
        let dated = change_name("changeName", "2024-01-02-x").expect_err("refused");
        assert!(dated.message.contains("date prefix"), "{}", dated.message);
    }

    #[test]
    fn a_blank_folder_id_is_refused_and_an_absent_one_is_not() {
        assert!(folder_id(None).is_ok());
        assert!(folder_id(Some("app")).is_ok());
        for blank in ["", "  ", "\t"] {
            let err = folder_id(Some(blank)).expect_err("refused");
            assert!(err.message.contains("folderId"), "{}", err.message);
        }
    }
}
