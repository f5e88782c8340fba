//! A next step a tool suggests to the agent.

use schemars::JsonSchema;
use serde::Serialize;

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Hint {
    /// The tool to call next, as it is served.
    #[serde(serialize_with = "super::tool_name::serialize_served")]
    pub tool: &'static str,
    #[serde(serialize_with = "super::tool_name::serialize_prose")]
    pub reason: String,
}
