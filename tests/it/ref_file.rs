//! The in-process ref reader against plain git, in the states a pin meets: HEAD on a
//! branch, detached and unborn; loose and packed refs (a loose one wins); a linked
//! worktree's own HEAD; refs that are not there; names it leaves to git.

use std::path::Path;

use gitward::git::Oid;
use gitward::git::ref_file::{RefValue, read};

use super::exec_ops::Rig;

async fn at(rig: &Rig, dir: &Path, name: &str) -> Option<RefValue> {
    let repo = gitward::git::repo::open(
        rig.exec.config(),
        "repoPath",
        &dir.display().to_string(),
        &rig.cancel,
    )
    .await
    .unwrap();
    read(&repo, name)
}

fn oid(rig: &Rig, dir: &Path, rev: &str) -> Oid {
    Oid::parse(&rig.fx.git(dir, &["rev-parse", rev])).unwrap()
}

#[tokio::test]
async fn refs_read_from_their_files_are_what_git_says() {
    let rig = Rig::new();
    let repo = rig.repo.clone();
    let head = oid(&rig, &repo, "HEAD");
    let on_main = RefValue::Symbolic {
        target: "refs/heads/main".into(),
        oid: Some(head.clone()),
    };
    assert_eq!(at(&rig, &repo, "HEAD").await, Some(on_main.clone()));
    rig.git(&["branch", "side", "HEAD~1"]);
    let side = oid(&rig, &repo, "side");
    assert_eq!(
        at(&rig, &repo, "refs/heads/side").await,
        Some(RefValue::At(side.clone()))
    );

    rig.git(&["pack-refs", "--all"]);
    assert!(!repo.join(".git/refs/heads/side").exists());
    assert_eq!(at(&rig, &repo, "HEAD").await, Some(on_main));
    assert_eq!(
        at(&rig, &repo, "refs/heads/side").await,
        Some(RefValue::At(side))
    );
    // A loose ref written after packing is the ref's value.
    rig.git(&["update-ref", "refs/heads/side", "HEAD"]);
    assert_eq!(
        at(&rig, &repo, "refs/heads/side").await,
        Some(RefValue::At(head.clone()))
    );
    assert_eq!(
        at(&rig, &repo, "refs/heads/none").await,
        Some(RefValue::Absent)
    );
    assert_eq!(at(&rig, &repo, "refs/bisect/bad").await, None);

    rig.git(&["switch", "-q", "--detach", "HEAD~1"]);
    let detached = oid(&rig, &repo, "HEAD");
    assert_eq!(at(&rig, &repo, "HEAD").await, Some(RefValue::At(detached)));
    rig.git(&["switch", "-q", "--orphan", "fresh"]);
    assert_eq!(
        at(&rig, &repo, "HEAD").await,
        Some(RefValue::Symbolic {
            target: "refs/heads/fresh".into(),
            oid: None
        })
    );

    let linked = rig.fx.path("linked");
    rig.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "wt",
        &linked.display().to_string(),
        "main",
    ]);
    assert_eq!(
        at(&rig, &linked, "HEAD").await,
        Some(RefValue::Symbolic {
            target: "refs/heads/wt".into(),
            oid: Some(head)
        })
    );
}
