//! The MCP wire protocol: both eras, framing, error codes, notifications, cancellation
//! and the lazy git version check.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{Fixture, MODERN, Server, gitward_bin, write_executable};
use crate::snap;

const LEGACY: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const ALL_VERSIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];
const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// Opens a legacy session at `version`; returns the `initialize` result.
fn handshake(server: &mut Server, version: &str) -> Value {
    let init = server.request_raw(
        "initialize",
        json!({ "protocolVersion": version, "capabilities": {}, "clientInfo": { "name": "old", "version": "0" } }),
    );
    server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    init["result"].clone()
}

/// A modern `_meta` envelope with the given entries left out or replaced.
fn envelope(version: Value, with_caps: bool) -> Value {
    let mut meta = json!({ "io.modelcontextprotocol/protocolVersion": version });
    if with_caps {
        meta["io.modelcontextprotocol/clientCapabilities"] = json!({});
    }
    meta
}

fn committed_repo(fx: &Fixture) -> PathBuf {
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "a\n", "first");
    fx.write(&repo, "b.txt", "b\n");
    repo
}

/// Polls `probe` until it holds. A guard against hanging, not a timing assertion: the
/// bound is far beyond anything the condition needs.
pub(crate) fn wait_until(what: &str, mut probe: impl FnMut() -> bool) {
    let start = Instant::now();
    while !probe() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "gave up waiting: {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The live child processes of `pid` (every thread's list), zombies excluded.
pub(crate) fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for task in tasks.flatten() {
        let list = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        for child in list
            .split_whitespace()
            .filter_map(|c| c.parse::<u32>().ok())
        {
            let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
            // Field 3, after the parenthesised command name, is the state.
            let state = stat.rsplit(") ").next().and_then(|r| r.chars().next());
            if !matches!(state, None | Some('Z' | 'X')) {
                out.push(child);
            }
        }
    }
    out
}

pub(crate) fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

/// A git that logs each invocation's argv to `log`, then runs the real git, or one that
/// only claims to be `fake_version`.
fn git_script(fx: &Fixture, name: &str, log: &Path, fake_version: Option<&str>) -> PathBuf {
    let real = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join("git"))
        .find(|p| p.is_file())
        .expect("git on PATH");
    let body = match fake_version {
        Some(v) => format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\necho 'git version {v}'\n",
            log.display()
        ),
        None => format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real.display()
        ),
    };
    let path = fx.path(name);
    write_executable(&path, &body);
    path
}

