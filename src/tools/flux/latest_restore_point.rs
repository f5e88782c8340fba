//! `flux.latestRestorePoint`: the repository's newest restore point.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{Bridged, nothing, read};
use crate::config::Toolset;
use crate::error::ToolError;
use crate::tools::{Annotations, CallCtx, Tool};

/// `flux.latestRestorePoint`.
pub struct LatestRestorePoint;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LatestInput {
    /// Absolute path of the repository (any directory inside a working tree works).
    pub repo_path: String,
    /// FluxGit workspace id; accepted for compatibility and not needed.
    #[serde(default)]
    pub repo_id: Option<String>,
}

impl Tool for LatestRestorePoint {
    type Input = LatestInput;
    type Output = Bridged;

    const NAME: &'static str = "flux.latestRestorePoint";
    const TITLE: &'static str = "Newest restore point";
    const DESCRIPTION: &'static str = "The newest restore point the approval gateway took in this repository, with HEAD before, after and now (did the repository move on since?).";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations {
        idempotent: false,
        ..Annotations::READ
    };

    async fn call(ctx: CallCtx, input: LatestInput) -> Result<Bridged, ToolError> {
        let mut listed = read(
            &ctx,
            Self::NAME,
            &input.repo_path,
            "/v1/mcp/restore-points",
            &[("limit", "1".to_owned())],
        )
        .await?;
        let newest = listed.data["restorePoints"]
            .as_array()
            .and_then(|points| points.first())
            .cloned()
            .ok_or_else(|| nothing(Self::NAME, 404, None))?;
        let mut point = newest;
        point["metadata"]["currentBranchRef"] = listed.data["current"]["branchRef"].take();
        point["metadata"]["currentHead"] = listed.data["current"]["head"].take();
        listed.data = json!(point);
        Ok(listed)
    }
}
