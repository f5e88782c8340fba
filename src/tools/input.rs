//! Tool arguments: strict parsing with messages that name the field, and the JSON Schemas
//! advertised for inputs and outputs.

use std::borrow::Cow;

use schemars::transform::{Transform, transform_subschemas};
use schemars::{JsonSchema, Schema, SchemaGenerator, generate::SchemaSettings, json_schema};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::error::ToolError;

/// The schema of an input type: what a caller may send, sub-schemas inlined as MCP hosts
/// expect, made terse for `tools/list` (see [`super::schema`]).
pub fn schema_of<T: JsonSchema>() -> Value {
    super::schema::terse_input(schema(
        SchemaSettings::draft2020_12().for_deserialize(),
        T::json_schema,
    ))
}

/// The schema of an output type: what we send. Serialization rules apply, so a field
/// skipped when empty is not `required`. Terse: no prose, repeats under `$defs`.
pub fn output_schema_of<T: JsonSchema>() -> Value {
    super::schema::terse_output(schema(
        SchemaSettings::draft2020_12().for_serialize(),
        T::json_schema,
    ))
}

fn schema(settings: SchemaSettings, of: fn(&mut SchemaGenerator) -> Schema) -> Value {
    let mut generator = settings
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut schema = of(&mut generator);
    StandardFormats.transform(&mut schema);
    let mut value = schema.to_value();
    if let Some(obj) = value.as_object_mut() {
        obj.remove("title");
    }
    value
}

/// The `format` values JSON Schema 2020-12 defines. schemars also writes its own (`uint64`,
/// `int32`, `double`, …) that strict validators refuse and TypeScript clients warn about
/// on every `tools/list`; the `minimum`/`maximum` it writes beside them carry the bounds.
pub(crate) const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Drops every `format` that is not a standard one, in every subschema.
#[derive(Clone, Copy)]
struct StandardFormats;

impl Transform for StandardFormats {
    fn transform(&mut self, schema: &mut Schema) {
        if let Some(obj) = schema.as_object_mut()
            && obj
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| !STANDARD_FORMATS.contains(&f))
        {
            obj.remove("format");
        }
        transform_subschemas(self, schema);
    }
}

/// Parses tool arguments into `T`; an error names the offending field and says why.
pub fn parse<T: DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    let args = match args {
        Value::Null => Value::Object(Default::default()),
        other => other,
    };
    if !args.is_object() {
        return Err(ToolError::invalid("arguments", "must be a JSON object"));
    }
    serde_path_to_error::deserialize(args).map_err(|err| {
        let path = err.path().to_string();
        let message = err.inner().to_string();
        // serde reports a missing field at the enclosing object; name the field itself.
        let field = match (path.as_str(), backticked(&message)) {
            (".", Some(name)) if message.starts_with("missing field") => name.to_owned(),
            (parent, Some(name)) if message.starts_with("missing field") => {
                format!("{parent}.{name}")
            }
            (".", _) => "arguments".to_owned(),
            (p, _) => p.to_owned(),
        };
        ToolError::invalid(&field, reason(&message))
    })
}

fn backticked(message: &str) -> Option<&str> {
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    Some(&message[start..start + len])
}

/// Rephrases serde's wording as advice.
fn reason(message: &str) -> String {
    if message.starts_with("missing field") {
        "is required".to_owned()
    } else if let Some(rest) = message.strip_prefix("unknown field") {
        match rest.find("expected") {
            Some(at) => format!("is not a known argument ({})", rest[at..].trim()),
            None => "is not a known argument".to_owned(),
        }
    } else {
        message.to_owned()
    }
}

/// An integer argument within `MIN..=MAX`, defaulting to `DEF`.
///
/// Out-of-range values are refused rather than clamped, so the advertised bounds are the
/// whole truth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounded<const MIN: u64, const MAX: u64, const DEF: u64>(pub u64);

impl<const MIN: u64, const MAX: u64, const DEF: u64> Bounded<MIN, MAX, DEF> {
    pub fn get(self) -> u64 {
        self.0
    }

    pub fn usize(self) -> usize {
        self.0 as usize
    }
}

impl<const MIN: u64, const MAX: u64, const DEF: u64> Default for Bounded<MIN, MAX, DEF> {
    fn default() -> Self {
        Bounded(DEF)
    }
}

impl<'de, const MIN: u64, const MAX: u64, const DEF: u64> Deserialize<'de>
    for Bounded<MIN, MAX, DEF>
{
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(de)?;
        let n = value.as_u64().ok_or_else(|| {
            serde::de::Error::custom(format!(
                "must be an integer from {MIN} to {MAX}, got {value}"
            ))
        })?;
        if !(MIN..=MAX).contains(&n) {
            return Err(serde::de::Error::custom(format!(
                "must be from {MIN} to {MAX}, got {n}"
            )));
        }
        Ok(Bounded(n))
    }
}

impl<const MIN: u64, const MAX: u64, const DEF: u64> JsonSchema for Bounded<MIN, MAX, DEF> {
    fn schema_name() -> Cow<'static, str> {
        format!("Bounded_{MIN}_{MAX}_{DEF}").into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "integer",
            "minimum": MIN,
            "maximum": MAX,
            "default": DEF,
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

    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct Example {
        #[allow(dead_code)]
        repo_path: String,
        #[serde(default)]
        limit: Bounded<1, 200, 50>,
    }

    #[test]
    fn errors_name_the_field() {
        let err = |v| parse::<Example>(v).unwrap_err().data;
        insta::assert_json_snapshot!([
            err(json!({})),
            err(json!({"repoPath": "/x", "limit": 0})),
            err(json!({"repoPath": "/x", "limit": "5"})),
            err(json!({"repoPath": "/x", "bogus": 1})),
            err(json!({"repoPath": 7})),
            err(json!([1])),
        ], @r#"
        [
          {
            "field": "repoPath",
            "reason": "is required"
          },
          {
            "field": "limit",
            "reason": "must be from 1 to 200, got 0"
          },
          {
            "field": "limit",
            "reason": "must be an integer from 1 to 200, got \"5\""
          },
          {
            "field": "bogus",
            "reason": "is not a known argument (expected `repoPath` or `limit`)"
          },
          {
            "field": "repoPath",
            "reason": "invalid type: integer `7`, expected a string"
          },
          {
            "field": "arguments",
            "reason": "must be a JSON object"
          }
        ]
        "#);
        assert_eq!(
            parse::<Example>(json!({"repoPath": "/x"}))
                .unwrap()
                .limit
                .get(),
            50
        );
    }

    #[test]
    fn schema_states_bounds_and_is_closed() {
        insta::assert_json_snapshot!(schema_of::<Example>(), @r#"
        {
          "type": "object",
          "additionalProperties": false,
          "properties": {
            "repoPath": {
              "type": "string"
            },
            "limit": {
              "type": "integer",
              "minimum": 1,
              "maximum": 200,
              "default": 50
            }
          },
          "required": [
            "repoPath"
          ]
        }
        "#);
    }
}
