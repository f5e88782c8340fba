//! The server `instructions` name only tools that are served, whatever the start-up flags.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::common::{Fixture, Server};

fn served(server: &mut Server) -> BTreeSet<String> {
    server.request("tools/list", json!({}))["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Words of `text` that read as a tool name: one of `known`, or dotted like `repo.brief`.
fn tool_names(text: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_'))
        .map(|w| w.trim_end_matches('.'))
        .filter(|w| {
            let dotted = w.split('.').count() > 1
                && w.split('.')
                    .all(|p| !p.is_empty() && p.chars().all(char::is_alphabetic));
            dotted || known.contains(*w)
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn instructions_name_only_served_tools() {
    let fx = Fixture::new();
    let root = fx.root().display().to_string();
    let ws = fx.workspace_file(&fx.root());
    let everything = served(&mut fx.server(&["--workspace", &ws], &[]));
    assert_eq!(everything.len(), 43, "{everything:?}");
    let combos: [&[&str]; 11] = [
        &[],
        &["--read-only"],
        &["--allowed-root", &root],
        &["--workspace", &ws, "--read-only"],
        &["--workspace", &ws, "--toolsets", "specs"],
        &["--workspace", &ws, "--toolsets", "specs", "--read-only"],
        &["--workspace", &ws, "--toolsets", "git"],
        &["--workspace", &ws, "--toolsets", "git,specs"],
        &["--workspace", &ws, "--toolsets", "ops"],
        &["--allowed-root", &root, "--workspace", &ws],
        &["--toolsets", "specs"],
    ];
    for args in combos {
        let mut server = fx.server(args, &[]);
        let tools = served(&mut server);
        let discover = server.request("server/discover", json!({}))["result"]["instructions"]
            .as_str()
            .unwrap()
            .to_owned();
        let init = server.request_raw(
            "initialize",
            json!({ "protocolVersion": "2025-11-25", "capabilities": {} }),
        )["result"]["instructions"]
            .clone();
        assert_eq!(init, Value::from(discover.clone()), "{args:?}");
        let named = tool_names(&discover, &everything);
        assert!(
            named.is_subset(&tools),
            "{args:?}: the instructions name {:?}, not served: {discover}",
            named.difference(&tools).collect::<Vec<_>>()
        );
        if tools.contains("repo_brief") {
            assert!(named.contains("repo_brief"), "{args:?}: {discover}");
        }
        if tools.contains("explore") {
            assert!(named.contains("explore"), "{args:?}: {discover}");
        }
        let writes = [
            "create-plan",
            "create-proposal",
            "apply-change",
            "archive-change",
        ];
        if tools.is_empty() {
            assert!(discover.contains("no tools"), "{args:?}: {discover}");
            continue;
        }
        assert_eq!(
            discover.contains("read-only"),
            !writes.iter().any(|w| tools.contains(*w)),
            "{args:?}: {discover}"
        );
    }
}
