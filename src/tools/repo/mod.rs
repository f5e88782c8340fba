//! Repository-wide read tools, one file each, named after the tool.

pub mod branch_stack;
pub mod brief;
pub mod conflict_preflight;
pub mod history;
pub mod reflog;
pub mod refs;
pub mod scope;
pub mod status;
