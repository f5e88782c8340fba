//! Checks of a proposal's common fields, the same on both sides of the wire: the sidecar
//! runs them before it POSTs, the gateway again on receipt (it never trusts the sidecar),
//! and a refusal names the field so a 422 can say what to fix.

use serde_json::Value;

use super::{OPERATION_TYPES, Proposal};
use crate::model::hidden;

/// Operation fields that are free text, shown with their hidden characters revealed;
/// every other string names something (a ref, a path, a remote) and refuses them.
const FREE_TEXT: [&str; 2] = ["message", "patchContent"];

/// The first hidden character in a name inside `value` (the field `key`'s), looking into
/// lists and objects (a plan's steps, a branch deletion's targets).
fn hidden_in_name(key: &str, value: &Value) -> Option<char> {
    match value {
        Value::String(text) if !FREE_TEXT.contains(&key) => hidden::first_hidden(text),
        Value::Array(items) => items.iter().find_map(|v| hidden_in_name(key, v)),
        Value::Object(map) => map.iter().find_map(|(k, v)| hidden_in_name(k, v)),
        _ => None,
    }
}

/// The longest `reason` accepted, in bytes: room for a paragraph, not for a payload.
pub const MAX_REASON_BYTES: usize = 4096;

/// The longest `idempotencyKey`: a 128-character client key behind an operation-type
/// prefix (`branchDelete:` is the longest).
pub const MAX_IDEMPOTENCY_KEY: usize = 160;

/// A common field that fails its check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid `{field}`: {reason}")]
pub struct FieldError {
    /// The wire name of the field.
    pub field: &'static str,
    pub reason: String,
}

fn refuse(field: &'static str, reason: impl Into<String>) -> Result<(), FieldError> {
    Err(FieldError {
        field,
        reason: reason.into(),
    })
}

/// True for a sanitized agent id: 1–64 of `[a-z0-9._-]`.
pub fn is_sanitized_agent_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
}

/// The operations' field names that hold names, for a refusal's `field`.
const FIELD_NAMES: &[&str] = &[
    "name",
    "startPoint",
    "targets",
    "paths",
    "sourceRef",
    "targetRef",
    "remote",
    "branch",
    "ontoRef",
    "currentRef",
    "parentPath",
    "relativePath",
    "path",
    "steps",
    "strategy",
    "mode",
    "action",
    "expectedRecordedOid",
    "expectedCheckedOutOid",
];

fn hidden_reason(c: char) -> String {
    format!(
        "must not contain invisible or text-direction characters (found U+{:04X})",
        u32::from(c)
    )
}

impl Proposal {
    /// Checks the common fields of a proposal sent to the preview path of `operation_type`.
    ///
    /// The operation's own fields are its type's to check; the repository's place inside
    /// the allowed roots is the gateway's.
    pub fn check_common(&self, operation_type: &str) -> Result<(), FieldError> {
        if !OPERATION_TYPES.contains(&operation_type) {
            return refuse("operationType", "not an operation type");
        }
        if self.operation_type != operation_type {
            return refuse("operationType", "differs from the operation in the path");
        }
        if !is_sanitized_agent_id(&self.agent_id) {
            return refuse("agentId", "expected 1-64 of [a-z0-9._-]");
        }
        if self.reason.trim().is_empty() {
            return refuse("reason", "say why the operation is wanted");
        }
        if self.reason.len() > MAX_REASON_BYTES {
            return refuse("reason", format!("longer than {MAX_REASON_BYTES} bytes"));
        }
        if self.requested_at.parse::<jiff::Timestamp>().is_err() {
            return refuse("requestedAt", "expected an RFC 3339 time");
        }
        if let Some(key) = &self.idempotency_key {
            let allowed = |b: u8| b.is_ascii_alphanumeric() || b"._:-".contains(&b);
            if key.is_empty() || key.len() > MAX_IDEMPOTENCY_KEY || !key.bytes().all(allowed) {
                return refuse(
                    "idempotencyKey",
                    format!("expected 1-{MAX_IDEMPOTENCY_KEY} of [A-Za-z0-9._:-]"),
                );
            }
        }
        if let Some(path) = &self.repo_path {
            if !path.starts_with('/') || path.contains('\0') {
                return refuse("repoPath", "expected an absolute path");
            }
            if let Some(c) = hidden::first_hidden(path) {
                return refuse("repoPath", hidden_reason(c));
            }
        }
        let hidden = self
            .fields
            .iter()
            .find_map(|(k, v)| hidden_in_name(k, v).map(|c| (k, c)));
        if let Some((field, c)) = hidden {
            // Named as the operation's own checks name it; a name no operation has is
            // the operation's to refuse.
            let field = FIELD_NAMES.iter().find(|f| **f == field).copied();
            return refuse(field.unwrap_or("fields"), hidden_reason(c));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};

    use super::*;

    fn good() -> Proposal {
        Proposal {
            preview_id: None,
            agent_id: "claude-code".into(),
            operation_type: "merge".into(),
            repo_path: Some("/abs/repo".into()),
            reason: "ship".into(),
            requested_at: "2026-05-28T11:42:09.512Z".into(),
            idempotency_key: Some("merge:auto-1f3c5b9a-0c1d-4e2f-8a9b-0123456789ab".into()),
            fields: Map::new(),
        }
    }

    fn refused(p: &Proposal, path_type: &str) -> &'static str {
        match p.check_common(path_type) {
            Err(e) => e.field,
            Ok(()) => panic!("accepted {p:?}"),
        }
    }

