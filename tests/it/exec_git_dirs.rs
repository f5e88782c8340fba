//! No write reaches into a git directory, and a write lands only in the repository its
//! proposal was made for (executor level, real git).

use gitward::gateway::api::{FailureKind, Status};
use serde_json::json;

use super::exec_ops::Rig;

#[tokio::test]
async fn a_worktree_is_never_created_inside_a_git_directory() {
    let rig = Rig::new();
    let git_dir = rig.repo.join(".git");
    for inside in [git_dir.join("wt"), git_dir.join("hooks-new")] {
        let refused = rig
            .propose("worktree", json!({"branch": "agent/x", "path": inside}))
            .await
            .unwrap_err();
        assert!(refused.contains("inside a git directory"), "{refused}");
        assert!(!inside.exists());
    }
    // Through a symbolic link to the git directory, too.
    std::os::unix::fs::symlink(&git_dir, rig.fx.path("to-git")).unwrap();
    let refused = rig
        .propose(
            "worktree",
            json!({"branch": "agent/x", "path": rig.fx.path("to-git/wt")}),
        )
        .await
        .unwrap_err();
    assert!(refused.contains("inside a git directory"), "{refused}");
    // Beside the repository it is made.
    let beside = rig.fx.path("wt-ok");
    let record = rig
        .execute("worktree", json!({"branch": "agent/x", "path": beside}))
        .await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
}

#[tokio::test]
async fn discard_refuses_paths_inside_a_git_directory() {
    let rig = Rig::new();
    let config = std::fs::read(rig.repo.join(".git/config")).unwrap();
    for path in [
        ".git/config",
        ".git/HEAD",
        ".git/index",
        ".git/refs/heads",
        ".GIT/config",
    ] {
        let refused = rig
            .propose("discard", json!({"paths": [path]}))
            .await
            .unwrap_err();
        assert!(refused.contains("git directory"), "{path}: {refused}");
    }
    // A symbolic link in the worktree that leads into the git directory.
    std::os::unix::fs::symlink(".git", rig.repo.join("link")).unwrap();
    let refused = rig
        .propose("discard", json!({"paths": ["link/config"]}))
        .await
        .unwrap_err();
    assert!(refused.contains("git directory"), "{refused}");
    assert_eq!(std::fs::read(rig.repo.join(".git/config")).unwrap(), config);
}

#[tokio::test]
async fn a_repository_replaced_after_the_proposal_is_not_written() {
    let rig = Rig::new();
    // Another repository in the same state, inside the same roots.
    let other = rig.fx.clone(&rig.repo, "other", false);
    let before = rig.fx.git(&other, &["rev-parse", "HEAD"]);
    rig.fx.write(&rig.repo, "a.txt", "changed\n");
    rig.fx.write(&other, "a.txt", "changed\n");
    let id = rig
        .propose("commit", json!({"message": "m", "stageAll": true}))
        .await
        .unwrap();
    // The approved folder becomes a symbolic link to the other repository.
    let moved = rig.fx.path("repo-moved");
    std::fs::rename(&rig.repo, &moved).unwrap();
    std::os::unix::fs::symlink(&other, &rig.repo).unwrap();
    rig.approve(&id);
    let record = rig.run(&id).await;
    assert_eq!(record.status, Status::Failed, "{record:?}");
    assert_eq!(
        record.result.as_ref().unwrap().failure,
        Some(FailureKind::Stale),
        "{record:?}"
    );
    assert_eq!(rig.fx.git(&other, &["rev-parse", "HEAD"]), before);
}

#[tokio::test]
async fn submodule_pointer_acts_only_on_the_submodule_git_manages_at_that_path() {
    let rig = Rig::new();
    let (first, second) = crate::op_setup::drifted(&rig.fx, &rig.repo, "src/lib");
    let sub = rig.repo.join("libs/lib");
    // Another repository with the same commits, checked out where the submodule is.
    let other = rig.fx.clone(&sub, "other", false);
    rig.fx.git(&other, &["checkout", "-q", "--detach", &second]);
    let fields = json!({"action": "return", "relativePath": "libs/lib"});

    // The submodule's `.git` file points at the other repository's git directory.
    let gitfile = sub.join(".git");
    let own = std::fs::read(&gitfile).unwrap();
    let foreign = format!("gitdir: {}\n", other.join(".git").display());
    std::fs::write(&gitfile, foreign).unwrap();
    let refused = rig.propose("submodulePointer", fields.clone()).await;
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.contains("not the submodule git manages")),
        "{refused:?}"
    );
    std::fs::write(&gitfile, own).unwrap();

    // The submodule's path is a symbolic link to the other repository.
    let aside = rig.fx.path("lib-aside");
    std::fs::rename(&sub, &aside).unwrap();
    std::os::unix::fs::symlink(&other, &sub).unwrap();
    let refused = rig.propose("submodulePointer", fields.clone()).await;
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.contains("not the submodule git manages")),
        "{refused:?}"
    );
    assert_eq!(rig.fx.git(&other, &["rev-parse", "HEAD"]), second);
    std::fs::remove_file(&sub).unwrap();
    std::fs::rename(&aside, &sub).unwrap();

    // The submodule itself is still taken back.
    let record = rig.execute("submodulePointer", fields).await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    assert_eq!(rig.fx.git(&sub, &["rev-parse", "HEAD"]), first);
}
