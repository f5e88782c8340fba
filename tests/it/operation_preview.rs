//! The generic preview tool against a scripted gateway: what it sends (one POST, one
//! status read), what it returns, and how every misbehaviour maps onto the product codes
//! without a hang. The end-to-end runs against the real gateway are in `operation_e2e`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{Fixture, assert_refused};
use crate::operation_peer::{Peer, Reply, Request};
use crate::operation_status::{ID, record};

const EXPIRES: &str = "2026-05-28T12:12:09.512Z";

fn accepted() -> Value {
    json!({"previewId": ID, "status": "pending", "expiresAt": EXPIRES})
}

/// A repository with a committed file and a change to it.
fn repo(fx: &Fixture) -> PathBuf {
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "src/lib.rs", "one\n", "first");
    fx.write(&repo, "src/lib.rs", "two\n");
    repo
}

fn commit_args(repo: &Path) -> Value {
    json!({"repoPath": repo, "reason": "the fix is done", "message": "Fix it", "paths": ["src/lib.rs"]})
}

/// One commit preview against a peer serving `replies`; the result and what the peer saw.
fn propose(fx: &Fixture, args: Value, replies: Vec<Reply>) -> (Value, Vec<Request>) {
    propose_with(fx, "operation.preview.commit", args, replies)
}

fn propose_with(
    fx: &Fixture,
    tool: &str,
    args: Value,
    replies: Vec<Reply>,
) -> (Value, Vec<Request>) {
    let peer = Peer::start(replies);
    let env = [
        ("FLUXGIT_MCP_HANDSHAKE_ADDR", peer.addr.as_str()),
        ("FLUXGIT_MCP_AGENT_DETECTION_DISABLED", "1"),
    ];
    let result = fx.server(&[], &env).call(tool, args);
    (result, peer.requests())
}

fn accepting() -> Vec<Reply> {
    vec![
        Reply::Json(202, accepted()),
        Reply::Json(200, record("pending")),
    ]
}

/// The operation's own fields of a proposal body: the common ones taken out.
fn own_fields(body: &Value) -> Value {
    let mut own = body.clone();
    for key in [
        "previewId",
        "agentId",
        "operationType",
        "repoPath",
        "reason",
        "requestedAt",
        "idempotencyKey",
    ] {
        own.as_object_mut().unwrap().remove(key);
    }
    own
}

#[test]
fn operation_preview_branch_posts_its_own_fields_to_its_own_route() {
    let fx = Fixture::new();
    let repo = repo(&fx);
    let tool = "operation.preview.branch";
    let args = json!({"repoPath": repo, "reason": "start the fix", "name": "agent/fix",
                      "startPoint": "main", "checkout": false, "idempotencyKey": "k1"});
    let (result, requests) = propose_with(&fx, tool, args, accepting());
    assert_eq!(
        (result["tool"].as_str(), result["operationType"].as_str()),
        (Some(tool), Some("branch")),
        "{result}"
    );
    assert_eq!(requests[0].path, "/v1/mcp/operation/preview/branch");
    assert_eq!(requests[0].body["operationType"], "branch");
    // Scoped to the type: the same client key on a commit names another intent.
    assert_eq!(requests[0].body["idempotencyKey"], "branch:k1");
    assert_eq!(
        own_fields(&requests[0].body),
        json!({"name": "agent/fix", "startPoint": "main", "checkout": false})
    );
    let peer = Peer::start(accepting());
    let mut server = fx.server(&[], &peer.env());
    let base = json!({"repoPath": repo, "reason": "r", "name": "agent/fix"});
    assert_refused(
        &mut server,
        tool,
        &base,
        "name",
        &[json!(""), json!("-x"), json!("a..b"), json!(7)],
    );
    assert_refused(&mut server, tool, &base, "checkout", &[json!("yes")]);
    assert!(peer.requests().is_empty());
}

