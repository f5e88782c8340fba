//! A restore point writes only the trees that changed since the index's cache tree, and
//! they are exactly the trees git writes: the index's as `git write-tree` would, the
//! worktree's as `git add -A` then `write-tree` would, after a partial `git add`, in a
//! conflict, with a pruned cached tree, or too deep to take the short way, and a restore
//! from such a point puts every byte back.

use std::os::unix::fs::PermissionsExt;

use gitward::gateway::server::restore::{self, Caps, Capture, Steps};
use gitward::gateway::server::store::RestorePoint;
use gitward::git::{ObjectFormat, index_entries};
use jiff::Timestamp;

use super::exec_capture::tree_git_would_store;
use super::exec_ops::Rig;
use super::exec_restore::tree_of;

/// The tree `git write-tree` makes of a copy of the index (`None` when git refuses).
fn index_tree_git_would_write(rig: &Rig) -> Option<String> {
    let copy = rig.fx.path("index-for-write-tree");
    std::fs::copy(rig.repo.join(".git/index"), &copy).unwrap();
    let out = std::process::Command::new("git")
        .current_dir(&rig.repo)
        .arg("write-tree")
        .envs(rig.fx.env())
        .env("GIT_INDEX_FILE", &copy)
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8(out.stdout).unwrap().trim().to_owned())
}

/// A restore point of the rig's repository and the names of the steps it took.
async fn taken(rig: &Rig) -> (RestorePoint, Vec<&'static str>) {
    let repo = gitward::git::repo::open(
        rig.exec.config(),
        "repoPath",
        &rig.repo.display().to_string(),
        &rig.cancel,
    )
    .await
    .unwrap();
    let refs = vec!["refs/heads/main".to_owned()];
    let caps = Caps::default();
    let what = Capture {
        refs: &refs,
        preview_id: None,
        operation_type: Some("test"),
        caps: &caps,
    };
    let steps = Steps::default();
    let mut store = rig.store();
    let point = restore::take_timed(
        &mut store,
        &repo,
        &rig.cancel,
        &what,
        Timestamp::now(),
        &steps,
    )
    .await
    .unwrap();
    (point, steps.list().iter().map(|s| s.name).collect())
}

/// Both trees of `point` against what git writes, and whether the short way was taken.
fn assert_trees_as_git(rig: &Rig, point: &RestorePoint, steps: &[&str], short_way: bool) {
    let captured = &point.captured;
    assert_eq!(
        captured["index"]["tree"].as_str().map(str::to_owned),
        index_tree_git_would_write(rig),
        "index tree"
    );
    assert_eq!(
        captured["worktree"]["tree"].as_str().unwrap(),
        tree_git_would_store(rig),
        "worktree tree"
    );
    assert!(steps.contains(&"trees"), "{steps:?}");
    assert_eq!(steps.contains(&"index copy"), !short_way, "{steps:?}");
}

/// Nested directories, committed: the index's cache tree is whole.
fn nested(rig: &Rig) {
    for (rel, text) in [
        ("deep/x/y/f1.txt", "f1\n"),
        ("deep/x/y/f2.txt", "f2\n"),
        ("deep/x/g.sh", "#!/bin/sh\n"),
        ("deep/z.txt", "z\n"),
        ("other/h.txt", "h\n"),
        ("other/i.txt", "i\n"),
        ("gone/only.txt", "only\n"),
        ("top.txt", "top\n"),
    ] {
        rig.fx.write(&rig.repo, rel, text);
    }
    rig.git(&["add", "-A"]);
    rig.git(&["commit", "-q", "-m", "nested"]);
}

