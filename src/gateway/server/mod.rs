//! The approval gateway's own side (`gitward gateway`): the proposal lifecycle, its
//! durable store and the agent policy. It never imports the MCP transport or the tools.

pub mod executor;
pub mod lifecycle;
pub mod policy;
pub mod restore;
pub mod store;