#[test]
fn operation_preview_worktree_posts_its_own_fields_to_its_own_route() {
    let fx = Fixture::new();
    let repo = repo(&fx);
    let tool = "operation.preview.worktree";
    let target = fx.path("wt");
    let args = json!({"repoPath": repo, "reason": "a parallel task", "branch": "agent/wt", "path": target});
    let (result, requests) = propose_with(&fx, tool, args, accepting());
    assert_eq!(result["accepted"], true, "{result}");
    assert_eq!(requests[0].path, "/v1/mcp/operation/preview/worktree");
    assert_eq!(
        own_fields(&requests[0].body),
        json!({"branch": "agent/wt", "path": target})
    );
    assert!(
        requests[0].body["idempotencyKey"]
            .as_str()
            .unwrap()
            .starts_with("worktree:auto-")
    );
    let peer = Peer::start(accepting());
    let mut server = fx.server(&[], &peer.env());
    let base = json!({"repoPath": repo, "reason": "r", "branch": "agent/wt"});
    assert_refused(
        &mut server,
        tool,
        &base,
        "branch",
        &[json!(""), json!("-b")],
    );
    assert_refused(
        &mut server,
        tool,
        &base,
        "path",
        &[json!("relative/wt"), json!(7)],
    );
    assert!(peer.requests().is_empty());
}

fn is_millis_utc(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 24
        && b[10] == b'T'
        && b[19] == b'.'
        && b[23] == b'Z'
        && text.parse::<jiff::Timestamp>().is_ok()
}

#[test]
fn operation_preview_commit_posts_once_reads_once_and_returns_accepted() {
    let fx = Fixture::new();
    let repo = repo(&fx);
    let mut args = commit_args(&repo.join("src"));
    args["idempotencyKey"] = json!("retry-1");
    let (result, requests) = propose(
        &fx,
        args,
        vec![
            Reply::Json(202, accepted()),
            Reply::Json(200, record("pending")),
        ],
    );
    assert_eq!(
        result,
        json!({
            "tool": "operation.preview.commit", "readOnly": false, "source": "fluxgit-gateway",
            "accepted": true, "previewId": ID, "operationType": "commit", "status": "pending",
            "expiresAt": EXPIRES,
            "nextAction": {"tool": "operation_status", "data": {"previewId": ID}, "afterMs": 2000},
            "data": record("pending"),
        })
    );
    assert_eq!(requests.len(), 2, "{requests:?}");
    let (post, get) = (&requests[0], &requests[1]);
    assert_eq!(
        (post.method.as_str(), post.path.as_str()),
        ("POST", "/v1/mcp/operation/preview/commit")
    );
    assert_eq!(post.header("content-type"), Some("application/json"));
    assert_eq!(post.header("origin"), None);
    let body = post.body.as_object().unwrap();
    let suggested = body["previewId"].as_str().unwrap();
    assert!(uuid::Uuid::parse_str(suggested).is_ok(), "{suggested}");
    assert_ne!(suggested, ID, "the sidecar's id is only a hint");
    assert!(
        is_millis_utc(body["requestedAt"].as_str().unwrap()),
        "{body:?}"
    );
    let mut rest = post.body.clone();
    for key in ["previewId", "requestedAt"] {
        rest.as_object_mut().unwrap().remove(key);
    }
    assert_eq!(
        rest,
        json!({
            "agentId": "gitward-tests", "operationType": "commit",
            // The top level, canonical, whatever directory inside the repository was named.
            "repoPath": repo, "reason": "the fix is done",
            "idempotencyKey": "commit:retry-1",
            "message": "Fix it", "paths": ["src/lib.rs"],
        })
    );
    // The status read follows the gateway's canonical id.
    assert_eq!(
        (get.method.as_str(), get.path.as_str()),
        ("GET", format!("/v1/mcp/operation/status/{ID}").as_str())
    );
}

#[test]
fn operation_preview_commit_without_a_key_sends_a_fresh_scoped_one() {
    let fx = Fixture::new();
    let repo = repo(&fx);
    let mut keys = Vec::new();
    for _ in 0..2 {
        let (result, requests) = propose(
            &fx,
            commit_args(&repo),
            vec![
                Reply::Json(202, accepted()),
                Reply::Json(200, record("pending")),
            ],
        );
        assert_eq!(result["accepted"], true, "{result}");
        let key = requests[0].body["idempotencyKey"]
            .as_str()
            .unwrap()
            .to_owned();
        let auto = key.strip_prefix("commit:auto-").unwrap();
        assert!(uuid::Uuid::parse_str(auto).is_ok(), "{key}");
        keys.push(key);
    }
    assert_ne!(keys[0], keys[1], "a new intent gets a new key");
}