#[test]
fn every_legacy_version_is_negotiated_and_shapes_results() {
    let fx = Fixture::new();
    let repo = committed_repo(&fx);
    let root = repo.display().to_string();
    for version in LEGACY {
        let mut server = fx.server(&[], &[]);
        let init = handshake(&mut server, version);
        assert_eq!(init["protocolVersion"], version, "echoed");
        assert_eq!(init["serverInfo"]["name"], "gitward");
        assert_eq!(
            init["capabilities"],
            json!({ "tools": { "listChanged": false }, "logging": {} })
        );
        assert!(init.get("resultType").is_none() && init.get("_meta").is_none());

        let list = server.request_raw("tools/list", json!({}))["result"].clone();
        for key in ["resultType", "_meta", "ttlMs", "cacheScope"] {
            assert!(list.get(key).is_none(), "{version}: {key} in {list}");
        }
        let structured = version >= "2025-06-18";
        for tool in list["tools"].as_array().unwrap() {
            assert_eq!(tool.get("annotations").is_some(), version >= "2025-03-26");
            assert_eq!(tool.get("title").is_some(), structured, "{version}");
            assert_eq!(tool.get("outputSchema").is_some(), structured, "{version}");
            assert_eq!(tool["inputSchema"]["type"], "object");
        }
        snap!(format!("protocol_tools_list_{version}"), list);

        let call = server.request_raw(
            "tools/call",
            json!({ "name": "repo.status", "arguments": { "repoPath": repo } }),
        )["result"]
            .clone();
        assert_eq!(call["isError"], false);
        assert!(call.get("resultType").is_none() && call.get("_meta").is_none());
        let text: Value =
            serde_json::from_str(call["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text["data"]["changedFiles"], 1);
        assert_eq!(
            call.get("structuredContent").is_some(),
            structured,
            "{version}"
        );
        if structured {
            assert_eq!(call["structuredContent"], text);
        }
        // An error is told in the text block only, which every client shows.
        let mut guarded = fx.server(&["--allowed-root", &root], &[]);
        handshake(&mut guarded, version);
        let failed = guarded.request_raw(
            "tools/call",
            json!({ "name": "repo.status", "arguments": { "repoPath": fx.home() } }),
        )["result"]
            .clone();
        assert_eq!(failed["isError"], true, "{version}");
        assert!(
            failed.get("structuredContent").is_none(),
            "{version}: {failed}"
        );
        let payload: Value =
            serde_json::from_str(failed["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(payload["tool"], "repo.status");
        assert!(
            payload["error"]["message"]
                .as_str()
                .unwrap()
                .contains("outside the allowed roots"),
            "{payload}"
        );
        // Legacy hosts send ping; it is answered with an empty result.
        assert_eq!(server.request_raw("ping", json!({}))["result"], json!({}));
    }
}

#[test]
fn initialize_answers_the_latest_legacy_version_for_anything_else() {
    let fx = Fixture::new();
    for asked in [json!("1999-01-01"), json!(MODERN), json!(7), Value::Null] {
        let mut server = fx.server(&[], &[]);
        let init = server.request_raw(
            "initialize",
            json!({ "protocolVersion": asked, "capabilities": {} }),
        );
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{asked}");
    }
    // `initialize` exists only in the legacy era: a modern envelope on it changes nothing.
    let mut server = fx.server(&[], &[]);
    let init = server.request(
        "initialize",
        json!({ "protocolVersion": "2025-06-18", "capabilities": {} }),
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert!(init["result"].get("resultType").is_none());
}

#[test]
fn modern_results_carry_the_envelope() {
    let fx = Fixture::new();
    let repo = committed_repo(&fx);
    let mut server = fx.server(&[], &[]);
    let discover = server.request("server/discover", Value::Null)["result"].clone();
    assert_eq!(discover["supportedVersions"], json!(ALL_VERSIONS));
    assert_eq!(discover["ttlMs"], 300_000);
    assert_eq!(discover["cacheScope"], "public");
    assert!(
        discover["instructions"]
            .as_str()
            .unwrap()
            .contains("repo_brief")
    );
    snap!("protocol_discover", discover);

    let list = server.request("tools/list", json!({}))["result"].clone();
    assert_eq!(list["ttlMs"], 300_000);
    assert_eq!(list["cacheScope"], "public");
    for tool in list["tools"].as_array().unwrap() {
        for key in [
            "name",
            "title",
            "description",
            "inputSchema",
            "outputSchema",
            "annotations",
        ] {
            assert!(tool.get(key).is_some(), "{key} missing in {tool}");
        }
    }
    snap!(format!("protocol_tools_list_{MODERN}"), list);

    let call = server.request(
        "tools/call",
        json!({ "name": "repo.status", "arguments": { "repoPath": repo } }),
    )["result"]
        .clone();
    let failed = server.request(
        "tools/call",
        json!({ "name": "repo.status", "arguments": { "repoPath": "relative" } }),
    )["result"]
        .clone();
    assert_eq!(failed["isError"], true);
    let payload: Value =
        serde_json::from_str(failed["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(payload["error"]["code"], -32602);
    assert!(failed.get("structuredContent").is_none(), "{failed}");
    for result in [&discover, &list, &call, &failed] {
        assert_eq!(result["resultType"], "complete", "{result}");
        assert_eq!(result["_meta"][SERVER_INFO]["name"], "gitward");
        assert_eq!(
            result["_meta"][SERVER_INFO]["version"],
            env!("CARGO_PKG_VERSION")
        );
    }
    assert_eq!(
        serde_json::from_str::<Value>(call["content"][0]["text"].as_str().unwrap()).unwrap(),
        call["structuredContent"]
    );
    // `ping` does not exist in the modern era.
    let ping = server.request("ping", json!({}));
    assert_eq!(ping["error"]["code"], -32601, "{ping}");
}

#[test]
fn modern_envelope_is_checked() {
    let fx = Fixture::new();
    let mut server = fx.server(&[], &[]);
    // Without the envelope and without a legacy session, a request has no era.
    let bare = server.request_raw("tools/list", json!({}));
    assert_eq!(bare["error"]["code"], -32602);
    let no_caps = server.request_raw(
        "tools/list",
        json!({ "_meta": envelope(json!(MODERN), false) }),
    );
    assert_eq!(no_caps["error"]["code"], -32602);
    assert!(
        no_caps["error"]["data"]["details"]
            .as_str()
            .unwrap()
            .contains("clientCapabilities")
    );
    let no_version = server.request_raw(
        "tools/list",
        json!({ "_meta": { "io.modelcontextprotocol/clientCapabilities": {} } }),
    );
    assert_eq!(no_version["error"]["code"], -32602);
    let not_text = server.request_raw(
        "tools/list",
        json!({ "_meta": envelope(json!(2026), true) }),
    );
    assert_eq!(not_text["error"]["code"], -32602);
    // An unknown version, and a handshake-era one (reached only through `initialize`).
    for requested in ["2099-01-01", "2025-11-25"] {
        let reply = server.request_raw(
            "tools/list",
            json!({ "_meta": envelope(json!(requested), true) }),
        );
        assert_eq!(reply["error"]["code"], -32022, "{reply}");
        assert_eq!(reply["error"]["data"]["requested"], requested);
        // Only what `_meta` can name: a legacy version is reached through `initialize`.
        assert_eq!(reply["error"]["data"]["supported"], json!(["2026-07-28"]));
    }
    // A legacy session does not leak into enveloped requests, and vice versa.
    handshake(&mut server, "2024-11-05");
    let modern = server.request("tools/list", json!({}));
    assert_eq!(modern["result"]["resultType"], "complete");
    let legacy = server.request_raw("tools/list", json!({}));
    assert!(legacy["result"]["tools"][0].get("title").is_none());
}

#[test]
fn every_error_code() {
    let fx = Fixture::new();
    let mut server = fx.server(&[], &[]);
    let mut exchange = |raw: &str| {
        server.send_raw(format!("{raw}\n").as_bytes());
        server.recv()
    };
    let cases: &[(&str, i64, Value)] = &[
        ("{not json", -32700, Value::Null),
        (
            "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
            -32600,
            Value::Null,
        ),
        ("[]", -32600, Value::Null),
        ("3", -32600, Value::Null),
        ("\"ping\"", -32600, Value::Null),
        ("null", -32600, Value::Null),
        (
            r#"{"jsonrpc":"1.0","id":4,"method":"ping"}"#,
            -32600,
            json!(4),
        ),
        (r#"{"id":5,"method":"ping"}"#, -32600, json!(5)),
        (
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
            -32600,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"2.0","id":[6],"method":"ping"}"#,
            -32600,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
            -32600,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            -32600,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":["ping"]}"#,
            -32600,
            json!(7),
        ),
        (
            r#"{"jsonrpc":"2.0","id":8,"method":"ping","params":[1]}"#,
            -32600,
            json!(8),
        ),
        (
            r#"{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#,
            0,
            json!(9),
        ),
        (
            r#"{"jsonrpc":"2.0","id":"x","method":"resources/list"}"#,
            -32601,
            json!("x"),
        ),
        (
            r#"{"jsonrpc":"2.0","id":10,"method":"no/such"}"#,
            -32601,
            json!(10),
        ),
        (
            r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{}}"#,
            -32602,
            json!(11),
        ),
        (
            r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"no.such.tool"}}"#,
            -32602,
            json!(12),
        ),
    ];
    let mut replies = Vec::new();
    for (raw, code, id) in cases {
        let reply = exchange(raw);
        assert_eq!(reply["jsonrpc"], "2.0");
        assert_eq!(reply["id"], *id, "{raw} → {reply}");
        if *code == 0 {
            assert!(reply["result"].is_object(), "{reply}");
        } else {
            assert_eq!(reply["error"]["code"], *code, "{raw} → {reply}");
            assert!(reply["error"]["message"].is_string());
            replies.push(json!({ "sent": raw, "reply": reply }));
        }
    }
    let unknown = &replies.last().unwrap()["reply"]["error"]["data"];
    assert_eq!(unknown["tool"], "no.such.tool");
    assert!(
        unknown["readOnlyTools"]
            .as_array()
            .unwrap()
            .contains(&json!("repo_status"))
    );
    assert!(unknown["writeProposalTools"].is_array());
    assert_eq!(
        replies[replies.len() - 3]["reply"]["error"]["data"]["method"],
        "no/such"
    );
    snap!("protocol_error_codes", replies);
    // Still serving.
    assert_eq!(
        exchange(r#"{"jsonrpc":"2.0","id":13,"method":"ping"}"#)["result"],
        json!({})
    );
}

#[test]
fn oversize_frames_are_refused_and_serving_goes_on() {
    let fx = Fixture::new();
    let mut server = fx.server(&[], &[]);
    const MAX: usize = 8 * 1024 * 1024;
    // Just under the limit: a ping padded with whitespace inside the object.
    let head = br#"{"jsonrpc":"2.0","id":1,"method":"ping""#;
    let mut fits = head.to_vec();
    fits.resize(MAX - 1, b' ');
    fits.extend_from_slice(b"}\n");
    assert_eq!(
        fits.len(),
        MAX + 1,
        "the limit counts the message, not its newline"
    );
    server.send_raw(&fits);
    assert_eq!(server.recv()["id"], 1);

    // One byte over, as a line: refused with an error, nothing buffered.
    let mut line = head.to_vec();
    line.resize(MAX, b' ');
    line.extend_from_slice(b"}\n");
    server.send_raw(&line);
    let refused = server.recv();
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(refused["id"], Value::Null);
    assert_eq!(server.request_raw("ping", json!({}))["result"], json!({}));

    // Over the limit, as a Content-Length frame: the body is skipped, then serving goes on.
    let body = vec![b' '; MAX + 1];
    server.send_raw(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    server.send_raw(&body);
    let refused = server.recv();
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(
        refused["error"]["data"]["details"]
            .as_str()
            .unwrap()
            .contains("8388608")
    );
    assert_eq!(server.request_raw("ping", json!({}))["result"], json!({}));
}

#[test]
fn content_length_input_is_accepted_and_output_is_always_ndjson() {
    let fx = Fixture::new();
    let mut server = fx.server(&[], &[]);
    let init = json!({ "jsonrpc": "2.0", "id": "cl", "method": "initialize", "params": { "protocolVersion": "2024-11-05", "capabilities": {} } }).to_string();
    server.send_raw(
        format!(
            "Content-Length: {}\r\nContent-Type: application/json\r\n\r\n{init}",
            init.len()
        )
        .as_bytes(),
    );
    // `recv` reads one line and fails unless it is a whole JSON value.
    let reply = server.recv();
    assert_eq!(reply["id"], "cl");
    assert_eq!(reply["result"]["protocolVersion"], "2024-11-05");
    // Framings mix freely on one stream.
    let ping = json!({ "jsonrpc": "2.0", "id": 2, "method": "ping" }).to_string();
    server.send_raw(format!("content-length: {}\r\n\r\n{ping}{ping}\n", ping.len()).as_bytes());
    assert_eq!(server.recv()["id"], 2);
    assert_eq!(server.recv()["id"], 2);
    server.send_raw(b"Content-Length: many\r\n\r\n");
    assert_eq!(server.recv()["error"]["code"], -32700);
    assert_eq!(server.request_raw("ping", json!({}))["result"], json!({}));
}

#[test]
fn notifications_get_no_response_and_request_methods_without_id_do_not_run() {
    let fx = Fixture::new();
    let repo = committed_repo(&fx);
    let log = fx.path("git-calls.log");
    let git = git_script(&fx, "logging-git", &log, None);
    let mut server = fx.server(&[], &[("GITWARD_GIT", git.to_str().unwrap())]);
    let call = json!({ "name": "repo.status", "arguments": { "repoPath": repo } });
    for (method, params) in [
        ("notifications/initialized", json!({})),
        (
            "notifications/cancelled",
            json!({ "requestId": 99, "reason": "nothing" }),
        ),
        ("notifications/unknown", json!({})),
        ("tools/call", call.clone()),
        ("tools/list", json!({})),
        (
            "initialize",
            json!({ "protocolVersion": "2024-11-05", "capabilities": {} }),
        ),
        ("ping", json!({})),
    ] {
        server.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }
    let mut with_meta = json!({ "jsonrpc": "2.0", "method": "tools/call", "params": call });
    with_meta["params"]["_meta"] = envelope(json!(MODERN), true);
    server.send(&with_meta);
    // Client responses to requests we never sent are not answered either.
    server.send(&json!({ "jsonrpc": "2.0", "id": 5, "result": {} }));
    server.send(&json!({ "jsonrpc": "2.0", "id": 6, "error": { "code": 1, "message": "x" } }));
    // The first reply is for the first request, and ids are untouched: the `initialize`
    // sent as a notification opened no session.
    server.send(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }));
    let first = server.recv();
    assert_eq!(first["id"], 1, "{first}");
    assert_eq!(first["error"]["code"], -32602, "{first}");
    // The server finishes every task before it exits; only the one reply was written.
    let rest = server.finish();
    assert!(rest.is_empty(), "unexpected output: {rest:?}");
    assert!(
        !log.exists(),
        "git ran for a notification: {}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
}

#[test]
fn stdout_carries_only_json_lines_and_stderr_is_separate() {
    let fx = Fixture::new();
    let repo = committed_repo(&fx);
    let mut cmd = Command::new(gitward_bin());
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in fx.env() {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let meta = envelope(json!(MODERN), true);
    let input = [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": { "_meta": meta } }).to_string(),
        "garbage".into(),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "_meta": meta, "name": "repo.status", "arguments": { "repoPath": repo } } }).to_string(),
        json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "_meta": meta, "name": "repo.status", "arguments": { "repoPath": "/nonexistent" } } }).to_string(),
    ]
    .join("\n");
    stdin.write_all(input.as_bytes()).unwrap();
    stdin.write_all(b"\n").unwrap();
    drop(stdin);
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(child.wait().unwrap().success());
    assert!(stdout.ends_with('\n'));
    let mut ids = Vec::new();
    for line in stdout.lines() {
        let value: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
        assert_eq!(value["jsonrpc"], "2.0");
        assert_eq!(line, value.to_string(), "compact, one value per line");
        ids.push(value["id"].clone());
    }
    ids.sort_by_key(|v| v.to_string());
    assert_eq!(ids, vec![json!(1), json!(2), json!(3), Value::Null]);
    // Diagnostics go to stderr and never to stdout.
    assert!(stderr.contains("no allowed roots"), "{stderr}");
    assert!(!stdout.contains("no allowed roots"));
}

