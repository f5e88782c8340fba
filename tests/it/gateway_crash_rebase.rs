//! `kill -9` of a real gateway while git is mid-rebase (the development builds' crash
//! point `mid-write`: a plan's rebase stopped at a conflict, before it is aborted), then
//! a restart: reconciliation aborts the rebase, says so, and records the proposal
//! `failed/interrupted` with its restore point — the repository is never left mid-rebase.

use std::time::Duration;

use serde_json::{Value, json};

use super::common::Fixture;
use super::gateway_support::{Gateway, preview_id};

/// `topic` changes `a.txt` one way, `main` another: rebasing `topic` onto `main` stops
/// at a conflict on the first commit. `topic` is checked out.
fn conflicting(fx: &Fixture) -> std::path::PathBuf {
    let repo = fx.init("r", &[]);
    fx.commit(&repo, "a.txt", "base\n", "base");
    fx.git(&repo, &["switch", "-q", "-c", "topic"]);
    fx.commit(&repo, "a.txt", "topic\n", "topic's a");
    fx.commit(&repo, "t.txt", "t\n", "topic's t");
    fx.git(&repo, &["switch", "-q", "main"]);
    fx.commit(&repo, "a.txt", "main\n", "main's a");
    fx.git(&repo, &["switch", "-q", "topic"]);
    repo
}

fn settled(gw: &Gateway, id: &str) -> Value {
    for _ in 0..400 {
        let record = gw
            .get_handshake(&format!("/v1/mcp/operation/status/{id}"))
            .json();
        if !matches!(record["status"].as_str(), Some("approved" | "executing")) {
            return record;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("{id} never settled");
}

#[test]
fn kill_9_mid_rebase_is_reconciled_by_aborting_the_rebase() {
    let fx = Fixture::new();
    let repo = conflicting(&fx);
    let tip = fx.git(&repo, &["rev-parse", "topic"]);
    let mut gw = Gateway::start(&fx, &[], &[("GITWARD_DEBUG_CRASH_AT", "mid-write")]);
    let session = gw.login();
    let body = json!({"agentId": "claude-code", "operationType": "plan", "repoPath": repo,
        "reason": "r", "requestedAt": "2026-05-28T11:42:09.512Z",
        "steps": [{"operationType": "rebase", "ontoRef": "main"}]});
    let id = preview_id(&gw.post_handshake("/v1/mcp/operation/preview/plan", &body));
    session.approve_into_crash(&id);
    let status = gw.child.wait().unwrap();
    assert!(!status.success(), "the gateway did not crash");
    // As the crash left it: mid-rebase on a detached HEAD.
    assert!(repo.join(".git/rebase-merge").is_dir());
    assert!(
        fx.git_output(&repo, &["symbolic-ref", "-q", "HEAD"])
            .stdout
            .is_empty()
    );

    let gw = Gateway::start(&fx, &[], &[]);
    let record = settled(&gw, &id);
    let result = &record["result"];
    assert_eq!(record["status"], "failed", "{record}");
    assert_eq!(result["failure"], "interrupted", "{record}");
    assert!(result["restorePointId"].as_str().is_some(), "{record}");
    assert_eq!(result["inProgress"]["operation"], "rebase", "{record}");
    assert_eq!(result["inProgress"]["action"], "aborted", "{record}");
    assert!(
        result["found"]
            .as_str()
            .unwrap()
            .contains("git rebase --abort"),
        "{record}"
    );
    assert!(!repo.join(".git/rebase-merge").exists());
    assert_eq!(fx.git(&repo, &["symbolic-ref", "HEAD"]), "refs/heads/topic");
    assert_eq!(fx.git(&repo, &["rev-parse", "topic"]), tip);
    assert_eq!(fx.git(&repo, &["status", "--porcelain"]), "");
    // A second restart changes nothing.
    drop(gw);
    let gw = Gateway::start(&fx, &[], &[]);
    let again = settled(&gw, &id);
    assert_eq!(again["status"], record["status"]);
    assert_eq!(again["result"], record["result"]);
}
