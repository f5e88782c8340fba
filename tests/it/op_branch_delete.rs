//! `operation.preview.branchDelete` end to end through a real gateway: only the branches
//! the seed's rules allow are deleted (as plain `git branch -d` would), each kept one is
//! reported with its reason, remote-tracking refs stay, and the restore point brings every
//! branch back.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::Fixture;
use crate::op_setup::{branch_refs as refs, branches_to_tidy};
use crate::operation_e2e::{Gateway, settle};

fn worktree_state(fx: &Fixture, repo: &Path) -> Value {
    json!({
        "head": fx.git(repo, &["symbolic-ref", "HEAD"]),
        "index": fx.git(repo, &["ls-files", "-s"]),
        "status": fx.git(repo, &["status", "--porcelain=v2", "--untracked-files=all"]),
        "a": std::fs::read_to_string(repo.join("a.txt")).unwrap(),
    })
}

fn propose(sidecar: &mut crate::common::Server, repo: &Path, branches: &[&str]) -> String {
    let proposed = sidecar.call(
        "operation.preview.branchDelete",
        json!({"repoPath": repo, "reason": "tidy up merged branches",
               "targets": [{"repoPath": repo, "branches": branches}]}),
    );
    assert_eq!(proposed["accepted"], true, "{proposed}");
    proposed["previewId"].as_str().unwrap().to_owned()
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|b| b["branch"].as_str().unwrap())
        .collect()
}

#[test]
fn operation_preview_branch_delete_end_to_end_matches_plain_git_and_restores() {
    let fx = Fixture::new();
    let repo = branches_to_tidy(&fx, "repo");
    let before_refs = refs(&fx, &repo);
    let before = worktree_state(&fx, &repo);
    let gateway = Gateway::start(&fx, &[]);
    let mut sidecar = gateway.sidecar(&fx);
    let id = propose(
        &mut sidecar,
        &repo,
        &["merged", "up", "unmerged", "wt", "ghost", "origin/up"],
    );
    assert_eq!(
        refs(&fx, &repo),
        before_refs,
        "nothing before a person decides"
    );
    gateway.approve(&id);
    let done = settle(&mut sidecar, &id);
    assert_eq!(done["status"], "completed", "{done}");
    let result = &done["data"]["result"];
    assert_eq!(names(&result["deleted"]), ["merged", "up"], "{result}");
    assert_eq!(names(&result["failed"]), Vec::<&str>::new());
    assert_eq!(
        names(&result["skipped"]),
        ["unmerged", "wt", "ghost", "origin/up"]
    );
    let reasons: Vec<&str> = result["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["reason"].as_str().unwrap())
        .collect();
    assert!(
        reasons[0].contains("neither in HEAD nor in its upstream"),
        "{reasons:?}"
    );
    assert!(reasons[1].contains("checked out"), "{reasons:?}");
    assert!(reasons[2].contains("no such local branch"), "{reasons:?}");
    let after_gateway = refs(&fx, &repo);
    assert!(
        after_gateway.contains("refs/remotes/origin/up "),
        "remote refs stay"
    );
    assert_eq!(worktree_state(&fx, &repo), before, "only refs changed");

    // Restore brings every branch back, and leaves the worktree as it was.
    let rp = result["restorePointId"].as_str().unwrap();
    let (status, answer) = gateway.human_post(
        &format!("api/restore-points/{rp}/restore"),
        json!({"confirmMoved": false}),
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(refs(&fx, &repo), before_refs);
    assert_eq!(worktree_state(&fx, &repo), before);

    // Plain git decides the same: `branch -d` deletes merged and up, refuses the rest.
    let plain = fx.git_output(&repo, &["branch", "-d", "merged", "up", "unmerged", "wt"]);
    assert!(!plain.status.success(), "git refuses unmerged and wt");
    assert_eq!(refs(&fx, &repo), after_gateway);
}

#[test]
fn operation_preview_branch_delete_is_stale_when_a_tip_moves_before_approval() {
    let fx = Fixture::new();
    let repo = branches_to_tidy(&fx, "repo");
    let gateway = Gateway::start(&fx, &[]);
    let mut sidecar = gateway.sidecar(&fx);
    let id = propose(&mut sidecar, &repo, &["merged", "up"]);
    fx.git(&repo, &["branch", "-f", "merged", "main"]);
    let moved = refs(&fx, &repo);
    gateway.approve(&id);
    let done = settle(&mut sidecar, &id);
    assert_eq!(done["error"]["data"]["status"], "failed", "{done}");
    let result = &done["error"]["data"]["statusBody"]["result"];
    assert_eq!(result["failure"], "stale", "{done}");
    assert_eq!(refs(&fx, &repo), moved, "nothing deleted");
}

#[test]
fn operation_preview_branch_delete_keeps_a_branch_that_must_be_kept() {
    let fx = Fixture::new();
    let repo = branches_to_tidy(&fx, "repo");
    let before_refs = refs(&fx, &repo);
    let gateway = Gateway::start(&fx, &[]);
    let mut sidecar = gateway.sidecar(&fx);
    let id = propose(&mut sidecar, &repo, &["unmerged"]);
    gateway.approve(&id);
    let done = settle(&mut sidecar, &id);
    assert_eq!(done["status"], "completed", "{done}");
    let result = &done["data"]["result"];
    assert_eq!(names(&result["deleted"]), Vec::<&str>::new());
    assert_eq!(names(&result["skipped"]), ["unmerged"]);
    assert_eq!(refs(&fx, &repo), before_refs);
}
