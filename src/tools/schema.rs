//! Terse schemas for `tools/list`.
//!
//! Hosts hand the whole tool list to the model on every session, so every byte of it is
//! paid for again and again. Output schemas are kept complete (every property, type,
//! bound, enum and `required` list: clients validate each result against them) but carry
//! no prose, and a sub-schema used more than once is written once under `$defs`. Input
//! schemas stay inline (hosts turn them into forms and prompts) and keep their field
//! descriptions, except for the arguments every tool shares, which the server
//! instructions describe once.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

/// Arguments described once in the server instructions rather than in every tool.
const SHARED_ARGS: [&str; 2] = ["repoPath", "repoId"];

/// An input schema without repeated prose: shared arguments lose their description and
/// `default: null` (what an absent optional field means anyway) goes.
pub fn terse_input(mut schema: Value) -> Value {
    drop_null_defaults(&mut schema);
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        for name in SHARED_ARGS {
            if let Some(Value::Object(field)) = props.get_mut(name) {
                field.shift_remove("description");
            }
        }
    }
    schema
}

/// An output schema without prose, its repeated sub-schemas moved to `$defs`.
pub fn terse_output(mut schema: Value) -> Value {
    strip_prose(&mut schema);
    drop_null_defaults(&mut schema);
    hoist_repeated(schema)
}

/// Removes every `description` and `title` annotation and folds a `oneOf` of string
/// constants (what a documented enum becomes) into one `enum`.
fn strip_prose(schema: &mut Value) {
    if let Value::Object(obj) = schema {
        for key in ["description", "title"] {
            if obj.get(key).is_some_and(Value::is_string) {
                obj.shift_remove(key);
            }
        }
    }
    children_mut(schema, &mut strip_prose);
    if let Value::Object(obj) = schema {
        fold_const_strings(obj);
    }
}

/// `{"oneOf": [{"type": "string", "const": "a"}, …]}` → `{"type": "string", "enum": ["a", …]}`.
fn fold_const_strings(obj: &mut Map<String, Value>) {
    let Some(Value::Array(branches)) = obj.get("oneOf") else {
        return;
    };
    let consts: Option<Vec<Value>> = branches
        .iter()
        .map(|b| {
            let b = b.as_object()?;
            let only_const = b.len() == 2 && b.get("type")? == "string";
            only_const.then(|| b.get("const").filter(|c| c.is_string()).cloned())?
        })
        .collect();
    if let Some(consts) = consts.filter(|c| !c.is_empty()) {
        obj.shift_remove("oneOf");
        obj.insert("type".into(), "string".into());
        obj.insert("enum".into(), Value::Array(consts));
    }
}

fn drop_null_defaults(schema: &mut Value) {
    if let Value::Object(obj) = schema
        && obj.get("default").is_some_and(Value::is_null)
    {
        obj.shift_remove("default");
    }
    children_mut(schema, &mut drop_null_defaults);
}

/// The keywords whose values are sub-schemas (one, a list, or a map of them).
enum Slot {
    One,
    List,
    Map,
}

fn slot(key: &str) -> Option<Slot> {
    match key {
        "items" | "additionalProperties" | "not" | "contains" => Some(Slot::One),
        "anyOf" | "oneOf" | "allOf" | "prefixItems" => Some(Slot::List),
        "properties" | "$defs" => Some(Slot::Map),
        _ => None,
    }
}

/// Calls `f` on every direct sub-schema of `schema`.
fn children_mut(schema: &mut Value, f: &mut dyn FnMut(&mut Value)) {
    let Value::Object(obj) = schema else { return };
    for (key, value) in obj.iter_mut() {
        match (slot(key), value) {
            (Some(Slot::One), v @ Value::Object(_)) => f(v),
            (Some(Slot::List), Value::Array(list)) => list.iter_mut().for_each(&mut *f),
            (Some(Slot::Map), Value::Object(map)) => map.values_mut().for_each(&mut *f),
            _ => {}
        }
    }
}

