//! `safety.timeline`: restore points and HEAD's moves in one list, newest first.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::config::Toolset;
use crate::error::ToolError;
use crate::git::args::check_ref_name;
use crate::tools::flux::{Bridged, read};
use crate::tools::input::Bounded;
use crate::tools::{Annotations, CallCtx, Tool};

/// `safety.timeline`.
pub struct Timeline;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TimelineInput {
    /// Absolute path of the repository (any directory inside a working tree works).
    pub repo_path: String,
    /// FluxGit workspace id; accepted for compatibility and not needed.
    #[serde(default)]
    pub repo_id: Option<String>,
    /// Events to return after merging, newest first.
    #[serde(default)]
    pub limit: Bounded<1, 200, 50>,
    /// HEAD reflog entries read before merging.
    #[serde(default)]
    pub reflog_limit: Bounded<1, 100, 12>,
    /// Include HEAD's reflog moves.
    #[serde(default = "yes")]
    pub include_reflog: bool,
    /// Include the gateway's restore points.
    #[serde(default = "yes")]
    pub include_restore_points: bool,
    /// The ref whose reflog is merged: `HEAD` (default), a branch (`main`) or a full ref
    /// name. One ref; a name starting with `-` (such as `--all`) is refused.
    #[serde(default)]
    pub ref_name: Option<String>,
}

fn yes() -> bool {
    true
}

impl Tool for Timeline {
    type Input = TimelineInput;
    type Output = Bridged;

    const NAME: &'static str = "safety.timeline";
    const TITLE: &'static str = "Safety timeline";
    const DESCRIPTION: &'static str = "Safety events of one repository, newest first: the gateway's restore points merged with HEAD's reflog moves; an event id goes to safety.eventDetails.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations {
        idempotent: false,
        ..Annotations::READ
    };

    async fn call(ctx: CallCtx, input: TimelineInput) -> Result<Bridged, ToolError> {
        let ref_name = input.ref_name.unwrap_or_else(|| "HEAD".to_owned());
        check_ref_name("refName", &ref_name)?;
        let query = [
            ("limit", input.limit.get().to_string()),
            ("reflogLimit", input.reflog_limit.get().to_string()),
            ("includeReflog", input.include_reflog.to_string()),
            (
                "includeRestorePoints",
                input.include_restore_points.to_string(),
            ),
            ("refName", ref_name),
        ];
        read(
            &ctx,
            Self::NAME,
            &input.repo_path,
            "/v1/mcp/safety/timeline",
            &query,
        )
        .await
    }
}
