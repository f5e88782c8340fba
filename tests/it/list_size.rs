//! The tool list's size: hosts hand the whole `tools/list` to the model on every session,
//! so it stays within 64 KB in every protocol era with at least 4 KB to spare (room for
//! what the next tools add), with every tool served (a workspace set, so the spec tools
//! too), and name, title, description and input schema average at most 200 tokens per
//! tool (tokens estimated as compact JSON bytes / 4).

use serde_json::{Value, json};

use crate::common::{Fixture, Server};

const LEGACY: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const MAX_BYTES: usize = 64_000;
/// What must stay free below [`MAX_BYTES`].
const MARGIN: usize = 4_096;
const MAX_TOKENS_PER_TOOL: usize = 200;

fn compact_len(value: &Value) -> usize {
    serde_json::to_string(value).unwrap().len()
}

fn check(era: &str, reply: &Value) {
    let tools = reply["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 43, "{era}: every tool is served");
    let bytes = compact_len(reply);
    assert!(
        bytes + MARGIN <= MAX_BYTES,
        "{era}: tools/list is {bytes} bytes, leaving less than {MARGIN} of {MAX_BYTES}"
    );
    let short: usize = tools
        .iter()
        .map(|t| {
            let keep = ["name", "title", "description", "inputSchema"];
            let part: serde_json::Map<String, Value> = t
                .as_object()
                .unwrap()
                .iter()
                .filter(|(k, _)| keep.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            compact_len(&Value::Object(part))
        })
        .sum();
    let per_tool = short / 4 / tools.len();
    assert!(
        per_tool <= MAX_TOKENS_PER_TOOL,
        "{era}: {per_tool} tokens per tool"
    );
}

#[test]
fn the_tool_list_fits_in_64_kb_in_every_era() {
    let fx = Fixture::new();
    let root = fx.root().display().to_string();
    let workspace = fx.workspace_file(&fx.root());
    let args = ["--allowed-root", root.as_str(), "--workspace", &workspace];
    for era in LEGACY {
        let mut server = Server::start(&fx, &args, &[]);
        server.request_raw(
            "initialize",
            json!({ "protocolVersion": era, "capabilities": {}, "clientInfo": { "name": "size", "version": "0" } }),
        );
        server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        let reply = server.request_raw("tools/list", json!({}));
        check(era, &reply);
    }
    let mut server = Server::start(&fx, &args, &[]);
    let reply = server.request("tools/list", json!({}));
    check("modern", &reply);
}