    #[test]
    fn a_well_formed_proposal_passes() {
        assert_eq!(good().check_common("merge"), Ok(()));
        let bare = Proposal {
            idempotency_key: None,
            repo_path: None,
            ..good()
        };
        assert_eq!(bare.check_common("merge"), Ok(()));
    }

    #[test]
    fn each_bad_common_field_is_named() {
        assert_eq!(refused(&good(), "rebase"), "operationType");
        let unknown = Proposal {
            operation_type: "gc".into(),
            ..good()
        };
        assert_eq!(refused(&unknown, "gc"), "operationType");
        for agent in ["", "Claude", "a b", "x/y", &"a".repeat(65)] {
            let p = Proposal {
                agent_id: agent.into(),
                ..good()
            };
            assert_eq!(refused(&p, "merge"), "agentId", "{agent}");
        }
        for reason in ["", "   ", &"r".repeat(MAX_REASON_BYTES + 1)] {
            let p = Proposal {
                reason: reason.into(),
                ..good()
            };
            assert_eq!(refused(&p, "merge"), "reason");
        }
        for time in ["", "yesterday", "2026-05-28 11:42"] {
            let p = Proposal {
                requested_at: time.into(),
                ..good()
            };
            assert_eq!(refused(&p, "merge"), "requestedAt", "{time}");
        }
        for key in [
            "",
            "a b",
            "k/1",
            "k\u{e9}",
            &"k".repeat(MAX_IDEMPOTENCY_KEY + 1),
        ] {
            let p = Proposal {
                idempotency_key: Some(key.into()),
                ..good()
            };
            assert_eq!(refused(&p, "merge"), "idempotencyKey", "{key}");
        }
        for path in ["repo", "", "./repo", "/a\0b"] {
            let p = Proposal {
                repo_path: Some(path.into()),
                ..good()
            };
            assert_eq!(refused(&p, "merge"), "repoPath", "{path:?}");
        }
    }

    #[test]
    fn names_with_invisible_or_direction_characters_are_refused() {
        let with = |fields: serde_json::Value| Proposal {
            fields: fields.as_object().cloned().unwrap_or_default(),
            ..good()
        };
        let p = with(json!({"sourceRef": "ma\u{200B}in"}));
        assert_eq!(refused(&p, "merge"), "sourceRef");
        let p = with(json!({"steps": [{"operationType": "discard", "paths": ["a\u{202E}b"]}]}));
        assert_eq!(refused(&p, "merge"), "steps");
        let p = Proposal {
            repo_path: Some("/r\u{2066}epo".into()),
            ..good()
        };
        assert_eq!(refused(&p, "merge"), "repoPath");
        // Free text keeps them; the page and the terminal show them escaped.
        let p = with(json!({"message": "fix\u{202E}", "steps": [{"patchContent": "\u{200B}"}]}));
        assert_eq!(p.check_common("merge"), Ok(()));
    }

    #[test]
    fn the_error_reads_as_a_field_and_a_fix() {
        let p: Proposal = serde_json::from_value(json!({"agentId":"a","operationType":"merge",
            "reason":"r","requestedAt":"never"}))
        .unwrap();
        let e = p.check_common("merge").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid `requestedAt`: expected an RFC 3339 time"
        );
    }
}
