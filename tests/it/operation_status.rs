//! `operation.status` against a gateway that answers, refuses, misbehaves or is absent:
//! every outcome is one of the product's codes, and nothing hangs.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{Fixture, assert_refused};
use crate::operation_peer::{Peer, Reply};

pub const ID: &str = "1f3c5b9a-0c1d-4e2f-8a9b-0123456789ab";

/// A lifecycle record as this gateway writes it.
pub fn record(status: &str) -> Value {
    json!({
        "previewId": ID, "operationType": "commit", "status": status,
        "agentId": "gitward-tests", "repoPath": "/abs/repo", "reason": "ship it",
        "createdAt": "2026-05-28T11:42:09.512Z", "expiresAt": "2026-05-28T12:12:09.512Z",
        "decidedAt": null, "decidedBy": null, "rejectReason": null, "result": null,
    })
}

fn status_via(fx: &Fixture, reply: Reply) -> (Value, Vec<crate::operation_peer::Request>) {
    let peer = Peer::start(vec![reply]);
    let result = fx
        .server(&[], &peer.env())
        .call("operation.status", json!({ "previewId": ID }));
    (result, peer.requests())
}

fn code(result: &Value) -> &Value {
    &result["error"]["code"]
}

#[test]
fn operation_status_live_and_completed_are_accepted_results() {
    let fx = Fixture::new();
    for live in ["pending", "approved", "executing"] {
        let (result, requests) = status_via(&fx, Reply::Json(200, record(live)));
        assert_eq!(result["accepted"], true, "{result}");
        assert_eq!(result["status"], live);
        assert_eq!(result["source"], "fluxgit-gateway");
        assert_eq!(result["readOnly"], true);
        assert_eq!(
            result["nextAction"],
            json!({"tool": "operation_status", "data": {"previewId": ID}, "afterMs": 2000})
        );
        assert_eq!(result["data"], record(live));
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].method, "GET");
        assert_eq!(requests[0].path, format!("/v1/mcp/operation/status/{ID}"));
        assert_eq!(requests[0].header("origin"), None);
    }
    let mut done = record("completed");
    done["result"] = json!({"commitSha": "9a8b7c6d", "restorePointId": "rp_1", "extra": [1]});
    let (result, _) = status_via(&fx, Reply::Json(200, done.clone()));
    assert_eq!(result["status"], "completed");
    assert!(result.get("nextAction").is_none(), "{result}");
    // Passed through whole, fields this gitward does not know included.
    assert_eq!(result["data"], done);
}

#[test]
fn operation_status_endings_without_completion_are_10004_with_the_record() {
    let fx = Fixture::new();
    for ended in ["rejected", "failed", "expired", "cancelled"] {
        let mut body = record(ended);
        if ended == "failed" {
            body["result"] = json!({"failure": "stale", "moved": [{"what": "HEAD"}]});
        }
        let (result, _) = status_via(&fx, Reply::Json(200, body.clone()));
        assert_eq!(code(&result), 10004, "{ended}: {result}");
        assert_eq!(result["error"]["data"]["status"], ended);
        assert_eq!(result["error"]["data"]["statusBody"], body);
        assert_eq!(result["readOnly"], true);
    }
    let (expired, _) = status_via(&fx, Reply::Json(200, record("expired")));
    let message = expired["error"]["message"].as_str().unwrap();
    assert!(message.contains("not rejected"), "{message}");
}

