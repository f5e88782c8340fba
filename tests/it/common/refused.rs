//! The one check for refused arguments.

use serde_json::{Value, json};

use super::Server;

/// Calls `tool` once per value, each set as `field` on a copy of `base`, and checks every
/// call is refused with -32602 and an error naming `field` (the payload an error result
/// carries in its text block, as [`Server::call`] reads it).
pub fn assert_refused<T>(server: &mut Server, tool: &str, base: &Value, field: &str, values: &[T])
where
    T: Clone + Into<Value>,
{
    assert!(!values.is_empty(), "{tool} {field}: no values to try");
    for value in values {
        let value: Value = value.clone().into();
        let mut args = base.clone();
        args[field] = value.clone();
        let result = server.call(tool, args);
        assert_eq!(
            result["error"]["code"],
            json!(-32602),
            "{tool} {field}={value}: {result}"
        );
        assert_eq!(
            result["error"]["data"]["field"],
            json!(field),
            "{tool} {field}={value}: {result}"
        );
    }
}
