//! A new change's artifacts: OpenSpec's status joined with each artifact's instructions,
//! and the one to write next.

use std::path::Path;

use serde_json::Value;

use super::status::{metadata_hint, status_of};
use crate::process::CancellationToken;
use crate::specs::{SpecError, openspec};

/// The instruction fields copied onto each artifact. `context` and `rules` are the
/// project's own guidance from config.yaml.
const INSTRUCTION_KEYS: [&str; 9] = [
    "description",
    "instruction",
    "context",
    "rules",
    "template",
    "resolvedOutputPath",
    "existingOutputPaths",
    "dependencies",
    "unlocks",
];

/// Status plus every artifact's instructions, fetched concurrently; the state's fields in
/// order.
pub(super) async fn artifacts(
    dir: &Path,
    name: &str,
    cancel: &CancellationToken,
) -> Result<Vec<(&'static str, Value)>, SpecError> {
    let status = status_of(dir, name, cancel).await?;
    let list: Vec<Value> = status["artifacts"].as_array().cloned().unwrap_or_default();
    let mut set = tokio::task::JoinSet::new();
    for (i, a) in list.iter().enumerate() {
        let id = a["id"].as_str().unwrap_or_default().to_owned();
        let dir = dir.to_owned();
        let name = name.to_owned();
        let cancel = cancel.clone();
        set.spawn(async move { (i, openspec::instructions(&dir, &id, &name, &cancel).await) });
    }
    let mut merged = list.clone();
    while let Some(joined) = set.join_next().await {
        let (i, r) = joined.map_err(|e| SpecError::new("Error", "INTERNAL", e.to_string()))?;
        let extra = r.map_err(|e| metadata_hint(dir, name, e))?;
        merge_instructions(&mut merged[i], &extra);
        annotate(&mut merged[i], &list);
    }
    Ok(state_fields(&status, merged))
}

/// Said before OpenSpec's own guidance wherever it sends the agent to the CLI, which the
/// tool instructions forbid: the state carries what those commands would answer.
const CLI_NOTE: &str = "[gitward: this overrides the text below] Never run the OpenSpec CLI. Instead of `openspec list --specs`, read `state.specs` (each existing spec's id, title, requirementCount and path); instead of `openspec show <spec-id>`, read the file at that spec's `path`. `planningHome.root` is `state.planningHome.root`. Validation runs inside archive-change.";

/// OpenSpec's artifact guidance, made consistent with the tools: the CLI note where it
/// names commands or `planningHome`, and what is really required of an artifact it
/// calls optional while another artifact cannot be written without it.
fn annotate(artifact: &mut Value, all: &[Value]) {
    let Some(text) = artifact["instruction"].as_str() else {
        return;
    };
    let mut notes: Vec<String> = Vec::new();
    if text.contains("openspec ") || text.contains("planningHome") {
        notes.push(CLI_NOTE.to_owned());
    }
    let id = artifact["id"].as_str().unwrap_or_default();
    let needed_by: Vec<&str> = all
        .iter()
        .filter(|a| {
            a["requires"]
                .as_array()
                .is_some_and(|r| r.iter().any(|x| x == id))
        })
        .filter_map(|a| a["id"].as_str())
        .collect();
    if text.to_lowercase().contains("create only if") && !needed_by.is_empty() {
        notes.push(format!(
            "[gitward: required] Write this artifact in every case: {} cannot be written until it exists. When none of the cases below applies, keep it to a short Context and Decisions.",
            needed_by.join(", ")
        ));
    }
    if !notes.is_empty() {
        artifact["instruction"] = Value::String(format!("{}\n\n{text}", notes.join("\n\n")));
    }
}

fn merge_instructions(artifact: &mut Value, extra: &Value) {
    if let (Some(obj), Some(extra)) = (artifact.as_object_mut(), extra.as_object()) {
        for key in INSTRUCTION_KEYS {
            if let Some(v) = extra.get(key) {
                obj.insert(key.into(), v.clone());
            }
        }
    }
}

/// The next artifact is the first `ready` one, else the first not `done`.
fn state_fields(status: &Value, merged: Vec<Value>) -> Vec<(&'static str, Value)> {
    let next = merged
        .iter()
        .find(|a| a["status"] == "ready")
        .or_else(|| merged.iter().find(|a| a["status"] != "done"));
    let of = |key: &str| next.map(|a| a[key].clone()).unwrap_or(Value::Null);
    let (id, template, instruction) = (of("id"), of("template"), of("instruction"));
    vec![
        ("schemaName", status["schemaName"].clone()),
        ("planningHome", status["planningHome"].clone()),
        ("applyRequires", status["applyRequires"].clone()),
        ("nextArtifact", id),
        ("template", template),
        ("instruction", instruction),
        ("artifacts", Value::Array(merged)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_known_instruction_fields_are_copied() {
        let mut artifact = json!({ "id": "proposal", "status": "ready" });
        let extra =
            json!({ "template": "T", "rules": ["r"], "root": { "path": "/x" }, "changeName": "c" });
        merge_instructions(&mut artifact, &extra);
        assert_eq!(
            artifact,
            json!({ "id": "proposal", "status": "ready", "template": "T", "rules": ["r"] })
        );
    }

    #[test]
    fn the_next_artifact_is_the_first_ready_then_the_first_unfinished() {
        let status = json!({ "schemaName": "spec-driven", "applyRequires": ["tasks"] });
        let list = vec![
            json!({ "id": "proposal", "status": "done" }),
            json!({ "id": "design", "status": "blocked" }),
            json!({ "id": "specs", "status": "ready", "template": "S", "instruction": "I" }),
        ];
        let fields = state_fields(&status, list.clone());
        let get = |k: &str| fields.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone());
        assert_eq!(get("nextArtifact"), Some(json!("specs")));
        assert_eq!(get("template"), Some(json!("S")));
        assert_eq!(get("instruction"), Some(json!("I")));
        let names: Vec<_> = fields.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            [
                "schemaName",
                "planningHome",
                "applyRequires",
                "nextArtifact",
                "template",
                "instruction",
                "artifacts"
            ]
        );
        let fields = state_fields(&status, list[..2].to_vec());
        assert_eq!(get_in(&fields, "nextArtifact"), json!("design"));
        let fields = state_fields(&status, list[..1].to_vec());
        assert_eq!(get_in(&fields, "nextArtifact"), Value::Null);
    }

    fn get_in(fields: &[(&str, Value)], key: &str) -> Value {
        fields
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    }

    #[test]
    fn forwarded_guidance_never_sends_the_agent_to_the_cli() {
        let all = vec![
            json!({ "id": "design", "requires": [] }),
            json!({ "id": "tasks", "requires": ["design"] }),
        ];
        let mut design = json!({ "id": "design", "instruction": "When to include design.md (create only if any apply):" });
        annotate(&mut design, &all);
        let text = design["instruction"].as_str().unwrap();
        assert!(
            text.starts_with("[gitward: required]") && text.contains("tasks cannot"),
            "{text}"
        );
        let mut specs = json!({ "id": "specs", "instruction": "Run `openspec list --specs` first; use planningHome.root." });
        annotate(&mut specs, &all);
        let text = specs["instruction"].as_str().unwrap();
        assert!(text.starts_with(CLI_NOTE), "{text}");
        let mut plain = json!({ "id": "tasks", "instruction": "Write tasks." });
        annotate(&mut plain, &all);
        assert_eq!(plain["instruction"], "Write tasks.");
    }
}