#[test]
fn operation_status_misbehaving_gateway_maps_to_the_product_codes() {
    let fx = Fixture::new();
    let cases: Vec<(&str, Reply, i64)> = vec![
        (
            "404",
            Reply::Json(404, json!({"error": {"code": "notFound", "message": "m"}})),
            10005,
        ),
        (
            "500",
            Reply::Json(500, json!({"error": {"code": "x", "message": "m"}})),
            10003,
        ),
        ("garbage", Reply::Raw(b"\x00\x01garbage\r\n\r\n"), 10003),
        (
            "not json",
            Reply::Typed(200, "application/json", "{nope".into()),
            10003,
        ),
        (
            "html",
            Reply::Typed(200, "text/html", record("pending").to_string()),
            10003,
        ),
        (
            "a list",
            Reply::Json(200, json!([record("pending")])),
            10003,
        ),
        (
            "unknown state",
            Reply::Json(200, {
                let mut r = record("x");
                r["status"] = json!("timedOut");
                r
            }),
            10003,
        ),
        (
            "another preview",
            Reply::Json(200, {
                let mut r = record("pending");
                r["previewId"] = json!("0f3c5b9a-0c1d-4e2f-8a9b-0123456789ab");
                r
            }),
            10003,
        ),
        (
            "unsafe id",
            Reply::Json(200, {
                let mut r = record("pending");
                r["previewId"] = json!("../../etc/passwd");
                r
            }),
            10007,
        ),
        (
            "redirect",
            Reply::Typed(302, "application/json", "{}".into()),
            10003,
        ),
        (
            "over 1 MiB",
            Reply::Typed(
                200,
                "application/json",
                format!("{{\"pad\":\"{}\"}}", "x".repeat(1_100_000)),
            ),
            10003,
        ),
        ("closed", Reply::Silent(Duration::ZERO), 10003),
    ];
    for (what, reply, expected) in cases {
        let (result, _) = status_via(&fx, reply);
        assert_eq!(code(&result), expected, "{what}: {result}");
        if expected == 10003 {
            assert_eq!(result["error"]["data"]["gatewayConfigured"], true, "{what}");
        }
    }
}

#[test]
fn operation_status_slow_or_absent_gateway_is_10003_never_a_hang() {
    let fx = Fixture::new();
    let (slow, _) = status_via(&fx, Reply::Silent(Duration::from_secs(8)));
    assert_eq!(code(&slow), 10003, "{slow}");
    assert_eq!(slow["error"]["data"]["reason"], "timeout");

    let closed = Peer::closed_addr();
    let refused = fx
        .server(&[], &[("FLUXGIT_MCP_HANDSHAKE_ADDR", &closed)])
        .call("operation.status", json!({ "previewId": ID }));
    assert_eq!(code(&refused), 10003, "{refused}");
    assert_eq!(refused["error"]["data"]["reason"], "unreachable");

    let none = fx.call("operation.status", json!({ "previewId": ID }));
    assert_eq!(code(&none), 10003, "{none}");
    assert_eq!(none["error"]["data"]["gatewayConfigured"], false);
    assert_eq!(none["error"]["data"]["reason"], "not configured");

    for bad in ["example.com:80", "https://127.0.0.1:1", "127.0.0.1"] {
        let invalid = fx
            .server(&[], &[("FLUXGIT_MCP_HANDSHAKE_ADDR", bad)])
            .call("operation.status", json!({ "previewId": ID }));
        assert_eq!(code(&invalid), 10003, "{bad}: {invalid}");
        assert_eq!(
            invalid["error"]["data"]["reason"],
            "invalid handshake address"
        );
    }
}

#[test]
fn operation_status_bad_input_is_refused_before_any_request() {
    let fx = Fixture::new();
    let peer = Peer::start(vec![Reply::Json(200, record("pending"))]);
    let mut server = fx.server(&[], &peer.env());
    assert_refused(
        &mut server,
        "operation.status",
        &json!({}),
        "previewId",
        &[
            json!("../../v1/mcp/operation/cancel/x"),
            json!(ID.to_uppercase()),
            json!(""),
            json!(7),
            json!(format!("{{{ID}}}")),
        ],
    );
    let missing = server.call("operation.status", json!({}));
    assert_eq!(missing["error"]["data"]["field"], "previewId");
    let extra = server.call("operation.status", json!({"previewId": ID, "x": 1}));
    assert_eq!(extra["error"]["data"]["field"], "x");
    assert!(peer.requests().is_empty());
}
