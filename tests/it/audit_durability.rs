//! The ledger never loses an answered call: entries are written before responses (a
//! `kill -9` right after the answers loses none), a panicking call is answered and
//! recorded, a broken ledger end is recorded and passed over, `gitward call` is recorded,
//! and floods of refused calls are counted instead of filling the ledger.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::audit::{calls, copy_ledger, edit_lines, keygen, lines, rotated, run, serve, verify};
use crate::common::{Fixture, MODERN};

fn modern_call(id: u64, tool: &str, args: Value) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {
            "name": tool, "arguments": args,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    })
}

fn tool_calls(log: &Path) -> Vec<serde_json::Map<String, Value>> {
    lines(log)
        .into_iter()
        .filter(|e| e["event_type"] == "tool_call")
        .collect()
}

#[test]
fn answered_calls_survive_kill_9() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "a\n", "first");
    let log = fx.path("ledger/mcp.jsonl");
    // Every read its own entry (above the budget they are counted, and a kill loses the
    // count of the window still open): this is about entries of their own.
    let mut server = fx.server(
        &[],
        &[
            ("FLUXGIT_MCP_AUDIT_LOG", log.to_str().unwrap()),
            ("GITWARD_AUDIT_READ_BUDGET", "1000"),
        ],
    );
    let n = 90;
    // All at once, so the answers come back as fast as the server can give them.
    let mut burst = Vec::new();
    for id in 1..=n {
        let args = json!({ "repoPath": repo, "maxEntries": id });
        burst.extend(
            modern_call(id, "repo.status", args)
                .to_string()
                .into_bytes(),
        );
        burst.push(b'\n');
    }
    server.send_raw(&burst);
    for _ in 0..n {
        let reply = server.recv();
        assert!(reply["result"].is_object(), "{reply}");
    }
    let killed = Command::new("kill")
        .args(["-9", &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    server.wait();
    let recorded = tool_calls(&log);
    assert_eq!(
        recorded.len(),
        n as usize,
        "every answered call is in the ledger"
    );
    let (code, report) = verify(&fx, &log, &[]);
    assert_eq!(code, 0, "{report}");
}

#[test]
fn a_panicking_call_is_answered_and_recorded() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let log = fx.path("ledger/mcp.jsonl");
    // Development builds only: makes repo.status panic (see `transport/server.rs`).
    let mut server = fx.server(
        &[],
        &[
            ("FLUXGIT_MCP_AUDIT_LOG", log.to_str().unwrap()),
            ("GITWARD_DEBUG_PANIC_TOOL", "repo.status"),
        ],
    );
    server.send(&modern_call(1, "repo.status", json!({ "repoPath": repo })));
    server.send(&modern_call(2, "repo.refs", json!({ "repoPath": repo })));
    let replies = server.finish();
    let by_id = |id: u64| {
        replies
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("no answer to request {id}: {replies:?}"))
    };
    let panicked = &by_id(1)["result"];
    assert_eq!(panicked["isError"], true, "{panicked}");
    // Error payloads travel as the text block only (no structuredContent).
    let payload: Value = serde_json::from_str(panicked["content"][0]["text"].as_str().unwrap())
        .unwrap_or_else(|e| panic!("error text is not JSON: {e}: {panicked}"));
    assert_eq!(payload["error"]["code"], -32603, "{payload}");
    assert_eq!(by_id(2)["result"]["isError"], false, "the server goes on");
    let recorded = tool_calls(&log);
    let entry = recorded
        .iter()
        .find(|e| e["tool"] == "repo.status")
        .expect("the panicking call is recorded");
    assert_eq!(entry["result"], "error");
    assert_eq!(entry["summary"], "error -32603");
    assert_eq!(recorded.len(), 2);
}

