//! `operation.status`: the authoritative lifecycle record of one proposal.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{NextAction, SOURCE, client, ended, status_schema};
use crate::config::Toolset;
use crate::error::ToolError;
use crate::gateway::api::is_canonical_preview_id;
use crate::tools::{Annotations, CallCtx, Tool};

/// `operation.status`.
pub struct OperationStatus;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StatusInput {
    /// The `previewId` a preview tool returned (a lowercase UUID).
    #[schemars(length(equal = 36))]
    pub preview_id: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusOutput {
    pub tool: &'static str,
    pub read_only: bool,
    /// Always `fluxgit-gateway`: the record is the gateway's.
    pub source: &'static str,
    pub preview_id: String,
    pub operation_type: String,
    /// `pending`, `approved` or `executing` (live: poll again), or `completed`. The other
    /// endings come back as error 10004 with the whole record.
    #[schemars(schema_with = "status_schema")]
    pub status: String,
    /// True: the gateway holds this proposal. It says nothing about git until `status`
    /// is `completed`.
    pub accepted: bool,
    /// Present while the proposal is live.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_action: Option<NextAction>,
    /// The gateway's lifecycle record as it sent it: `reason`, times, `decidedBy`, and
    /// once completed `result` (`commitSha`, `restorePointId`, …).
    pub data: Value,
}

impl Tool for OperationStatus {
    type Input = StatusInput;
    type Output = StatusOutput;

    const NAME: &'static str = "operation.status";
    const TITLE: &'static str = "Proposal status";
    const DESCRIPTION: &'static str = "Authoritative status of a proposal by previewId: poll it after accepted:true and report a Git outcome only once it is completed. rejected, failed, expired and cancelled come back as an error.";
    const TOOLSET: Toolset = Toolset::Ops;
    const ANNOTATIONS: Annotations = Annotations {
        read_only: true,
        destructive: false,
        // The answer moves on as a person decides.
        idempotent: false,
        open_world: false,
    };

    async fn call(ctx: CallCtx, input: StatusInput) -> Result<StatusOutput, ToolError> {
        if !is_canonical_preview_id(&input.preview_id) {
            return Err(ToolError::invalid(
                "previewId",
                "expected the lowercase UUID a preview tool returned",
            ));
        }
        let client = client(&ctx)?;
        let (record, body) = client.status(&input.preview_id, &ctx.cancel).await?;
        if let Some(error) = ended(&record, &body) {
            return Err(error);
        }
        Ok(StatusOutput {
            tool: Self::NAME,
            read_only: true,
            source: SOURCE,
            next_action: NextAction::poll(&record.preview_id, record.status),
            preview_id: record.preview_id,
            operation_type: record.operation_type,
            status: record.status.as_str().to_owned(),
            accepted: true,
            data: body,
        })
    }
}
