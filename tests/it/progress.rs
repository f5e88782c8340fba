//! Progress of long calls on the wire: `notifications/progress` for a request that carries
//! a `progressToken`, over stdio and Streamable HTTP in every protocol era, each before the
//! answer and moving forward; none for a request without one; none once the client has
//! cancelled. The official clients are in `progress_sdk`, the terminal in `progress_tty`.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::{Fixture, MODERN, Server};
use crate::http::HttpServer;
use crate::protocol::{children, cmdline, wait_until};

/// Repositories a radar looks at.
pub(crate) const REPOS: u64 = 50;
/// Files the large commit changes.
pub(crate) const FILES: u64 = 120;

/// `n` repositories with one commit each.
pub(crate) fn fleet(fx: &Fixture, n: u64) -> Vec<PathBuf> {
    (0..n)
        .map(|i| {
            let repo = fx.init(&format!("fleet/r{i:02}"), &["-b", "main"]);
            fx.commit(&repo, "a.txt", &format!("{i}\n"), "first");
            repo
        })
        .collect()
}

/// A repository whose last commit changes `n` Rust files, each a definition or two.
pub(crate) fn large_commit(fx: &Fixture, n: u64) -> PathBuf {
    let repo = fx.init("large", &["-b", "main"]);
    for i in 0..n {
        let text = format!("pub fn f{i}() -> u64 {{\n    {i}\n}}\n");
        fx.write(&repo, &format!("src/m{i:03}.rs"), &text);
    }
    fx.git(&repo, &["add", "-A"]);
    fx.git(&repo, &["commit", "-q", "-m", "first"]);
    for i in 0..n {
        let text = format!("pub fn f{i}() -> u64 {{\n    {i} + 1\n}}\n\npub fn g{i}() {{}}\n");
        fx.write(&repo, &format!("src/m{i:03}.rs"), &text);
    }
    fx.git(&repo, &["add", "-A"]);
    fx.git(&repo, &["commit", "-q", "-m", "second"]);
    repo
}

pub(crate) fn radar_args(repos: &[PathBuf]) -> Value {
    json!({ "repoPaths": repos })
}

pub(crate) fn semantic_args(repo: &PathBuf) -> Value {
    json!({ "repoPath": repo, "base": "HEAD~1", "head": "HEAD" })
}

/// Checks one call's updates (`{progress, total, message}` each): the first is `0`, each
/// moves forward, every one is of `total`, the last completes it, and each message reads
/// `{what}: N of total {unit}` (or is absent, when `worded` is false).
pub(crate) fn check_progress(updates: &[Value], total: u64, what: &str, unit: &str, worded: bool) {
    assert!(!updates.is_empty(), "no progress for {what}");
    let mut last = None;
    for u in updates {
        let progress = u["progress"].as_f64().unwrap_or_else(|| panic!("{u}"));
        assert!(
            last.is_none_or(|l| progress > l),
            "not forward: {updates:?}"
        );
        last = Some(progress);
        assert_eq!(u["total"].as_f64(), Some(total as f64), "{u}");
        let message = u.get("message").filter(|m| !m.is_null());
        if worded {
            let want = format!("{what}: {} of {total} {unit}", progress as u64);
            assert_eq!(message, Some(&json!(want)), "{u}");
        } else {
            assert_eq!(message, None, "{u}");
        }
    }
    assert_eq!(updates[0]["progress"].as_f64(), Some(0.0), "{updates:?}");
    assert_eq!(
        last,
        Some(total as f64),
        "the last update completes: {updates:?}"
    );
}

/// Sends `tools/call` with `id` and reads to its answer: the progress notifications that
/// came first (their params), and the answer. Nothing else may arrive meanwhile.
fn call(server: &mut Server, id: &str, params: Value) -> (Vec<Value>, Value) {
    server.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}));
    let mut notes = Vec::new();
    loop {
        let message = server.recv();
        if message["id"] == json!(id) {
            return (notes, message);
        }
        assert_eq!(message["method"], "notifications/progress", "{message}");
        notes.push(message["params"].clone());
    }
}

