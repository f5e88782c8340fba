//! MCP over stdio: framing, JSON-RPC, protocol eras and the serving loop.

pub mod framing;
pub mod instructions;
pub mod jsonrpc;
pub mod protocol;
pub mod server;

pub use server::{CallEvent, CallObserver, Server, run_tool};
