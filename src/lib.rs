//! gitward: a Model Context Protocol server that gives coding agents structured, bounded
//! Git context, and routes every change through a human.
//!
//! ```text
//! stdin ─ transport (frames, JSON-RPC, protocol era) ─ tools (registry → typed input)
//!       ─ git (typed values → argv) ─ process (the one spawn site: env, caps, deadline)
//!       ─ parse (bytes → model, one module per porcelain format)
//!       ─ tools (typed output → structuredContent + text) ─ transport ─ stdout
//! ```
//!
//! Each arrow is a module boundary: nothing below `tools` knows a JSON-RPC code, and
//! nothing in `git`, `parse` or `process` knows MCP.

pub mod audit;
pub mod cli;
pub mod config;
pub mod error;
pub mod gateway;
pub mod git;
pub mod model;
pub mod operation;
pub mod parse;
pub mod presence;
pub mod process;
pub mod registry;
pub mod safe_file;
pub mod specs;
pub mod tools;
pub mod transport;
