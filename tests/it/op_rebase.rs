//! `rebase` end to end: through a real gateway it leaves the history plain `git rebase`
//! would, and its restore point puts every byte back; a moved branch or onto commit is
//! `stale`; a conflict aborts the rebase and names the commit and paths.

use gitward::gateway::api::{FailureKind, Status};
use serde_json::{Value, json};

use crate::common::Fixture;
use crate::exec_ops::Rig;
use crate::op_setup::{diverged, twin};
use crate::op_support::{bytes, card, history, restore};
use crate::operation_e2e::Gateway;

#[test]
fn operation_preview_rebase_end_to_end_matches_plain_git_and_restores_every_byte() {
    let fx = Fixture::new();
    let repo = diverged(&fx, "repo");
    let twin = twin(&fx, &repo, "twin");
    let before = bytes(&fx, &repo);
    let gateway = Gateway::start(&fx, &[]);
    let mut sidecar = gateway.sidecar(&fx);

    // interactive: true never reaches the gateway.
    let refused = sidecar.call(
        "operation.preview.rebase",
        json!({"repoPath": repo, "reason": "r", "ontoRef": "main", "interactive": true}),
    );
    assert_eq!(
        refused["error"]["data"]["field"], "interactive",
        "{refused}"
    );
    assert_eq!(gateway.human_get("api/proposals")["cards"], json!([]));

    let proposed = sidecar.call(
        "operation.preview.rebase",
        json!({"repoPath": repo, "reason": "catch up with main", "ontoRef": "main"}),
    );
    let id = proposed["previewId"].as_str().unwrap().to_owned();
    let shown = card(&gateway, &id);
    let preview = &shown["preview"];
    assert_eq!(preview["commitsTotal"], 2, "{shown}");
    let subjects: Vec<&str> = preview["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["subject"].as_str().unwrap())
        .collect();
    assert_eq!(subjects, ["topic one", "topic two"]);
    assert_eq!(preview["firstConflict"], Value::Null);
    assert_eq!(preview["branch"], "refs/heads/topic");
    assert!(
        preview["warning"]
            .as_str()
            .unwrap()
            .contains("Rewrites history")
    );
    assert_eq!(shown["risk"], "medium");
    gateway.human_post(
        &format!("api/proposals/{id}/approve"),
        json!({"confirmDestructive": false}),
    );
    let done = crate::operation_e2e::settle(&mut sidecar, &id);
    assert_eq!(done["status"], "completed", "{done}");
    let result = &done["data"]["result"];
    assert_eq!(result["commitSha"], fx.git(&repo, &["rev-parse", "topic"]));

    fx.git(&twin, &["rebase", "-q", "main"]);
    assert_eq!(history(&fx, &repo, "main"), history(&fx, &twin, "main"));
    assert_eq!(
        fx.git(&repo, &["rev-parse", "HEAD~2"]),
        fx.git(&repo, &["rev-parse", "main"])
    );

    let (status, restored) = restore(&gateway, result["restorePointId"].as_str().unwrap());
    assert_eq!(status, 200, "{restored}");
    assert_eq!(bytes(&fx, &repo), before);
}

#[tokio::test]
async fn a_moved_branch_or_onto_commit_makes_a_rebase_stale() {
    for (mover, what) in [(&["main"][..], "ontoOid"), (&["topic"][..], "currentOid")] {
        let rig = Rig::new();
        rig.git(&["switch", "-q", "-c", "topic", "HEAD~1"]);
        rig.fx.commit(&rig.repo, "t.txt", "t\n", "topic");
        let id = rig
            .propose("rebase", json!({"ontoRef": "main"}))
            .await
            .unwrap();
        rig.git(&["switch", "-q", mover[0]]);
        rig.fx.commit(&rig.repo, "later.txt", "later\n", "moved on");
        rig.git(&["switch", "-q", "topic"]);
        let head = rig.git(&["rev-parse", "HEAD"]);
        rig.approve(&id);
        let record = rig.run(&id).await;
        assert_eq!(record.status, Status::Failed, "{record:?}");
        let r = record.result.unwrap();
        assert_eq!(r.failure, Some(FailureKind::Stale));
        assert!(
            r.fields["moved"].to_string().contains(what),
            "{:?}",
            r.fields
        );
        assert_eq!(rig.git(&["rev-parse", "HEAD"]), head);
    }
}

#[tokio::test]
async fn a_conflict_aborts_the_rebase_and_names_the_commit_and_paths() {
    let rig = Rig::new();
    rig.git(&["switch", "-q", "-c", "topic"]);
    let bad = rig
        .fx
        .commit(&rig.repo, "a.txt", "topic's line\n", "topic edits a");
    rig.git(&["switch", "-q", "main"]);
    rig.fx
        .commit(&rig.repo, "a.txt", "main's line\n", "main edits a");
    rig.git(&["switch", "-q", "topic"]);
    let id = rig
        .propose("rebase", json!({"ontoRef": "main"}))
        .await
        .unwrap();
    let preview = rig.exec.preview(&id, &rig.cancel).await.unwrap();
    assert_eq!(preview["firstConflict"]["oid"], bad, "{preview}");
    assert_eq!(preview["firstConflict"]["paths"], json!(["a.txt"]));
    let head = rig.git(&["rev-parse", "HEAD"]);
    rig.approve(&id);
    let record = rig.run(&id).await;
    assert_eq!(record.status, Status::Failed, "{record:?}");
    let r = record.result.unwrap();
    assert_eq!(r.failure, Some(FailureKind::Git));
    let message = r.fields["message"].as_str().unwrap();
    assert!(
        message.contains(&bad) && message.contains("topic edits a") && message.contains("a.txt"),
        "{message}"
    );
    assert!(message.contains("aborted"), "{message}");
    assert!(!rig.repo.join(".git/rebase-merge").exists());
    assert_eq!(rig.git(&["rev-parse", "HEAD"]), head);
    assert_eq!(rig.git(&["symbolic-ref", "HEAD"]), "refs/heads/topic");
    assert_eq!(rig.git(&["status", "--porcelain"]), "");
}

#[tokio::test]
async fn the_card_says_whether_tracked_changes_would_stop_git() {
    let rig = Rig::new();
    rig.git(&["switch", "-q", "-c", "topic"]);
    rig.fx.commit(&rig.repo, "t.txt", "t\n", "topic's own");
    rig.git(&["switch", "-q", "main"]);
    rig.fx.commit(&rig.repo, "m.txt", "m\n", "main moves");
    rig.git(&["switch", "-q", "topic"]);
    rig.fx
        .write(&rig.repo, "loose.txt", "untracked, no obstacle\n");
    let id = rig
        .propose("rebase", json!({"ontoRef": "main"}))
        .await
        .unwrap();
    let preview = rig.exec.preview(&id, &rig.cancel).await.unwrap();
    assert_eq!(preview["worktreeClean"], true, "{preview}");
    rig.fx.write(&rig.repo, "t.txt", "edited\n");
    let preview = rig.exec.preview(&id, &rig.cancel).await.unwrap();
    assert_eq!(preview["worktreeClean"], false, "{preview}");
    rig.git(&["add", "t.txt"]);
    let preview = rig.exec.preview(&id, &rig.cancel).await.unwrap();
    assert_eq!(preview["worktreeClean"], false, "{preview}");
}