/// Moves every sub-schema that occurs more than once, where that saves bytes, to
/// `$defs` under a short name and refers to it. Outermost repeats go first, so a repeat
/// nested in a hoisted one is counted inside its single definition.
fn hoist_repeated(mut root: Value) -> Value {
    let mut counts: HashMap<String, usize> = HashMap::new();
    children_mut(&mut root, &mut |child| count(child, &mut counts));
    let mut defs = Map::new();
    let mut names: HashMap<String, String> = HashMap::new();
    children_mut(&mut root, &mut |child| {
        replace(child, &counts, &mut names, &mut defs)
    });
    if !defs.is_empty()
        && let Value::Object(obj) = &mut root
    {
        obj.insert("$defs".into(), Value::Object(defs));
    }
    root
}

fn count(schema: &mut Value, counts: &mut HashMap<String, usize>) {
    *counts.entry(schema.to_string()).or_default() += 1;
    children_mut(schema, &mut |child| count(child, counts));
}

/// The bytes of one `{"$ref":"#/$defs/dN"}`, with room for a longer name.
const REF_BYTES: usize = 22;

fn replace(
    schema: &mut Value,
    counts: &HashMap<String, usize>,
    names: &mut HashMap<String, String>,
    defs: &mut Map<String, Value>,
) {
    let text = schema.to_string();
    let uses = counts.get(&text).copied().unwrap_or(1);
    // Written once in $defs plus a reference per use, against every use inline.
    if uses > 1 && text.len() * uses > text.len() + REF_BYTES * uses + 8 {
        let name = match names.get(&text) {
            Some(name) => name.clone(),
            None => {
                let name = format!("d{}", names.len());
                names.insert(text, name.clone());
                // Reserved first, so definitions appear in the order they are met.
                defs.insert(name.clone(), Value::Null);
                let mut def = schema.clone();
                children_mut(&mut def, &mut |child| replace(child, counts, names, defs));
                defs.insert(name.clone(), def);
                name
            }
        };
        *schema = json!({ "$ref": format!("#/$defs/{name}") });
        return;
    }
    children_mut(schema, &mut |child| replace(child, counts, names, defs));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_keeps_structure_and_shares_repeats() {
        let entry = json!({"type": "object", "description": "An entry.",
            "properties": {"path": {"type": "string", "description": "The path."},
                           "size": {"type": "integer", "minimum": 0}},
            "required": ["path", "size"]});
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "array", "items": entry},
            "b": {"type": "array", "items": entry},
            "kind": {"oneOf": [{"type": "string", "const": "x", "description": "X."},
                               {"type": "string", "const": "y"}]},
            "note": {"type": ["string", "null"], "default": null}},
            "required": ["a", "b"]});
        insta::assert_json_snapshot!(terse_output(schema), @r##"
        {
          "type": "object",
          "properties": {
            "a": {
              "$ref": "#/$defs/d0"
            },
            "b": {
              "$ref": "#/$defs/d0"
            },
            "kind": {
              "type": "string",
              "enum": [
                "x",
                "y"
              ]
            },
            "note": {
              "type": [
                "string",
                "null"
              ]
            }
          },
          "required": [
            "a",
            "b"
          ],
          "$defs": {
            "d0": {
              "type": "array",
              "items": {
                "$ref": "#/$defs/d1"
              }
            },
            "d1": {
              "type": "object",
              "properties": {
                "path": {
                  "type": "string"
                },
                "size": {
                  "type": "integer",
                  "minimum": 0
                }
              },
              "required": [
                "path",
                "size"
              ]
            }
          }
        }
        "##);
    }

    #[test]
    fn a_property_named_like_a_keyword_is_kept() {
        let schema = json!({"type": "object", "properties": {
            "description": {"type": "string"}, "title": {"type": "string"}}});
        let terse = terse_output(schema.clone());
        assert_eq!(terse, schema);
    }

    #[test]
    fn input_drops_only_shared_prose() {
        let schema = json!({"type": "object", "properties": {
            "repoPath": {"type": "string", "description": "Absolute path."},
            "ref": {"type": ["string", "null"], "description": "A revision.", "default": null}}});
        assert_eq!(
            terse_input(schema),
            json!({"type": "object", "properties": {
                "repoPath": {"type": "string"},
                "ref": {"type": ["string", "null"], "description": "A revision."}}})
        );
    }
}