#[test]
fn operation_preview_commit_refusals_are_10006_with_the_gateway_body() {
    let fx = Fixture::new();
    let repo = repo(&fx);
    for (status, code) in [
        (403, "policyDenied"),
        (422, "invalid"),
        (429, "quotaExceeded"),
        (409, "idempotencyMismatch"),
    ] {
        let body = json!({"error": {"code": code, "message": "refused here", "details": {"field": "paths"}}});
        let (result, requests) = propose(
            &fx,
            commit_args(&repo),
            vec![Reply::Json(status, body.clone())],
        );
        let error = &result["error"];
        assert_eq!(error["code"], 10006, "{status}: {result}");
        assert_eq!(
            error["data"],
            json!({"httpStatus": status, "gateway": body})
        );
        assert!(
            error["message"].as_str().unwrap().contains("refused here"),
            "{result}"
        );
        assert_eq!(requests.len(), 1, "no status read after a refusal");
    }
}

#[test]
fn operation_preview_commit_misbehaving_gateway_maps_to_the_product_codes() {
    let fx = Fixture::new();
    let repo = repo(&fx);
    let with_id = |id: Value| json!({"previewId": id, "status": "pending", "expiresAt": EXPIRES});
    let cases: Vec<(&str, Reply, i64)> = vec![
        (
            "unsafe id",
            Reply::Json(202, with_id(json!("../../x"))),
            10007,
        ),
        (
            "uppercase id",
            Reply::Json(202, with_id(json!(ID.to_uppercase()))),
            10007,
        ),
        ("numeric id", Reply::Json(202, with_id(json!(42))), 10007),
        (
            "no id",
            Reply::Json(202, json!({"status": "pending"})),
            10003,
        ),
        (
            "unknown state",
            Reply::Json(
                202,
                json!({"previewId": ID, "status": "queued", "expiresAt": EXPIRES}),
            ),
            10003,
        ),
        (
            "500",
            Reply::Json(500, json!({"error": {"code": "boom", "message": "m"}})),
            10003,
        ),
        (
            "503 html",
            Reply::Typed(503, "text/html", "<h1>down</h1>".into()),
            10003,
        ),
        (
            "418 no error body",
            Reply::Json(418, json!({"teapot": true})),
            10003,
        ),
        ("garbage", Reply::Raw(b"SSH-2.0-OpenSSH\r\n"), 10003),
        (
            "not json",
            Reply::Typed(202, "application/json", "<<<".into()),
            10003,
        ),
        (
            "wrong type",
            Reply::Typed(202, "text/plain", accepted().to_string()),
            10003,
        ),
        (
            "redirect",
            Reply::Typed(307, "application/json", "{}".into()),
            10003,
        ),
        ("hang up", Reply::Silent(Duration::ZERO), 10003),
    ];
    for (what, reply, expected) in cases {
        let (result, requests) = propose(&fx, commit_args(&repo), vec![reply]);
        assert_eq!(result["error"]["code"], expected, "{what}: {result}");
        assert_eq!(requests.len(), 1, "{what}: nothing followed");
    }
}

#[test]
fn operation_preview_commit_slow_or_absent_gateway_is_10003_never_a_hang() {
    let fx = Fixture::new();
    let repo = repo(&fx);
    let (slow, _) = propose(
        &fx,
        commit_args(&repo),
        vec![Reply::Silent(Duration::from_secs(9))],
    );
    assert_eq!(slow["error"]["code"], 10003, "{slow}");
    assert_eq!(slow["error"]["data"]["reason"], "timeout");
    let closed = Peer::closed_addr();
    let refused = fx
        .server(&[], &[("FLUXGIT_MCP_HANDSHAKE_ADDR", &closed)])
        .call("operation.preview.commit", commit_args(&repo));
    assert_eq!(refused["error"]["code"], 10003, "{refused}");
    assert_eq!(refused["error"]["data"]["reason"], "unreachable");
    let none = fx.call("operation.preview.commit", commit_args(&repo));
    assert_eq!(none["error"]["code"], 10003, "{none}");
    assert_eq!(none["error"]["data"]["gatewayConfigured"], false);
    assert_eq!(none["readOnly"], false);
}

