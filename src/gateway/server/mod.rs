//! The approval gateway's own side (`gitward gateway`): the proposal lifecycle, its
//! durable store and the agent policy. It never imports the MCP transport or the tools.

pub mod app;
pub mod audit;
pub mod audit_check;
pub mod audit_gap;
pub mod auth;
pub mod events;
pub mod executor;
pub mod handshake;
pub mod human;
pub mod instance;
pub mod lifecycle;
pub mod policy;
pub mod restore;
pub mod run;
pub mod store;
pub mod ui;
