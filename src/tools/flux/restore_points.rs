//! `flux.restorePoints`: the repository's restore points, newest first.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Bridged, read};
use crate::config::Toolset;
use crate::error::ToolError;
use crate::tools::input::Bounded;
use crate::tools::{Annotations, CallCtx, Tool};

/// `flux.restorePoints`.
pub struct RestorePoints;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RestorePointsInput {
    /// Absolute path of the repository (any directory inside a working tree works).
    pub repo_path: String,
    /// FluxGit workspace id; accepted for compatibility and not needed.
    #[serde(default)]
    pub repo_id: Option<String>,
    /// Restore points to return, newest first.
    #[serde(default)]
    pub limit: Bounded<1, 200, 50>,
}

impl Tool for RestorePoints {
    type Input = RestorePointsInput;
    type Output = Bridged;

    const NAME: &'static str = "flux.restorePoints";
    const TITLE: &'static str = "Restore points";
    const DESCRIPTION: &'static str = "The restore points the approval gateway took in this repository, newest first: one before every approved operation and every restore.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations {
        // A new operation adds a point.
        idempotent: false,
        ..Annotations::READ
    };

    async fn call(ctx: CallCtx, input: RestorePointsInput) -> Result<Bridged, ToolError> {
        let limit = input.limit.get().to_string();
        read(
            &ctx,
            Self::NAME,
            &input.repo_path,
            "/v1/mcp/restore-points",
            &[("limit", limit)],
        )
        .await
    }
}
