//! MCP logging: what a stdio user reads on stderr (here: no allowed roots set) reaches a
//! client that sets a level as `notifications/message`, over stdio and over HTTP, where
//! there is no stderr to read.

use serde_json::{Value, json};

use crate::common::{Fixture, Server};
use crate::http::{HttpServer, init_body};

const WARNING: &str = "no allowed roots set";

/// Every message the server sent up to and including the answer to request `id`.
fn until_answer(server: &mut Server, id: u64) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let message = server.recv();
        let done = message["id"] == json!(id);
        seen.push(message);
        if done {
            return seen;
        }
    }
}

fn warnings(messages: &[Value]) -> usize {
    messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .filter(|m| m["params"]["level"] == "warning")
        .filter(|m| {
            m["params"]["data"]
                .as_str()
                .is_some_and(|d| d.contains(WARNING))
        })
        .count()
}

fn send(server: &mut Server, id: u64, method: &str, params: Value) {
    server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
}

#[test]
fn stdio_clients_are_told_the_warning_once_at_their_level() {
    let fx = Fixture::new();
    // Told once a level is set, once.
    let mut server = Server::start(&fx, &[], &[]);
    let init = server.request_raw(
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": {} }),
    );
    assert_eq!(
        init["result"]["capabilities"]["logging"],
        json!({}),
        "{init}"
    );
    send(&mut server, 9, "tools/list", json!({}));
    assert_eq!(warnings(&until_answer(&mut server, 9)), 0, "not asked");
    send(
        &mut server,
        10,
        "logging/setLevel",
        json!({ "level": "info" }),
    );
    until_answer(&mut server, 10);
    send(&mut server, 11, "tools/list", json!({}));
    assert_eq!(warnings(&until_answer(&mut server, 11)), 1);
    send(&mut server, 12, "tools/list", json!({}));
    assert_eq!(warnings(&until_answer(&mut server, 12)), 0);
    // A client that asks for errors only is not told.
    let mut quiet = Server::start(&fx, &[], &[]);
    quiet.request_raw(
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": {} }),
    );
    send(
        &mut quiet,
        20,
        "logging/setLevel",
        json!({ "level": "error" }),
    );
    let set = until_answer(&mut quiet, 20);
    assert_eq!(set.last().unwrap()["result"], json!({}));
    assert_eq!(warnings(&set), 0);
    send(&mut quiet, 21, "tools/list", json!({}));
    assert_eq!(warnings(&until_answer(&mut quiet, 21)), 0);
    let bad = quiet.request_raw("logging/setLevel", json!({ "level": "loud" }));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    // The 2026-07-28 era: told when the request's _meta names a level, else not.
    let mut modern = Server::start(&fx, &[], &[]);
    let mut params = json!({});
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    send(&mut modern, 30, "tools/list", params.clone());
    assert_eq!(warnings(&until_answer(&mut modern, 30)), 0);
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    send(&mut modern, 31, "tools/list", params);
    assert_eq!(warnings(&until_answer(&mut modern, 31)), 1);
    // With allowed roots there is nothing to say.
    let root = fx.root().display().to_string();
    let mut rooted = Server::start(&fx, &["--allowed-root", &root], &[]);
    rooted.request_raw(
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": {} }),
    );
    send(&mut rooted, 40, "tools/list", json!({}));
    assert_eq!(warnings(&until_answer(&mut rooted, 40)), 0);
}

#[test]
fn http_clients_are_told_the_warning_in_their_event_stream() {
    let fx = Fixture::new();
    let http = HttpServer::start(&fx, &[], &[]);
    let init = http.post("/mcp", &[], &init_body());
    assert_eq!(init.json()["result"]["capabilities"]["logging"], json!({}));
    let session = init.header("mcp-session-id").unwrap().to_owned();
    let level = json!({ "jsonrpc": "2.0", "id": 1, "method": "logging/setLevel",
        "params": { "level": "warning" } });
    let set = http.post(
        "/mcp",
        &[
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        &level.to_string(),
    );
    assert_eq!(set.status, 200, "{}", set.body);
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Accept", "text/event-stream"),
    ];
    let list = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {} });
    let reply = http.send(
        "POST",
        "/mcp",
        &[
            headers[0],
            headers[1],
            headers[2],
            ("Content-Type", "application/json"),
        ],
        &list.to_string(),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let events: Vec<Value> = reply
        .body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert_eq!(warnings(&events), 1, "{}", reply.body);
    assert_eq!(events.last().unwrap()["id"], 2, "{}", reply.body);
}
