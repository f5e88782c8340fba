//! What `openspec status --change NAME --json` must say before `apply-change` acts on it.
//!
//! `apply-change` marks a change `applying` on disk, so everything it needs from OpenSpec's
//! reply is checked first: a reply of another shape (a different CLI version, a wrapper,
//! a schema with artifacts the reply forgot to describe) is refused as
//! `OPENSPEC_OUTPUT_INVALID` and nothing is written.
//!
//! The fields read, as OpenSpec 1.13 prints them:
//!
//! ```text
//! schemaName     string (optional)
//! applyRequires  [artifact id, …]
//! artifacts      [{ id: string, status: string, … }, …]
//! artifactPaths  { <artifact id>: { resolvedOutputPath: string,
//!                                   existingOutputPaths: [string, …] (optional) }, … }
//!                (optional as a whole; when present, one entry per artifact)
//! ```

use serde_json::{Map, Value};

use super::SpecError;

/// The parts of a status reply that `apply-change` uses, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct ApplyStatus {
    pub schema_name: Option<String>,
    pub apply_requires: Vec<String>,
    pub artifacts: Vec<Artifact>,
    /// Per artifact id, the files to read for context; `None` when the reply lists no paths.
    pub context: Option<Map<String, Value>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Artifact {
    pub id: String,
    pub status: String,
}

impl ApplyStatus {
    /// Checks `reply` and extracts what `apply-change` needs.
    pub fn parse(reply: &Value) -> Result<ApplyStatus, SpecError> {
        parse(reply).map_err(|why| {
            SpecError::new(
                "OpenSpecError",
                "OPENSPEC_OUTPUT_INVALID",
                format!("openspec status printed an unexpected reply: {why}"),
            )
        })
    }

    /// Required artifacts that are not `done`.
    pub fn missing(&self) -> Vec<String> {
        self.apply_requires
            .iter()
            .filter(|id| {
                !self
                    .artifacts
                    .iter()
                    .any(|a| &a.id == *id && a.status == "done")
            })
            .cloned()
            .collect()
    }
}

fn parse(reply: &Value) -> Result<ApplyStatus, String> {
    let obj = reply.as_object().ok_or("the reply is not a JSON object")?;
    let schema_name = match obj.get("schemaName") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err("schemaName is not a string".into()),
    };
    let apply_requires = strings(obj.get("applyRequires"), "applyRequires")?;
    let artifacts = obj
        .get("artifacts")
        .and_then(Value::as_array)
        .ok_or("artifacts is missing or not an array")?
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let field = |key: &str| {
                a.get(key)
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .ok_or_else(|| format!("artifacts[{i}].{key} is missing or not a string"))
            };
            Ok(Artifact {
                id: field("id")?,
                status: field("status")?,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let context = match obj.get("artifactPaths") {
        None | Some(Value::Null) => None,
        Some(Value::Object(paths)) => Some(context(paths, &artifacts)?),
        Some(_) => return Err("artifactPaths is not an object".into()),
    };
    Ok(ApplyStatus {
        schema_name,
        apply_requires,
        artifacts,
        context,
    })
}

/// Per artifact: its existing outputs, or the path it would be written to.
fn context(
    paths: &Map<String, Value>,
    artifacts: &[Artifact],
) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    for a in artifacts {
        let entry = paths
            .get(&a.id)
            .and_then(Value::as_object)
            .ok_or_else(|| format!("artifactPaths has no entry for artifact {:?}", a.id))?;
        let field = format!("artifactPaths.{}", a.id);
        let existing = match entry.get("existingOutputPaths") {
            None | Some(Value::Null) => Vec::new(),
            v => strings(v, &format!("{field}.existingOutputPaths"))?,
        };
        let files = if existing.is_empty() {
            let resolved = entry
                .get("resolvedOutputPath")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("{field}.resolvedOutputPath is missing or not a string"))?;
            vec![resolved.to_owned()]
        } else {
            existing
        };
        out.insert(
            a.id.clone(),
            Value::Array(files.into_iter().map(Value::String).collect()),
        );
    }
    Ok(out)
}

fn strings(value: Option<&Value>, field: &str) -> Result<Vec<String>, String> {
    value
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{field} is missing or not an array"))?
        .iter()
        .map(|v| {
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("{field} holds a value that is not a string"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Trimmed from `openspec status --change foo --json` (OpenSpec 1.13.2).
    fn captured() -> Value {
        json!({
            "changeName": "foo",
            "schemaName": "spec-driven",
            "artifactPaths": {
                "proposal": {
                    "outputPath": "proposal.md",
                    "resolvedOutputPath": "/tmp/osp/openspec/changes/foo/proposal.md",
                    "existingOutputPaths": ["/tmp/osp/openspec/changes/foo/proposal.md"]
                },
                "tasks": {
                    "outputPath": "tasks.md",
                    "resolvedOutputPath": "/tmp/osp/openspec/changes/foo/tasks.md",
                    "existingOutputPaths": []
                }
            },
            "applyRequires": ["tasks"],
            "artifacts": [
                { "id": "proposal", "outputPath": "proposal.md", "status": "done", "requires": [] },
                { "id": "tasks", "outputPath": "tasks.md", "status": "blocked", "requires": ["proposal"] }
            ],
            "root": { "path": "/tmp/osp", "source": "nearest" }
        })
    }

    #[test]
    fn a_real_reply_parses() {
        let status = ApplyStatus::parse(&captured()).unwrap();
        assert_eq!(status.schema_name.as_deref(), Some("spec-driven"));
        assert_eq!(status.missing(), ["tasks"]);
        assert_eq!(
            Value::Object(status.context.unwrap()),
            json!({
                "proposal": ["/tmp/osp/openspec/changes/foo/proposal.md"],
                "tasks": ["/tmp/osp/openspec/changes/foo/tasks.md"],
            })
        );
    }

    #[test]
    fn unexpected_replies_are_refused_not_panicked_on() {
        let case = |edit: &dyn Fn(&mut Value)| {
            let mut reply = captured();
            edit(&mut reply);
            let err = ApplyStatus::parse(&reply).unwrap_err();
            assert_eq!(err.code.as_deref(), Some("OPENSPEC_OUTPUT_INVALID"));
            err.message
        };
        assert!(
            case(&|r| {
                r["artifactPaths"].as_object_mut().unwrap().remove("tasks");
            })
            .contains("no entry for artifact \"tasks\"")
        );
        assert!(case(&|r| r["artifacts"] = json!("all")).contains("artifacts is missing"));
        assert!(case(&|r| r["artifacts"][0]["id"] = json!(7)).contains("artifacts[0].id"));
        assert!(case(&|r| r["applyRequires"] = json!([1])).contains("applyRequires"));
        assert!(case(&|r| r["artifactPaths"] = json!([])).contains("artifactPaths"));
        assert!(
            case(&|r| r["artifactPaths"]["tasks"]["resolvedOutputPath"] = json!(null))
                .contains("resolvedOutputPath")
        );
        assert!(case(&|r| *r = json!([])).contains("not a JSON object"));
        // No paths at all is a reply without context, not an error.
        let mut reply = captured();
        reply.as_object_mut().unwrap().remove("artifactPaths");
        assert_eq!(ApplyStatus::parse(&reply).unwrap().context, None);
    }
}
