//! JSON-RPC message classification, the replies built from it, and the protocol-version
//! handling a request's parameters reach (`initialize`'s `protocolVersion`, the modern
//! `_meta` envelope).
#![no_main]

use gitward::error::code;
use gitward::transport::jsonrpc::{self, Incoming, classify};
use gitward::transport::protocol::{self, Version, meta};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};

/// A reply must survive the wire: what we print parses back to the same value.
fn round_trips(reply: &Value) {
    let text = reply.to_string();
    let back: Value = serde_json::from_str(&text).expect("a reply is valid JSON");
    assert_eq!(&back, reply);
    assert!(!text.contains('\n'), "a reply must fit on one line");
}

fn version(text: Option<&Value>) {
    if let Some(text) = text.and_then(Value::as_str) {
        if let Some(v) = Version::parse(text) {
            assert_eq!(v.as_str(), text);
            assert!(Version::supported().contains(&text));
        }
    }
}

fn params(params: &Map<String, Value>) {
    version(params.get("protocolVersion"));
    let meta = params.get("_meta").and_then(Value::as_object);
    version(meta.and_then(|m| m.get(meta::PROTOCOL_VERSION)));
    let shaped = protocol::modern_result(Value::Object(params.clone()));
    assert_eq!(shaped["resultType"], "complete");
}

fn id_ok(id: &Value) -> bool {
    matches!(id, Value::String(_) | Value::Number(_) | Value::Null)
}

fuzz_target!(|bytes: &[u8]| {
    match classify(bytes) {
        Incoming::Invalid(reply) => {
            assert_eq!(reply["jsonrpc"], "2.0");
            assert!(id_ok(&reply["id"]));
            let c = reply["error"]["code"].as_i64();
            assert!(
                matches!(c, Some(code::PARSE_ERROR | code::INVALID_REQUEST)),
                "{reply}"
            );
            round_trips(&reply);
        }
        Incoming::Request {
            id,
            method,
            params: p,
        } => {
            assert!(matches!(id, Value::String(_) | Value::Number(_)));
            let reply = jsonrpc::result(id.clone(), json!({ "method": method }));
            assert_eq!(reply["id"], id);
            round_trips(&reply);
            let reply = jsonrpc::error(
                id,
                code::METHOD_NOT_FOUND,
                "Method not found",
                Some(json!({ "method": method })),
            );
            round_trips(&reply);
            params(&p);
        }
        Incoming::Notification { method, params: p } => {
            let _ = method.len();
            params(&p);
        }
    }
    Version::parse(&String::from_utf8_lossy(bytes));
});
