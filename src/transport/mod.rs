//! MCP transports (stdio, Streamable HTTP) over one dispatch: framing, JSON-RPC,
//! protocol eras and the serving loops.

pub mod dispatch;
pub mod elicit;
pub mod framing;
mod guard;
pub mod http;
pub mod instructions;
pub mod jsonrpc;
pub mod logging;
pub mod opening;
pub mod outgoing;
pub mod protocol;
pub mod reply;
mod rounds;
pub mod server;
mod settle;
pub mod stdin;

pub use server::{Server, run_tool, settle, unknown_tool};
