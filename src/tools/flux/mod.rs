//! The FluxGit-required tools: restore points and the safety timeline, read from the
//! approval gateway's read bridge (`flux.*` here, `safety.*` beside).
//!
//! Nothing here is synthesized from local refs: without a gateway these tools answer
//! 10001 with an `upgradeHint`, because a timeline without the restore points would
//! mislead. The repository is checked locally first (allowed roots, canonical path) and
//! only its canonical path goes to the gateway; no run directory or file of the gateway is
//! ever named by a caller or shown in a result.

pub mod latest_restore_point;
pub mod restore_point_details;
pub mod restore_points;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};

use crate::error::{ToolError, code};
use crate::gateway::client::{Client, GatewayError, encode};
use crate::git::repo;
use crate::tools::CallCtx;

/// `source` of every result: the data is the gateway's.
pub const SOURCE: &str = "fluxgit-gateway";

/// What an agent can do without a gateway.
const FREE_SHELL: &str =
    "repo.reflog shows where HEAD has been from local git alone; it knows no restore points.";

/// The result envelope: `{tool, readOnly, source, repoPath, data}`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Bridged {
    pub tool: &'static str,
    pub read_only: bool,
    /// Always `fluxgit-gateway`.
    pub source: &'static str,
    /// The canonical top level of the repository.
    pub repo_path: String,
    /// The gateway's answer, shaped as the contract shows.
    pub data: Value,
}

/// One GET of the read bridge for `repo_path`: the repository must pass the local checks
/// (allowed roots, as every tool), then the gateway must be configured (10001
/// otherwise); `route` is the path with its segments already encoded ([`route()`]).
pub async fn read(
    ctx: &CallCtx,
    tool: &'static str,
    repo_path: &str,
    route: &str,
    query: &[(&str, String)],
) -> Result<Bridged, ToolError> {
    let repo = repo::open(&ctx.config, "repoPath", repo_path, &ctx.cancel).await?;
    let client = Client::from_configured(ctx.config.gateway_addr.as_deref())
        .map_err(|e| bridge_error(tool, e))?;
    let canonical = repo.display();
    let mut pairs = vec![("repoPath", canonical.clone())];
    pairs.extend(query.iter().cloned());
    let data = client
        .read(route, &pairs, &ctx.cancel)
        .await
        .map_err(|e| bridge_error(tool, e))?;
    Ok(Bridged {
        tool,
        read_only: true,
        source: SOURCE,
        repo_path: canonical,
        data,
    })
}

/// A route with one caller-named segment, encoded so it stays one segment.
pub fn route(prefix: &str, segment: &str) -> String {
    format!("{prefix}{}", encode(segment))
}

/// The product codes of the FluxGit-required tier: 10001 (with `upgradeHint`) when no
/// gateway is configured or none answers, 10002 when it answered but has nothing for this
/// id, `-32602` when it refused an argument.
pub fn bridge_error(tool: &'static str, err: GatewayError) -> ToolError {
    let message = err.to_string();
    let not_configured = |configured: bool, reason: &str, details: Option<String>| {
        ToolError::new(
            code::GATEWAY_NOT_CONFIGURED,
            format!("{tool} needs the approval gateway: {message}"),
            json!({
                "tool": tool,
                "tier": "fluxgit",
                "gatewayConfigured": configured,
                "reason": reason,
                "details": details,
                "upgradeHint": "Start `gitward gateway` (it prints its handshake address) and set FLUXGIT_MCP_HANDSHAKE_ADDR=127.0.0.1:PORT in this server's environment. Restore points exist for every operation a person approved through it.",
                "learnMore": "README.md, section \"Approval gateway\"",
                "freeShellAlternative": FREE_SHELL,
            }),
        )
    };
    match err {
        GatewayError::NotConfigured => not_configured(false, "not configured", None),
        GatewayError::InvalidAddress(why) => {
            not_configured(false, "invalid handshake address", Some(why))
        }
        GatewayError::Unreachable(why) | GatewayError::Malformed(why) => {
            not_configured(true, "unreachable", Some(why))
        }
        GatewayError::Timeout(after) => not_configured(
            true,
            "timeout",
            Some(format!("no answer within {} ms", after.as_millis())),
        ),
        GatewayError::Cancelled => not_configured(true, "cancelled", None),
        GatewayError::Refused { status: 422, body } => {
            let field = body
                .pointer("/error/details/field")
                .and_then(Value::as_str)
                .unwrap_or("repoPath");
            let reason = body
                .pointer("/error/details/reason")
                .and_then(Value::as_str)
                .unwrap_or("refused by the gateway");
            ToolError::invalid(field, format!("the gateway refused it: {reason}"))
        }
        GatewayError::Refused { status, body } => nothing(tool, status, Some(body)),
        GatewayError::UnknownPreview(_) | GatewayError::UnsafePreviewId(_) => {
            nothing(tool, 404, None)
        }
    }
}

/// 10002: the gateway answered but has nothing to serve for this request.
pub fn nothing(tool: &'static str, status: u16, body: Option<Value>) -> ToolError {
    ToolError::new(
        code::GATEWAY_NOTHING_TO_SERVE,
        format!("the approval gateway has nothing to serve for this {tool} request"),
        json!({
            "tool": tool,
            "gatewayConfigured": true,
            "httpStatus": status,
            "reason": if status == 404 { "not found" } else { "refused" },
            "gateway": body,
            "agentRecommendation": "List what exists first (flux.restorePoints or safety.timeline for this repoPath) and use an id from that answer.",
            "learnMore": "README.md, section \"Approval gateway\"",
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_gateway_is_10001_with_an_upgrade_hint_and_unknown_ids_10002() {
        for (err, configured) in [
            (GatewayError::NotConfigured, false),
            (GatewayError::InvalidAddress("https".into()), false),
            (GatewayError::Unreachable("refused".into()), true),
        ] {
            let e = bridge_error("flux.restorePoints", err);
            assert_eq!(e.code, code::GATEWAY_NOT_CONFIGURED);
            assert_eq!(e.data["gatewayConfigured"], configured);
            assert_eq!(e.data["tier"], "fluxgit");
            assert!(
                e.data["upgradeHint"]
                    .as_str()
                    .unwrap()
                    .contains("gitward gateway")
            );
        }
        let body =
            json!({"error": {"code": "notFound", "message": "no such thing", "details": null}});
        let e = bridge_error(
            "flux.restorePointDetails",
            GatewayError::Refused { status: 404, body },
        );
        assert_eq!(e.code, code::GATEWAY_NOTHING_TO_SERVE);
        let body = json!({"error": {"code": "invalid", "message": "m", "details": {"field": "repoPath", "reason": "outside"}}});
        let e = bridge_error(
            "safety.timeline",
            GatewayError::Refused { status: 422, body },
        );
        assert_eq!(e.code, code::INVALID_PARAMS);
        assert_eq!(e.data["field"], "repoPath");
    }

    #[test]
    fn a_segment_stays_one_segment() {
        assert_eq!(
            route("/v1/mcp/safety/events/", "reflog:HEAD@{3}"),
            "/v1/mcp/safety/events/reflog%3AHEAD%40%7B3%7D"
        );
        assert_eq!(route("/x/", "../a?b#c"), "/x/%2E%2E%2Fa%3Fb%23c");
    }
}
