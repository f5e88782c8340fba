//! The spec-driven change workflow: OpenSpec changes owned by workspace folders.
//!
//! [`workspace`] is the frozen set of folders a session may touch; [`target`] finds where a
//! change lives (the folder's main worktree or a linked worktree under `.worktrees/`);
//! [`openspec`] runs the CLI; [`metadata`] edits `.openspec.yaml`; [`tasks`] reads
//! `tasks.md`; [`scan`] lists active changes without starting a process per worktree;
//! [`inventory`] lists a project's existing specs.
//! The five tools in `tools/specs/` (one file each) compose these. Domain failures travel inside the
//! tool's state as [`SpecError`] entries, never as protocol errors, so the agent always
//! gets the workflow instruction alongside what went wrong.

pub mod apply_status;
pub mod archive;
pub mod confine;
pub mod events;
pub mod inventory;
pub mod metadata;
pub mod openspec;
pub mod openspec_install;
pub mod scan;
pub mod target;
pub mod tasks;
pub mod workspace;

use serde::Serialize;
use serde_json::Value;

/// One entry of a state's `errors` list.
#[derive(Debug, Clone, Serialize)]
pub struct SpecError {
    /// The kind of failure (`WorkspaceError`, `ProposalError`, `OpenSpecError`, …).
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Box<Value>>,
}

impl SpecError {
    pub fn new(kind: &'static str, code: &str, message: impl Into<String>) -> Self {
        SpecError {
            kind,
            message: message.into(),
            code: Some(code.to_owned()),
            details: None,
        }
    }

    pub fn with(mut self, details: Value) -> Self {
        self.details = (!details.is_null()).then(|| Box::new(details));
        self
    }

    pub fn from_cli(err: openspec::CliError) -> Self {
        let details = err.details();
        SpecError::new("OpenSpecError", &err.code, err.message.clone()).with(details)
    }

    pub fn from_meta(err: &metadata::MetaError) -> Self {
        SpecError::new("MetadataError", err.code(), err.to_string())
    }
}

/// Change names: kebab-case, and no `yyyy-MM-dd-` prefix (OpenSpec would archive such a
/// change under its own name, breaking the archive-path rule).
pub fn check_change_name(name: &str) -> Result<(), String> {
    let b = name.as_bytes();
    let kebab = !b.is_empty()
        && b.len() <= 100
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-');
    if !kebab {
        return Err("must be kebab-case: lowercase letters, digits and `-`, starting with a letter or digit (at most 100 characters)".into());
    }
    if has_date_prefix(name) {
        return Err("must not start with a yyyy-MM-dd- date prefix".into());
    }
    Ok(())
}

pub fn has_date_prefix(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() >= 11
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b'-'
        && b[8..10].iter().all(u8::is_ascii_digit)
        && b[10] == b'-'
}

/// Now as an ISO-8601 UTC timestamp with milliseconds, a plain YAML scalar.
pub fn now_iso() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

/// Today's date in the local time zone, the way OpenSpec dates plans and archives.
pub fn local_date() -> String {
    jiff::Zoned::now().strftime("%Y-%m-%d").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn change_names() {
        for ok in ["add-auth", "a", "v2-api", "2026-11-foo"] {
            assert!(check_change_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "Add",
            "-x",
            "a_b",
            "a b",
            "../x",
            "2026-11-29-foo",
            "x/y",
            "é",
        ] {
            assert!(check_change_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn timestamps_are_plain() {
        let now = now_iso();
        assert_eq!(now.len(), 24, "{now}");
        assert!(now.ends_with('Z'));
    }
}
