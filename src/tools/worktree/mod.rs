//! Worktree tools: `worktree.changes` (what changed in a working tree) and
//! `worktree.list` (every worktree of a repository).

pub mod changes;
pub mod list;
