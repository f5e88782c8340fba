//! MCP over stdio: framing, JSON-RPC, protocol eras and the serving loop.

pub mod framing;
mod guard;
pub mod instructions;
pub mod jsonrpc;
pub mod protocol;
pub mod server;

pub use server::{Server, run_tool, settle, unknown_tool};