/// A ping answered next: nothing of an earlier request follows its answer.
fn ping_is_next(server: &mut Server, modern: bool) {
    let mut params = json!({});
    if modern {
        params["_meta"] = modern_meta(None)["_meta"].clone();
    }
    server.send(&json!({"jsonrpc": "2.0", "id": "ping", "method": "ping", "params": params}));
    let next = server.recv();
    assert_eq!(next["id"], "ping", "{next}");
}

/// Params carrying the modern envelope, and a progress token when given.
fn modern_meta(token: Option<Value>) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    if let Some(token) = token {
        meta["progressToken"] = token;
    }
    json!({ "_meta": meta })
}

fn tool_params(name: &str, args: &Value, meta: Value) -> Value {
    let mut params = meta;
    params["name"] = name.into();
    params["arguments"] = args.clone();
    params
}

#[test]
fn stdio_reports_progress_in_every_era_before_the_answer_and_only_when_asked() {
    let fx = Fixture::new();
    let repos = fleet(&fx, REPOS);
    let large = large_commit(&fx, FILES);
    let radar = radar_args(&repos);
    let semantic = semantic_args(&large);
    for version in [
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        MODERN,
    ] {
        let modern = version == MODERN;
        let mut server = fx.server(&[], &[]);
        if !modern {
            let init = server.request_raw(
                "initialize",
                json!({"protocolVersion": version, "capabilities": {},
                       "clientInfo": {"name": "gitward-tests", "version": "1"}}),
            );
            assert_eq!(init["result"]["protocolVersion"], version, "{init}");
            server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        }
        let meta = |token: Option<Value>| {
            if modern {
                modern_meta(token)
            } else {
                token.map_or(json!({}), |t| json!({"_meta": {"progressToken": t}}))
            }
        };
        // `message` arrived in 2025-03-26.
        let worded = version != "2024-11-05";

        let (notes, answer) = call(
            &mut server,
            "r1",
            tool_params("fleet.radar", &radar, meta(Some(json!("radar-1")))),
        );
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        assert!(
            notes.iter().all(|n| n["progressToken"] == "radar-1"),
            "{notes:?}"
        );
        check_progress(&notes, REPOS, "radar", "repositories", worded);
        ping_is_next(&mut server, modern);

        // An integer token works as well, here for the semantic diff.
        let (notes, answer) = call(
            &mut server,
            "s1",
            tool_params("diff.semantic", &semantic, meta(Some(json!(7)))),
        );
        assert_eq!(answer["result"]["isError"], false);
        // The text block is the result in every era (2024-11-05 has no structuredContent).
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        let result: Value = serde_json::from_str(text).unwrap();
        assert_eq!(result["data"]["changedFiles"], FILES, "{version}");
        assert!(notes.iter().all(|n| n["progressToken"] == 7), "{notes:?}");
        check_progress(&notes, FILES, "semantic diff", "files", worded);
        ping_is_next(&mut server, modern);

        // No token, no notification; a token of a kind MCP does not define asks for none.
        for (id, token) in [
            ("r2", None),
            ("r3", Some(json!(1.5))),
            ("r4", Some(json!({"a": 1}))),
        ] {
            let (notes, answer) = call(
                &mut server,
                id,
                tool_params("fleet.radar", &radar, meta(token)),
            );
            assert_eq!(answer["result"]["isError"], false, "{answer}");
            assert!(notes.is_empty(), "{version} {id}: {notes:?}");
        }
        ping_is_next(&mut server, modern);
    }
}

/// The events of an event-stream body, each a JSON-RPC message.
fn events(body: &str) -> Vec<Value> {
    body.split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| {
            let data = e
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .unwrap_or_else(|| panic!("no data in {e:?}"));
            serde_json::from_str(data).unwrap()
        })
        .collect()
}

