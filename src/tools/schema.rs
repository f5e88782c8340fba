//! Terse schemas for `tools/list`.
//!
//! Hosts hand the whole tool list to the model on every session, so every byte of it is
//! paid for again and again: the whole list stays under 64 KB in every protocol era.
//!
//! Output schemas carry no prose and declare every field of the result envelope, of its
//! `data` and of the envelope's other records, each with its type, nullability, bounds and
//! enum; records nested deeper are declared by their type alone, and no `required` lists
//! are written. The result itself names every field it holds, while each declared one is
//! paid for on every session; clients validating results against these schemas accept the
//! same results either way.
//! A sub-schema used more than once is written once under `$defs`. Input schemas stay
//! inline (hosts turn them into forms and prompts) and keep their field descriptions,
//! except for the arguments many tools share, which the server instructions describe
//! once; a documented choice of strings becomes a plain `enum`, its field's description
//! naming the choices.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

/// Arguments described once in the server instructions rather than in every tool.
/// (`includeInstruction` keeps its few words: keeping it on at first use is a rule a host
/// showing only the schema must see too.)
const SHARED_ARGS: [&str; 4] = ["repoPath", "repoId", "reason", "idempotencyKey"];

/// The deepest level of `properties` an output schema spells out: 1 is the envelope's
/// fields, 2 those of `data` and of the envelope's other records.
const OUTPUT_LEVELS: usize = 2;

/// An input schema without repeated prose: shared arguments lose their description,
/// documented string choices become an `enum` and `default: null` (what an absent
/// optional field means anyway) goes.
pub fn terse_input(mut schema: Value) -> Value {
    drop_null_defaults(&mut schema);
    fold_choices(&mut schema);
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        for name in SHARED_ARGS {
            if let Some(Value::Object(field)) = props.get_mut(name) {
                field.shift_remove("description");
            }
        }
    }
    schema
}

/// Folds every `oneOf` of documented string constants into one `enum`, wherever it sits,
/// and drops the descriptions of a described field's alternatives (its own says it).
fn fold_choices(schema: &mut Value) {
    children_mut(schema, &mut fold_choices);
    if let Value::Object(obj) = schema {
        let described = obj.contains_key("description");
        for key in ["oneOf", "anyOf"] {
            if let Some(Value::Array(branches)) = obj.get_mut(key) {
                branches.iter_mut().for_each(|b| undocument(b, described));
            }
        }
        fold_const_strings(obj);
    }
}

/// Removes the description of one alternative: of a string constant always, of anything
/// else when the field holding it is described, in nested alternatives too.
fn undocument(branch: &mut Value, described: bool) {
    let Value::Object(b) = branch else { return };
    if described || b.get("const").is_some_and(Value::is_string) {
        b.shift_remove("description");
    }
    if described {
        for key in ["oneOf", "anyOf"] {
            if let Some(Value::Array(nested)) = b.get_mut(key) {
                nested.iter_mut().for_each(|n| undocument(n, true));
            }
        }
    }
}

/// An output schema without prose, records below `OUTPUT_LEVELS` typed only, its
/// repeated sub-schemas moved to `$defs`.
pub fn terse_output(mut schema: Value) -> Value {
    strip_prose(&mut schema);
    drop_labels(&mut schema);
    drop_null_defaults(&mut schema);
    limit_levels(&mut schema, 1);
    hoist_repeated(schema)
}

/// The envelope's labels (`tool`, `readOnly`, `source`): they name the tool and where its
/// answer came from, which the tool's own entry in the list already says, so the schema
/// keeps to the answer. Not closed (no `additionalProperties: false`), it still admits
/// them; every host hands the whole list to the model each session.
fn drop_labels(schema: &mut Value) {
    const LABELS: [&str; 3] = ["tool", "readOnly", "source"];
    let Value::Object(obj) = schema else { return };
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        LABELS.iter().for_each(|k| {
            props.shift_remove(*k);
        });
    }
    if let Some(Value::Array(required)) = obj.get_mut("required") {
        required.retain(|r| !r.as_str().is_some_and(|r| LABELS.contains(&r)));
    }
}

