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
//! `transport` has two front ends over one dispatch: stdio, and Streamable HTTP on a
//! loopback port (`transport::http`), where a workspace capability in the URL decides
//! which workspace the spec tools see.
//!
//! Each arrow is a module boundary: nothing below `tools` knows a JSON-RPC code, and
//! nothing in `git`, `parse` or `process` knows MCP (`tests/it/architecture.rs` checks).
//! Every git command line is built in [`git`], beside the parser of its output; tools,
//! operations and the gateway ask typed queries and writes (`tests/it/architecture_doors.rs`
//! checks, and the runner is private to `git`).
//! Side paths: every call is reported to [`observe`], where `audit` and `presence` see
//! it; the spec tools run the OpenSpec CLI through `specs`. Shared leaves: [`sink`] (how
//! bytes are taken as they stream, for `process` and `parse`), [`progress`] (how far long
//! work has come, for an MCP client or a terminal to hear), [`model`] (result types
//! and newtypes such as `Oid`), and [`config`], the one reader of the environment. The
//! local semantic diff engine, [`semantic`], serves `tools::diff` and the gateway alike
//! and names neither.
//!
//! The write side never writes from the server: `tools::operation` turns a call into a
//! proposal for the approval gateway through [`gateway::client`]. The gateway
//! (`gitward gateway`, [`gateway::server`]) stores it, shows it to a person, and once
//! approved executes it with the vocabulary in [`operation`] (fields, pins, preview,
//! execution per operation type), behind a restore point:
//!
//! ```text
//! tools::operation ─HTTP─ gateway::server (handshake, human page, store, executor)
//!                                       ─ operation ─ git (queries and writes) ─ process
//! ```
//!
//! `operation` names neither `tools` nor `transport`, and the gateway server names
//! neither, so the two processes share one vocabulary and nothing else.

pub mod audit;
pub mod cli;
pub mod config;
pub mod error;
pub mod gateway;
pub mod git;
pub mod listen;
pub mod model;
pub mod observe;
pub mod operation;
pub mod parse;
pub mod presence;
pub mod process;
pub mod progress;
pub mod registry;
pub mod safe_file;
pub mod semantic;
pub mod sink;
pub mod specs;
pub mod tools;
pub mod transport;
