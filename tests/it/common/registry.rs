//! The served tool list as test input: whatever `tools/list` returns is what the
//! registry-driven tests cover, so a new tool is covered without editing them.

use std::path::Path;

use serde_json::{Value, json};

use super::Server;

/// Every tool the server lists.
pub fn served_tools(server: &mut Server) -> Vec<Value> {
    let reply = server.request("tools/list", json!({}));
    reply["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("tools/list failed: {reply}"))
        .clone()
}

/// The tools annotated read-only.
pub fn read_tools(server: &mut Server) -> Vec<Value> {
    served_tools(server)
        .into_iter()
        .filter(|t| t["annotations"]["readOnlyHint"] == json!(true))
        .collect()
}

/// A value for each required argument any tool has. A tool with a required field
/// not listed here fails the calling test, so a new tool cannot slip past unchecked.
pub fn required_argument(field: &str, repo: &Path) -> Value {
    match field {
        "repoPath" => json!(repo),
        "repoPaths" => json!([repo]),
        "path" => json!("d1"),
        "commit" => json!("HEAD"),
        "targetRef" => json!("feat"),
        "since" => json!("2020-01-01T00:00:00Z"),
        "previewId" => json!("1f3c5b9a-0c1d-4e2f-8a9b-0123456789ab"),
        "reason" => json!("a registry-driven test proposes this"),
        "message" => json!("A registry-driven commit"),
        "name" => json!("agent/registry-sweep"),
        "branch" => json!("agent/registry-worktree"),
        "targets" => json!([{"repoPath": repo, "branches": ["feat"]}]),
        "eventId" => json!("reflog:HEAD@{0}"),
        "restorePointId" => json!("rp_registry"),
        "sourceRef" => json!("feat"),
        "paths" => json!(["d1"]),
        "steps" => json!([{"operationType": "reset", "targetRef": "HEAD", "mode": "soft"}]),
        "ontoRef" => json!("feat"),
        "action" => json!("return"),
        "relativePath" => json!("d1"),
        "patchContent" => json!("--- a/d1/a.txt\n+++ b/d1/a.txt\n@@ -1 +1 @@\n-x\n+y\n"),
        other => panic!("no test value for required argument `{other}`: add one"),
    }
}

/// The smallest valid arguments for `tool` (a `tools/list` entry) against `repo`: its
/// required fields, or just the repository when nothing is required.
pub fn minimal_arguments(tool: &Value, repo: &Path) -> Value {
    let mut args = json!({});
    let required = tool["inputSchema"]["required"].as_array();
    for field in required.into_iter().flatten() {
        let field = field.as_str().unwrap();
        args[field] = required_argument(field, repo);
    }
    if args.as_object().is_some_and(|a| a.is_empty()) {
        args["repoPath"] = json!(repo);
    }
    args
}

/// One minimal call per read tool, by name.
pub fn read_tool_calls(server: &mut Server, repo: &Path) -> Vec<(String, Value)> {
    read_tools(server)
        .iter()
        .map(|tool| {
            let name = tool["name"].as_str().unwrap().to_owned();
            (name, minimal_arguments(tool, repo))
        })
        .collect()
}

/// The tools that propose a change (every tool not annotated read-only, the spec tools
/// aside: they are served only with a workspace).
pub fn write_tools(server: &mut Server) -> Vec<Value> {
    served_tools(server)
        .into_iter()
        .filter(|t| t["annotations"]["readOnlyHint"] == json!(false))
        .collect()
}

/// The identity (the seed's dotted name) of a listed tool name: tools are listed under
/// names every host accepts (`repo_status`) unless `--tool-names seed` is given.
pub fn identity(listed: &str) -> String {
    const GROUPS: [&str; 11] = [
        "agents",
        "commit",
        "conflict",
        "diff",
        "fleet",
        "flux",
        "operation",
        "repo",
        "safety",
        "submodule",
        "worktree",
    ];
    if let Some(kind) = listed.strip_prefix("operation_preview_") {
        return format!("operation.preview.{kind}");
    }
    match listed.split_once('_') {
        Some((group, rest)) if GROUPS.contains(&group) => format!("{group}.{rest}"),
        _ => listed.to_owned(),
    }
}

/// The listed names of `tools`, each as its identity.
pub fn identities(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .map(|t| identity(t["name"].as_str().unwrap()))
        .collect()
}
