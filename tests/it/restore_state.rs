//! Git's state of a rebase stopped on a conflict comes back whole with a restore: the
//! `rebase-merge/` directory and `REBASE_HEAD` (the commit git stopped on, which
//! `git rebase --show-current-patch` and `git status` read).

use gitward::gateway::server::restore::Caps;

use super::exec_ops::Rig;
use super::exec_restore::{restore_confirmed, take};

#[tokio::test]
async fn a_stopped_rebase_comes_back_with_the_commit_it_stopped_on() {
    let rig = Rig::new();
    rig.fx.commit(&rig.repo, "c.txt", "base\n", "c");
    rig.git(&["switch", "-q", "-c", "other", "HEAD~1"]);
    rig.fx.commit(&rig.repo, "c.txt", "other\n", "other c");
    rig.git(&["switch", "-q", "main"]);
    let stopped = rig.fx.git_output(&rig.repo, &["rebase", "-q", "other"]);
    assert!(!stopped.status.success(), "the rebase stops on c.txt");
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
