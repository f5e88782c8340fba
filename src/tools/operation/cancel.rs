//! `operation.cancel`: the proposing agent withdraws its own still-pending proposal.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{SOURCE, agent_id, client, status_schema};
use crate::config::Toolset;
use crate::error::{ToolError, code};
use crate::gateway::api::is_canonical_preview_id;
use crate::tools::{Annotations, CallCtx, Tool};

/// `operation.cancel`.
pub struct OperationCancel;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CancelInput {
    /// The `previewId` of your own pending proposal.
    #[schemars(length(equal = 36))]
    pub preview_id: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CancelOutput {
    pub tool: &'static str,
    pub read_only: bool,
    /// Always `fluxgit-gateway`.
    pub source: &'static str,
    pub preview_id: String,
    /// `cancelled`.
    #[schemars(schema_with = "status_schema")]
    pub status: String,
    /// The gateway's answer as it sent it.
    pub data: Value,
}

impl Tool for OperationCancel {
    type Input = CancelInput;
    type Output = CancelOutput;

    const NAME: &'static str = "operation.cancel";
    const TITLE: &'static str = "Cancel a pending proposal";
    const DESCRIPTION: &'static str = "Cancel your own still-pending proposal by previewId; its card leaves the person's queue. Refused (10006) once a person decided: operation.status says what happened.";
    const TOOLSET: Toolset = Toolset::Ops;
    const ANNOTATIONS: Annotations = Annotations {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: false,
    };

    async fn call(ctx: CallCtx, input: CancelInput) -> Result<CancelOutput, ToolError> {
        if !is_canonical_preview_id(&input.preview_id) {
            return Err(ToolError::invalid(
                "previewId",
                "expected the lowercase UUID a preview tool returned",
            ));
        }
        let client = client(&ctx)?;
        let agent = agent_id(ctx.client.name.as_deref());
        let (cancelled, body) = client
            .cancel(&input.preview_id, &agent, &ctx.cancel)
            .await
            .map_err(|e| advise(ToolError::from(e)))?;
        Ok(CancelOutput {
            tool: Self::NAME,
            read_only: false,
            source: SOURCE,
            preview_id: input.preview_id,
            status: cancelled.status.as_str().to_owned(),
            data: body,
        })
    }
}

/// A refused cancellation says what the agent can do about it.
fn advise(mut error: ToolError) -> ToolError {
    if error.code == code::PROPOSAL_REFUSED
        && let Some(data) = error.data.as_object_mut()
    {
        data.insert(
            "agentRecommendation".into(),
            "Only the proposing agent can cancel, and only a pending proposal: call operation.status to see where it stands.".into(),
        );
    }
    error
}
