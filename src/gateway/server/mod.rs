//! The approval gateway's own side (`gitward gateway`): the proposal lifecycle and its
//! durable store. It never imports the MCP transport or the tools.

pub mod lifecycle;
pub mod store;
