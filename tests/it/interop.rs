//! Interoperability with the official MCP Python SDK (`mcp` on PyPI, pinned in
//! `scripts/requirements-interop.txt`): its client drives the real binary in the modern
//! era (probing `server/discover`), with a pinned modern version, and in the legacy era,
//! calling every served tool and validating each result with the SDK's own types.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::{Fixture, gitward_bin};
use crate::interop_ts::handshake_replies;
use crate::operation_peer::Peer;

fn venv_python() -> Option<PathBuf> {
    let python = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    if python.exists() {
        return Some(python);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        ".venv is missing in CI: scripts/setup must install the pinned MCP SDK"
    );
    eprintln!("SKIPPED interop: .venv is missing; run scripts/setup to install the pinned MCP SDK");
    None
}

/// A repository every tool has something to say about: history on two branches, a tag,
/// a staged, a modified and an untracked file.
pub(crate) fn fixture_repo(fx: &Fixture) -> PathBuf {
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "one\n", "first");
    fx.commit(&repo, "src/lib.rs", "pub fn f() {}\n", "second");
    fx.git(&repo, &["tag", "-a", "v1", "-m", "v1"]);
    fx.git(&repo, &["switch", "-q", "-c", "feature"]);
    fx.commit(&repo, "b.txt", "feature\n", "feature work");
    fx.git(&repo, &["switch", "-q", "main"]);
    fx.commit(&repo, "a.txt", "one\ntwo\n", "third");
    fx.write(&repo, "a.txt", "one\ntwo\nthree\n");
    fx.write(&repo, "staged.txt", "s\n");
    fx.git(&repo, &["add", "staged.txt"]);
    fx.write(&repo, "untracked.txt", "u\n");
    repo
}

#[test]
fn official_python_sdk_lists_and_calls_every_tool() {
    let Some(python) = venv_python() else {
        return;
    };
    let fx = Fixture::new();
    let repo = fixture_repo(&fx);
    let served: Vec<Value> = {
        let mut server = fx.server(&[], &[]);
        let list = server.request("tools/list", json!({}));
        list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].clone())
            .collect()
    };
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/sdk_client.py");
    for (mode, version) in [
        ("auto", "2026-07-28"),
        ("2026-07-28", "2026-07-28"),
        ("legacy", "2025-11-25"),
    ] {
        // An accepting gateway for the write handshake, one reply per request in list order.
        let peer = Peer::start(
            served
                .iter()
                .flat_map(|name| handshake_replies(name.as_str().unwrap()))
                .collect(),
        );
        let mut cmd = Command::new(&python);
        cmd.arg(&script)
            .arg(gitward_bin())
            .arg(&repo)
            .arg(mode)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default());
        for (k, v) in fx.env() {
            cmd.env(k, v);
        }
        cmd.env("FLUXGIT_MCP_HANDSHAKE_ADDR", &peer.addr);
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{mode}: the SDK client failed\nstdout: {stdout}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let summary: Value = serde_json::from_str(stdout.trim()).unwrap();
        assert_eq!(summary["protocolVersion"], version, "{summary}");
        assert_eq!(summary["tools"], json!(served), "{mode}");
        let calls = summary["calls"].as_object().unwrap();
        assert_eq!(calls.len(), served.len(), "every tool called: {summary}");
        assert_eq!(summary["unknownTool"], -32602);
        assert_eq!(summary["badInput"], -32602, "{mode}: {summary}");
        if mode == "auto" {
            assert_eq!(summary["serverName"], "gitward");
            assert!(
                summary["supportedVersions"]
                    .as_array()
                    .unwrap()
                    .contains(&json!("2026-07-28"))
            );
        }
        if mode == "legacy" {
            assert_eq!(summary["serverName"], "gitward");
        }
    }
}

#[test]
fn raw_results_match_the_sdk_wire_types_of_every_version() {
    let Some(python) = venv_python() else {
        return;
    };
    let fx = Fixture::new();
    let repo = fixture_repo(&fx);
    let ok_args = json!({ "name": "repo.status", "arguments": { "repoPath": repo } });
    let bad_args = json!({ "name": "repo.status", "arguments": { "repoPath": "relative" } });
    let mut lines = Vec::new();
    let mut record = |method: &str, version: &str, reply: Value| {
        assert!(reply["result"].is_object(), "{method} @ {version}: {reply}");
        lines.push(
            json!({ "method": method, "version": version, "result": reply["result"] }).to_string(),
        );
    };
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut server = fx.server(&[], &[]);
        let init = server.request_raw(
            "initialize",
            json!({ "protocolVersion": version, "capabilities": {}, "clientInfo": { "name": "wire", "version": "1" } }),
        );
        record("initialize", version, init);
        server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        record(
            "tools/list",
            version,
            server.request_raw("tools/list", json!({})),
        );
        record(
            "tools/call",
            version,
            server.request_raw("tools/call", ok_args.clone()),
        );
        record(
            "tools/call",
            version,
            server.request_raw("tools/call", bad_args.clone()),
        );
        record("ping", version, server.request_raw("ping", json!({})));
    }
    let modern = "2026-07-28";
    let mut server = fx.server(&[], &[]);
    record(
        "server/discover",
        modern,
        server.request("server/discover", json!({})),
    );
    record(
        "tools/list",
        modern,
        server.request("tools/list", json!({})),
    );
    record("tools/call", modern, server.request("tools/call", ok_args));
    record("tools/call", modern, server.request("tools/call", bad_args));

    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/wire_check.py");
    let mut child = Command::new(&python)
        .arg(script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let input = lines.join("\n") + "\n";
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the SDK rejected a result\nstdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.lines().count(), lines.len(), "{stdout}");
}
