//! Streamable HTTP as hosts use it: sessions that outlive a restart of the server (with
//! raw HTTP and with each official client), presence per session and per client, and the
//! protocol details a client matches its errors by.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::Fixture;
use crate::http::{HttpServer, SpecWs, capability_add, init_body, modern};
use crate::interop::fixture_repo;

fn legacy(id: u64, method: &str, params: Value) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string()
}

/// Opens a 2025-11-25 session on `path` as `client`; its id.
fn open_session(http: &HttpServer, path: &str, client: &str) -> String {
    let body = init_body().replace("gitward-tests", client);
    let init = http.post(path, &[], &body);
    assert_eq!(init.status, 200, "{}", init.body);
    init.header("mcp-session-id").expect("a session").to_owned()
}

fn in_session(session: &str) -> [(&str, &str); 2] {
    [
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]
}

#[test]
fn a_session_outlives_a_restart_of_the_server_on_the_same_address() {
    let ws = SpecWs::new();
    let http = HttpServer::start(&ws.fx, &[], &ws.env());
    let addr = http.addr.clone();
    let token = capability_add(&ws.fx, &ws.descriptor("ws-1"), &addr);
    let bound = format!("/mcp/{token}");
    let plain = open_session(&http, "/mcp", "restart-plain");
    let scoped = open_session(&http, &bound, "restart-bound");
    let ended = open_session(&http, "/mcp", "restart-ended");
    let gone = http.send("DELETE", "/mcp", &[("Mcp-Session-Id", ended.as_str())], "");
    assert_eq!(gone.status, 204, "{}", gone.body);
    drop(http);

    let again = HttpServer::start_at(&ws.fx, &addr, &[], &ws.env());
    let list = legacy(2, "tools/list", json!({}));
    let reply = again.post("/mcp", &in_session(&plain), &list);
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(reply.json()["result"]["tools"].as_array().unwrap().len() > 20);
    let reply = again.post(&bound, &in_session(&scoped), &list);
    assert_eq!(reply.status, 200, "{}", reply.body);
    let names = reply.json()["result"]["tools"].to_string();
    assert!(names.contains("\"explore\""), "{names}");
    // Bound to its capability: the plain endpoint does not take the workspace's session,
    // nor the workspace the plain one.
    assert_eq!(again.post("/mcp", &in_session(&scoped), &list).status, 404);
    assert_eq!(again.post(&bound, &in_session(&plain), &list).status, 404);
    // A forged id, or one changed by a byte, restores nothing.
    let mut forged = plain.clone().into_bytes();
    let at = forged.len() / 2;
    forged[at] = if forged[at] == b'A' { b'B' } else { b'A' };
    let forged = String::from_utf8(forged).unwrap();
    assert_eq!(again.post("/mcp", &in_session(&forged), &list).status, 404);
    assert_eq!(
        again
            .post("/mcp", &in_session("0123456789abcdef"), &list)
            .status,
        404
    );
    // Ended with DELETE in this server: gone for good here.
    let _ = ended;
    let fresh = open_session(&again, "/mcp", "restart-delete");
    let gone = again.send("DELETE", "/mcp", &[("Mcp-Session-Id", fresh.as_str())], "");
    assert_eq!(gone.status, 204);
    assert_eq!(again.post("/mcp", &in_session(&fresh), &list).status, 404);
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs a client script that waits for a restart: starts it, waits for "ready",
/// restarts the server on the same address, lets it go on, returns its summary.
fn across_a_restart(fx: &Fixture, program: &Path, script: &str) -> Value {
    let repo = fixture_repo(fx);
    let http = HttpServer::start(fx, &[], &[]);
    let addr = http.addr.clone();
    let mut child = Command::new(program)
        .current_dir(root())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(fx.env())
        .arg(script)
        .arg(http.url("/mcp"))
        .arg(&repo)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "ready", "{script} did not get ready: {line:?}");
    drop(http);
    let again = HttpServer::start_at(fx, &addr, &[], &[]);
    writeln!(child.stdin.as_mut().unwrap(), "go").unwrap();
    let mut summary = String::new();
    stdout.read_line(&mut summary).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{script} failed across the restart: {summary}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    drop(again);
    let summary: Value = serde_json::from_str(&summary).unwrap();
    assert_eq!(summary["repoPath"], json!(repo), "{summary}");
    summary
}

