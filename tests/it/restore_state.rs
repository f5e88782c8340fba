//! A person's rebase stopped on a conflict is theirs: a restore point keeps it whole (the
//! `rebase-merge/` directory and `REBASE_HEAD`, the commit git stopped on, which
//! `git rebase --show-current-patch` and `git status` read), and an approved rebase that
//! git refuses because of it leaves it as it was, as plain `git rebase` does.

use gitward::gateway::api::Status;
use gitward::gateway::server::restore::Caps;
use serde_json::json;

use super::exec_ops::Rig;
use super::exec_restore::{restore_confirmed, take};

/// A rig whose `main` is mid-rebase onto `other`, stopped on `c.txt`; `clean` is main
/// with one more commit.
fn stopped_rebase() -> Rig {
    let rig = Rig::new();
    rig.fx.commit(&rig.repo, "c.txt", "base\n", "c");
    rig.git(&["switch", "-q", "-c", "other", "HEAD~1"]);
    rig.fx.commit(&rig.repo, "c.txt", "other\n", "other c");
    rig.git(&["switch", "-q", "-c", "clean", "main"]);
    rig.fx
        .commit(&rig.repo, "clean.txt", "clean\n", "clean work");
    rig.git(&["switch", "-q", "main"]);
    let stopped = rig.fx.git_output(&rig.repo, &["rebase", "-q", "other"]);
    assert!(!stopped.status.success(), "the rebase stops on c.txt");
    rig
}

#[tokio::test]
async fn a_rebase_git_refuses_over_a_stopped_one_leaves_that_one_alone() {
    let rig = stopped_rebase();
    let todo = std::fs::read(rig.repo.join(".git/rebase-merge/git-rebase-todo")).ok();
    let rebase_head = std::fs::read(rig.repo.join(".git/REBASE_HEAD")).unwrap();
    let id = rig.propose("rebase", json!({"ontoRef": "clean"})).await;
    let id = id.unwrap_or_else(|e| panic!("refused: {e}"));
    rig.approve(&id);
    let record = rig.run(&id).await;
    assert_eq!(record.status, Status::Failed, "{record:?}");
    let message = record.result.unwrap().fields["message"].to_string();
    assert!(message.contains("rebase-merge"), "git's refusal: {message}");
    assert!(
        rig.repo.join(".git/rebase-merge").is_dir(),
        "the person's rebase is still there"
    );
    assert_eq!(
        std::fs::read(rig.repo.join(".git/rebase-merge/git-rebase-todo")).ok(),
        todo
    );
    assert_eq!(
        std::fs::read(rig.repo.join(".git/REBASE_HEAD")).unwrap(),
        rebase_head
    );
}

#[tokio::test]
async fn a_stopped_rebase_comes_back_with_the_commit_it_stopped_on() {
    let rig = stopped_rebase();
    let rebase_head = std::fs::read(rig.repo.join(".git/REBASE_HEAD")).unwrap();
    let mut store = rig.store();
    let id = take(
        &rig,
        &mut store,
        &Caps::default(),
        &["refs/heads/main".into()],
    )
    .await;
    rig.git(&["rebase", "--abort"]);
    assert!(!rig.repo.join(".git/REBASE_HEAD").exists());
    let point = store.restore_point(&id.0).unwrap().unwrap();
    restore_confirmed(&rig, &mut store, &point).await;
    assert!(rig.repo.join(".git/rebase-merge").is_dir());
    assert_eq!(
        std::fs::read(rig.repo.join(".git/REBASE_HEAD")).ok(),
        Some(rebase_head)
    );
    assert!(
        rig.git(&["status"]).contains("rebasing"),
        "git sees the rebase again"
    );
}
