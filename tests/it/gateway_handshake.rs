//! The handshake listener of a real `gitward gateway`: every status code of the protocol,
//! and the refusals that keep browsers and other hosts out.

use serde_json::json;

use super::common::Fixture;
use super::gateway_support::{Gateway, dirty_repo, preview_id, request};

#[test]
fn proposals_answer_with_the_protocols_status_codes() {
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    let gw = Gateway::start(&fixture, &["--max-pending-per-agent", "2"], &[]);

    let first = gw.propose_commit(&repo, "claude-code", Some("commit:k1"));
    assert_eq!(first.status, 202, "{first:?}");
    let id = preview_id(&first);
    assert_eq!(first.json()["status"], "pending");
    assert!(first.json()["expiresAt"].as_str().unwrap().ends_with('Z'));
    first.assert_no_cors();
    // A hint in the body never becomes the id.
    assert_ne!(id, "00000000-0000-4000-8000-000000000001");

    let replay = gw.propose_commit(&repo, "claude-code", Some("commit:k1"));
    assert_eq!((replay.status, preview_id(&replay)), (200, id.clone()));

    let mut other = json!({"agentId": "claude-code", "operationType": "commit",
        "repoPath": repo, "reason": "r", "requestedAt": "2026-05-28T11:42:09.512Z",
        "message": "another message", "stageAll": true, "idempotencyKey": "commit:k1"});
    let mismatch = gw.post_handshake("/v1/mcp/operation/preview/commit", &other);
    assert_eq!(mismatch.status, 409, "{mismatch:?}");
    assert_eq!(mismatch.json()["error"]["code"], "idempotencyMismatch");

    // The cap: claude-code has one pending; a second fits, a third does not.
    assert_eq!(gw.propose_commit(&repo, "claude-code", None).status, 202);
    let over = gw.propose_commit(&repo, "claude-code", None);
    assert_eq!(over.status, 429, "{over:?}");
    assert_eq!(over.json()["error"]["code"], "quotaExceeded");
    assert_eq!(over.json()["error"]["details"]["limit"], 2);

    other["idempotencyKey"] = json!("commit:k2");
    other.as_object_mut().unwrap().remove("message");
    other["agentId"] = json!("codex");
    let invalid = gw.post_handshake("/v1/mcp/operation/preview/commit", &other);
    assert_eq!(invalid.status, 422, "{invalid:?}");
    assert_eq!(invalid.json()["error"]["details"]["field"], "message");

    other["message"] = json!("m");
    other["agentId"] = json!("Not Sanitized");
    let bad_agent = gw.post_handshake("/v1/mcp/operation/preview/commit", &other);
    assert_eq!(bad_agent.json()["error"]["details"]["field"], "agentId");
    other["agentId"] = json!("codex");
    other["repoPath"] = json!("/");
    let outside = gw.post_handshake("/v1/mcp/operation/preview/commit", &other);
    assert_eq!(outside.status, 422, "{outside:?}");
    assert_eq!(outside.json()["error"]["details"]["field"], "repoPath");
    let unknown_kind = gw.post_handshake("/v1/mcp/operation/preview/gc", &other);
    assert_eq!(unknown_kind.status, 404);

    let status = gw.get_handshake(&format!("/v1/mcp/operation/status/{id}"));
    assert_eq!(status.status, 200);
    let record = status.json();
    assert_eq!(
        (record["previewId"].as_str(), record["status"].as_str()),
        (Some(id.as_str()), Some("pending"))
    );
    assert_eq!(record["repoPath"], json!(repo));
    let missing = "/v1/mcp/operation/status/00000000-0000-4000-8000-000000000009";
    assert_eq!(gw.get_handshake(missing).status, 404);
    assert_eq!(
        gw.get_handshake("/v1/mcp/operation/status/..%2F..").status,
        404
    );

    let cancel = format!("/v1/mcp/operation/cancel/{id}");
    let stranger = gw.post_handshake(&cancel, &json!({"agentId": "codex"}));
    assert_eq!(stranger.status, 403, "{stranger:?}");
    let owner = gw.post_handshake(&cancel, &json!({"agentId": "claude-code"}));
    assert_eq!(owner.status, 200, "{owner:?}");
    assert_eq!(owner.json()["status"], "cancelled");
    let again = gw.post_handshake(&cancel, &json!({"agentId": "claude-code"}));
    assert_eq!(again.status, 409, "{again:?}");
    assert_eq!(again.json()["error"]["code"], "conflict");
    let unknown = gw.post_handshake(
        "/v1/mcp/operation/cancel/00000000-0000-4000-8000-000000000009",
        &json!({"agentId": "claude-code"}),
    );
    assert_eq!(unknown.status, 404);

    let semantic = gw.post_handshake("/v1/mcp/diff/semantic", &json!({}));
    assert_eq!(semantic.status, 422);
    assert_eq!(semantic.json()["error"]["code"], "invalid");
}