#[test]
fn the_typescript_sdk_keeps_its_session_across_a_restart() {
    if !root()
        .join("node_modules/@modelcontextprotocol/sdk/package.json")
        .exists()
    {
        assert!(
            std::env::var_os("CI").is_none(),
            "scripts/setup installs the SDK"
        );
        return;
    }
    let fx = Fixture::new();
    let summary = across_a_restart(&fx, Path::new("node"), "tests/interop/ts_http_restart.mjs");
    assert_eq!(summary["sameSession"], true, "{summary}");
}

#[test]
fn the_typescript_v2_client_in_legacy_mode_keeps_its_session_across_a_restart() {
    if !root()
        .join("node_modules/@modelcontextprotocol/client/package.json")
        .exists()
    {
        assert!(
            std::env::var_os("CI").is_none(),
            "scripts/setup installs the client"
        );
        return;
    }
    let fx = Fixture::new();
    let summary = across_a_restart(
        &fx,
        Path::new("node"),
        "tests/interop/ts_v2_http_restart.mjs",
    );
    assert_eq!(summary["sameSession"], true, "{summary}");
    assert_eq!(summary["protocolVersion"], "2025-11-25", "{summary}");
}

#[test]
fn the_python_sdk_keeps_its_session_across_a_restart() {
    let python = root().join(".venv/bin/python");
    if !python.exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "scripts/setup installs the SDK"
        );
        return;
    }
    let fx = Fixture::new();
    let summary = across_a_restart(&fx, &python, "tests/interop/http_restart.py");
    assert_eq!(summary["protocolVersion"], "2025-11-25", "{summary}");
}

