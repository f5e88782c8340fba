//! Integration tests: the real `gitward` binary over stdio, against repositories built
//! with real git in temporary directories. One test binary, one module per tool family.

// Tests start git and gitward directly; the product code may not.
#![allow(clippy::disallowed_methods)]

mod agents;
mod audit;
mod branch;
mod brief;
mod commit_details;
mod common;
mod conflict;
mod diff_text;
mod fleet;
mod hostile;
mod instructions;
mod interop;
mod interop_ts;
mod presence;
mod protocol;
mod repo_history;
mod repo_refs;
mod repo_status;
mod semantic;
mod specs;
mod submodule;
mod worktree;