/// Replaces every record whose fields would sit below [`OUTPUT_LEVELS`] by its type;
/// `level` is the level its own fields would have.
fn limit_levels(schema: &mut Value, level: usize) {
    let Value::Object(obj) = schema else { return };
    if obj.contains_key("properties") && level > OUTPUT_LEVELS {
        let kind = obj.get("type").cloned().unwrap_or_else(|| "object".into());
        *schema = json!({ "type": kind });
        return;
    }
    for (key, value) in obj.iter_mut() {
        match (key.as_str(), value) {
            ("properties", Value::Object(map)) => {
                map.values_mut().for_each(|v| limit_levels(v, level + 1));
            }
            ("items" | "additionalProperties", v @ Value::Object(_)) => limit_levels(v, level),
            ("anyOf" | "oneOf" | "allOf", Value::Array(list)) => {
                list.iter_mut().for_each(|v| limit_levels(v, level));
            }
            _ => {}
        }
    }
    merge_equal_branches(obj);
}

/// Records typed only may leave alternatives that are now the same schema: `oneOf` would
/// then refuse a value both accept, so they become one `anyOf` branch (or none).
fn merge_equal_branches(obj: &mut Map<String, Value>) {
    for key in ["oneOf", "anyOf"] {
        let Some(Value::Array(branches)) = obj.get(key) else {
            continue;
        };
        let mut unique: Vec<Value> = Vec::new();
        for branch in branches {
            if !unique.contains(branch) {
                unique.push(branch.clone());
            }
        }
        if unique.len() == branches.len() {
            continue;
        }
        obj.shift_remove(key);
        match unique.as_slice() {
            [Value::Object(only)] if only.keys().all(|k| !obj.contains_key(k)) => {
                let only = only.clone();
                obj.extend(only);
            }
            _ if obj.contains_key("anyOf") => {
                let all = obj.entry("allOf").or_insert_with(|| json!([]));
                if let Value::Array(all) = all {
                    all.push(json!({ "anyOf": unique }));
                }
            }
            _ => {
                obj.insert("anyOf".into(), Value::Array(unique));
            }
        }
    }
}

/// Removes every `description` and `title` annotation and `required` list, and folds a
/// `oneOf` of string constants (what a documented enum becomes) into one `enum`.
fn strip_prose(schema: &mut Value) {
    if let Value::Object(obj) = schema {
        for key in ["description", "title"] {
            if obj.get(key).is_some_and(Value::is_string) {
                obj.shift_remove(key);
            }
        }
        if obj.get("required").is_some_and(Value::is_array) {
            obj.shift_remove("required");
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
              }
            }
          }
        }
        "##);
    }

    #[test]
    fn records_below_the_data_level_are_typed_only() {
        let record = |field: &str| json!({"type": "object", "properties": {field: {"type": "string"}}, "required": [field]});
        let schema = json!({"type": "object", "properties": {"data": {"type": "object",
            "properties": {
                "head": {"type": ["object", "null"], "properties": {"inner": record("x")}},
                "items": {"type": "array", "items": {"oneOf": [record("a"), record("b")]}},
                "kinds": {"oneOf": [record("a"), {"type": "string"}, record("b")]}}}}});
        assert_eq!(
            terse_output(schema)["properties"]["data"]["properties"],
            json!({
                "head": {"type": ["object", "null"]},
                "items": {"type": "array", "items": {"type": "object"}},
                "kinds": {"anyOf": [{"type": "object"}, {"type": "string"}]},
            })
        );
    }

    #[test]
    fn input_folds_documented_choices() {
        let schema = json!({"type": "object", "properties": {"mode": {
            "description": "`a` or `b`.",
            "oneOf": [{"type": "string", "const": "a", "description": "A."},
                      {"type": "string", "const": "b", "description": "B."}]}}});
        assert_eq!(
            terse_input(schema)["properties"]["mode"],
            json!({"description": "`a` or `b`.", "type": "string", "enum": ["a", "b"]})
        );
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