/// Changes of every kind, some staged (which drops the cached trees above them), some
/// not (in directories whose trees git still has cached).
fn partly_added(rig: &Rig) {
    rig.fx.write(&rig.repo, "deep/x/y/f1.txt", "f1 staged\n");
    rig.fx.write(&rig.repo, "staged/new.txt", "staged new\n");
    rig.git(&["add", "deep/x/y/f1.txt", "staged/new.txt"]);
    rig.fx
        .write(&rig.repo, "deep/x/y/f1.txt", "f1 staged, then edited\n");
    rig.fx
        .write(&rig.repo, "other/h.txt", "h edited in a cached tree\n");
    rig.fx.write(&rig.repo, "fresh/dir/n.txt", "untracked\n");
    rig.fx.write(&rig.repo, "ita.txt", "intent to add\n");
    rig.git(&["add", "-N", "ita.txt"]);
    std::fs::remove_file(rig.repo.join("gone/only.txt")).unwrap();
    std::fs::remove_file(rig.repo.join("top.txt")).unwrap();
    std::fs::set_permissions(
        rig.repo.join("deep/x/g.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::os::unix::fs::symlink("deep/z.txt", rig.repo.join("other/link")).unwrap();
}

#[tokio::test]
async fn a_partial_add_and_changes_in_cached_trees_store_the_trees_git_writes() {
    let rig = Rig::new();
    nested(&rig);
    // Nothing changed: both trees are the cached one, and no tree is written.
    let (point, steps) = taken(&rig).await;
    assert_eq!(
        point.captured["index"]["tree"],
        point.captured["worktree"]["tree"]
    );
    assert_trees_as_git(&rig, &point, &steps, true);
    partly_added(&rig);
    // The staged edit dropped the cached trees above it; `other` is still cached.
    let bytes = std::fs::read(rig.repo.join(".git/index")).unwrap();
    let parsed = index_entries::parse(&bytes, ObjectFormat::Sha1).unwrap();
    for (dir, cached) in [
        ("", false),
        ("deep/x", false),
        ("deep/x/y", false),
        ("other", true),
    ] {
        assert_eq!(
            parsed.cached.contains_key(dir.as_bytes()),
            cached,
            "{dir:?}"
        );
    }
    assert_eq!(parsed.conflicted.len(), 0);
    assert!(
        !parsed.files.iter().any(|e| e.path == b"ita.txt"),
        "intent-to-add is not stored"
    );
    let (point, steps) = taken(&rig).await;
    assert_ne!(
        point.captured["index"]["tree"],
        point.captured["worktree"]["tree"]
    );
    assert_trees_as_git(&rig, &point, &steps, true);
}

#[tokio::test]
async fn a_point_with_only_the_changed_trees_written_restores_every_byte() {
    let rig = Rig::new();
    nested(&rig);
    partly_added(&rig);
    let files = tree_of(&rig.repo);
    let index = std::fs::read(rig.repo.join(".git/index")).unwrap();
    let (point, steps) = taken(&rig).await;
    assert!(steps.contains(&"trees"), "{steps:?}");
    rig.git(&["gc", "-q", "--prune=now"]);
    rig.fx.write(&rig.repo, "other/h.txt", "trampled\n");
    rig.fx.write(&rig.repo, "deep/x/y/f2.txt", "trampled\n");
    std::fs::remove_file(rig.repo.join("fresh/dir/n.txt")).unwrap();
    rig.git(&["add", "-A"]);
    rig.git(&["commit", "-q", "-m", "trample"]);
    let repo = gitward::git::repo::open(
        rig.exec.config(),
        "repoPath",
        &rig.repo.display().to_string(),
        &rig.cancel,
    )
    .await
    .unwrap();
    let mut store = rig.store();
    restore::restore_in(
        &mut store,
        &repo,
        &point,
        true,
        &rig.cancel,
        Timestamp::now(),
    )
    .await
    .unwrap();
    assert_eq!(tree_of(&rig.repo), files);
    assert_eq!(std::fs::read(rig.repo.join(".git/index")).unwrap(), index);
}

#[tokio::test]
async fn a_conflict_has_no_index_tree_and_the_worktree_takes_the_files_on_disk() {
    let rig = Rig::new();
    nested(&rig);
    rig.fx.commit(&rig.repo, "deep/x/c.txt", "base\n", "c");
    rig.git(&["switch", "-q", "-c", "side"]);
    rig.fx.commit(&rig.repo, "deep/x/c.txt", "side\n", "side c");
    rig.git(&["switch", "-q", "main"]);
    rig.fx.commit(&rig.repo, "deep/x/c.txt", "main\n", "main c");
    assert!(
        !rig.fx
            .git_output(&rig.repo, &["merge", "side"])
            .status
            .success()
    );
    rig.fx.write(&rig.repo, "other/h.txt", "h edited\n");
    let (point, steps) = taken(&rig).await;
    assert!(point.captured["index"]["tree"].is_null());
    assert_trees_as_git(&rig, &point, &steps, true);
}

#[tokio::test]
async fn a_cached_top_tree_gone_from_the_object_database_is_not_reused() {
    let rig = Rig::new();
    nested(&rig);
    rig.fx
        .write(&rig.repo, "other/h.txt", "staged, never committed\n");
    rig.git(&["add", "other/h.txt"]);
    // `write-tree` records its trees in the index's cache tree; then the top one goes.
    let top = rig.git(&["write-tree"]);
    let loose = rig
        .repo
        .join(".git/objects")
        .join(&top[..2])
        .join(&top[2..]);
    std::fs::remove_file(&loose).unwrap();
    let (point, steps) = taken(&rig).await;
    assert_eq!(point.captured["index"]["tree"].as_str(), Some(top.as_str()));
    assert!(loose.exists(), "the top tree was written again");
    // git writes it again on an index copy, as it would not reuse it either.
    assert_trees_as_git(&rig, &point, &steps, false);
}

#[tokio::test]
async fn changes_too_deep_for_the_short_way_go_through_an_index_copy() {
    let rig = Rig::new();
    nested(&rig);
    rig.fx
        .write(&rig.repo, "a/b/c/d/e/f/g/h.txt", "deep and untracked\n");
    rig.fx.write(&rig.repo, "other/h.txt", "h edited\n");
    let (point, steps) = taken(&rig).await;
    assert_trees_as_git(&rig, &point, &steps, false);
}