/// This server's presence records, once `ready` holds for them (within ten seconds).
fn records_of(fx: &Fixture, pid: u32, ready: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let dir = fx.run_dir().join("presence/mcp");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let records: Vec<Value> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.starts_with(&format!("{pid}-")) && name.ends_with(".json")
            })
            .filter_map(|e| serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok())
            .collect();
        if ready(&records) || Instant::now() > deadline {
            return records;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The client each record credits and the repositories it names.
fn credited(records: &[Value]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = records
        .iter()
        .map(|r| {
            let repos = r["repositories"]
                .as_array()
                .unwrap()
                .iter()
                .map(|u| u["repoPath"].as_str().unwrap().to_owned())
                .collect();
            (r["client"]["name"].as_str().unwrap_or("").to_owned(), repos)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn presence_credits_each_http_client_with_its_own_repositories() {
    let fx = Fixture::new();
    let one = fixture_repo(&fx);
    let two = fx.init("second", &[]);
    fx.commit(&two, "a.txt", "a\n", "init");
    let http = HttpServer::start(&fx, &[], &[]);
    let status = |repo: &Path| {
        legacy(
            3,
            "tools/call",
            json!({ "name": "repo_status", "arguments": { "repoPath": repo } }),
        )
    };
    let claude = open_session(&http, "/mcp", "claude-code");
    assert_eq!(
        http.post("/mcp", &in_session(&claude), &status(&one))
            .status,
        200
    );
    let cursor = open_session(&http, "/mcp", "cursor");
    assert_eq!(
        http.post("/mcp", &in_session(&cursor), &status(&two))
            .status,
        200
    );
    // A sessionless client is one of its own too.
    let mut body: Value = serde_json::from_str(&modern(
        "tools/call",
        json!({ "name": "repo.status", "arguments": { "repoPath": two } }),
    ))
    .unwrap();
    body["params"]["_meta"]["io.modelcontextprotocol/clientInfo"]["name"] = json!("codex");
    assert_eq!(http.post("/mcp", &[], &body.to_string()).status, 200);

    let want = vec![
        ("claude-code".to_owned(), vec![one.display().to_string()]),
        ("codex".to_owned(), vec![two.display().to_string()]),
        ("cursor".to_owned(), vec![two.display().to_string()]),
    ];
    let records = records_of(&fx, http.pid(), |r| credited(r) == want);
    assert_eq!(credited(&records), want, "{records:?}");
    for record in &records {
        assert_eq!(
            record["repositories"][0]["lastTool"], "repo.status",
            "presence keeps the identity: {record}"
        );
    }
}

#[test]
fn refusals_answer_the_requests_id_as_stdio_does() {
    let fx = Fixture::new();
    let http = HttpServer::start(&fx, &[], &[]);
    // No session and no _meta: stdio answers this -32602 with the id; so does HTTP.
    let reply = http.post("/mcp", &[], &legacy(42, "tools/list", json!({})));
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert_eq!(reply.json()["id"], 42, "{}", reply.body);
    assert_eq!(reply.json()["error"]["code"], -32602, "{}", reply.body);
    let mut stdio = fx.server(&[], &[]);
    let same = stdio.request_raw("tools/list", json!({}));
    assert_eq!(same["error"]["code"], -32602, "{same}");
    // An unknown session, a bad version header, a wrong content type: the id too.
    let reply = http.post(
        "/mcp",
        &in_session("no-such-session"),
        &legacy(43, "tools/list", json!({})),
    );
    assert_eq!((reply.status, &reply.json()["id"]), (404, &json!(43)));
    let reply = http.post(
        "/mcp",
        &[("MCP-Protocol-Version", "1999-01-01")],
        &legacy(44, "tools/list", json!({})),
    );
    assert_eq!((reply.status, &reply.json()["id"]), (400, &json!(44)));
    let reply = http.send(
        "POST",
        "/mcp",
        &[("Content-Type", "text/plain")],
        &legacy(45, "tools/list", json!({})),
    );
    assert_eq!((reply.status, &reply.json()["id"]), (415, &json!(45)));
    // Unreadable: no id to answer.
    let reply = http.post("/mcp", &[], "{");
    assert_eq!(reply.json()["id"], Value::Null);
}

#[test]
fn a_sessionless_request_naming_a_stale_session_is_served() {
    let fx = Fixture::new();
    let http = HttpServer::start(&fx, &[], &[]);
    let reply = http.post(
        "/mcp",
        &[("Mcp-Session-Id", "ended-long-ago")],
        &modern("tools/list", json!({})),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(reply.json()["result"]["tools"].is_array());
}

#[test]
fn a_version_header_that_disagrees_with_meta_is_refused() {
    let fx = Fixture::new();
    let http = HttpServer::start(&fx, &[], &[]);
    let reply = http.post(
        "/mcp",
        &[("MCP-Protocol-Version", "2025-11-25")],
        &modern("tools/list", json!({})),
    );
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert_eq!(reply.json()["id"], 1);
    assert_eq!(reply.json()["error"]["code"], -32602);
    let agrees = http.post(
        "/mcp",
        &[("MCP-Protocol-Version", crate::common::MODERN)],
        &modern("tools/list", json!({})),
    );
    assert_eq!(agrees.status, 200, "{}", agrees.body);
}

#[test]
fn an_unsupported_meta_version_lists_only_versions_meta_can_name() {
    let fx = Fixture::new();
    let mut server = fx.server(&[], &[]);
    let reply = server.request_raw(
        "tools/list",
        json!({ "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2025-11-25",
            "io.modelcontextprotocol/clientCapabilities": {},
        } }),
    );
    assert_eq!(reply["error"]["code"], -32022, "{reply}");
    assert_eq!(
        reply["error"]["data"]["supported"],
        json!([crate::common::MODERN]),
        "{reply}"
    );
    assert_eq!(reply["error"]["data"]["requested"], "2025-11-25");
}
