//! Snapshots that redact themselves: a call site names the snapshot, what redacts it and
//! the value (or the tool call), never the redaction.

use serde_json::Value;

use super::Fixture;

/// What makes a value stable between runs: temporary paths and object ids for every
/// fixture, plus whatever else a richer world (a spec workspace's dates) varies.
pub trait Redact {
    fn redact_value(&self, value: &Value) -> Value;
}

impl Redact for Fixture {
    fn redact_value(&self, value: &Value) -> Value {
        self.redact(value)
    }
}

/// Redacts a value through `$redactor` (anything implementing [`Redact`]) and snapshots it
/// under the top-level `snapshots/` directory. Given a tool and its arguments instead of a
/// value, makes the call through the real binary first (on `$server`, or on a fresh server
/// of the fixture) and snapshots the result, which it returns unredacted for further checks.
#[macro_export]
macro_rules! tool_snapshot {
    ($name:expr, $redactor:expr, $server:expr, $tool:expr, $args:expr) => {{
        let result = $server.call($tool, $args);
        $crate::tool_snapshot!($name, $redactor, result);
        result
    }};
    ($name:expr, $fixture:expr, $tool:expr, $args:expr) => {{
        let result = $fixture.call($tool, $args);
        $crate::tool_snapshot!($name, $fixture, result);
        result
    }};
    ($name:expr, $redactor:expr, $value:expr) => {{
        use $crate::common::Redact as _;
        let shown = $redactor.redact_value(&$value);
        $crate::snap!($name, shown);
    }};
}
