//! The `since` and `until` of `fleet.digest`: an RFC 3339 time, a date or epoch
//! milliseconds.

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// A point in time: an RFC 3339 / ISO-8601 string or milliseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moment(pub i64);

impl<'de> Deserialize<'de> for Moment {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(de)?;
        parse_moment(&value)
            .map(Moment)
            .map_err(serde::de::Error::custom)
    }
}

const MOMENT_HELP: &str = "must be an RFC 3339 / ISO-8601 time with a zone (2026-01-31T09:00:00Z, 2026-01-31T10:00:00+01:00), a date (2026-01-31, midnight UTC), or epoch milliseconds";

fn parse_moment(value: &Value) -> Result<i64, String> {
    match value {
        Value::Number(n) => n
            .as_i64()
            .filter(|ms| jiff::Timestamp::from_millisecond(*ms).is_ok_and(|_| *ms >= 0))
            .ok_or_else(|| format!("{MOMENT_HELP}; got {n}")),
        Value::String(s) => {
            let text = s.trim();
            if let Ok(ts) = text.parse::<jiff::Timestamp>() {
                return Ok(ts.as_millisecond());
            }
            if let Ok(date) = text.parse::<jiff::civil::Date>()
                && text.len() == 10
                && let Ok(zoned) = date.to_zoned(jiff::tz::TimeZone::UTC)
            {
                return Ok(zoned.timestamp().as_millisecond());
            }
            Err(format!("{MOMENT_HELP}; got {s:?}"))
        }
        other => Err(format!("{MOMENT_HELP}; got {other}")),
    }
}

impl JsonSchema for Moment {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Moment".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "anyOf": [
                { "type": "string", "description": "RFC 3339 / ISO-8601 time with a zone, or a date (midnight UTC)" },
                { "type": "integer", "minimum": 0, "description": "milliseconds since the Unix epoch" },
            ]
        })
    }

    fn inline_schema() -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn moments() {
        let ok = |v: Value| parse_moment(&v).unwrap();
        assert_eq!(ok(json!("2026-01-01T00:00:00Z")), 1_767_225_600_000);
        assert_eq!(ok(json!("2026-01-01T01:00:00+01:00")), 1_767_225_600_000);
        assert_eq!(ok(json!("2026-01-01")), 1_767_225_600_000);
        assert_eq!(ok(json!(1_767_225_600_000_i64)), 1_767_225_600_000);
        for bad in [
            json!("2026-01-01T00:00:00"),
            json!("yesterday"),
            json!(-1),
            json!(1.5),
            json!(i64::MAX),
            json!(true),
        ] {
            assert!(parse_moment(&bad).is_err(), "{bad}");
        }
    }
}
