//! The MCP wire protocol: both eras, framing and error codes.

use serde_json::{Value, json};

use crate::common::Fixture;
use crate::snap;

#[test]
fn legacy_initialize_then_tools() {
    let fx = Fixture::new();
    let mut server = fx.server(&[], &[]);
    let init = server.request_raw(
        "initialize",
        json!({ "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": { "name": "old", "version": "0" } }),
    );
    assert_eq!(init["result"]["protocolVersion"], "2024-11-05");
    server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    let list = server.request_raw("tools/list", json!({}));
    let tool = &list["result"]["tools"][0];
    assert!(
        tool.get("title").is_none()
            && tool.get("outputSchema").is_none()
            && tool.get("annotations").is_none()
    );
    assert!(list["result"].get("resultType").is_none());
}

#[test]
fn modern_requests_need_meta() {
    let fx = Fixture::new();
    let mut server = fx.server(&[], &[]);
    let bare = server.request_raw("tools/list", json!({}));
    assert_eq!(bare["error"]["code"], -32602);
    let unknown = server.request_raw(
        "tools/list",
        json!({ "_meta": { "io.modelcontextprotocol/protocolVersion": "2099-01-01", "io.modelcontextprotocol/clientCapabilities": {} } }),
    );
    assert_eq!(unknown["error"]["code"], -32022);
    assert_eq!(unknown["error"]["data"]["requested"], "2099-01-01");
    let discover = server.request("server/discover", Value::Null);
    snap!("protocol_discover", discover["result"]);
}

#[test]
fn garbage_gets_the_right_codes_and_serving_goes_on() {
    let fx = Fixture::new();
    let mut server = fx.server(&[], &[]);
    server.send_raw(b"{not json\n");
    assert_eq!(server.recv()["error"]["code"], -32700);
    server.send_raw(b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]\n");
    assert_eq!(server.recv()["error"]["code"], -32600);
    let pong = server.request_raw("ping", json!({}));
    assert_eq!(pong["result"], json!({}));
}
