//! What an agent sends the handshake listener cannot widen what it may do: fields only the
//! gateway sets are refused, an idempotency key belongs to the agent that sent it, and a
//! name with invisible or text-direction characters cannot pass for another.

use serde_json::{Value, json};

use super::common::Fixture;
use super::gateway_support::{Gateway, dirty_repo, preview_id};
use super::op_setup::with_origin;

fn proposal(agent: &str, kind: &str, repo: &std::path::Path, fields: Value) -> Value {
    let mut body = json!({
        "agentId": agent,
        "operationType": kind,
        "repoPath": repo,
        "reason": "tidy up",
        "requestedAt": "2026-05-28T11:42:09.512Z",
    });
    for (k, v) in fields.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

#[test]
fn an_agent_cannot_send_the_fields_only_the_gateway_sets() {
    let fixture = Fixture::new();
    let repo = fixture.init("r", &[]);
    fixture.commit(&repo, "a.txt", "one\n", "first");
    with_origin(&fixture, &repo, "origin.git");
    fixture.git(&repo, &["checkout", "-q", "-b", "other"]);
    let elsewhere = fixture.commit(&repo, "b.txt", "two\n", "another branch's commit");
    fixture.git(&repo, &["checkout", "-q", "main"]);
    fixture.commit(&repo, "c.txt", "three\n", "main's own next commit");
    let gw = Gateway::start(&fixture, &[], &[]);

    // `revertTo` makes the card read "Undoes a push": only the page's undo may set it.
    let forged = proposal(
        "claude-code",
        "push",
        &repo,
        json!({"remote": "origin", "branch": "main", "forceWithLease": true,
               "revertTo": elsewhere}),
    );
    let answer = gw.post_handshake("/v1/mcp/operation/preview/push", &forged);
    assert_eq!(answer.status, 422, "{answer:?}");
    assert_eq!(answer.json()["error"]["details"]["field"], "revertTo");

    // The same push without it is an ordinary proposal.
    let plain = proposal(
        "claude-code",
        "push",
        &repo,
        json!({"remote": "origin", "branch": "main"}),
    );
    let answer = gw.post_handshake("/v1/mcp/operation/preview/push", &plain);
    assert_eq!(answer.status, 202, "{answer:?}");
}

#[test]
fn idempotency_keys_belong_to_the_agent_that_sent_them() {
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    let gw = Gateway::start(&fixture, &[], &[]);
    let first = preview_id(&gw.propose_commit(&repo, "claude-code", Some("commit:k1")));

    // Another agent with the same key: its own proposal, never the first one's.
    let theirs = gw.propose_commit(&repo, "codex", Some("commit:k1"));
    assert_eq!(theirs.status, 202, "{theirs:?}");
    let theirs = preview_id(&theirs);
    assert_ne!(theirs, first);

    // Another agent's key with other arguments: a 409 that names nothing of the first.
    let mut other = proposal(
        "cursor",
        "commit",
        &repo,
        json!({"message": "something else", "stageAll": true, "idempotencyKey": "commit:k1"}),
    );
    let answer = gw.post_handshake("/v1/mcp/operation/preview/commit", &other);
    assert_eq!(answer.status, 202, "{answer:?}");
    other["message"] = json!("yet another");
    let mismatch = gw.post_handshake("/v1/mcp/operation/preview/commit", &other);
    assert_eq!(mismatch.status, 409, "{mismatch:?}");
    assert_eq!(mismatch.json()["error"]["code"], "idempotencyMismatch");
    for id in [&first, &theirs, &preview_id(&answer)] {
        assert!(!mismatch.body.contains(id.as_str()), "{mismatch:?}");
    }

    // The first agent's retry still finds its own, and only it may cancel it.
    let again = gw.propose_commit(&repo, "claude-code", Some("commit:k1"));
    assert_eq!((again.status, preview_id(&again)), (200, first.clone()));
    let cancel = format!("/v1/mcp/operation/cancel/{first}");
    let stranger = gw.post_handshake(&cancel, &json!({"agentId": "codex"}));
    assert_eq!(stranger.status, 403, "{stranger:?}");
    let status = gw.get_handshake(&format!("/v1/mcp/operation/status/{first}"));
    assert_eq!(status.json()["status"], "pending");
}

#[test]
fn names_with_invisible_or_text_direction_characters_are_refused() {
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    let gw = Gateway::start(&fixture, &[], &[]);
    let cases = [
        ("branch", json!({"name": "ma\u{200B}in"}), "name"),
        ("branch", json!({"name": "fix-\u{202E}txt"}), "name"),
        ("merge", json!({"sourceRef": "mai\u{2066}n"}), "sourceRef"),
        ("discard", json!({"paths": ["a\u{200D}.txt"]}), "paths"),
        (
            "commit",
            json!({"message": "m", "paths": ["a.txt\u{FEFF}"]}),
            "paths",
        ),
        (
            "plan",
            json!({"steps": [{"operationType": "discard", "paths": ["a\u{200F}.txt"]}]}),
            "steps",
        ),
    ];
    for (kind, fields, field) in cases {
        let body = proposal("claude-code", kind, &repo, fields);
        let answer = gw.post_handshake(&format!("/v1/mcp/operation/preview/{kind}"), &body);
        assert_eq!(answer.status, 422, "{kind}: {answer:?}");
        assert_eq!(
            answer.json()["error"]["details"]["field"],
            field,
            "{answer:?}"
        );
        assert!(
            answer.json()["error"]["message"]
                .as_str()
                .unwrap()
                .contains("invisible or text-direction"),
            "{answer:?}"
        );
    }
    // A repository path holding one is refused too.
    let hidden = fixture.init("re\u{200B}po", &[]);
    let body = proposal("claude-code", "branch", &hidden, json!({"name": "x"}));
    let answer = gw.post_handshake("/v1/mcp/operation/preview/branch", &body);
    assert_eq!(answer.status, 422, "{answer:?}");
    assert_eq!(answer.json()["error"]["details"]["field"], "repoPath");

    // Free text keeps them: the page and the terminal show them escaped.
    let body = proposal(
        "claude-code",
        "commit",
        &repo,
        json!({"message": "fix \u{202E}gnp.exe", "stageAll": true}),
    );
    let answer = gw.post_handshake("/v1/mcp/operation/preview/commit", &body);
    assert_eq!(answer.status, 202, "{answer:?}");
}
