//! Interoperability with the official MCP TypeScript SDK and the MCP Inspector CLI (both
//! pinned in package-lock.json, installed by `scripts/setup`), and the tool schemas under
//! a strict JSON Schema validator (Ajv, draft 2020-12).

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::common::{Fixture, gitward_bin};
use crate::interop::fixture_repo;
use crate::operation_peer::{Peer, Reply};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// True when the pinned Node packages are installed; in CI their absence fails the test.
fn node_ready() -> bool {
    let sdk = root().join("node_modules/@modelcontextprotocol/sdk/package.json");
    let inspector = root().join("node_modules/@modelcontextprotocol/inspector-cli/package.json");
    let ajv = root().join("node_modules/ajv/package.json");
    if sdk.exists() && inspector.exists() && ajv.exists() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "node_modules lacks the pinned MCP SDK, Inspector CLI or Ajv in CI: scripts/setup must install them"
    );
    eprintln!("SKIPPED TypeScript interop: run scripts/setup to install the pinned Node packages");
    false
}

/// `node` with the fixture's environment only.
fn node(fx: &Fixture, dir: &Path) -> Command {
    let mut cmd = Command::new("node");
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default());
    for (k, v) in fx.env() {
        cmd.env(k, v);
    }
    cmd
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

/// Values for required arguments, by property name (as the Python SDK test uses them).
fn value_for(prop: &str, repo: &Path) -> Option<Value> {
    Some(match prop {
        "repoPath" => json!(repo),
        "commit" | "rev" => json!("HEAD"),
        "base" | "from" => json!("main~1"),
        "head" | "to" | "ref" | "targetRef" | "target" => json!("main"),
        "sourceRef" | "source" | "branch" => json!("feature"),
        "refName" => json!("HEAD"),
        "path" => json!("a.txt"),
        "paths" => json!(["a.txt"]),
        "steps" => json!([{"operationType": "reset", "targetRef": "HEAD", "mode": "soft"}]),
        "since" => json!("2020-01-01T00:00:00Z"),
        "previewId" => json!(crate::operation_status::ID),
        "reason" => json!("the interop run proposes this"),
        "message" => json!("An interop commit"),
        "name" => json!("agent/interop"),
        "eventId" => json!("reflog:HEAD@{0}"),
        "restorePointId" => json!("rp_interop"),
        "targets" => json!([{"repoPath": repo, "branches": ["feature"]}]),
        "ontoRef" => json!("main"),
        "action" => json!("return"),
        "relativePath" => json!("libs/lib"),
        "patchContent" => json!("--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y\n"),
        _ => return None,
    })
}

/// A call with valid arguments for every served read-only tool.
fn read_calls(tools: &[Value], repo: &Path) -> Vec<Value> {
    calls_of(tools, repo, |t| t["annotations"]["readOnlyHint"] == true)
}

/// A call with valid arguments for every served tool `pick` selects.
fn calls_of(tools: &[Value], repo: &Path, pick: impl Fn(&Value) -> bool) -> Vec<Value> {
    tools
        .iter()
        .filter(|t| pick(t))
        .map(|t| {
            let name = t["name"].as_str().unwrap();
            let schema = &t["inputSchema"];
            let mut args = serde_json::Map::new();
            for prop in schema["required"].as_array().into_iter().flatten() {
                let prop = prop.as_str().unwrap();
                let value = value_for(prop, repo)
                    .unwrap_or_else(|| panic!("{name}: no test value for required {prop}"));
                args.insert(prop.to_owned(), value);
            }
            if schema["properties"].get("repoPath").is_some() {
                args.insert("repoPath".into(), json!(repo));
            }
            json!({ "name": name, "arguments": args })
        })
        .collect()
}

/// What an accepting gateway answers to each request the call of `tool` makes.
pub(crate) fn handshake_replies(tool: &str) -> Vec<Reply> {
    let accepted = json!({"previewId": crate::operation_status::ID, "status": "pending",
        "expiresAt": "2026-05-28T12:12:09.512Z"});
    let pending = crate::operation_status::record("pending");
    let tool = crate::common::registry::identity(tool);
    match tool.as_str() {
        "operation.status" => vec![Reply::Json(200, pending)],
        "operation.cancel" => vec![Reply::Json(200, json!({"status": "cancelled"}))],
        t if t.starts_with("operation.preview.") => {
            vec![Reply::Json(202, accepted), Reply::Json(200, pending)]
        }
        t if t.starts_with("flux.") || t.starts_with("safety.") => {
            vec![Reply::Json(200, read_bridge_body(t))]
        }
        _ => Vec::new(),
    }
}

/// What the read bridge answers for one FluxGit-required tool (one GET each).
fn read_bridge_body(tool: &str) -> Value {
    let point = json!({"restorePointId": "rp_interop", "operation": "commit",
        "before": null, "after": null, "canUndo": true, "canRedo": false,
        "approvalRequired": true, "metadata": {}});
    match tool {
        "flux.latestRestorePoint" | "flux.restorePoints" => json!({
            "restorePoints": [point], "count": 1, "moreAvailable": false,
            "current": {"branchRef": "refs/heads/main", "head": null}}),
        "flux.restorePointDetails" => point,
        "safety.eventDetails" => json!({"eventId": "reflog:HEAD@{0}", "event": {},
            "restorePoint": null, "reflogEntry": {}}),
        _ => json!({"events": [], "eventCount": 0, "readOnly": true}),
    }
}

fn served_tools(fx: &Fixture, args: &[&str]) -> Vec<Value> {
    let mut server = fx.server(args, &[]);
    let list = server.request("tools/list", json!({}));
    list["result"]["tools"].as_array().unwrap().clone()
}

