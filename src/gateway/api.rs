//! The `/v1/mcp/…` wire types of the write handshake, shared by the sidecar's client and
//! the gateway's server so the two sides cannot drift.
//!
//! The shapes follow the product contract exactly: a proposal is the common fields plus
//! the operation's own fields (kept opaque here; their vocabulary belongs to the operation
//! types), the gateway answers `202 {previewId, status, expiresAt}`, a status read returns
//! the lifecycle record, and every refusal is `{error:{code,message,details}}`. Only the
//! eight lifecycle states of the contract exist; an unknown state is refused on read rather
//! than passed on, so neither side can invent one.

mod check;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use check::{FieldError, MAX_IDEMPOTENCY_KEY, MAX_REASON_BYTES, is_sanitized_agent_id};

/// The path of a proposal for `operation_type`.
pub fn preview_path(operation_type: &str) -> String {
    format!("/v1/mcp/operation/preview/{operation_type}")
}

/// The path of the status record of `preview_id` (a canonical id: see [`is_canonical_preview_id`]).
pub fn status_path(preview_id: &str) -> String {
    format!("/v1/mcp/operation/status/{preview_id}")
}

/// The path that cancels `preview_id` (a canonical id).
pub fn cancel_path(preview_id: &str) -> String {
    format!("/v1/mcp/operation/cancel/{preview_id}")
}

/// The operation types a proposal may name, as they appear in the preview path.
pub const OPERATION_TYPES: [&str; 12] = [
    "merge",
    "rebase",
    "discard",
    "reset",
    "patch",
    "plan",
    "worktree",
    "commit",
    "push",
    "branch",
    "branchDelete",
    "submodulePointer",
];

/// True when `id` is a canonical preview id: a UUID in lowercase hyphenated form.
///
/// The id is spliced into URL paths, store keys and ref names, so only this exact
/// 36-character form is accepted (no braces, no uppercase, no `urn:uuid:`).
pub fn is_canonical_preview_id(id: &str) -> bool {
    let b = id.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            _ => c.is_ascii_digit() || (b'a'..=b'f').contains(&c),
        })
}

/// A proposal as POSTed by a sidecar: the common fields plus the operation's own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Proposal {
    /// The sidecar's suggestion; the gateway's answer carries the canonical id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview_id: Option<String>,
    /// The sanitized, self-declared client name: attribution, never identity.
    pub agent_id: String,
    pub operation_type: String,
    /// Optional only for operations that name their repositories themselves (`branchDelete`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo_path: Option<String>,
    pub reason: String,
    /// RFC 3339 UTC with milliseconds, as the sidecar's clock saw it.
    pub requested_at: String,
    /// Scoped to the operation type; a retry with the same key resolves to the same proposal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    /// The operation's own fields, validated by its type.
    #[serde(flatten)]
    pub fields: Map<String, Value>,
}

/// The lifecycle states, exactly the contract's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Status {
    Pending,
    Approved,
    Executing,
    Completed,
    Failed,
    Rejected,
    Cancelled,
    Expired,
}

impl Status {
    /// Every state, in lifecycle order.
    pub const ALL: [Status; 8] = [
        Status::Pending,
        Status::Approved,
        Status::Executing,
        Status::Completed,
        Status::Failed,
        Status::Rejected,
        Status::Cancelled,
        Status::Expired,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Approved => "approved",
            Status::Executing => "executing",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Rejected => "rejected",
            Status::Cancelled => "cancelled",
            Status::Expired => "expired",
        }
    }

    /// The state named `name`, or `None` for anything the contract does not define.
    pub fn parse(name: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// True once nothing more can happen to the proposal.
    pub fn is_terminal(self) -> bool {
        !matches!(self, Status::Pending | Status::Approved | Status::Executing)
    }
}

/// The `202` (new) or `200` (idempotent retry) answer to a proposal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Accepted {
    pub preview_id: String,
    pub status: Status,
    pub expires_at: String,
}

/// Where a human decision was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Channel {
    /// The approval page.
    Web,
    /// `gitward approve` / `gitward reject` on a terminal.
    Tty,
}

impl Channel {
    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Web => "web",
            Channel::Tty => "tty",
        }
    }

    pub fn parse(name: &str) -> Option<Channel> {
        [Channel::Web, Channel::Tty]
            .into_iter()
            .find(|c| c.as_str() == name)
    }
}

