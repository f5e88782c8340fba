//! Integration tests: the real `gitward` binary over stdio, against repositories built
//! with real git in temporary directories. One test binary, one module per tool family.

// Tests start git and gitward directly; the product code may not.
#![allow(clippy::disallowed_methods)]
// A failed unwrap in a test is a test failure with its location, which is what we want.
#![allow(clippy::unwrap_used)]

mod agents;
mod architecture;
mod architecture_doors;
mod audit;
mod audit_durability;
mod branch;
mod brief;
mod cli;
mod commit_details;
mod common;
mod conflict;
mod diff_text;
mod exec_capture;
mod exec_capture_import;
mod exec_capture_trees;
mod exec_crash;
mod exec_history;
mod exec_ops;
mod exec_plan;
mod exec_restore;
mod exec_restore_layout;
mod fleet;
mod flux;
mod gateway_audit;
mod gateway_browser;
mod gateway_cli;
mod gateway_crash;
mod gateway_handshake;
mod gateway_human;
mod gateway_lifecycle;
mod gateway_open;
mod gateway_others;
mod gateway_support;
mod gateway_tty;
mod hostile;
mod hostile_drivers;
mod hostile_registry;
mod http;
mod http_cancel;
mod http_interop;
mod instructions;
mod interop;
mod interop_ts;
mod list_size;
mod load;
mod op_branch_delete;
mod op_branch_delete_multi;
mod op_patch;
mod op_path_pins;
mod op_pins;
mod op_push;
mod op_rebase;
mod op_setup;
mod op_submodule;
mod op_support;
mod operation_cancel;
mod operation_e2e;
mod operation_e2e_history;
mod operation_hostile;
mod operation_peer;
mod operation_preview;
mod operation_status;
mod plan_pins;
mod presence;
mod protocol;
mod reach;
mod reads_write_nothing;
mod ref_file;
mod repo_history;
mod repo_refs;
mod repo_status;
mod scaffold;
mod semantic;
mod semantic_engine;
mod specs;
mod specs_cli;
mod specs_reach;
mod status_caches;
mod submodule;
mod worktree;
