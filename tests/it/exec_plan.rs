//! `plan` executed by the gateway's executor (library level, real git): the steps in
//! order leave the repository as the same plain git commands do; a failure at any step
//! rolls the whole plan back to its pre-plan restore point, every byte, with per-step
//! results; a pin of any step that moved fails `stale` before the first step.

use gitward::gateway::api::Status;
use serde_json::{Value, json};

use super::exec_history::{history, result, snapshot};
use super::exec_ops::{Rig, content_state};

fn discard() -> Value {
    json!({"operationType": "discard", "paths": ["dir/b.txt"]})
}

fn reset() -> Value {
    json!({"operationType": "reset", "targetRef": "side", "mode": "hard"})
}

/// `clash` conflicts with main wherever main is (its own tip or side's).
fn conflicting_merge() -> Value {
    json!({"operationType": "merge", "sourceRef": "clash", "targetRef": "main"})
}

fn prepared() -> Rig {
    let rig = Rig::new();
    history(&rig);
    rig.fx
        .write(&rig.repo, "dir/b.txt", "local edit, discarded\n");
    rig
}

#[tokio::test]
async fn a_plan_runs_its_steps_as_plain_git_would_and_is_undone_by_one_restore() {
    let rig = prepared();
    let before = snapshot(&rig);
    let twin = rig.twin("twin");
    let steps = json!([discard(), reset(),
        {"operationType": "merge", "sourceRef": "feature", "targetRef": "main"}]);
    let id = rig
        .propose("plan", json!({ "steps": steps }))
        .await
        .unwrap();
    let preview = rig.exec.preview(&id, &rig.cancel).await.unwrap();
    let flags: Vec<&Value> = preview["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["destructive"])
        .collect();
    assert_eq!(flags, [true, true, false], "{preview}");
    assert_eq!(preview["steps"][2]["preview"]["clean"], true, "{preview}");
    rig.approve(&id);
    let record = rig.run(&id).await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    let r = result(&record);
    let statuses: Vec<&Value> = r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["status"])
        .collect();
    assert_eq!(statuses, ["completed"; 3], "{r}");
    rig.fx
        .git(&twin, &["restore", "--worktree", "--", "dir/b.txt"]);
    rig.fx.git(&twin, &["reset", "-q", "--hard", "side"]);
    rig.fx.git(&twin, &["merge", "--no-edit", "feature"]);
    assert_eq!(
        content_state(&rig.fx, &rig.repo),
        content_state(&rig.fx, &twin)
    );
    let rp = r["restorePointId"].as_str().unwrap();
    rig.exec.restore(rp, false, &rig.cancel).await.unwrap();
    assert_eq!(snapshot(&rig), before);
}

#[tokio::test]
async fn a_failure_at_any_step_rolls_the_whole_plan_back_with_per_step_results() {
    let plans = [
        [conflicting_merge(), discard(), reset()],
        [discard(), conflicting_merge(), reset()],
        [discard(), reset(), conflicting_merge()],
    ];
    for (failing, steps) in plans.into_iter().enumerate() {
        let rig = prepared();
        let before = snapshot(&rig);
        let id = rig
            .propose("plan", json!({ "steps": steps }))
            .await
            .unwrap();
        rig.approve(&id);
        let record = rig.run(&id).await;
        assert_eq!(record.status, Status::Failed, "step {failing}");
        let r = result(&record);
        assert_eq!(r["failure"], "rolledBack", "{r}");
        assert_eq!(r["failedStep"], failing + 1, "{r}");
        assert_eq!(r["conflicts"], json!(["a.txt"]), "{r}");
        let statuses: Vec<&str> = r["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["status"].as_str().unwrap())
            .collect();
        let mut expected = vec!["completed"; failing];
        expected.push("failed");
        expected.resize(3, "notRun");
        assert_eq!(statuses, expected, "{r}");
        assert!(r["rollback"]["restoredFrom"].is_string(), "{r}");
        assert_eq!(snapshot(&rig), before, "failure at step {}", failing + 1);
    }
}

#[tokio::test]
async fn a_plan_whose_later_step_moved_is_stale_before_the_first_step() {
    let rig = prepared();
    let id = rig
        .propose(
            "plan",
            json!({"steps": [discard(), {"operationType": "merge", "sourceRef": "side", "targetRef": "main"}]}),
        )
        .await
        .unwrap();
    rig.git(&["branch", "-f", "side", "feature"]);
    let before = snapshot(&rig);
    let record = rig.approve_and_run_stale(&id).await;
    let r = result(&record);
    assert_eq!(r["moved"][0]["what"], "step 2 sourceOid", "{r}");
    assert_eq!(snapshot(&rig), before);
}

#[tokio::test]
async fn a_plan_step_that_cannot_be_pinned_is_refused_naming_its_step() {
    let rig = prepared();
    let err = rig
        .propose(
            "plan",
            json!({"steps": [discard(), {"operationType": "discard", "paths": ["a.txt"]}]}),
        )
        .await
        .unwrap_err();
    assert!(err.contains("step 2 (discard): `paths`"), "{err}");
}