#[test]
fn operation_preview_commit_status_read_decides_only_what_it_can() {
    let fx = Fixture::new();
    let repo = repo(&fx);
    // The proposal stands when the one status read fails: it is not reported as refused.
    for failing in [
        Reply::Json(500, json!({})),
        Reply::Silent(Duration::ZERO),
        Reply::Json(404, json!({"error": {"code": "notFound", "message": "m"}})),
    ] {
        let (result, requests) = propose(
            &fx,
            commit_args(&repo),
            vec![Reply::Json(202, accepted()), failing],
        );
        assert_eq!(result["accepted"], true, "{result}");
        assert_eq!(result["status"], "pending");
        assert_eq!(result["data"], Value::Null);
        assert!(result["statusReadError"].is_string(), "{result}");
        assert_eq!(requests.len(), 2);
    }
    // An ending the read already shows is reported as that ending.
    let mut rejected = record("rejected");
    rejected["rejectReason"] = json!("not on Fridays");
    let (result, _) = propose(
        &fx,
        commit_args(&repo),
        vec![
            Reply::Json(202, accepted()),
            Reply::Json(200, rejected.clone()),
        ],
    );
    assert_eq!(result["error"]["code"], 10004, "{result}");
    assert_eq!(result["error"]["data"]["statusBody"], rejected);
    // An idempotent retry (200) that finds the proposal completed returns it completed.
    let mut done = record("completed");
    done["result"] = json!({"commitSha": "9a8b7c6d", "restorePointId": "rp_1"});
    let retried = json!({"previewId": ID, "status": "completed", "expiresAt": EXPIRES});
    let (result, _) = propose(
        &fx,
        commit_args(&repo),
        vec![Reply::Json(200, retried), Reply::Json(200, done.clone())],
    );
    assert_eq!(result["status"], "completed", "{result}");
    assert!(result.get("nextAction").is_none(), "{result}");
    assert_eq!(result["data"], done);
}

#[test]
fn operation_preview_commit_bad_input_is_refused_before_any_request() {
    let fx = Fixture::new();
    let repo = repo(&fx);
    let peer = Peer::start(vec![Reply::Json(202, accepted())]);
    let mut server = fx.server(&[], &peer.env());
    let base = commit_args(&repo);
    let tool = "operation.preview.commit";
    assert_refused(
        &mut server,
        tool,
        &base,
        "reason",
        &[json!(""), json!("  \n"), json!(7), json!("r".repeat(4097))],
    );
    assert_refused(
        &mut server,
        tool,
        &base,
        "idempotencyKey",
        &[
            json!(""),
            json!("a b"),
            json!("k/1"),
            json!("k".repeat(129)),
        ],
    );
    assert_refused(
        &mut server,
        tool,
        &base,
        "message",
        &[json!(""), json!(null), json!(["m"])],
    );
    assert_refused(
        &mut server,
        tool,
        &base,
        "paths",
        &[
            json!([]),
            json!(["../outside"]),
            json!(["/abs"]),
            json!("src/lib.rs"),
        ],
    );
    assert_refused(
        &mut server,
        tool,
        &base,
        "repoPath",
        &[json!("relative"), json!(fx.path("missing")), json!(7)],
    );
    assert_refused(&mut server, tool, &base, "amend", &[json!(true)]);
    for missing in ["repoPath", "reason", "message"] {
        let mut args = base.clone();
        args.as_object_mut().unwrap().remove(missing);
        let result = server.call(tool, args);
        assert_eq!(result["error"]["data"]["field"], missing, "{result}");
    }
    drop(server);
    // Outside the allowed roots: refused by the sidecar, never proposed.
    let outside = fx.init("outside", &[]);
    let allowed = repo.display().to_string();
    let mut confined = fx.server(&["--allowed-root", &allowed], &peer.env());
    let result = confined.call(tool, commit_args(&outside));
    assert_eq!(result["error"]["data"]["field"], "repoPath", "{result}");
    assert!(peer.requests().is_empty());
}

