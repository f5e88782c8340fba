//! A next step a tool suggests to the agent.

use schemars::JsonSchema;
use serde::Serialize;

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Hint {
    /// The tool to call next.
    pub tool: &'static str,
    pub reason: String,
}
