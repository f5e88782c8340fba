//! JSON-RPC 2.0 messages: classifying what arrives and building what leaves.

use serde_json::{Map, Value, json};

use crate::error::code;

/// A request id: a string or a number, echoed back exactly.
pub type Id = Value;

/// An incoming message, classified.
#[derive(Debug)]
pub enum Incoming {
    Request {
        id: Id,
        method: String,
        params: Map<String, Value>,
    },
    Notification {
        method: String,
        params: Map<String, Value>,
    },
    /// Answered at once with this error.
    Invalid(Box<Value>),
}

/// Classifies one frame's bytes.
pub fn classify(bytes: &[u8]) -> Incoming {
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => {
            return Incoming::Invalid(Box::new(error(
                Value::Null,
                code::PARSE_ERROR,
                "Parse error",
                Some(json!({ "details": e.to_string() })),
            )));
        }
    };
    let invalid = |id: Value, details: &str| {
        Incoming::Invalid(Box::new(error(
            id,
            code::INVALID_REQUEST,
            "Invalid request",
            Some(json!({ "details": details })),
        )))
    };
    let Value::Object(mut obj) = value else {
        return if value.is_array() {
            invalid(Value::Null, "batch requests are not supported")
        } else {
            invalid(Value::Null, "a message must be a JSON object")
        };
    };
    let id = obj.remove("id");
    let reply_id = match &id {
        Some(v @ (Value::String(_) | Value::Number(_))) => v.clone(),
        _ => Value::Null,
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid(reply_id, "\"jsonrpc\" must be \"2.0\"");
    }
    if obj.contains_key("result") || obj.contains_key("error") {
        // A response to a request we never send; nothing to answer.
        return Incoming::Notification {
            method: String::new(),
            params: Map::new(),
        };
    }
    let Some(Value::String(method)) = obj.remove("method") else {
        return invalid(reply_id, "\"method\" must be a string");
    };
    let params = match obj.remove("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map,
        Some(_) => return invalid(reply_id, "\"params\" must be an object"),
    };
    match id {
        None => Incoming::Notification { method, params },
        Some(Value::String(_) | Value::Number(_)) => Incoming::Request {
            id: reply_id,
            method,
            params,
        },
        Some(_) => invalid(Value::Null, "\"id\" must be a string or a number"),
    }
}

/// The id of a request in `bytes`, when it is one that can be read (a string or a
/// number), else `null`: what an error answering those bytes names.
pub fn readable_id(bytes: &[u8]) -> Id {
    #[derive(serde::Deserialize)]
    struct IdOnly {
        #[serde(default)]
        id: Value,
    }
    match serde_json::from_slice::<IdOnly>(bytes) {
        Ok(IdOnly {
            id: id @ (Value::String(_) | Value::Number(_)),
        }) => id,
        _ => Value::Null,
    }
}

pub fn result(id: Id, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

pub fn error(id: Id, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut err = json!({ "code": code, "message": message });
    if let Some(data) = data {
        err["data"] = data;
    }
    json!({ "jsonrpc": "2.0", "id": id, "error": err })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification() {
        let show = |b: &[u8]| format!("{:?}", classify(b));
        insta::assert_snapshot!([
            show(b"{"),
            show(b"[]"),
            show(b"3"),
            show(br#"{"jsonrpc":"1.0","id":1,"method":"x"}"#),
            show(br#"{"jsonrpc":"2.0","id":{},"method":"x"}"#),
            show(br#"{"jsonrpc":"2.0","id":2,"method":5}"#),
            show(br#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#),
            show(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            show(br#"{"jsonrpc":"2.0","id":3,"method":"x","params":[1]}"#),
        ].join("\n"), @r#"
        Invalid(Object {"jsonrpc": String("2.0"), "id": Null, "error": Object {"code": Number(-32700), "message": String("Parse error"), "data": Object {"details": String("EOF while parsing an object at line 1 column 1")}}})
        Invalid(Object {"jsonrpc": String("2.0"), "id": Null, "error": Object {"code": Number(-32600), "message": String("Invalid request"), "data": Object {"details": String("batch requests are not supported")}}})
        Invalid(Object {"jsonrpc": String("2.0"), "id": Null, "error": Object {"code": Number(-32600), "message": String("Invalid request"), "data": Object {"details": String("a message must be a JSON object")}}})
        Invalid(Object {"jsonrpc": String("2.0"), "id": Number(1), "error": Object {"code": Number(-32600), "message": String("Invalid request"), "data": Object {"details": String("\"jsonrpc\" must be \"2.0\"")}}})
        Invalid(Object {"jsonrpc": String("2.0"), "id": Null, "error": Object {"code": Number(-32600), "message": String("Invalid request"), "data": Object {"details": String("\"id\" must be a string or a number")}}})
        Invalid(Object {"jsonrpc": String("2.0"), "id": Number(2), "error": Object {"code": Number(-32600), "message": String("Invalid request"), "data": Object {"details": String("\"method\" must be a string")}}})
        Request { id: String("a"), method: "ping", params: {} }
        Notification { method: "notifications/initialized", params: {} }
        Invalid(Object {"jsonrpc": String("2.0"), "id": Number(3), "error": Object {"code": Number(-32600), "message": String("Invalid request"), "data": Object {"details": String("\"params\" must be an object")}}})
        "#);
    }
}
