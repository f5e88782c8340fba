//! Tool failures and their one mapping onto the MCP error codes of the product contract.
//!
//! Everything about a single tool call (bad arguments, a failed git command, a gateway
//! outcome) becomes a tool result with `isError: true` and the payload
//! `{tool, readOnly, error: {code, message, data}}`, so the agent can read it and correct
//! itself. Only malformed JSON-RPC, unknown methods and unknown tools are protocol errors.

use serde_json::{Value, json};

use crate::process::RunError;

/// JSON-RPC and product error codes.
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    pub const UNSUPPORTED_VERSION: i64 = -32022;
    pub const GATEWAY_NOT_CONFIGURED: i64 = 10001;
    pub const GATEWAY_NOTHING_TO_SERVE: i64 = 10002;
    pub const HANDSHAKE_UNAVAILABLE: i64 = 10003;
    pub const PROPOSAL_ENDED: i64 = 10004;
    pub const PREVIEW_UNKNOWN: i64 = 10005;
    pub const PROPOSAL_REFUSED: i64 = 10006;
    pub const PREVIEW_ID_UNSAFE: i64 = 10007;
    pub const GIT_FAILED: i64 = 10010;
    pub const AGENT_DETECTION_DISABLED: i64 = 10011;
}

/// Raw git stderr is trimmed to this many bytes before it reaches a result.
const DETAILS_CAP: usize = 2048;

/// A failed tool call, ready to be shown to the agent.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    pub code: i64,
    pub message: String,
    pub data: Value,
}

impl ToolError {
    pub fn new(code: i64, message: impl Into<String>, data: Value) -> Self {
        ToolError {
            code,
            message: message.into(),
            data,
        }
    }

    /// Bad input: names the field and says what to fix.
    pub fn invalid(field: &str, reason: impl Into<String>) -> Self {
        let reason = reason.into();
        ToolError::new(
            code::INVALID_PARAMS,
            format!("Invalid argument `{field}`: {reason}"),
            json!({ "field": field, "reason": reason }),
        )
    }

    /// A local read-only git command failed.
    pub fn git(args: &[String], code: Option<i32>, stderr: &str) -> Self {
        let details = trim_details(stderr);
        let message = match details.lines().find(|l| !l.trim().is_empty()) {
            Some(first) => format!("git failed: {}", first.trim()),
            None => "git failed".to_owned(),
        };
        ToolError::new(
            code::GIT_FAILED,
            message,
            json!({ "command": args, "exitCode": code, "details": details }),
        )
    }

    /// A local git operation could not be done for a reason we know (bare repository, …).
    pub fn unsupported(reason: impl Into<String>) -> Self {
        let reason = reason.into();
        ToolError::new(
            code::GIT_FAILED,
            reason.clone(),
            json!({ "reason": reason }),
        )
    }

    /// A bug: never expected in normal operation.
    pub fn internal(details: impl Into<String>) -> Self {
        ToolError::new(
            code::INTERNAL_ERROR,
            "Internal error",
            json!({ "details": details.into() }),
        )
    }

    pub fn from_run(args: &[String], err: RunError) -> Self {
        match err {
            RunError::Cancelled => ToolError::new(
                code::GIT_FAILED,
                "The request was cancelled",
                json!({ "reason": "cancelled" }),
            ),
            RunError::Timeout { program, after } => ToolError::new(
                code::GIT_FAILED,
                format!("{program} did not finish within {}s", after.as_secs()),
                json!({ "command": args, "reason": "timeout", "timeoutMs": after.as_millis() as u64 }),
            ),
            RunError::Unsupported(reason) => ToolError::new(
                code::GIT_FAILED,
                reason.clone(),
                json!({ "command": args, "reason": reason }),
            ),
            other => ToolError::new(
                code::GIT_FAILED,
                other.to_string(),
                json!({ "command": args, "reason": "spawn" }),
            ),
        }
    }
}

