//! What a proposal reaches, for the agent policy: the operations (a plan's steps too), the
//! refs it would create, move or delete, and the worktree locations it would create.
//! Repositories are resolved by the caller (they need git).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// A full ref name for a branch a proposal names (`feature` → `refs/heads/feature`).
fn full_ref(name: &str) -> String {
    if name.starts_with("refs/") {
        name.to_owned()
    } else {
        format!("refs/heads/{name}")
    }
}

fn text<'a>(fields: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    fields.get(key).and_then(Value::as_str)
}

/// The operation types a proposal carries: its own, then a plan's steps'.
pub fn operations(kind: &str, fields: &Map<String, Value>) -> Vec<String> {
    let mut out = vec![kind.to_owned()];
    if kind == "plan" {
        let steps = fields.get("steps").and_then(Value::as_array);
        for step in steps.into_iter().flatten() {
            if let Some(step_kind) = step.get("operationType").and_then(Value::as_str) {
                out.push(step_kind.to_owned());
            }
        }
    }
    out
}

/// The refs the proposal names to create, move or delete.
pub fn refs(kind: &str, fields: &Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    match kind {
        "branch" => out.extend(text(fields, "name").map(full_ref)),
        "worktree" | "push" => out.extend(text(fields, "branch").map(full_ref)),
        "merge" | "reset" => out.extend(text(fields, "targetRef").map(full_ref)),
        "rebase" => out.extend(
            text(fields, "currentRef")
                .filter(|r| *r != "HEAD")
                .map(full_ref),
        ),
        "branchDelete" => {
            for target in fields
                .get("targets")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let branches = target.get("branches").and_then(Value::as_array);
                out.extend(
                    branches
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .map(full_ref),
                );
            }
        }
        "plan" => {
            for step in fields
                .get("steps")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let (Some(k), Some(f)) = (
                    step.get("operationType").and_then(Value::as_str),
                    step.as_object(),
                ) {
                    if k != "plan" {
                        out.extend(refs(k, f));
                    }
                }
            }
        }
        _ => {}
    }
    out
}

/// The repositories a proposal names besides `repoPath` (a branch deletion's targets).
pub fn extra_repositories(kind: &str, fields: &Map<String, Value>) -> Vec<String> {
    if kind != "branchDelete" {
        return Vec::new();
    }
    fields
        .get("targets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("repoPath").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

/// The worktree location a `worktree` proposal would create, made absolute against the
/// repository and with its existing part canonical (the rest does not exist yet).
pub fn worktrees(kind: &str, fields: &Map<String, Value>, repo: Option<&Path>) -> Vec<PathBuf> {
    if kind != "worktree" {
        return Vec::new();
    }
    let Some(path) = text(fields, "path") else {
        return Vec::new();
    };
    let path = Path::new(path);
    let absolute = match (path.is_absolute(), repo) {
        (true, _) => path.to_path_buf(),
        (false, Some(repo)) => repo.join(path),
        (false, None) => return Vec::new(),
    };
    vec![canonical_prefix(&absolute)]
}

/// `path` with its longest existing ancestor canonicalised.
fn canonical_prefix(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut cursor = path.to_path_buf();
    loop {
        if let Ok(canonical) = std::fs::canonicalize(&cursor) {
            let mut out = canonical;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (cursor.file_name().map(|n| n.to_owned()), cursor.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                cursor = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn refs_and_operations_follow_the_fields() {
        assert_eq!(
            refs("branch", &map(json!({"name": "agent/x"}))),
            ["refs/heads/agent/x"]
        );
        let delete = json!({"targets": [{"repoPath": "/r", "branches": ["a", "refs/heads/b"]}]});
        assert_eq!(
            refs("branchDelete", &map(delete.clone())),
            ["refs/heads/a", "refs/heads/b"]
        );
        assert_eq!(extra_repositories("branchDelete", &map(delete)), ["/r"]);
        let plan = json!({"steps": [{"operationType": "merge", "targetRef": "main"},
                                    {"operationType": "reset", "targetRef": "HEAD~1"}]});
        assert_eq!(
            operations("plan", &map(plan.clone())),
            ["plan", "merge", "reset"]
        );
        assert_eq!(refs("plan", &map(plan)).len(), 2);
        assert!(refs("commit", &map(json!({"message": "m"}))).is_empty());
    }

    #[test]
    fn a_new_worktree_path_keeps_its_missing_tail() {
        let dir = tempfile::tempdir().unwrap();
        let repo = std::fs::canonicalize(dir.path()).unwrap();
        let got = worktrees("worktree", &map(json!({"path": "wt/new"})), Some(&repo));
        assert_eq!(got, [repo.join("wt/new")]);
    }
}