#[test]
fn a_broken_ledger_end_is_recorded_and_auditing_goes_on() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let (key, public) = keygen(&fx);
    let pubkey = public.to_str().unwrap();
    let log = fx.path("ledger/mcp.jsonl");
    let env = [
        ("FLUXGIT_MCP_AUDIT_LOG", log.to_str().unwrap()),
        ("FLUXGIT_MCP_AUDIT_SIGN_KEY", key.to_str().unwrap()),
    ];
    let status = |n: usize| vec![("repo.status", json!({ "repoPath": repo })); n];
    serve(&fx, &env, &status(2));
    // One garbage line at the end, as a stray writer or a damaged disk would leave.
    edit_lines(&log, |l| l.push("{\"not\": an entry}".into()));
    let (code, report) = verify(&fx, &log, &["--pubkey", pubkey]);
    assert_eq!(code, 3, "an unrecorded break fails: {report}");

    let out = serve(&fx, &env, &status(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("break"), "said on stderr: {err}");
    let broken = rotated(&log, 1);
    assert_eq!(lines_text(&broken).lines().count(), 3, "set aside whole");
    let active = lines(&log);
    assert_eq!(active.len(), 2, "a checkpoint, then the new call");
    let checkpoint = &active[0];
    assert_eq!(checkpoint["event_type"], "checkpoint");
    let old = lines_text(&broken);
    let valid_len = old.lines().take(2).map(|l| l.len() + 1).sum::<usize>();
    assert_eq!(checkpoint["break"]["offset"], valid_len);
    assert_eq!(checkpoint["break"]["length"], old.len() - valid_len);
    assert_eq!(
        checkpoint["lastSequence"], 2,
        "chained from the last valid entry"
    );
    assert_eq!(active[1]["tool"], "repo.status");

    let (code, report) = verify(&fx, &log, &["--pubkey", pubkey, "--require-signed"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["breaks"], 1, "{report}");
    assert_eq!(report["chained"], 4, "{report}");
    let (code, report) = verify(&fx, &log, &["--pubkey", pubkey, "--require-unbroken"]);
    assert_eq!(code, 3, "{report}");

    // The recorded bytes are fixed: changing them afterwards is tampering.
    let copy = copy_ledger(&fx, &log, "edited-break");
    let broken_copy = rotated(&copy, 1);
    let text = lines_text(&broken_copy).replace("an entry", "AN ENTRY");
    std::fs::write(&broken_copy, text).unwrap();
    let (code, report) = verify(&fx, &copy, &["--pubkey", pubkey]);
    assert_eq!(code, 3, "{report}");
    assert_eq!(report["failure"]["segment"], "mcp.jsonl.1", "{report}");
    // So is damage earlier than the recorded offset.
    let copy = copy_ledger(&fx, &log, "earlier-damage");
    edit_lines(&rotated(&copy, 1), |l| {
        l[1] = l[1].replace("\"ok\"", "\"OK\"")
    });
    let (code, report) = verify(&fx, &copy, &["--pubkey", pubkey]);
    assert_eq!(code, 3, "{report}");
}

fn lines_text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn gitward_call_is_audited_like_the_server() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let log = fx.path("ledger/mcp.jsonl");
    let env = [("FLUXGIT_MCP_AUDIT_LOG", log.to_str().unwrap())];
    let args = json!({ "repoPath": repo }).to_string();
    let out = run(&fx, &["call", "repo.status", &args], &env, b"");
    assert!(out.status.success());
    let out = run(&fx, &["call", "no.such.tool", "{}"], &env, b"");
    assert_eq!(out.status.code(), Some(2));
    let entries = lines(&log);
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert_eq!(entries[0]["tool"], "repo.status");
    assert_eq!(entries[0]["event_type"], "tool_call");
    assert_eq!(entries[0]["result"], "success");
    assert!(
        entries[0]["repo_scope"]
            .as_str()
            .unwrap()
            .starts_with("repoPath:sha256:")
    );
    assert_eq!(entries[1]["event_type"], "write_block");
    assert_eq!(entries[1]["result"], "blocked");
    let (code, report) = verify(&fx, &log, &[]);
    assert_eq!(code, 0, "{report}");
}

