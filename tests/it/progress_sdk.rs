//! Progress to the official clients: the TypeScript SDK's `onprogress` and the Python SDK's
//! `progress_callback` receive forward-moving progress of a radar over many repositories and
//! of a semantic diff of a large commit, over stdio and Streamable HTTP; the TypeScript
//! client, which reports any notification it cannot route to a request in flight, reports
//! none (no progress without a token, none after an answer).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::common::{Fixture, gitward_bin};
use crate::http::HttpServer;
use crate::progress::{
    FILES, REPOS, check_progress, fleet, large_commit, radar_args, semantic_args,
};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `rel` under the checkout when it exists; in CI its absence fails the test.
fn installed(rel: &str) -> Option<PathBuf> {
    let path = root().join(rel);
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{rel} is missing in CI: scripts/setup must install it"
    );
    eprintln!("SKIPPED: {rel} is missing; run scripts/setup");
    None
}

fn succeeded(what: &str, out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{what} failed\nstdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{what}: {e}: {stdout}"))
}

/// A command with the fixture's environment only.
fn clean(program: &Path, fx: &Fixture) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(root())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(fx.env());
    cmd
}

struct Setup {
    fx: Fixture,
    calls: Value,
}

fn setup() -> Setup {
    let fx = Fixture::new();
    let repos = fleet(&fx, REPOS);
    let large = large_commit(&fx, FILES);
    let calls = json!([
        {"name": "fleet.radar", "arguments": radar_args(&repos)},
        {"name": "diff.semantic", "arguments": semantic_args(&large)},
    ]);
    Setup { fx, calls }
}

/// `[progress, total, message]` triples as the notifications' params.
fn as_params(triples: &Value) -> Vec<Value> {
    triples
        .as_array()
        .unwrap_or_else(|| panic!("{triples}"))
        .iter()
        .map(|t| json!({"progress": t[0], "total": t[1], "message": t[2]}))
        .collect()
}

fn check_both(progress: &Value, what: &str) {
    for (tool, total, words, unit) in [
        ("fleet.radar", REPOS, "radar", "repositories"),
        ("diff.semantic", FILES, "semantic diff", "files"),
    ] {
        // The Python client hands over triples, the TypeScript client objects.
        let updates: Vec<Value> = match &progress[tool] {
            Value::Array(a) if a.first().is_some_and(Value::is_array) => as_params(&progress[tool]),
            Value::Array(a) => a.clone(),
            other => panic!("{what}: no progress for {tool}: {other}"),
        };
        check_progress(&updates, total, words, unit, true);
    }
}

#[test]
fn the_typescript_client_gets_progress_over_stdio_and_http() {
    let Some(script) = installed("tests/interop/ts_progress.mjs")
        .filter(|_| installed("node_modules/@modelcontextprotocol/sdk/package.json").is_some())
    else {
        return;
    };
    let s = setup();
    let node = PathBuf::from("node");
    let stdio = json!({"transport": "stdio", "bin": gitward_bin(), "serverArgs": [],
                       "calls": s.calls});
    let out = clean(&node, &s.fx)
        .arg(&script)
        .arg(stdio.to_string())
        .output()
        .unwrap();
    let summary = succeeded("the TypeScript client over stdio", &out);
    check_both(&summary["progress"], "stdio");
    assert_eq!(summary["errors"], json!([]), "{summary}");

    let http = HttpServer::start(&s.fx, &[], &[]);
    let plan = json!({"transport": "http", "url": http.url("/mcp"), "calls": s.calls});
    let out = clean(&node, &s.fx)
        .arg(&script)
        .arg(plan.to_string())
        .output()
        .unwrap();
    let summary = succeeded("the TypeScript client over HTTP", &out);
    check_both(&summary["progress"], "http");
    assert_eq!(summary["errors"], json!([]), "{summary}");
}

#[test]
fn the_python_client_gets_progress_over_stdio_and_http_in_both_eras() {
    let (Some(python), Some(script)) = (
        installed(".venv/bin/python"),
        installed("tests/interop/progress_client.py"),
    ) else {
        return;
    };
    let s = setup();
    let http = HttpServer::start(&s.fx, &[], &[]);
    let bin = gitward_bin().display().to_string();
    let url = http.url("/mcp");
    for (target, mode, version) in [
        (&bin, "legacy", "2025-11-25"),
        (&bin, "auto", "2026-07-28"),
        (&url, "legacy", "2025-11-25"),
        (&url, "auto", "2026-07-28"),
    ] {
        let out = clean(&python, &s.fx)
            .arg(&script)
            .args([target.as_str(), mode])
            .arg(s.calls.to_string())
            .output()
            .unwrap();
        let what = format!("the Python client, {target} {mode}");
        let summary = succeeded(&what, &out);
        assert_eq!(summary["protocolVersion"], version, "{what}: {summary}");
        check_both(&summary["progress"], &what);
    }
}
