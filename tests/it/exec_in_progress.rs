//! Reconciliation after a crash that left git in the middle of the write's operation (a
//! rebase stopped between commits, or with every commit replayed and only the branch's
//! move left): the operation is completed or aborted, never left mid-way, and the result
//! says which (`inProgress`).

use gitward::gateway::api::{FailureKind, Status};
use gitward::gateway::server::restore;
use gitward::gateway::server::store::Store;
use gitward::operation::{self, Pins};
use jiff::Timestamp;
use serde_json::json;

use super::exec_ops::Rig;

/// `topic` (three commits of its own files, checked out) forked before main's last
/// commit; a `rebase` of it onto main claimed, its intent recorded and its restore point
/// taken, as the executor leaves them just before the write. Returns the id and the
/// topic's tip.
async fn claimed_rebase(rig: &Rig) -> (String, Store, String) {
    rig.git(&["switch", "-q", "-c", "topic", "HEAD~1"]);
    for i in 0..3 {
        rig.fx
            .commit(&rig.repo, &format!("t{i}.txt"), "t\n", &format!("t{i}"));
    }
    let tip = rig.git(&["rev-parse", "topic"]);
    let fields = json!({"ontoRef": "main"});
    let id = rig.propose("rebase", fields.clone()).await.unwrap();
    rig.approve(&id);
    let mut store = rig.store();
    store
        .claim(&id, &json!({"phase": "claimed"}), Timestamp::now())
        .unwrap();
    let pins = Pins(store.pins(&id).unwrap().unwrap());
    let op = operation::find("rebase").unwrap();
    let intent = op.intent(fields.as_object().unwrap(), &pins).unwrap();
    let repo = gitward::git::repo::open(
        rig.exec.config(),
        "repoPath",
        &rig.repo.display().to_string(),
        &rig.cancel,
    )
    .await
    .unwrap();
    let point = restore::take(
        &mut store,
        &repo,
        &rig.cancel,
        &intent.refs(),
        Some(&id),
        Some("rebase"),
        &restore::Caps::default(),
        Timestamp::now(),
    )
    .await
    .unwrap();
    let record = json!({"phase": "restorePoint", "repoPath": repo.display(),
        "intent": intent, "restorePointId": point.id});
    store.update_intent(&id, &record, Timestamp::now()).unwrap();
    (id, store, tip)
}

/// Runs `git rebase <args> main`, which stops (an `exec false` fails) with the rebase in
/// progress.
fn rebase_that_stops(rig: &Rig, args: &[&str]) {
    let mut all = args.to_vec();
    all.push("main");
    let out = rig.fx.git_output(&rig.repo, &all);
    assert!(!out.status.success(), "the rebase should have stopped");
    assert!(rig.repo.join(".git/rebase-merge").is_dir());
}

#[tokio::test]
async fn a_rebase_stopped_between_commits_is_aborted_and_the_result_says_so() {
    let rig = Rig::new();
    let (id, _store, tip) = claimed_rebase(&rig).await;
    // Stops after the first of three picks.
    rebase_that_stops(&rig, &["rebase", "-x", "false"]);
    let ended = rig.exec.reconcile_at_start(&rig.cancel).await.unwrap();
    assert_eq!(ended.len(), 1);
    let record = &ended[0];
    assert_eq!(record.preview_id, id);
    assert_eq!(record.status, Status::Failed, "{record:?}");
    let result = record.result.as_ref().unwrap();
    assert_eq!(result.failure, Some(FailureKind::Interrupted));
    assert!(result.restore_point_id.is_some(), "{result:?}");
    assert_eq!(
        result.fields["inProgress"]["operation"], "rebase",
        "{result:?}"
    );
    assert_eq!(
        result.fields["inProgress"]["action"], "aborted",
        "{result:?}"
    );
    assert_eq!(
        result.fields["inProgress"]["command"], "git rebase --abort",
        "{result:?}"
    );
    let found = result.fields["found"].as_str().unwrap();
    assert!(found.contains("aborted"), "{found}");
    assert!(!rig.repo.join(".git/rebase-merge").exists());
    assert_eq!(rig.git(&["symbolic-ref", "HEAD"]), "refs/heads/topic");
    assert_eq!(rig.git(&["rev-parse", "topic"]), tip);
    assert_eq!(rig.git(&["status", "--porcelain"]), "");
}

#[tokio::test]
async fn a_rebase_with_every_commit_replayed_is_completed_and_the_result_says_so() {
    let rig = Rig::new();
    let (_id, _store, tip) = claimed_rebase(&rig).await;
    // Every pick done; the `exec false` appended last fails, leaving only the branch's
    // move to do.
    rebase_that_stops(
        &rig,
        &["-c", "sequence.editor=echo 'exec false' >>", "rebase", "-i"],
    );
    let ended = rig.exec.reconcile_at_start(&rig.cancel).await.unwrap();
    let record = &ended[0];
    assert_eq!(record.status, Status::Completed, "{record:?}");
    let result = record.result.as_ref().unwrap();
    assert_eq!(
        result.fields["inProgress"]["action"], "completed",
        "{result:?}"
    );
    assert_eq!(
        result.fields["inProgress"]["command"],
        "git rebase --continue"
    );
    assert!(!rig.repo.join(".git/rebase-merge").exists());
    assert_eq!(rig.git(&["symbolic-ref", "HEAD"]), "refs/heads/topic");
    assert_ne!(rig.git(&["rev-parse", "topic"]), tip);
    rig.git(&["merge-base", "--is-ancestor", "main", "topic"]);
    assert_eq!(rig.git(&["rev-list", "--count", "main..topic"]), "3");
}

#[tokio::test]
async fn a_git_operation_the_write_cannot_have_started_is_left_alone() {
    let rig = Rig::new();
    let (_id, _store, _tip) = claimed_rebase(&rig).await;
    // The user's own rebase of another branch, stopped between commits.
    rig.git(&["switch", "-q", "-c", "mine", "main~1"]);
    for i in 0..2 {
        rig.fx
            .commit(&rig.repo, &format!("m{i}.txt"), "m\n", &format!("m{i}"));
    }
    rebase_that_stops(&rig, &["rebase", "-x", "false"]);
    let ended = rig.exec.reconcile_at_start(&rig.cancel).await.unwrap();
    let result = ended[0].result.as_ref().unwrap();
    assert_eq!(result.failure, Some(FailureKind::Interrupted), "{result:?}");
    assert_eq!(
        result.fields["inProgress"]["action"], "leftAlone",
        "{result:?}"
    );
    assert!(
        rig.repo.join(".git/rebase-merge").is_dir(),
        "the user's rebase stays"
    );
}
