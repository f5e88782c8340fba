//! `push` against a local bare remote: through a real gateway it leaves the remote and the
//! local refs as plain `git push -u` would, and its restore point puts the local bytes
//! back (the remote is untouched by a restore); a branch that moved is `stale`; a
//! non-fast-forward and a lease that no longer holds are refused by git and fail cleanly.

use std::path::{Path, PathBuf};

use gitward::gateway::api::{FailureKind, Status};
use serde_json::json;

use crate::common::Fixture;
use crate::exec_ops::Rig;
use crate::op_setup::{remote_refs, with_origin};
use crate::op_support::{bytes, card, restore};
use crate::operation_e2e::{Gateway, settle};

#[test]
fn operation_preview_push_end_to_end_matches_plain_git_and_restores_the_local_side() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "one\n", "first");
    let bare = with_origin(&fx, &repo, "origin.git");
    fx.commit(&repo, "b.txt", "two\n", "second");
    fx.commit(&repo, "c.txt", "three\n", "third");
    let twin = fx.path("twin");
    std::process::Command::new("cp")
        .args(["-a"])
        .arg(&repo)
        .arg(&twin)
        .status()
        .unwrap();
    let twin_bare = fx.clone(&bare, "twin-origin.git", true);
    fx.git(
        &twin,
        &["remote", "set-url", "origin", twin_bare.to_str().unwrap()],
    );
    let before = bytes(&fx, &repo);
    let config_before = std::fs::read_to_string(repo.join(".git/config")).unwrap();
    let gateway = Gateway::start(&fx, &[]);
    let mut sidecar = gateway.sidecar(&fx);
    let proposed = sidecar.call(
        "operation.preview.push",
        json!({"repoPath": repo, "reason": "share the two commits", "setUpstream": true}),
    );
    assert_eq!(proposed["accepted"], true, "{proposed}");
    let id = proposed["previewId"].as_str().unwrap().to_owned();
    let shown = card(&gateway, &id);
    let preview = &shown["preview"];
    let subjects: Vec<&str> = preview["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["subject"].as_str().unwrap())
        .collect();
    assert_eq!(subjects, ["third", "second"], "{shown}");
    assert_eq!(preview["fastForward"], true);
    assert_eq!(preview["url"], bare.display().to_string());
    assert_eq!(shown["risk"], "medium");
    assert_eq!(shown["needsConfirmation"], false);
    gateway.human_post(
        &format!("api/proposals/{id}/approve"),
        json!({"confirmDestructive": false}),
    );
    let done = settle(&mut sidecar, &id);
    assert_eq!(done["status"], "completed", "{done}");
    let result = &done["data"]["result"];
    let tip = fx.git(&repo, &["rev-parse", "main"]);
    assert_eq!(result["pushedOid"], tip);
    assert_eq!(
        result["pushedRange"],
        format!("{}..{tip}", fx.git(&repo, &["rev-parse", "main~2"]))
    );

    fx.git(&twin, &["push", "-q", "-u", "origin", "main"]);
    assert_eq!(remote_refs(&fx, &bare), remote_refs(&fx, &twin_bare));
    let refs = |dir: &Path| {
        fx.git(
            dir,
            &[
                "for-each-ref",
                "--format=%(refname) %(objectname)",
                "refs/heads",
                "refs/remotes",
            ],
        )
    };
    assert_eq!(refs(&repo), refs(&twin));
    assert_eq!(
        fx.git(&repo, &["config", "branch.main.merge"]),
        "refs/heads/main"
    );

    // Restoring is local and says so: the remote keeps the push, so the remote-tracking
    // ref stays as the remote has it; the upstream `-u` set goes back.
    let remote_after = remote_refs(&fx, &bare);
    let (status, restored) = restore(&gateway, result["restorePointId"].as_str().unwrap());
    assert_eq!(status, 200, "{restored}");
    let after = bytes(&fx, &repo);
    for part in ["files", "index", "head"] {
        assert_eq!(after[part], before[part], "{part}");
    }
    assert_eq!(fx.git(&repo, &["rev-parse", "main"]), tip);
    assert_eq!(fx.git(&repo, &["rev-parse", "origin/main"]), tip);
    assert_eq!(restored["remoteRefs"], json!(["refs/remotes/origin/main"]));
    let note = restored["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("The remote keeps the pushed commits"),
        "{restored}"
    );
    assert_eq!(remote_refs(&fx, &bare), remote_after);
    assert_eq!(
        std::fs::read_to_string(repo.join(".git/config")).unwrap(),
        config_before,
        "the upstream set by -u is gone again"
    );
    // git sees the pushed work as pushed, not as "ahead".
    let status = fx.git(&repo, &["status", "-sb"]);
    assert!(!status.contains("ahead"), "{status}");

    // Undoing the push on the remote is a new proposal, approved on its own.
    let old = fx.git(&repo, &["rev-parse", "main~2"]);
    fx.git(&repo, &["fetch", "-q", "origin"]);
    let (status, undo) = gateway.human_post(&format!("api/proposals/{id}/undo-push"), json!({}));
    assert_eq!(status, 201, "{undo}");
    assert_eq!(undo["status"], "pending");
    assert_eq!(undo["risk"], "high");
    assert_eq!(undo["needsConfirmation"], true);
    assert_eq!(undo["fields"]["revertTo"], old);
    let (again, same) = gateway.human_post(&format!("api/proposals/{id}/undo-push"), json!({}));
    assert_eq!((again, &same["previewId"]), (200, &undo["previewId"]));
    assert_eq!(
        remote_refs(&fx, &bare),
        remote_after,
        "nothing moves before approval"
    );
    let undo_id = undo["previewId"].as_str().unwrap();
    let shown = card(&gateway, undo_id);
    assert_eq!(shown["preview"]["lost"][0]["subject"], "third", "{shown}");
    let (status, refused) = gateway.human_post(
        &format!("api/proposals/{undo_id}/approve"),
        json!({"confirmDestructive": false}),
    );
    assert_eq!(status, 422, "{refused}");
    gateway.approve_confirmed(undo_id);
    let undone = settle(&mut sidecar, undo_id);
    assert_eq!(undone["status"], "completed", "{undone}");
    assert_eq!(fx.git(&bare, &["rev-parse", "main"]), old);
    assert_eq!(
        fx.git(&repo, &["rev-parse", "main"]),
        tip,
        "the local branch keeps its commits"
    );
}

