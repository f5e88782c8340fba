//! `gitward serve --http`: the real binary on a loopback port, spoken to with raw HTTP/1.1
//! so every header (Host, Origin, forged context) is exactly what the test says.

mod harness;

use serde_json::{Value, json};

use crate::common::{Fixture, gitward_bin};
use crate::interop::fixture_repo;
pub(crate) use harness::{HttpServer, SpecWs, capability_add, init_body, modern};

/// The tool names of a `tools/list` result.
fn names(reply: &Value) -> Vec<String> {
    reply["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {reply}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn http_answers_as_stdio_does() {
    let fx = Fixture::new();
    let repo = fixture_repo(&fx);
    let mut stdio = fx.server(&[], &[]);
    let stdio_list = stdio.request("tools/list", json!({}));
    let stdio_status = stdio.call("repo.status", json!({ "repoPath": repo }));
    let http = HttpServer::start(&fx, &[], &[]);
    let list = http.post("/mcp", &[], &modern("tools/list", json!({})));
    assert_eq!(list.status, 200, "{}", list.body);
    assert_eq!(
        list.json()["result"]["tools"],
        stdio_list["result"]["tools"]
    );
    let call = http.post(
        "/mcp",
        &[],
        &modern(
            "tools/call",
            json!({ "name": "repo.status", "arguments": { "repoPath": repo } }),
        ),
    );
    assert_eq!(call.json()["result"]["structuredContent"], stdio_status);
    assert_eq!(call.json()["result"]["resultType"], "complete");
}

#[test]
fn a_session_opens_answers_streams_and_ends() {
    let fx = Fixture::new();
    let http = HttpServer::start(&fx, &[], &[]);
    let init = http.post("/mcp", &[], &init_body());
    assert_eq!(init.status, 200, "{}", init.body);
    assert_eq!(init.json()["result"]["protocolVersion"], "2025-11-25");
    let session = init
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let with = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let rpc = |method: &str| json!({"jsonrpc": "2.0", "id": 7, "method": method}).to_string();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let stream = http.head("GET", "/mcp", &with);
    let statuses = [
        ("initialized", http.post("/mcp", &with, &initialized).status),
        (
            "tools/list",
            http.post("/mcp", &with, &rpc("tools/list")).status,
        ),
        ("ping", http.post("/mcp", &with, &rpc("ping")).status),
        (
            "no session",
            http.post("/mcp", &[], &rpc("tools/list")).status,
        ),
        (
            "unknown session",
            http.post("/mcp", &[("Mcp-Session-Id", "nope")], &rpc("ping"))
                .status,
        ),
        (
            "bad version header",
            http.post(
                "/mcp",
                &[
                    ("Mcp-Session-Id", &session),
                    ("MCP-Protocol-Version", "1999-01-01"),
                ],
                &rpc("ping"),
            )
            .status,
        ),
        ("GET stream", stream.status),
        ("DELETE", http.send("DELETE", "/mcp", &with, "").status),
        (
            "after DELETE",
            http.post("/mcp", &with, &rpc("ping")).status,
        ),
        (
            "DELETE again",
            http.send("DELETE", "/mcp", &with, "").status,
        ),
    ];
    assert_eq!(stream.header("content-type"), Some("text/event-stream"));
    insta::assert_debug_snapshot!(statuses, @r#"
    [
        (
            "initialized",
            202,
        ),
        (
            "tools/list",
            200,
        ),
        (
            "ping",
            200,
        ),
        (
            "no session",
            400,
        ),
        (
            "unknown session",
            404,
        ),
        (
            "bad version header",
            400,
        ),
        (
            "GET stream",
            200,
        ),
        (
            "DELETE",
            204,
        ),
        (
            "after DELETE",
            404,
        ),
        (
            "DELETE again",
            404,
        ),
    ]
    "#);
}

#[test]
fn foreign_origins_hosts_and_oversized_bodies_are_refused() {
    let fx = Fixture::new();
    let http = HttpServer::start(&fx, &[], &[]);
    let ping = modern("ping", json!({}));
    let own_origin = format!("http://{}", http.addr);
    let evil_host = [("Host", "evil.example.com")];
    let cases = [
        (
            "own origin",
            http.post("/mcp", &[("Origin", &own_origin)], &ping),
        ),
        ("no origin", http.post("/mcp", &[], &ping)),
        (
            "foreign origin",
            http.post("/mcp", &[("Origin", "http://evil.example.com")], &ping),
        ),
        (
            "null origin",
            http.post("/mcp", &[("Origin", "null")], &ping),
        ),
        ("rebound host", http.post("/mcp", &evil_host, &ping)),
        (
            "other port",
            http.post("/mcp", &[("Host", "127.0.0.1:1")], &ping),
        ),
        (
            "preflight",
            http.send(
                "OPTIONS",
                "/mcp",
                &[("Origin", "http://evil.example.com")],
                "",
            ),
        ),
        ("too large", http.oversized("/mcp", 8 * 1024 * 1024 + 1)),
        (
            "not json",
            http.send("POST", "/mcp", &[("Content-Type", "text/plain")], &ping),
        ),
    ];
    for (what, reply) in &cases {
        assert!(
            !reply
                .headers
                .iter()
                .any(|(k, _)| k.starts_with("access-control-")),
            "{what}: a CORS header was sent"
        );
    }
    let statuses: Vec<(&str, u16)> = cases.iter().map(|(w, r)| (*w, r.status)).collect();
    assert_eq!(
        statuses,
        [
            ("own origin", 200),
            ("no origin", 200),
            ("foreign origin", 403),
            ("null origin", 403),
            ("rebound host", 403),
            ("other port", 403),
            ("preflight", 403),
            ("too large", 413),
            ("not json", 415),
        ]
    );
}

#[test]
fn a_non_loopback_address_is_refused() {
    let fx = Fixture::new();
    for addr in ["0.0.0.0:0", "10.0.0.1:8080", "example.com:80"] {
        let out = std::process::Command::new(gitward_bin())
            .args(["serve", "--http", addr])
            .env_clear()
            .envs(fx.env())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{addr}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("loopback"),
            "{addr}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn a_capability_scopes_the_spec_tools_to_its_workspace() {
    let ws = SpecWs::new();
    let token = capability_add(&ws.fx, &ws.descriptor("ws-1"), "127.0.0.1:1");
    let http = HttpServer::start(&ws.fx, &[], &ws.env());
    let list = modern("tools/list", json!({}));
    let plain = names(&http.post("/mcp", &[], &list).json());
    assert!(plain.contains(&"repo_status".to_owned()));
    assert!(!plain.contains(&"explore".to_owned()), "{plain:?}");
    let bound = names(&http.post(&format!("/mcp/{token}"), &[], &list).json());
    assert!(bound.contains(&"explore".to_owned()), "{bound:?}");
    assert!(bound.contains(&"repo_status".to_owned()));

    // Forged context: another workspace in headers, a bearer token, a guessed capability.
    let forged_ws = ws.descriptor("ws-evil");
    let forged = [
        ("X-Fyllo-Workspace-Json", forged_ws.as_str()),
        ("X-Fyllo-Workspace-Id", "ws-evil"),
        ("Authorization", "Bearer forged"),
    ];
    let plain_forged = names(&http.post("/mcp", &forged, &list).json());
    assert_eq!(plain_forged, plain, "headers grant nothing");
    // The plan lands in the session of the capability's descriptor, whatever the headers say.
    let plan = modern(
        "tools/call",
        json!({ "name": "create-plan", "arguments": { "goal": "Map the API.", "slug": "map" } }),
    );
    let seen = http.post(&format!("/mcp/{token}"), &forged, &plan).json();
    let path = seen["result"]["structuredContent"]["planPath"]
        .as_str()
        .unwrap_or_else(|| panic!("{seen}"));
    assert!(path.contains("/sessions/ws-1-session/plans/"), "{path}");
    assert!(std::path::Path::new(path).exists());
    let guessed = format!("/mcp/{}", "A".repeat(43));
    assert_eq!(http.post(&guessed, &[], &list).status, 403);
    assert_eq!(http.post("/mcp/", &[], &list).status, 404);

    // A session opened under the capability is not reachable through another URL.
    let init = http.post(&format!("/mcp/{token}"), &[], &init_body());
    let session = init.header("mcp-session-id").unwrap().to_owned();
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}).to_string();
    assert_eq!(
        http.post("/mcp", &[("Mcp-Session-Id", &session)], &ping)
            .status,
        404
    );
}

#[test]
fn a_revoked_capability_stops_at_once_and_the_rest_survive_a_restart() {
    let ws = SpecWs::new();
    let http = HttpServer::start(&ws.fx, &[], &ws.env());
    // Added while the server runs: served from the next request on.
    let kept = capability_add(&ws.fx, &ws.descriptor("ws-1"), &http.addr);
    let revoked = capability_add(&ws.fx, &ws.descriptor("ws-2"), &http.addr);
    let list = modern("tools/list", json!({}));
    assert_eq!(
        http.post(&format!("/mcp/{revoked}"), &[], &list).status,
        200
    );
    let listed = ws.fx_cli(&["capability", "list"]);
    let ids: Vec<&str> = listed
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(ids.len(), 2, "{listed}");
    assert!(
        !listed.contains(&kept) && !listed.contains(&revoked),
        "no secret is listed"
    );
    let revoked_id = ids[1].to_owned();
    ws.fx_cli(&["capability", "revoke", &revoked_id]);
    assert_eq!(
        http.post(&format!("/mcp/{revoked}"), &[], &list).status,
        403
    );
    assert_eq!(http.post(&format!("/mcp/{kept}"), &[], &list).status, 200);

    let addr = http.addr.clone();
    drop(http);
    let again = HttpServer::start_at(&ws.fx, &addr, &[], &ws.env());
    let bound = again.post(&format!("/mcp/{kept}"), &[], &list);
    assert_eq!(bound.status, 200);
    assert!(names(&bound.json()).contains(&"explore".to_owned()));
    assert_eq!(
        again.post(&format!("/mcp/{revoked}"), &[], &list).status,
        403
    );
}

#[test]
fn require_capability_and_the_disable_switch() {
    let ws = SpecWs::new();
    let token = capability_add(&ws.fx, &ws.descriptor("ws-1"), "127.0.0.1:1");
    let list = modern("tools/list", json!({}));
    let strict = HttpServer::start(&ws.fx, &["--require-capability"], &ws.env());
    assert_eq!(strict.post("/mcp", &[], &list).status, 401);
    assert_eq!(strict.head("GET", "/mcp", &[]).status, 401);
    assert_eq!(
        strict.post(&format!("/mcp/{token}"), &[], &list).status,
        200
    );
    drop(strict);

    let mut env = ws.env();
    env.push(("FYLLO_DISABLE_BUNDLED_MCP".into(), "1".into()));
    let off = HttpServer::start(&ws.fx, &[], &env);
    let bound = names(&off.post(&format!("/mcp/{token}"), &[], &list).json());
    assert!(bound.contains(&"repo_status".to_owned()));
    assert!(!bound.contains(&"explore".to_owned()), "{bound:?}");
}
