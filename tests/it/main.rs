//! Integration tests: the real `gitward` binary over stdio, against repositories built
//! with real git in temporary directories. One test binary, one module per tool family.

// Tests start git and gitward directly; the product code may not.
#![allow(clippy::disallowed_methods)]
// A failed unwrap in a test is a test failure with its location, which is what we want.
#![allow(clippy::unwrap_used)]

mod agents;
mod audit;
mod audit_durability;
mod branch;
mod brief;
mod cli;
mod commit_details;
mod common;
mod conflict;
mod diff_text;
mod exec_crash;
mod exec_ops;
mod exec_restore;
mod fleet;
mod hostile;
mod hostile_drivers;
mod hostile_registry;
mod instructions;
mod interop;
mod interop_ts;
mod load;
mod presence;
mod protocol;
mod reach;
mod reads_write_nothing;
mod repo_history;
mod repo_refs;
mod repo_status;
mod scaffold;
mod semantic;
mod specs;
mod specs_cli;
mod specs_reach;
mod submodule;
mod worktree;
