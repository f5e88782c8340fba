//! `flux.restorePointDetails`: one restore point by id.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Bridged, read, route};
use crate::config::Toolset;
use crate::error::ToolError;
use crate::tools::{Annotations, CallCtx, Tool};

/// `flux.restorePointDetails`.
pub struct RestorePointDetails;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DetailsInput {
    /// Absolute path of the repository (any directory inside a working tree works).
    pub repo_path: String,
    /// FluxGit workspace id; accepted for compatibility and not needed.
    #[serde(default)]
    pub repo_id: Option<String>,
    /// A `restorePointId` (`rp_…`), as the restore-point tools or a result give it
    #[schemars(length(min = 4, max = 67))]
    pub restore_point_id: String,
}

impl Tool for RestorePointDetails {
    type Input = DetailsInput;
    type Output = Bridged;

    const NAME: &'static str = "flux.restorePointDetails";
    const TITLE: &'static str = "Restore point details";
    const DESCRIPTION: &'static str = "One restore point by restorePointId: its operation, HEAD before and after, every ref it keeps and what was captured or skipped.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations {
        // HEAD now is part of the answer.
        idempotent: false,
        ..Annotations::READ
    };

    async fn call(ctx: CallCtx, input: DetailsInput) -> Result<Bridged, ToolError> {
        let id = input.restore_point_id;
        if !id.starts_with("rp_") || id.len() > 67 {
            return Err(ToolError::invalid(
                "restorePointId",
                "expected an id of the form rp_… as flux.restorePoints lists them",
            ));
        }
        let path = route("/v1/mcp/restore-points/", &id);
        read(&ctx, Self::NAME, &input.repo_path, &path, &[]).await
    }
}