/// Who decided, in `decidedBy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecidedBy {
    pub channel: Channel,
}

/// Why an execution failed, in `result.failure`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FailureKind {
    /// A precondition pinned at proposal time moved.
    Stale,
    /// Git refused the write.
    Git,
    /// Found mid-execution after a crash; reconciliation says what it found.
    Interrupted,
    /// A plan step failed and the whole plan was undone.
    RolledBack,
}

/// The outcome of an execution: what the operation reports (`commitSha`, `conflicts`,
/// per-branch results, …) plus the two fields every outcome may carry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationResult {
    /// Set exactly when the proposal `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<FailureKind>,
    /// The restore point taken before the first write, whenever one was taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore_point_id: Option<String>,
    #[serde(flatten)]
    pub fields: Map<String, Value>,
}

/// What `GET /v1/mcp/operation/status/{previewId}` returns.
///
/// This gateway always writes every field. On read only the three the contract's own
/// example carries (`previewId`, `operationType`, `status`) are required, so a sidecar
/// can read the leaner record of another gateway; the others then read as empty.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusRecord {
    pub preview_id: String,
    pub operation_type: String,
    pub status: Status,
    #[serde(default)]
    pub agent_id: String,
    #[serde(default)]
    pub repo_path: Option<String>,
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub created_at: String,
    #[serde(default)]
    pub expires_at: String,
    /// When the proposal left `pending`, whatever ended it.
    #[serde(default)]
    pub decided_at: Option<String>,
    /// Set for human decisions (approve, reject) only.
    #[serde(default)]
    pub decided_by: Option<DecidedBy>,
    #[serde(default)]
    pub reject_reason: Option<String>,
    #[serde(default)]
    pub result: Option<OperationResult>,
}

/// The body of `POST /v1/mcp/operation/cancel/{previewId}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelRequest {
    pub agent_id: String,
}

/// The `200` answer to a cancellation (`previewId` is optional on read: the contract
/// only promises the status).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cancelled {
    #[serde(default)]
    pub preview_id: String,
    pub status: Status,
}

/// The refusal codes this gateway sends, each with its HTTP status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// 403: the agent policy denied the proposal.
    PolicyDenied,
    /// 403: only the proposing agent may cancel.
    NotOwner,
    /// 404: no such proposal.
    NotFound,
    /// 409: the proposal is no longer in the state the request needs.
    Conflict,
    /// 409: an idempotency key was reused with different arguments.
    IdempotencyMismatch,
    /// 413: the body is over the cap.
    TooLarge,
    /// 415: the body is not `application/json`.
    UnsupportedMediaType,
    /// 422: a field failed validation (`details.field` names it).
    Invalid,
    /// 429: the agent has too many pending proposals.
    QuotaExceeded,
    /// 501: the route exists in the protocol but not in this gateway.
    NotImplemented,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::PolicyDenied => "policyDenied",
            ErrorCode::NotOwner => "notOwner",
            ErrorCode::NotFound => "notFound",
            ErrorCode::Conflict => "conflict",
            ErrorCode::IdempotencyMismatch => "idempotencyMismatch",
            ErrorCode::TooLarge => "tooLarge",
            ErrorCode::UnsupportedMediaType => "unsupportedMediaType",
            ErrorCode::Invalid => "invalid",
            ErrorCode::QuotaExceeded => "quotaExceeded",
            ErrorCode::NotImplemented => "notImplemented",
        }
    }

    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::PolicyDenied | ErrorCode::NotOwner => 403,
            ErrorCode::NotFound => 404,
            ErrorCode::Conflict | ErrorCode::IdempotencyMismatch => 409,
            ErrorCode::TooLarge => 413,
            ErrorCode::UnsupportedMediaType => 415,
            ErrorCode::Invalid => 422,
            ErrorCode::QuotaExceeded => 429,
            ErrorCode::NotImplemented => 501,
        }
    }
}

/// A refusal: `{error:{code,message,details}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

/// The inside of [`ErrorBody`]. `code` stays a string on read: another gateway may send
/// codes this one does not, and the sidecar passes the body through unchanged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorDetail {
    pub code: String,
    pub message: String,
    #[serde(default)]
    pub details: Value,
}