#[test]
fn every_tool_schema_compiles_under_strict_ajv() {
    if !node_ready() {
        return;
    }
    let fx = Fixture::new();
    let repo = fixture_repo(&fx);
    let allowed = repo.display().to_string();
    let ws = fx.workspace_file(&repo);
    let tools = served_tools(&fx, &["--allowed-root", &allowed, "--workspace", &ws]);
    assert_eq!(tools.len(), 43, "the spec tools are served too");
    let mut child = node(&fx, root())
        .arg("tests/interop/strict_schemas.mjs")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = json!({ "tools": tools }).to_string();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = succeeded("strict Ajv", &out);
    assert_eq!(stdout.lines().count(), 2 * tools.len(), "{stdout}");
}

#[test]
fn official_typescript_sdk_calls_every_read_tool_and_sees_every_error() {
    if !node_ready() {
        return;
    }
    let fx = Fixture::new();
    let repo = fixture_repo(&fx);
    let allowed = repo.display().to_string();
    let ws = fx.workspace_file(&repo);
    let server_args = ["--allowed-root", allowed.as_str(), "--workspace", &ws];
    let tools = served_tools(&fx, &server_args);
    let mut calls = read_calls(&tools, &repo);
    // The write handshake too, against a peer that accepts: the SDK checks each
    // structured result against the tool's outputSchema.
    calls.extend(calls_of(&tools, &repo, |t| {
        t["annotations"]["readOnlyHint"] == false
            && crate::common::registry::identity(t["name"].as_str().unwrap())
                .starts_with("operation.")
    }));
    let peer = Peer::start(
        calls
            .iter()
            .flat_map(|c| handshake_replies(c["name"].as_str().unwrap()))
            .collect(),
    );
    let errors = json!([
        { "name": "repo.status", "arguments": { "repoPath": fx.home() },
          "expect": "outside the allowed roots" },
        { "name": "commit.details", "arguments": { "repoPath": repo, "commit": "no-such-branch" },
          "expect": "no commit named 'no-such-branch'" },
        { "name": "repo.history", "arguments": { "repoPath": "relative/path" },
          "expect": "must be an absolute path" },
        { "name": "repo.scope", "arguments": { "repoPath": repo },
          "expect": "Invalid argument `path`: is required" },
        { "name": "diff.semantic", "arguments": { "repoPath": repo, "base": "--output=/tmp/x" },
          "expect": "Invalid argument `base`" },
    ]);
    let plan = json!({
        "bin": gitward_bin(),
        "serverArgs": server_args,
        "calls": calls,
        "errors": errors,
    });
    let out = node(&fx, root())
        .env("FLUXGIT_MCP_HANDSHAKE_ADDR", &peer.addr)
        .arg("tests/interop/ts_client.mjs")
        .arg(plan.to_string())
        .output()
        .unwrap();
    let stdout = succeeded("the TypeScript SDK client", &out);
    let summary: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(summary["protocolVersion"], "2025-11-25", "{summary}");
    assert_eq!(summary["serverName"], "gitward");
    let names: Vec<&Value> = tools.iter().map(|t| &t["name"]).collect();
    assert_eq!(
        summary["tools"]
            .as_array()
            .unwrap()
            .iter()
            .collect::<Vec<_>>(),
        names
    );
    let read_only = tools
        .iter()
        .filter(|t| t["annotations"]["readOnlyHint"] == true)
        .count();
    assert_eq!(
        read_only, 26,
        "19 git tools, the 5 FluxGit-required ones, operation.status and explore"
    );
    assert_eq!(
        summary["calls"].as_object().unwrap().len(),
        read_only + 13,
        "the twelve previews and operation.cancel too: {summary}"
    );
    assert_eq!(summary["errors"].as_object().unwrap().len(), 5, "{summary}");
    for (_, error) in summary["errors"].as_object().unwrap() {
        assert_eq!(error["code"], -32602, "{summary}");
    }
    assert_eq!(summary["unknownTool"], -32602);
}

#[test]
fn inspector_cli_shows_a_result_and_an_error() {
    if !node_ready() {
        return;
    }
    let fx = Fixture::new();
    let repo = fixture_repo(&fx);
    let allowed = repo.display().to_string();
    // Inspector CLI 1.0.3 finds its own package.json relative to the working directory.
    let build = root().join("node_modules/@modelcontextprotocol/inspector-cli/build");
    let inspect = |tool: &str, args: &[String]| -> Value {
        let mut cmd = node(&fx, &build);
        cmd.arg("cli.js")
            .arg("--cli")
            .arg(gitward_bin())
            .args(["--allowed-root", &allowed])
            .args(["--method", "tools/call", "--tool-name", tool]);
        for arg in args {
            cmd.args(["--tool-arg", arg]);
        }
        let stdout = succeeded("the Inspector CLI", &cmd.output().unwrap());
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
    };
    let repo_arg = format!("repoPath={}", repo.display());
    let ok = inspect("repo.status", std::slice::from_ref(&repo_arg));
    assert_ne!(ok["isError"], true, "{ok}");
    assert_eq!(ok["structuredContent"]["data"]["branch"], "main", "{ok}");
    let failed = inspect(
        "commit.details",
        &[repo_arg, "commit=no-such-branch".into()],
    );
    assert_eq!(failed["isError"], true, "{failed}");
    let text = failed["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("no commit named 'no-such-branch'"),
        "{failed}"
    );
    assert!(failed.get("structuredContent").is_none(), "{failed}");
}
