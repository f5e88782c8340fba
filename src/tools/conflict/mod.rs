//! Conflict tools: `conflict.read` shows the conflict in progress as data.
//! (`repo.conflictPreflight`, which predicts one, lives with the repository tools.)

pub mod read;