/// A repository whose `origin` has a commit it never fetched (someone else pushed).
fn moved_remote(rig: &Rig) -> PathBuf {
    let bare = with_origin(&rig.fx, &rig.repo, "origin.git");
    let other = rig.fx.clone(&bare, "other", false);
    rig.fx
        .commit(&other, "theirs.txt", "theirs\n", "someone else's");
    rig.fx.git(&other, &["push", "-q", "origin", "main"]);
    rig.fx.commit(&rig.repo, "ours.txt", "ours\n", "ours");
    bare
}

#[tokio::test]
async fn a_rejected_push_and_a_broken_lease_fail_cleanly() {
    for force in [false, true] {
        let rig = Rig::new();
        let bare = moved_remote(&rig);
        let remote_before = remote_refs(&rig.fx, &bare);
        let tracking = rig.git(&["rev-parse", "origin/main"]);
        let record = rig.execute("push", json!({"forceWithLease": force})).await;
        assert_eq!(record.status, Status::Failed, "{record:?}");
        let r = record.result.unwrap();
        assert_eq!(r.failure, Some(FailureKind::Git));
        let message = r.fields["message"].as_str().unwrap();
        // Git says "fetch first" when it lacks the remote's new commit entirely.
        let why: &[&str] = if force {
            &["stale info"]
        } else {
            &["non-fast-forward", "fetch first"]
        };
        assert!(
            message.contains("rejected") && why.iter().any(|w| message.contains(w)),
            "{message}"
        );
        assert!(r.restore_point_id.is_some());
        assert_eq!(remote_refs(&rig.fx, &bare), remote_before, "force {force}");
        assert_eq!(rig.git(&["rev-parse", "origin/main"]), tracking);
    }
}

#[tokio::test]
async fn a_branch_that_moved_makes_a_push_stale() {
    let rig = Rig::new();
    let bare = with_origin(&rig.fx, &rig.repo, "origin.git");
    rig.fx.commit(&rig.repo, "x.txt", "x\n", "to push");
    let id = rig.propose("push", json!({})).await.unwrap();
    rig.fx.commit(&rig.repo, "y.txt", "y\n", "added later");
    let remote_before = remote_refs(&rig.fx, &bare);
    rig.approve(&id);
    let record = rig.run(&id).await;
    assert_eq!(record.status, Status::Failed, "{record:?}");
    let r = record.result.unwrap();
    assert_eq!(r.failure, Some(FailureKind::Stale));
    assert!(
        r.fields["moved"].to_string().contains("localOid"),
        "{:?}",
        r.fields
    );
    assert_eq!(remote_refs(&rig.fx, &bare), remote_before);
}
