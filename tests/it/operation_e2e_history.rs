//! `merge`, `discard`, `reset` and `plan` end to end with real parts only: a real
//! `gitward gateway`, the sidecar proposing over stdio, a person approving through the
//! human API (the destructive ones only with the explicit confirmation), the repository
//! compared with what plain git makes of a copy, and the proposal's restore point
//! putting every byte back through the same API.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::exec_history::{history_in, snapshot_at};
use super::exec_ops::content_state;
use super::operation_e2e::{Gateway, settle};
use crate::common::Fixture;

fn repo(fx: &Fixture) -> PathBuf {
    let repo = fx.init("repo", &["-b", "main"]);
    fx.commit(&repo, "a.txt", "one\ntwo\n", "first");
    fx.commit(&repo, "dir/b.txt", "bee\n", "second");
    history_in(fx, &repo);
    repo
}

fn twin(fx: &Fixture, repo: &Path) -> PathBuf {
    let dest = fx.path("twin");
    let ok = std::process::Command::new("cp")
        .arg("-a")
        .arg(repo)
        .arg(&dest)
        .status()
        .unwrap();
    assert!(ok.success());
    dest
}

/// Proposes `op` through the sidecar, approves it (confirming when `destructive`, after
/// checking an unconfirmed approval is refused) and returns the settled status.
fn propose_and_approve(
    fx: &Fixture,
    gateway: &Gateway,
    op: &str,
    repo: &Path,
    fields: Value,
    destructive: bool,
) -> Value {
    let mut sidecar = gateway.sidecar(fx);
    let mut args = json!({"repoPath": repo, "reason": format!("end to end {op}")});
    for (k, v) in fields.as_object().unwrap() {
        args[k] = v.clone();
    }
    let proposed = sidecar.call(&format!("operation.preview.{op}"), args);
    assert_eq!(proposed["accepted"], true, "{proposed}");
    let id = proposed["previewId"].as_str().unwrap().to_owned();
    let path = format!("api/proposals/{id}/approve");
    if destructive {
        let (status, body) = gateway.human_post(&path, json!({"confirmDestructive": false}));
        assert_eq!(status, 422, "{body}");
        assert_eq!(body["error"]["code"], "confirmationRequired", "{body}");
    }
    let (status, body) = gateway.human_post(&path, json!({"confirmDestructive": destructive}));
    assert_eq!(status, 200, "{body}");
    settle(&mut sidecar, &id)
}

fn restore(gateway: &Gateway, done: &Value) {
    let rp = done["data"]["result"]["restorePointId"].as_str().unwrap();
    let (status, body) = gateway.human_post(
        &format!("api/restore-points/{rp}/restore"),
        json!({"confirmMoved": false}),
    );
    assert_eq!(status, 200, "{body}");
}

/// One type end to end: the outcome is plain git's, and the restore puts every byte back.
fn round_trip(op: &str, fields: Value, destructive: bool, plain: &[&[&str]]) -> Value {
    let fx = Fixture::new();
    let repo = repo(&fx);
    fx.write(&repo, "dir/b.txt", "local edit\n");
    fx.write(&repo, "loose.txt", "untracked\n");
    let before = snapshot_at(&fx, &repo);
    let copy = twin(&fx, &repo);
    let gateway = Gateway::start(&fx, &[]);
    let done = propose_and_approve(&fx, &gateway, op, &repo, fields, destructive);
    assert_eq!(done["status"], "completed", "{done}");
    for args in plain {
        fx.git(&copy, args);
    }
    assert_eq!(content_state(&fx, &repo), content_state(&fx, &copy), "{op}");
    restore(&gateway, &done);
    assert_eq!(snapshot_at(&fx, &repo), before, "{op}");
    done
}

#[test]
fn operation_preview_merge_end_to_end_through_a_real_gateway() {
    let done = round_trip(
        "merge",
        json!({"sourceRef": "side", "targetRef": "main", "strategy": "squash"}),
        false,
        &[
            &["merge", "--squash", "side"],
            &["commit", "-q", "--no-edit"],
        ],
    );
    assert_eq!(done["data"]["result"]["conflicts"], json!([]), "{done}");
}

#[test]
fn operation_preview_discard_end_to_end_through_a_real_gateway() {
    let done = round_trip(
        "discard",
        json!({"paths": ["dir/b.txt", "loose.txt"]}),
        true,
        &[
            &["restore", "--worktree", "--", "dir/b.txt"],
            &["clean", "-f", "-q", "--", "loose.txt"],
        ],
    );
    assert!(done["data"]["result"]["stashSha"].is_string(), "{done}");
}

#[test]
fn operation_preview_reset_end_to_end_through_a_real_gateway() {
    round_trip(
        "reset",
        json!({"targetRef": "HEAD~1", "mode": "hard"}),
        true,
        &[&["reset", "-q", "--hard", "HEAD~1"]],
    );
}

#[test]
fn operation_preview_plan_end_to_end_through_a_real_gateway() {
    let done = round_trip(
        "plan",
        json!({"steps": [
            {"operationType": "discard", "paths": ["dir/b.txt"]},
            {"operationType": "merge", "sourceRef": "side", "targetRef": "main"},
            // Revisions are resolved when proposed: a name that does not depend on the
            // steps before, so plain git resolves it alike.
            {"operationType": "reset", "targetRef": "feature~1", "mode": "soft"},
        ]}),
        true,
        &[
            &["restore", "--worktree", "--", "dir/b.txt"],
            &["merge", "-q", "--no-edit", "side"],
            &["reset", "-q", "--soft", "feature~1"],
        ],
    );
    assert_eq!(done["data"]["result"]["steps"][2]["status"], "completed");
}

#[test]
fn a_conflicting_plan_step_fails_rolled_back_through_a_real_gateway() {
    let fx = Fixture::new();
    let repo = repo(&fx);
    fx.write(&repo, "dir/b.txt", "local edit\n");
    let before = snapshot_at(&fx, &repo);
    let gateway = Gateway::start(&fx, &[]);
    let done = propose_and_approve(
        &fx,
        &gateway,
        "plan",
        &repo,
        json!({"steps": [
            {"operationType": "discard", "paths": ["dir/b.txt"]},
            {"operationType": "merge", "sourceRef": "clash", "targetRef": "main"},
        ]}),
        true,
    );
    assert_eq!(done["error"]["data"]["status"], "failed", "{done}");
    let result = &done["error"]["data"]["statusBody"]["result"];
    assert_eq!(result["failure"], "rolledBack", "{done}");
    assert_eq!(result["conflicts"], json!(["a.txt"]), "{done}");
    assert_eq!(snapshot_at(&fx, &repo), before);
}