#[test]
fn http_streams_progress_then_the_answer_and_answers_as_before_without_a_token() {
    let fx = Fixture::new();
    let repos = fleet(&fx, REPOS);
    let radar = radar_args(&repos);
    let http = HttpServer::start(&fx, &[], &[]);
    let body = |token: Option<Value>| {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": tool_params("fleet.radar", &radar, modern_meta(token))})
        .to_string()
    };

    let streamed = http.post("/mcp", &[], &body(Some(json!("h1"))));
    assert_eq!(streamed.status, 200, "{}", streamed.body);
    assert_eq!(streamed.header("content-type"), Some("text/event-stream"));
    let mut messages = events(&streamed.body);
    let answer = messages.pop().unwrap();
    assert_eq!(answer["id"], 1, "the answer comes last: {answer}");
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    assert!(
        messages
            .iter()
            .all(|m| m["method"] == "notifications/progress")
    );
    let notes: Vec<Value> = messages.iter().map(|m| m["params"].clone()).collect();
    assert!(
        notes.iter().all(|n| n["progressToken"] == "h1"),
        "{notes:?}"
    );
    check_progress(&notes, REPOS, "radar", "repositories", true);

    // No token: one JSON answer, as before.
    let plain = http.post("/mcp", &[], &body(None));
    assert_eq!(plain.header("content-type"), Some("application/json"));
    assert_eq!(plain.json()["result"]["isError"], false, "{}", plain.body);
    assert_eq!(
        plain.json()["result"]["structuredContent"]["data"]["requestedCount"],
        answer["result"]["structuredContent"]["data"]["requestedCount"]
    );

    // A client that takes JSON only cannot be sent notifications: none, one JSON answer.
    let json_only = http.send(
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json"),
        ],
        &body(Some(json!("h2"))),
    );
    assert_eq!(json_only.header("content-type"), Some("application/json"));
    assert_eq!(json_only.json()["id"], 1, "{}", json_only.body);
}

/// A repository whose `git status` blocks until it is killed (see `http_cancel`).
fn slow_repo(fx: &Fixture) -> PathBuf {
    let repo = fx.init("slow", &["-b", "main"]);
    fx.commit(&repo, "a.txt", "a\n", "first");
    let fifo = repo.join(".git/objects/info/alternates");
    std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    repo
}

#[test]
fn cancelling_mid_progress_stops_the_work_and_its_notifications() {
    let fx = Fixture::new();
    let slow = slow_repo(&fx);
    let mut repos = vec![slow.clone()];
    repos.extend(fleet(&fx, 20));
    let mut server = fx.server(&[], &[]);
    let params = tool_params(
        "fleet.radar",
        &radar_args(&repos),
        modern_meta(Some(json!("c1"))),
    );
    server.send(&json!({"jsonrpc": "2.0", "id": "c", "method": "tools/call", "params": params}));
    // The radar is under way: it has said how many repositories there are.
    let first = server.recv();
    assert_eq!(first["method"], "notifications/progress", "{first}");
    assert_eq!(first["params"]["total"], 21, "{first}");
    // The slow repository holds the radar open.
    let pid = server.pid();
    let blocked = || {
        children(pid)
            .into_iter()
            .any(|c| cmdline(c).contains(" status"))
    };
    wait_until("the slow git status runs", blocked);

    server.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": "c", "reason": "user"}}),
    );
    // Whatever was queued before the cancellation is written before this answer.
    server.send(
        &json!({"jsonrpc": "2.0", "id": "p1", "method": "ping", "params": modern_meta(None)}),
    );
    let mut before = Vec::new();
    loop {
        let message = server.recv();
        if message["id"] == "p1" {
            break;
        }
        before.push(message);
    }
    assert!(
        before
            .iter()
            .all(|m| m["method"] == "notifications/progress"),
        "{before:?}"
    );
    // The work stops: the blocked git is killed rather than left to its deadline.
    wait_until("the slow git status is killed", || !blocked());
    // After it: no answer to the cancelled call and no progress, only what is asked next.
    server.send(
        &json!({"jsonrpc": "2.0", "id": "p2", "method": "ping", "params": modern_meta(None)}),
    );
    let next = server.recv();
    assert_eq!(
        next["id"], "p2",
        "nothing of the cancelled call follows: {next}"
    );
    let rest = server.finish();
    assert!(rest.is_empty(), "{rest:?}");
}
