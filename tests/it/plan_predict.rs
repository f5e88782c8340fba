//! A plan's steps see the repository the earlier steps leave: a name relative to what an
//! earlier step moves is read where that step leaves it (or refused, naming the step,
//! when that commit is only made as the plan runs), the card previews each step on that
//! state, and each predicted step is checked again right before it runs.

use gitward::gateway::api::Status;
use serde_json::{Value, json};

use super::exec_history::{history, result, snapshot};
use super::exec_ops::{Rig, content_state, state};
use crate::common::write_executable;

fn merge(source: &str) -> Value {
    json!({"operationType": "merge", "sourceRef": source, "targetRef": "main"})
}

fn reset(target: &str, mode: &str) -> Value {
    json!({"operationType": "reset", "targetRef": target, "mode": mode})
}

#[tokio::test]
async fn a_reset_to_head_1_after_a_fast_forward_goes_where_plain_git_goes() {
    let rig = Rig::new();
    history(&rig);
    let twin = rig.twin("twin");
    let id = rig
        .propose(
            "plan",
            json!({"steps": [merge("feature"), reset("HEAD~1", "soft")]}),
        )
        .await
        .unwrap();
    let preview = rig.exec.preview(&id, &rig.cancel).await.unwrap();
    let feature = rig.git(&["rev-parse", "feature"]);
    let card = &preview["steps"][1];
    assert_eq!(card["startsFrom"]["head"]["oid"], feature.trim(), "{card}");
    assert_eq!(card["preview"]["headOid"], feature.trim(), "{card}");
    assert_eq!(card["preview"]["commitsLeftBehind"]["total"], 1, "{card}");
    rig.approve(&id);
    let record = rig.run(&id).await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    rig.fx.git(&twin, &["merge", "-q", "--no-edit", "feature"]);
    rig.fx.git(&twin, &["reset", "-q", "--soft", "HEAD~1"]);
    // No commit is made: the branches themselves must match.
    assert_eq!(state(&rig.fx, &rig.repo), state(&rig.fx, &twin));
}

#[tokio::test]
async fn a_merge_after_a_reset_is_previewed_and_run_on_the_reset_state() {
    let rig = Rig::new();
    history(&rig);
    let twin = rig.twin("twin");
    // On main as it is, `clash` conflicts and is no fast-forward; once main is back at
    // `clash`'s parent it is a clean fast-forward.
    let id = rig
        .propose(
            "plan",
            json!({"steps": [reset("HEAD~1", "hard"), merge("clash")]}),
        )
        .await
        .unwrap();
    let preview = rig.exec.preview(&id, &rig.cancel).await.unwrap();
    let card = &preview["steps"][1]["preview"];
    assert_eq!(card["fastForward"], true, "{preview}");
    assert_eq!(card["clean"], true, "{preview}");
    assert_eq!(card["targetOid"], rig.git(&["rev-parse", "HEAD~1"]).trim());
    rig.approve(&id);
    let record = rig.run(&id).await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    assert_eq!(result(&record)["steps"][1]["result"]["fastForward"], true);
    rig.fx.git(&twin, &["reset", "-q", "--hard", "HEAD~1"]);
    rig.fx.git(&twin, &["merge", "-q", "--no-edit", "clash"]);
    assert_eq!(state(&rig.fx, &rig.repo), state(&rig.fx, &twin));
}

#[tokio::test]
async fn names_relative_to_a_commit_made_only_as_the_plan_runs_are_refused_naming_the_step() {
    let rig = Rig::new();
    history(&rig);
    rig.fx.commit(&rig.repo, "m.txt", "mmm\n", "main moves on");
    for (second, field) in [
        (reset("HEAD~1", "soft"), "targetRef"),
        (reset("main^", "soft"), "targetRef"),
        (reset("ORIG_HEAD", "soft"), "targetRef"),
        (reset("@{1}", "mixed"), "targetRef"),
        (merge("HEAD~2"), "sourceRef"),
    ] {
        let err = rig
            .propose("plan", json!({"steps": [merge("feature"), second.clone()]}))
            .await
            .unwrap_err();
        assert!(
            err.contains(&format!(
                "step 2 ({})",
                second["operationType"].as_str().unwrap()
            )),
            "{err}"
        );
        assert!(
            err.contains(field) && err.contains("step 1 (merge)"),
            "{second}: {err}"
        );
    }
    // A name no step moves still reads as it is; the step is previewed when it runs.
    let twin = rig.twin("twin");
    let id = rig
        .propose(
            "plan",
            json!({"steps": [merge("feature"), reset("side", "soft")]}),
        )
        .await
        .unwrap();
    let preview = rig.exec.preview(&id, &rig.cancel).await.unwrap();
    assert_eq!(
        preview["steps"][1]["startsFrom"]["madeBy"]["step"], 1,
        "{preview}"
    );
    rig.approve(&id);
    let record = rig.run(&id).await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    rig.fx.git(&twin, &["merge", "-q", "--no-edit", "feature"]);
    rig.fx.git(&twin, &["reset", "-q", "--soft", "side"]);
    assert_eq!(
        content_state(&rig.fx, &rig.repo),
        content_state(&rig.fx, &twin)
    );
}

#[tokio::test]
async fn a_predicted_step_is_checked_again_right_before_it_runs() {
    let rig = Rig::new();
    history(&rig);
    // The merge's own hook moves the branch the next step resets to.
    write_executable(
        &rig.repo.join(".git/hooks/post-merge"),
        "#!/bin/sh\ngit branch -f side clash\n",
    );
    let id = rig
        .propose(
            "plan",
            json!({"steps": [merge("feature"), reset("side", "soft")]}),
        )
        .await
        .unwrap();
    let before = snapshot(&rig);
    rig.approve(&id);
    let record = rig.run(&id).await;
    assert_eq!(record.status, Status::Failed, "{record:?}");
    let r = result(&record);
    assert_eq!(r["failure"], "rolledBack", "{r}");
    assert_eq!(r["failedStep"], 2, "{r}");
    let message = r["steps"][1]["message"].as_str().unwrap();
    assert!(message.contains("targetOid"), "{message}");
    // The hook's own move is outside the plan; everything the plan did is undone.
    rig.git(&["branch", "-f", "side", "side@{1}"]);
    assert_eq!(snapshot(&rig), before);
}

#[tokio::test]
async fn a_discard_after_a_merge_commit_runs_on_the_merged_state_and_is_undone_by_one_restore() {
    let rig = Rig::new();
    history(&rig);
    rig.fx.commit(&rig.repo, "m.txt", "mmm\n", "main moves on");
    rig.fx
        .write(&rig.repo, "dir/b.txt", "local edit, discarded\n");
    let before = snapshot(&rig);
    let twin = rig.twin("twin");
    let discard = json!({"operationType": "discard", "paths": ["dir/b.txt"]});
    let id = rig
        .propose("plan", json!({"steps": [merge("feature"), discard]}))
        .await
        .unwrap();
    rig.approve(&id);
    let record = rig.run(&id).await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    rig.fx.git(&twin, &["merge", "-q", "--no-edit", "feature"]);
    rig.fx
        .git(&twin, &["restore", "--worktree", "--", "dir/b.txt"]);
    assert_eq!(
        content_state(&rig.fx, &rig.repo),
        content_state(&rig.fx, &twin)
    );
    let rp = result(&record)["restorePointId"]
        .as_str()
        .unwrap()
        .to_owned();
    rig.exec.restore(&rp, false, &rig.cancel).await.unwrap();
    assert_eq!(snapshot(&rig), before);
}