#[test]
fn cancellation_kills_the_git_process_and_sends_no_result() {
    let fx = Fixture::new();
    let slow = committed_repo(&fx);
    // `git status` opens the alternates file to find objects; a FIFO nobody writes to
    // makes that open block, so the call stays in flight until it is cancelled.
    let fifo = slow.join(".git/objects/info/alternates");
    std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let fast = fx.init("fast", &[]);

    for era in ["legacy", "modern"] {
        let mut server = fx.server(&[], &[]);
        let pid = server.pid();
        if era == "legacy" {
            handshake(&mut server, "2025-11-25");
        }
        let mut params = json!({ "name": "repo.status", "arguments": { "repoPath": slow } });
        if era == "modern" {
            params["_meta"] = envelope(json!(MODERN), true);
        }
        server.send(
            &json!({ "jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": params }),
        );
        wait_until("git status to start", || {
            children(pid)
                .iter()
                .any(|c| cmdline(*c).contains(" status"))
        });
        // A slow call never holds up ping (legacy) or another call (both eras).
        if era == "legacy" {
            assert_eq!(server.request_raw("ping", json!({}))["result"], json!({}));
        }
        let other = server.request(
            "tools/call",
            json!({ "name": "repo.status", "arguments": { "repoPath": fast } }),
        );
        assert_eq!(other["result"]["isError"], false, "{other}");
        assert!(
            children(pid)
                .iter()
                .any(|c| cmdline(*c).contains(" status"))
        );

        server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": "slow", "reason": "user" } }));
        wait_until("the git child to be gone", || children(pid).is_empty());
        // From here every line is kept: a cancelled request gets no response at all (MCP).
        let mut after = json!({ "name": "repo.status", "arguments": { "repoPath": fast }, "_meta": envelope(json!(MODERN), true) });
        server.send(&json!({ "jsonrpc": "2.0", "id": "after", "method": "tools/call", "params": after.take() }));
        let mut seen = vec![server.recv()];
        if era == "legacy" {
            server.send(&json!({ "jsonrpc": "2.0", "id": "ping", "method": "ping" }));
            seen.push(server.recv());
        }
        seen.extend(server.finish());
        let ids: Vec<&Value> = seen.iter().map(|r| &r["id"]).collect();
        let expected = if era == "legacy" {
            vec!["after", "ping"]
        } else {
            vec!["after"]
        };
        assert_eq!(ids, expected, "{era}: {seen:?}");
        assert_eq!(seen[0]["result"]["isError"], false);
    }
}