#[test]
fn a_flood_of_refused_calls_is_counted_not_copied() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let log = fx.path("ledger/mcp.jsonl");
    let names: Vec<String> = (0..500).map(|i| format!("no.such.tool.{i}")).collect();
    let mut requests: Vec<(&str, Value)> = names.iter().map(|n| (n.as_str(), json!({}))).collect();
    // Each with a different unknown argument, so no two refusals read alike.
    let bogus: Vec<String> = (0..500).map(|i| format!("bogus{i}")).collect();
    for field in &bogus {
        requests.push((
            "repo.status",
            json!({ "repoPath": repo, field.as_str(): 1 }),
        ));
    }
    requests.push(("repo.status", json!({ "repoPath": repo })));
    let out = run(
        &fx,
        &[],
        &[("FLUXGIT_MCP_AUDIT_LOG", log.to_str().unwrap())],
        &calls(&requests),
    );
    assert!(out.status.success());
    let answers = String::from_utf8_lossy(&out.stdout).lines().count();
    assert_eq!(answers, 1001, "every call is still answered");
    let entries = lines(&log);
    assert!(entries.len() < 50, "{} entries", entries.len());
    let counted = |pick: &dyn Fn(&serde_json::Map<String, Value>) -> bool| -> u64 {
        entries
            .iter()
            .filter(|e| pick(e))
            .map(|e| e.get("count").and_then(Value::as_u64).unwrap_or(1))
            .sum()
    };
    assert_eq!(counted(&|e| e["result"] == "blocked"), 500);
    assert_eq!(
        counted(&|e| e["summary"]
            .as_str()
            .is_some_and(|s| s.starts_with("error -32602"))),
        500
    );
    let summaries: Vec<_> = entries
        .iter()
        .filter(|e| e["event_type"] == "refused_calls")
        .collect();
    assert!(!summaries.is_empty());
    assert!(
        summaries
            .iter()
            .all(|s| s["session_id"] == entries[0]["session_id"])
    );
    assert!(
        summaries
            .iter()
            .filter(|s| s["result"] == "blocked")
            .all(|s| s.get("tool").is_none()),
        "invented names are not kept, not even hashed"
    );
    assert!(
        entries
            .iter()
            .any(|e| e["tool"] == "repo.status" && e["result"] == "success"),
        "the real call is there"
    );
    let (code, report) = verify(&fx, &log, &[]);
    assert_eq!(code, 0, "{report}");
}

#[test]
fn a_foreign_json_line_at_the_end_is_a_break_too() {
    // Valid JSON but not an entry: it reads like a legacy record, which may only come
    // before the chain.
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let log = fx.path("ledger/mcp.jsonl");
    let env = [("FLUXGIT_MCP_AUDIT_LOG", log.to_str().unwrap())];
    let status = [("repo.status", json!({ "repoPath": repo }))];
    serve(&fx, &env, &status);
    edit_lines(&log, |l| l.push(r#"{"tool":"something else"}"#.into()));
    serve(&fx, &env, &status);
    let (code, report) = verify(&fx, &log, &[]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["breaks"], 1, "{report}");
    assert_eq!(
        report["lastSequence"], 3,
        "one chain: call, checkpoint, call"
    );
}

#[test]
fn a_ledger_lock_held_elsewhere_delays_calls_but_never_hangs_them() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let log = fx.path("ledger/mcp.jsonl");
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    let lock = std::fs::File::create(fx.path("ledger/mcp.jsonl.lock")).unwrap();
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive).unwrap();
    let mut server = fx.server(&[], &[("FLUXGIT_MCP_AUDIT_LOG", log.to_str().unwrap())]);
    server.send(&modern_call(1, "repo.status", json!({ "repoPath": repo })));
    let reply = server.recv();
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    // Once the lock is free, the entry is written after all.
    drop(lock);
    server.finish();
    assert_eq!(tool_calls(&log).len(), 1);
}