#[test]
fn bodies_must_be_json_and_at_most_two_mebibytes() {
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    let gw = Gateway::start(&fixture, &[], &[]);
    let path = "/v1/mcp/operation/preview/commit";
    let text = request(
        &gw.handshake,
        "POST",
        path,
        &[("Host", &gw.handshake), ("Content-Type", "text/plain")],
        b"{}",
    );
    assert_eq!(text.status, 415, "{text:?}");
    let huge = json!({"agentId": "a", "operationType": "commit", "repoPath": repo,
        "reason": "r", "requestedAt": "2026-05-28T11:42:09.512Z",
        "message": "x".repeat(3 * 1024 * 1024)});
    let big = gw.post_handshake(path, &huge);
    assert_eq!(big.status, 413, "{big:?}");
    assert_eq!(big.json()["error"]["code"], "tooLarge");
    let broken = request(
        &gw.handshake,
        "POST",
        path,
        &[
            ("Host", &gw.handshake),
            ("Content-Type", "application/json"),
        ],
        b"{not json",
    );
    assert_eq!(broken.status, 422, "{broken:?}");
}

#[test]
fn browsers_and_other_hosts_are_refused_and_decisions_are_unreachable() {
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    let gw = Gateway::start(&fixture, &[], &[]);
    let id = preview_id(&gw.propose_commit(&repo, "claude-code", None));
    let status = format!("/v1/mcp/operation/status/{id}");

    let rebound = request(&gw.handshake, "GET", &status, &[("Host", "evil.test")], b"");
    assert_eq!(rebound.status, 403, "{rebound:?}");
    let port = gw.handshake.rsplit_once(':').unwrap().1;
    let other_port = request(
        &gw.handshake,
        "GET",
        &status,
        &[("Host", "127.0.0.1:1")],
        b"",
    );
    assert_eq!(other_port.status, 403);
    let localhost = format!("localhost:{port}");
    let alias = request(&gw.handshake, "GET", &status, &[("Host", &localhost)], b"");
    assert_eq!(alias.status, 200, "{alias:?}");
    let no_host = request(&gw.handshake, "GET", &status, &[], b"");
    assert_eq!(no_host.status, 403);

    let from_page = request(
        &gw.handshake,
        "GET",
        &status,
        &[("Host", &gw.handshake), ("Origin", "http://127.0.0.1")],
        b"",
    );
    assert_eq!(from_page.status, 403, "{from_page:?}");
    let preflight = request(
        &gw.handshake,
        "OPTIONS",
        "/v1/mcp/operation/preview/commit",
        &[
            ("Host", &gw.handshake),
            ("Origin", "http://evil.test"),
            ("Access-Control-Request-Method", "POST"),
        ],
        b"",
    );
    assert_eq!(preflight.status, 403);
    for answer in [&rebound, &from_page, &preflight] {
        answer.assert_no_cors();
    }

    // The human API does not exist here, with or without credentials.
    for path in [
        "/api/proposals".to_owned(),
        format!("/api/proposals/{id}/approve"),
        "/api/login".to_owned(),
    ] {
        let get = gw.get_handshake(&path);
        let post = gw.post_handshake(&path, &json!({"confirmDestructive": true}));
        assert_eq!((get.status, post.status), (404, 404), "{path}");
    }
    let record = gw.get_handshake(&status).json();
    assert_eq!(record["status"], "pending");
}

#[test]
fn the_agent_policy_allows_and_denies_before_a_card_opens() {
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    let policy = fixture.path("policy.json");
    std::fs::write(
        &policy,
        json!({"version": 1,
               "agents": {"claude-code": {"operations": ["commit"]},
                          "codex": {"operations": ["branch"]}}})
        .to_string(),
    )
    .unwrap();
    let policy = policy.display().to_string();
    let gw = Gateway::start(
        &fixture,
        &[],
        &[("FLUXGIT_MCP_AGENT_POLICY", policy.as_str())],
    );
    assert_eq!(gw.propose_commit(&repo, "claude-code", None).status, 202);
    let denied = gw.propose_commit(&repo, "codex", None);
    assert_eq!(denied.status, 403, "{denied:?}");
    let error = &denied.json()["error"];
    assert_eq!(error["code"], "policyDenied");
    assert_eq!(error["details"]["rule"], "agents.codex.operations");
    assert_eq!(error["details"]["value"], "commit");
    let stranger = gw.propose_commit(&repo, "gemini", None);
    assert_eq!(stranger.status, 403);
    assert_eq!(stranger.json()["error"]["details"]["kind"], "noRule");
}