#[test]
fn git_version_is_checked_lazily_and_named_when_too_old() {
    let fx = Fixture::new();
    let repo = committed_repo(&fx);
    let log = fx.path("old-git.log");
    let git = git_script(&fx, "old-git", &log, Some("2.30.1"));
    let mut server = fx.server(&[], &[("GITWARD_GIT", git.to_str().unwrap())]);
    handshake(&mut server, "2025-11-25");
    server.request("server/discover", Value::Null);
    server.request("tools/list", json!({}));
    assert!(!log.exists(), "git ran before any tool call");

    let failed = server.call("repo.status", json!({ "repoPath": repo }));
    assert_eq!(failed["error"]["code"], 10010, "{failed}");
    let reason = failed["error"]["data"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("2.30.1") && reason.contains("2.38"),
        "{reason}"
    );
    assert_eq!(failed["error"]["message"], reason);
    // Checked once: the second call reuses the verdict without running git again.
    let again = server.call("repo.status", json!({ "repoPath": repo }));
    assert_eq!(again["error"], failed["error"]);
    let calls = std::fs::read_to_string(&log).unwrap();
    assert_eq!(calls.lines().collect::<Vec<_>>(), vec!["--version"]);

    // A new enough git passes the check, which runs once before the first real command.
    let log = fx.path("new-git.log");
    let git = git_script(&fx, "new-git", &log, None);
    let mut server = fx.server(&[], &[("GITWARD_GIT", git.to_str().unwrap())]);
    let ok = server.call("repo.status", json!({ "repoPath": repo }));
    assert_eq!(ok["data"]["changedFiles"], 1, "{ok}");
    server.call("repo.status", json!({ "repoPath": repo }));
    let calls = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<_> = calls.lines().collect();
    assert_eq!(lines[0], "--version");
    assert_eq!(
        lines.iter().filter(|l| **l == "--version").count(),
        1,
        "{calls}"
    );
}
