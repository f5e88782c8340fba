//! Agent tools: `agents.presence`.

pub mod presence;