/// A Claude Code session store that edited `rel` in `repo` just now.
fn claude_edited(fx: &Fixture, repo: &Path, rel: &str) {
    let dir: String = repo
        .display()
        .to_string()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let file = fx
        .home()
        .join(".claude/projects")
        .join(dir)
        .join("8c1e7d0e-1111-4222-8333-444455556666.jsonl");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let line = json!({"type": "assistant", "cwd": repo, "gitBranch": "main", "sessionId": "s1",
        "message": {"content": [{"type": "tool_use", "name": "Edit", "id": "t1",
            "input": {"file_path": repo.join(rel)}}]}});
    std::fs::write(&file, format!("{line}\n")).unwrap();
}

#[test]
fn operation_preview_commit_names_other_agents_after_the_gateway_accepted() {
    let fx = Fixture::new();
    let repo = repo(&fx);
    claude_edited(&fx, &repo, "src/lib.rs");
    let replies = || {
        vec![
            Reply::Json(202, accepted()),
            Reply::Json(200, record("pending")),
        ]
    };
    let peer = Peer::start(replies());
    let result = fx
        .server(&[], &peer.env())
        .call("operation.preview.commit", commit_args(&repo));
    let hint = &result["otherAgents"];
    assert_eq!(hint["informational"], true, "{result}");
    assert_eq!(hint["proposalPathsKnown"], true);
    let claude: Vec<&Value> = hint["agents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["agent"] == "claude-code")
        .collect();
    assert_eq!(claude.len(), 1, "{hint}");
    assert_eq!(claude[0]["files"], json!(["src/lib.rs"]));
    assert_eq!(claude[0]["overlappingPaths"], json!(["src/lib.rs"]));
    assert!(
        hint["overlappingAgentCount"].as_u64().unwrap() >= 1,
        "{hint}"
    );

    // A refused proposal carries no hint: there is no result to add it to.
    let denied = json!({"error": {"code": "policyDenied", "message": "no"}});
    let peer = Peer::start(vec![Reply::Json(403, denied)]);
    let refused = fx
        .server(&[], &peer.env())
        .call("operation.preview.commit", commit_args(&repo));
    assert_eq!(refused["error"]["code"], 10006);
    assert!(!refused.to_string().contains("claude-code"), "{refused}");

    // Disabled detection: no hint at all.
    let peer = Peer::start(replies());
    let env = [
        ("FLUXGIT_MCP_HANDSHAKE_ADDR", peer.addr.as_str()),
        ("FLUXGIT_MCP_AGENT_DETECTION_DISABLED", "1"),
    ];
    let quiet = fx
        .server(&[], &env)
        .call("operation.preview.commit", commit_args(&repo));
    assert_eq!(quiet["accepted"], true, "{quiet}");
    assert!(quiet.get("otherAgents").is_none(), "{quiet}");
}

#[test]
fn discard_and_plan_steps_name_their_paths_for_the_overlap() {
    let fx = Fixture::new();
    let repo = repo(&fx);
    claude_edited(&fx, &repo, "src/lib.rs");
    for (tool, fields) in [
        (
            "operation.preview.discard",
            json!({"paths": ["src/lib.rs"]}),
        ),
        (
            "operation.preview.plan",
            json!({"steps": [{"operationType": "reset", "targetRef": "HEAD"},
                             {"operationType": "discard", "paths": ["src/lib.rs"]}]}),
        ),
    ] {
        let peer = Peer::start(vec![
            Reply::Json(202, accepted()),
            Reply::Json(200, record("pending")),
        ]);
        let mut args = json!({"repoPath": repo, "reason": "overlap"});
        for (k, v) in fields.as_object().unwrap() {
            args[k] = v.clone();
        }
        let result = fx.server(&[], &peer.env()).call(tool, args);
        let hint = &result["otherAgents"];
        assert_eq!(hint["proposalPathsKnown"], true, "{tool}: {result}");
        let overlapping: Vec<&Value> = hint["agents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["agent"] == "claude-code")
            .map(|a| &a["overlappingPaths"])
            .collect();
        assert_eq!(overlapping, [&json!(["src/lib.rs"])], "{tool}: {hint}");
    }
}
