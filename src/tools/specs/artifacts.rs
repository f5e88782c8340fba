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
    let mut merged = list;
    while let Some(joined) = set.join_next().await {
        let (i, r) = joined.map_err(|e| SpecError::new("Error", "INTERNAL", e.to_string()))?;
        let extra = r.map_err(|e| metadata_hint(dir, name, e))?;
        merge_instructions(&mut merged[i], &extra);
    }
    Ok(state_fields(&status, merged))
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
                "applyRequires",
                "nextArtifact",
                "template",
                "instruction",
                "artifacts"
            ]
        );
        let fields = state_fields(&status, list[..2].to_vec());
        assert_eq!(fields[2].1, json!("design"));
        let fields = state_fields(&status, list[..1].to_vec());
        assert_eq!(fields[2].1, Value::Null);
    }
}