impl From<crate::git::GitError> for ToolError {
    fn from(err: crate::git::GitError) -> Self {
        use crate::git::GitError;
        match err {
            GitError::Invalid { arg, reason } => ToolError::invalid(&arg, reason),
            GitError::Failed {
                command,
                code,
                stderr,
            } => ToolError::git(&command, code, &stderr),
            GitError::Unsupported(reason) => ToolError::unsupported(reason),
            GitError::Run { command, source } => ToolError::from_run(&command, source),
            GitError::Parse(err) => err.into(),
            GitError::Stalled(stalled) => stalled.into(),
            GitError::Internal(details) => ToolError::internal(details),
        }
    }
}

/// The write handshake's one mapping onto the product codes: 10003 whenever no answer of
/// the gateway can be relied on (none configured, an invalid address, unreachable, too
/// slow, malformed), 10005 for an id it does not know, 10006 for a refusal (its body
/// passed on whole), 10007 for an unsafe preview id.
impl From<crate::gateway::client::GatewayError> for ToolError {
    fn from(err: crate::gateway::client::GatewayError) -> Self {
        use crate::gateway::client::GatewayError as E;
        let message = err.to_string();
        let unavailable = |configured: bool, reason: &str, details: Option<String>| {
            ToolError::new(
                code::HANDSHAKE_UNAVAILABLE,
                message.clone(),
                json!({
                    "tier": "fluxgit-write-handshake",
                    "gatewayConfigured": configured,
                    "reason": reason,
                    "details": details,
                    "agentRecommendation": if configured {
                        "Check that `gitward gateway` is running at the configured address, then retry with the same idempotencyKey."
                    } else {
                        "Start `gitward gateway` and set FLUXGIT_MCP_HANDSHAKE_ADDR to its handshake address (127.0.0.1:PORT)."
                    },
                }),
            )
        };
        match err {
            E::NotConfigured => unavailable(false, "not configured", None),
            E::InvalidAddress(why) => unavailable(false, "invalid handshake address", Some(why)),
            E::Unreachable(why) => unavailable(true, "unreachable", Some(why)),
            E::Timeout(after) => unavailable(
                true,
                "timeout",
                Some(format!("no answer within {} ms", after.as_millis())),
            ),
            E::Malformed(why) => unavailable(true, "malformed answer", Some(why)),
            E::Cancelled => unavailable(true, "cancelled", None),
            E::Refused { status, body } => ToolError::new(
                code::PROPOSAL_REFUSED,
                match body.pointer("/error/message").and_then(Value::as_str) {
                    Some(why) => format!("{message}: {}", trim_details(why)),
                    None => message,
                },
                json!({ "httpStatus": status, "gateway": body }),
            ),
            E::UnknownPreview(id) => ToolError::new(
                code::PREVIEW_UNKNOWN,
                message,
                json!({
                    "previewId": id,
                    "reason": "unknown previewId",
                    "agentRecommendation": "Use the previewId a preview tool returned. A proposal the gateway pruned after its retention ended cannot be read again; do not propose again only because of a restart.",
                }),
            ),
            E::UnsafePreviewId(shown) => ToolError::new(
                code::PREVIEW_ID_UNSAFE,
                format!("{message}; it was not followed"),
                json!({ "previewId": shown, "reason": "expected a lowercase hyphenated UUID" }),
            ),
        }
    }
}

/// A parse failure is our bug or a git we do not understand; never the caller's.
impl From<crate::parse::ParseError> for ToolError {
    fn from(err: crate::parse::ParseError) -> Self {
        ToolError::internal(err.to_string())
    }
}

impl From<crate::safe_file::Stalled> for ToolError {
    fn from(err: crate::safe_file::Stalled) -> Self {
        use crate::safe_file::Stalled;
        let reason = match err {
            Stalled::Deadline => "timeout",
            Stalled::Cancelled => "cancelled",
            Stalled::Failed => return ToolError::internal(err.to_string()),
        };
        ToolError::new(
            code::GIT_FAILED,
            err.to_string(),
            json!({ "reason": reason }),
        )
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for ToolError {}

fn trim_details(stderr: &str) -> String {
    if stderr.len() <= DETAILS_CAP {
        return stderr.to_owned();
    }
    let mut end = DETAILS_CAP;
    while !stderr.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &stderr[..end])
}
