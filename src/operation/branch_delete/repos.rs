//! The repositories of one `branchDelete`: each target's repository opened through the
//! allowed roots and assessed on its own, the pins that list them, the card that shows
//! them, and what moved in which of them.
//!
//! Pins: `{"repoPath": <the proposal's own>, "repositories": [{"repoPath", "head",
//! "branches": [{branch, repoPath, tip, delete, reason}]}]}`, repositories in the order proposed,
//! each path canonical so the executor locks and restores exactly what was assessed.

use serde_json::{Value, json};

use super::{BranchDeleteFields, assess};
use crate::git::Git;
use crate::operation::{Ctx, Moved, OpError, Pins};

/// Every target assessed in its own repository, in the order proposed. Two targets that
/// name one repository (under two spellings) are refused: the branches would be decided
/// twice and deleted once.
pub(super) async fn assess_all(ctx: Ctx<'_>, f: &BranchDeleteFields) -> Result<Value, OpError> {
    let mut out: Vec<Value> = Vec::new();
    for t in &f.targets {
        let repo = crate::git::repo::open(ctx.config, "targets", &t.repo_path, ctx.cancel).await?;
        let path = repo.display();
        if out.iter().any(|r| r["repoPath"] == path.as_str()) {
            return Err(OpError::invalid(
                "targets",
                format!("{path} is named twice; list its branches once"),
            ));
        }
        let git = Git::new(&repo, ctx.cancel);
        let mut assessed = assess(&git, &t.branches).await?;
        // Each branch names its repository, so a flat list on the card still says where.
        for b in assessed["branches"].as_array_mut().into_iter().flatten() {
            b["repoPath"] = json!(path);
        }
        assessed["repoPath"] = json!(path);
        out.push(assessed);
    }
    Ok(json!({"repoPath": ctx.repo.display(), "repositories": out}))
}

/// The pinned repositories, in the order proposed.
pub(super) fn listed(pins: &Pins) -> impl Iterator<Item = &Value> {
    pins.0["repositories"].as_array().into_iter().flatten()
}

fn deletable(branches: &[Value]) -> usize {
    branches.iter().filter(|b| b["delete"] == true).count()
}

/// The card: per repository each named branch, whether it goes and why; the totals.
pub(super) fn preview(pins: &Pins) -> Value {
    let mut all = 0;
    let mut go = 0;
    let repositories: Vec<Value> = listed(pins)
        .map(|r| {
            let branches = r["branches"].as_array().cloned().unwrap_or_default();
            let n = deletable(&branches);
            all += branches.len();
            go += n;
            json!({"repoPath": r["repoPath"], "branches": branches,
                   "deletable": n, "kept": branches.len() - n})
        })
        .collect();
    json!({
        "repositories": repositories,
        "deletable": go,
        "kept": all - go,
        "remoteBranchesTouched": false,
    })
}

/// What moved between two assessments, named by repository: its HEAD, or one branch.
pub(super) fn moved(pinned: &Value, now: &Value) -> Vec<Moved> {
    let empty = Vec::new();
    let before = pinned["repositories"].as_array().unwrap_or(&empty);
    let after = now["repositories"].as_array().unwrap_or(&empty);
    if before.len() != after.len() {
        return vec![Moved {
            what: "targets".into(),
            expected: pinned["repositories"].clone(),
            found: now["repositories"].clone(),
        }];
    }
    let mut out = Vec::new();
    for (i, (e, f)) in before.iter().zip(after).enumerate() {
        let path = e["repoPath"].as_str().unwrap_or_default();
        if e["repoPath"] != f["repoPath"] {
            out.push(Moved {
                what: format!("targets[{i}] repository"),
                expected: e["repoPath"].clone(),
                found: f["repoPath"].clone(),
            });
            continue;
        }
        if e["head"] != f["head"] {
            out.push(Moved {
                what: format!("{path}: HEAD"),
                expected: e["head"].clone(),
                found: f["head"].clone(),
            });
        }
        let (eb, fb) = (
            e["branches"].as_array().unwrap_or(&empty),
            f["branches"].as_array().unwrap_or(&empty),
        );
        for (x, y) in eb.iter().zip(fb) {
            if x != y {
                out.push(Moved {
                    what: format!("{path}: refs/heads/{}", x["branch"].as_str().unwrap_or("")),
                    expected: x.clone(),
                    found: y.clone(),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(path: &str, tip: &str) -> Value {
        json!({"repoPath": path, "head": {"oid": "h"},
               "branches": [{"branch": "a", "tip": tip, "delete": true, "reason": "r"},
                            {"branch": "b", "tip": null, "delete": false, "reason": "k"}]})
    }

    #[test]
    fn moved_names_the_repository_and_the_branch() {
        let pinned = json!({"repositories": [repo("/r1", "x"), repo("/r2", "y")]});
        assert!(moved(&pinned, &pinned).is_empty());
        let now = json!({"repositories": [repo("/r1", "x"), repo("/r2", "z")]});
        let m = moved(&pinned, &now);
        assert_eq!(m.len(), 1, "{m:?}");
        assert_eq!(m[0].what, "/r2: refs/heads/a");
        let shorter = json!({"repositories": [repo("/r1", "x")]});
        assert_eq!(moved(&pinned, &shorter)[0].what, "targets");
    }

    #[test]
    fn preview_counts_per_repository_and_in_all() {
        let pins = Pins(json!({"repositories": [repo("/r1", "x"), repo("/r2", "y")]}));
        let p = preview(&pins);
        assert_eq!(p["deletable"], 2);
        assert_eq!(p["kept"], 2);
        assert_eq!(p["repositories"][1]["repoPath"], "/r2");
        assert_eq!(p["repositories"][1]["kept"], 1);
        assert_eq!(p["remoteBranchesTouched"], false);
    }
}
