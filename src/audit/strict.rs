//! Parsing a ledger line without ambiguity: an object that names a key twice is refused.
//!
//! `serde_json` keeps the last of two equal keys, while other readers keep the first; a
//! line with a duplicate key could then mean one thing to the verifier and another to
//! whoever reads the ledger next, under one valid hash. So duplicates, at any depth, make
//! a line malformed.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Parses `bytes` as one JSON object with no duplicate keys anywhere.
pub fn parse_object(bytes: &[u8]) -> Result<Map<String, Value>, String> {
    match serde_json::from_slice::<Strict>(bytes) {
        Ok(Strict(Value::Object(map))) => Ok(map),
        Ok(_) => Err("not a JSON object".into()),
        Err(e) if e.to_string().starts_with(DUPLICATE) => Err("duplicate key in the entry".into()),
        Err(_) => Err("not a JSON object".into()),
    }
}

const DUPLICATE: &str = "duplicate key";

/// A `Value` whose deserialization rejects duplicate keys.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Strict, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("not a finite number"))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            let Strict(value) = access.next_value()?;
            if out.insert(key, value).is_some() {
                return Err(de::Error::custom(DUPLICATE));
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_at_any_depth_are_refused() {
        assert_eq!(
            parse_object(br#"{"a":1,"b":[{"c":true,"d":null}],"e":"\u00e9","f":-2.5}"#)
                .map(Value::Object)
                .unwrap(),
            serde_json::json!({"a":1,"b":[{"c":true,"d":null}],"e":"é","f":-2.5})
        );
        for dup in [
            r#"{"a":1,"a":2}"#,
            r#"{"a":1,"b":{"c":1,"c":1}}"#,
            r#"{"a":[{"x":1,"x":1}]}"#,
            r#"{"tool":"a","t\u006fol":"b"}"#,
        ] {
            assert_eq!(
                parse_object(dup.as_bytes()).unwrap_err(),
                "duplicate key in the entry",
                "{dup}"
            );
        }
        assert_eq!(parse_object(b"[1]").unwrap_err(), "not a JSON object");
        assert_eq!(parse_object(b"{").unwrap_err(), "not a JSON object");
        assert_eq!(parse_object(b"{} x").unwrap_err(), "not a JSON object");
    }
}
