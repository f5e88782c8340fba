//! `patch` end to end: through a real gateway it leaves the worktree and index plain
//! `git apply --index` would, and its restore point puts every byte back; an edit to a
//! touched path after the proposal is `stale`; a patch whose `apply --check` fails is shown
//! so on the card and fails cleanly, changing nothing.

use std::process::Command;

use gitward::gateway::api::{FailureKind, Status};
use serde_json::json;

use crate::common::Fixture;
use crate::exec_ops::{Rig, content_state};
use crate::op_setup::{PATCH, plain_apply};
use crate::op_support::{bytes, card, history, restore};
use crate::operation_e2e::{Gateway, settle};

#[test]
fn operation_preview_patch_end_to_end_matches_plain_git_apply_and_restores_every_byte() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "one\n", "first");
    fx.write(&repo, "loose.txt", "untracked, kept\n");
    let twin = fx.path("twin");
    Command::new("cp")
        .args(["-a"])
        .arg(&repo)
        .arg(&twin)
        .status()
        .unwrap();
    let before = bytes(&fx, &repo);
    let gateway = Gateway::start(&fx, &[]);
    let mut sidecar = gateway.sidecar(&fx);
    let proposed = sidecar.call(
        "operation.preview.patch",
        json!({"repoPath": repo, "reason": "add the second line", "patchContent": PATCH,
               "applyToIndex": true}),
    );
    assert_eq!(proposed["accepted"], true, "{proposed}");
    let id = proposed["previewId"].as_str().unwrap().to_owned();
    let shown = card(&gateway, &id);
    let preview = &shown["preview"];
    assert_eq!(preview["check"]["ok"], true, "{shown}");
    assert_eq!(preview["patch"], PATCH);
    assert_eq!(
        preview["files"],
        json!([{"path": "a.txt", "additions": 1, "deletions": 0},
               {"path": "dir/new.txt", "additions": 1, "deletions": 0}])
    );
    assert_eq!(fx.git(&repo, &["status", "--porcelain"]), "?? loose.txt");
    gateway.human_post(
        &format!("api/proposals/{id}/approve"),
        json!({"confirmDestructive": false}),
    );
    let done = settle(&mut sidecar, &id);
    assert_eq!(done["status"], "completed", "{done}");
    let result = &done["data"]["result"];
    assert_eq!(result["appliedPaths"], json!(["a.txt", "dir/new.txt"]));

    // The copy's index has other stat data: refresh it as any git command would.
    fx.git(&twin, &["status", "--porcelain"]);
    plain_apply(&twin, &fx, PATCH, true);
    assert_eq!(history(&fx, &repo, "HEAD"), history(&fx, &twin, "HEAD"));
    assert_eq!(std::fs::read(repo.join("dir/new.txt")).unwrap(), b"fresh\n");

    let (status, restored) = restore(&gateway, result["restorePointId"].as_str().unwrap());
    assert_eq!(status, 200, "{restored}");
    assert_eq!(bytes(&fx, &repo), before);
}

#[tokio::test]
async fn a_worktree_only_patch_matches_plain_git_and_an_edit_makes_it_stale() {
    let rig = Rig::new();
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n";
    let twin = rig.twin("twin");
    let record = rig.execute("patch", json!({"patchContent": patch})).await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    plain_apply(&twin, &rig.fx, patch, false);
    assert_eq!(
        content_state(&rig.fx, &rig.repo),
        content_state(&rig.fx, &twin)
    );

    let rig = Rig::new();
    let id = rig
        .propose("patch", json!({"patchContent": patch}))
        .await
        .unwrap();
    rig.fx
        .write(&rig.repo, "a.txt", "one\ntwo\nedited meanwhile\n");
    rig.approve(&id);
    let record = rig.run(&id).await;
    assert_eq!(record.status, Status::Failed, "{record:?}");
    let r = record.result.unwrap();
    assert_eq!(r.failure, Some(FailureKind::Stale));
    assert!(
        r.fields["moved"].to_string().contains("paths a.txt"),
        "{:?}",
        r.fields
    );
    assert_eq!(
        std::fs::read_to_string(rig.repo.join("a.txt")).unwrap(),
        "one\ntwo\nedited meanwhile\n"
    );
}

#[tokio::test]
async fn a_patch_that_does_not_apply_is_flagged_on_the_card_and_fails_cleanly() {
    let rig = Rig::new();
    // The second hunk does not match: git apply is all or nothing, a.txt stays too.
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n\
                 --- a/dir/b.txt\n+++ b/dir/b.txt\n@@ -1 +1 @@\n-not there\n+x\n";
    let id = rig
        .propose(
            "patch",
            json!({"patchContent": patch, "applyToIndex": true}),
        )
        .await
        .unwrap();
    let preview = rig.exec.preview(&id, &rig.cancel).await.unwrap();
    assert_eq!(preview["check"]["ok"], false, "{preview}");
    assert!(
        preview["check"]["message"]
            .as_str()
            .unwrap()
            .contains("dir/b.txt"),
        "{preview}"
    );
    let before = crate::exec_ops::state(&rig.fx, &rig.repo);
    rig.approve(&id);
    let record = rig.run(&id).await;
    assert_eq!(record.status, Status::Failed, "{record:?}");
    let r = record.result.unwrap();
    assert_eq!(r.failure, Some(FailureKind::Git));
    assert!(
        r.fields["message"]
            .as_str()
            .unwrap()
            .contains("patch failed"),
        "{:?}",
        r.fields
    );
    assert_eq!(crate::exec_ops::state(&rig.fx, &rig.repo), before);
    assert_eq!(
        std::fs::read_to_string(rig.repo.join("a.txt")).unwrap(),
        "one\ntwo\n"
    );
}
