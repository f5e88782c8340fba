//! `safety.eventDetails`: one safety-timeline event with what is behind it.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::config::Toolset;
use crate::error::ToolError;
use crate::tools::flux::{Bridged, read, route};
use crate::tools::{Annotations, CallCtx, Tool};

/// `safety.eventDetails`.
pub struct EventDetails;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventInput {
    /// Absolute path of the repository (any directory inside a working tree works).
    pub repo_path: String,
    /// FluxGit workspace id; accepted for compatibility and not needed.
    #[serde(default)]
    pub repo_id: Option<String>,
    /// An event `id` from safety.timeline: `restore:rp_…` or `reflog:HEAD@{n}`.
    #[schemars(length(min = 1, max = 100))]
    pub event_id: String,
}

impl Tool for EventDetails {
    type Input = EventInput;
    type Output = Bridged;

    const NAME: &'static str = "safety.eventDetails";
    const TITLE: &'static str = "Safety event details";
    const DESCRIPTION: &'static str = "One safety.timeline event by eventId, with its whole restore point or reflog entry. A reflog id (reflog:HEAD@{n}) counts from the newest move: read it soon.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations {
        idempotent: false,
        ..Annotations::READ
    };

    async fn call(ctx: CallCtx, input: EventInput) -> Result<Bridged, ToolError> {
        let id = input.event_id;
        if id.is_empty() || id.len() > 100 || id.chars().any(char::is_control) {
            return Err(ToolError::invalid(
                "eventId",
                "expected an event id from safety.timeline",
            ));
        }
        let path = route("/v1/mcp/safety/events/", &id);
        read(&ctx, Self::NAME, &input.repo_path, &path, &[]).await
    }
}
