//! What a proposal reaches, for the agent policy: the operations (a plan's steps too), the
//! refs it would create, move or delete, and the worktree locations it would create.
//! Repositories are resolved by the caller (they need git).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::operation::paths::canonical_prefix;
use crate::operation::{OpError, Operation, Pins};

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

/// What the operation will really touch, computed by its own type from the pins (not
/// from the fields it names): the refs it creates, moves or deletes, every repository
/// (`named`, as resolved, and any other the write changes) and the worktree it creates.
/// An operation type that cannot say is an error, and the proposal is refused.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Touched {
    pub refs: Vec<String>,
    pub repositories: Vec<PathBuf>,
    pub worktrees: Vec<PathBuf>,
}

pub fn touched(
    op: &dyn Operation,
    fields: &Map<String, Value>,
    pins: &Pins,
    named: &[PathBuf],
) -> Result<Touched, OpError> {
    let mut refs = op.touched_refs(fields, pins)?;
    refs.sort();
    refs.dedup();
    let mut repositories = named.to_vec();
    for (path, _) in op.other_repositories(fields, pins)? {
        let path = canonical_prefix(Path::new(&path));
        if !repositories.contains(&path) {
            repositories.push(path);
        }
    }
    let worktrees = op
        .intent(fields, pins)?
        .worktree
        .map(|w| canonical_prefix(Path::new(&w)))
        .into_iter()
        .collect();
    Ok(Touched {
        refs,
        repositories,
        worktrees,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn operations_and_repositories_follow_the_fields() {
        let delete = json!({"targets": [{"repoPath": "/r", "branches": ["a", "refs/heads/b"]}]});
        assert_eq!(extra_repositories("branchDelete", &map(delete)), ["/r"]);
        let plan = json!({"steps": [{"operationType": "merge", "targetRef": "main"},
                                    {"operationType": "reset", "targetRef": "HEAD~1"}]});
        assert_eq!(operations("plan", &map(plan)), ["plan", "merge", "reset"]);
    }

    fn refs_of(kind: &str, fields: Value, pins: Value) -> Vec<String> {
        let op = crate::operation::find(kind).unwrap();
        touched(op, &map(fields), &Pins(pins), &[]).unwrap().refs
    }

    #[test]
    fn the_refs_are_those_the_pinned_state_moves_not_those_a_field_names() {
        let (a, b) = ("a".repeat(40), "b".repeat(40));
        let on_main = json!({"symbolic": "refs/heads/main", "oid": a});
        // A commit names no branch: it moves the one HEAD is on.
        let commit = refs_of("commit", json!({"message": "m"}), json!({"head": on_main}));
        assert_eq!(commit, ["refs/heads/main"]);
        // A reset moves HEAD's branch whatever `targetRef` says; detached, HEAD itself.
        let reset = json!({"targetRef": "agent/x", "mode": "soft"});
        let pins = json!({"head": on_main, "targetOid": b});
        assert_eq!(refs_of("reset", reset.clone(), pins), ["refs/heads/main"]);
        let pins = json!({"head": a, "targetOid": b});
        assert_eq!(refs_of("reset", reset.clone(), pins), ["HEAD"]);
        // A push without a branch pushes the checked-out one, as pinned.
        let push = json!({"branch": "main", "localOid": a, "pushOid": a, "remoteOid": null});
        assert_eq!(refs_of("push", json!({}), push), ["refs/heads/main"]);
        // A plan moves what its steps move.
        let plan =
            json!({"steps": [{"operationType": "reset", "targetRef": "agent/x", "mode": "soft"}]});
        let pins = json!({"steps": [{"head": on_main, "targetOid": b}]});
        assert_eq!(refs_of("plan", plan, pins), ["refs/heads/main"]);
        // A discard's safety stash is the gateway's own backup, not the agent's ref.
        let stash = json!({"head": on_main, "stash": null, "changes": {}});
        assert!(refs_of("discard", json!({"paths": ["a"]}), stash).is_empty());
    }

    #[test]
    fn a_new_worktree_is_where_it_was_pinned() {
        let dir = tempfile::tempdir().unwrap();
        let repo = std::fs::canonicalize(dir.path()).unwrap();
        let path = repo.join("wt/new");
        let op = crate::operation::find("worktree").unwrap();
        let fields = map(json!({"branch": "agent/x", "path": path}));
        let pins = Pins(json!({"branch": null, "startOid": "a".repeat(40), "path": path}));
        let got = touched(op, &fields, &pins, std::slice::from_ref(&repo)).unwrap();
        assert_eq!(got.worktrees, [path]);
        assert_eq!(got.refs, ["refs/heads/agent/x"]);
        assert_eq!(got.repositories, [repo]);
    }
}