impl ErrorBody {
    pub fn new(code: ErrorCode, message: impl Into<String>, details: Value) -> ErrorBody {
        ErrorBody {
            error: ErrorDetail {
                code: code.as_str().to_owned(),
                message: message.into(),
                details,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn proposal_keeps_the_operation_fields_beside_the_common_ones() {
        let wire = json!({
            "previewId": "1f3c5b9a-0000-4000-8000-000000000001",
            "agentId": "external-mcp-sidecar",
            "operationType": "merge",
            "repoPath": "/Users/dev/projects/checkout",
            "sourceRef": "feature/cart-redesign",
            "targetRef": "main",
            "reason": "Cart redesign work is complete; tests pass on the feature branch.",
            "strategy": "merge",
            "requestedAt": "2026-05-28T11:42:09.512Z",
            "idempotencyKey": "merge:auto-1"
        });
        let p: Proposal = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(p.agent_id, "external-mcp-sidecar");
        assert_eq!(p.idempotency_key.as_deref(), Some("merge:auto-1"));
        assert_eq!(p.fields.len(), 3);
        assert_eq!(p.fields["sourceRef"], "feature/cart-redesign");
        assert!(!p.fields.contains_key("agentId"));
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);
    }

    #[test]
    fn proposal_without_common_fields_is_refused() {
        let missing_reason = json!({"agentId":"a","operationType":"merge","requestedAt":"x"});
        assert!(serde_json::from_value::<Proposal>(missing_reason).is_err());
        let missing_agent = json!({"operationType":"merge","reason":"r","requestedAt":"x"});
        assert!(serde_json::from_value::<Proposal>(missing_agent).is_err());
    }

    #[test]
    fn every_state_round_trips_and_unknown_states_are_refused() {
        for s in Status::ALL {
            let v = serde_json::to_value(s).unwrap();
            assert_eq!(v, json!(s.as_str()));
            assert_eq!(serde_json::from_value::<Status>(v).unwrap(), s);
            assert_eq!(Status::parse(s.as_str()), Some(s));
        }
        for bad in ["timeout", "Pending", "PENDING", "denied", "", "interrupted"] {
            assert!(
                serde_json::from_value::<Status>(json!(bad)).is_err(),
                "{bad}"
            );
            assert_eq!(Status::parse(bad), None, "{bad}");
        }
        let record = json!({"previewId":"x","operationType":"merge","status":"timedOut",
            "agentId":"a","reason":"r","createdAt":"t","expiresAt":"t"});
        assert!(serde_json::from_value::<StatusRecord>(record).is_err());
    }

    #[test]
    fn terminal_states_are_the_five_endings() {
        let terminal: Vec<_> = Status::ALL
            .into_iter()
            .filter(|s| s.is_terminal())
            .collect();
        assert_eq!(
            terminal,
            [
                Status::Completed,
                Status::Failed,
                Status::Rejected,
                Status::Cancelled,
                Status::Expired
            ]
        );
    }

    #[test]
    fn status_record_round_trips_with_result_and_failure() {
        let wire = json!({
            "previewId": "1f3c5b9a-0000-4000-8000-000000000001",
            "operationType": "merge",
            "status": "failed",
            "agentId": "claude-code",
            "repoPath": "/abs/repo",
            "reason": "r",
            "createdAt": "2026-05-28T11:42:09.512Z",
            "expiresAt": "2026-05-28T12:12:09.512Z",
            "decidedAt": "2026-05-28T11:43:00.000Z",
            "decidedBy": {"channel": "web"},
            "rejectReason": null,
            "result": {"failure": "stale", "restorePointId": "rp_1", "moved": {"HEAD": "abc"}}
        });
        let r: StatusRecord = serde_json::from_value(wire.clone()).unwrap();
        let result = r.result.as_ref().unwrap();
        assert_eq!(result.failure, Some(FailureKind::Stale));
        assert_eq!(result.restore_point_id.as_deref(), Some("rp_1"));
        assert_eq!(result.fields["moved"], json!({"HEAD": "abc"}));
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
    }

    #[test]
    fn the_contract_example_status_body_is_readable() {
        let seed = json!({"previewId": "1f3c5b9a-0000-4000-8000-000000000001",
            "operationType": "merge", "status": "completed",
            "result": {"commitSha": "9a8b7c6d", "restorePointId": "rp_2026_05_28_1142",
                       "conflicts": []}});
        let r: StatusRecord = serde_json::from_value(seed).unwrap();
        assert_eq!(r.status, Status::Completed);
        let result = r.result.unwrap();
        assert_eq!(
            result.restore_point_id.as_deref(),
            Some("rp_2026_05_28_1142")
        );
        assert_eq!(result.fields["commitSha"], "9a8b7c6d");
        assert_eq!((r.agent_id.as_str(), r.decided_by), ("", None));
        let lean: Cancelled = serde_json::from_value(json!({"status": "cancelled"})).unwrap();
        assert_eq!(lean.status, Status::Cancelled);
        // The three fields the contract always shows stay required.
        let no_status = json!({"previewId": "x", "operationType": "merge"});
        assert!(serde_json::from_value::<StatusRecord>(no_status).is_err());
    }

    #[test]
    fn failure_kinds_are_the_four_named_ones() {
        for (kind, name) in [
            (FailureKind::Stale, "stale"),
            (FailureKind::Git, "git"),
            (FailureKind::Interrupted, "interrupted"),
            (FailureKind::RolledBack, "rolledBack"),
        ] {
            assert_eq!(serde_json::to_value(kind).unwrap(), json!(name));
        }
        assert!(serde_json::from_value::<FailureKind>(json!("timeout")).is_err());
        assert!(serde_json::from_value::<Channel>(json!("agent")).is_err());
    }

    #[test]
    fn accepted_cancel_and_error_bodies_have_the_contract_shapes() {
        let accepted = Accepted {
            preview_id: "p".into(),
            status: Status::Pending,
            expires_at: "2026-05-28T11:47:09.512Z".into(),
        };
        assert_eq!(
            serde_json::to_value(&accepted).unwrap(),
            json!({"previewId":"p","status":"pending","expiresAt":"2026-05-28T11:47:09.512Z"})
        );
        let cancel: CancelRequest = serde_json::from_value(json!({"agentId":"a"})).unwrap();
        assert_eq!(cancel.agent_id, "a");
        let body = ErrorBody::new(ErrorCode::QuotaExceeded, "too many", json!({"limit": 20}));
        assert_eq!(
            serde_json::to_value(&body).unwrap(),
            json!({"error":{"code":"quotaExceeded","message":"too many","details":{"limit":20}}})
        );
        // Another gateway's code is still readable.
        let foreign: ErrorBody =
            serde_json::from_value(json!({"error":{"code":"E_POLICY","message":"m"}})).unwrap();
        assert_eq!(foreign.error.code, "E_POLICY");
        assert_eq!(foreign.error.details, Value::Null);
        assert_eq!(ErrorCode::QuotaExceeded.http_status(), 429);
        assert_eq!(ErrorCode::PolicyDenied.http_status(), 403);
        assert_eq!(ErrorCode::Invalid.http_status(), 422);
    }

    #[test]
    fn only_lowercase_hyphenated_uuids_are_canonical() {
        assert!(is_canonical_preview_id(
            "1f3c5b9a-0c1d-4e2f-8a9b-0123456789ab"
        ));
        for bad in [
            "1F3C5B9A-0C1D-4E2F-8A9B-0123456789AB",
            "{1f3c5b9a-0c1d-4e2f-8a9b-0123456789ab}",
            "1f3c5b9a0c1d4e2f8a9b0123456789ab",
            "1f3c5b9a-0c1d-4e2f-8a9b-0123456789a",
            "1f3c5b9a-0c1d-4e2f-8a9b-0123456789abc",
            "1f3c5b9a-0c1d-4e2f-8a9b_0123456789ab",
            "../../../../etc/passwd-aaaaaaaaaaaaaa",
            "1f3c5b9a-0c1d-4e2f-8a9b-01234567890g",
            "",
        ] {
            assert!(!is_canonical_preview_id(bad), "{bad}");
        }
        let fresh = uuid::Uuid::new_v4().to_string();
        assert!(is_canonical_preview_id(&fresh));
    }

    #[test]
    fn paths_are_under_v1_mcp() {
        assert_eq!(preview_path("merge"), "/v1/mcp/operation/preview/merge");
        assert_eq!(status_path("x"), "/v1/mcp/operation/status/x");
        assert_eq!(cancel_path("x"), "/v1/mcp/operation/cancel/x");
    }
}
