//! Parsing an operation's own fields and advertising their schema.
//!
//! The fields arrive as a JSON map beside the common ones. Each type parses them into its
//! own struct (`deny_unknown_fields`), and a refusal names the wire field so a 422 or a
//! tool error can say what to fix.

use schemars::{JsonSchema, generate::SchemaSettings};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Fields;
use crate::gateway::api::FieldError;

/// Parses `fields` into `T`. `names` are `T`'s wire field names (the error's field must be
/// one of them; anything else is reported against `fields`).
pub(crate) fn parse<T: DeserializeOwned>(
    fields: &Fields,
    names: &[&'static str],
) -> Result<T, FieldError> {
    let value = Value::Object(fields.clone());
    serde_path_to_error::deserialize(value).map_err(|err| {
        let path = err.path().to_string();
        let message = err.inner().to_string();
        let first = path.split(['.', '[']).find(|s| !s.is_empty());
        let named = backticked(&message).filter(|_| message.starts_with("missing field"));
        let field = named
            .or(first)
            .and_then(|n| names.iter().copied().find(|k| *k == n))
            .unwrap_or("fields");
        let reason = if message.starts_with("missing field") {
            "is required".to_owned()
        } else if message.starts_with("unknown field") {
            format!(
                "{} (known: {})",
                message.split(", expected").next().unwrap_or(&message),
                names.join(", ")
            )
        } else if path != "." && !path.is_empty() && path != field {
            format!("{path}: {message}")
        } else {
            message
        };
        FieldError { field, reason }
    })
}

fn backticked(message: &str) -> Option<&str> {
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    Some(&message[start..start + len])
}

/// The JSON Schema (draft 2020-12, sub-schemas inlined, no `$schema`/`title`) of `T`.
pub(crate) fn schema_of<T: JsonSchema>() -> Value {
    let mut generator = SchemaSettings::draft2020_12()
        .for_deserialize()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut value = T::json_schema(&mut generator).to_value();
    if let Some(obj) = value.as_object_mut() {
        obj.remove("title");
    }
    value
}

/// A field error unless `ok`.
pub(crate) fn ensure(
    ok: bool,
    field: &'static str,
    reason: impl FnOnce() -> String,
) -> Result<(), FieldError> {
    if ok {
        Ok(())
    } else {
        Err(FieldError {
            field,
            reason: reason(),
        })
    }
}
