//! A restore point's trees are exactly the trees git writes: the index's as
//! `git write-tree` would, the worktree's as `git add -A` then `write-tree` would, after
//! a partial `git add` that dropped cached trees, with changes in directories whose trees
//! git still has cached, in a conflict, and with a cached tree pruned from the object
//! database; a restore from such a point puts every byte back.

use std::os::unix::fs::PermissionsExt;

use gitward::gateway::server::restore::Caps;
use gitward::gateway::server::store::RestorePoint;

use super::exec_capture::{tree_git_would_store, whole_tree};
use super::exec_ops::Rig;
use super::exec_restore::{restore_confirmed, tree_of, try_take};

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

/// A restore point of the rig's repository.
async fn taken(rig: &Rig) -> RestorePoint {
    let refs = ["refs/heads/main".to_owned()];
    try_take(rig, &mut rig.store(), &Caps::default(), &refs)
        .await
        .unwrap()
}

/// Both trees of `point` against what git writes.
async fn assert_trees_as_git(rig: &Rig, point: &RestorePoint) {
    let captured = &point.captured;
    assert_eq!(
        captured["index"]["tree"].as_str().map(str::to_owned),
        index_tree_git_would_write(rig),
        "index tree"
    );
    assert_eq!(
        whole_tree(rig, point).await,
        tree_git_would_store(rig),
        "worktree tree"
    );
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
    let point = taken(&rig).await;
    assert_eq!(
        point.captured["index"]["tree"].as_str().unwrap(),
        whole_tree(&rig, &point).await
    );
    assert_trees_as_git(&rig, &point).await;
    partly_added(&rig);
    let point = taken(&rig).await;
    assert_ne!(
        point.captured["index"]["tree"].as_str().unwrap(),
        whole_tree(&rig, &point).await
    );
    assert_trees_as_git(&rig, &point).await;
}

#[tokio::test]
async fn a_point_after_a_partial_add_restores_every_byte_after_gc() {
    let rig = Rig::new();
    nested(&rig);
    partly_added(&rig);
    let files = tree_of(&rig.repo);
    let index = std::fs::read(rig.repo.join(".git/index")).unwrap();
    let point = taken(&rig).await;
    rig.git(&["gc", "-q", "--prune=now"]);
    rig.fx.write(&rig.repo, "other/h.txt", "trampled\n");
    rig.fx.write(&rig.repo, "deep/x/y/f2.txt", "trampled\n");
    std::fs::remove_file(rig.repo.join("fresh/dir/n.txt")).unwrap();
    rig.git(&["add", "-A"]);
    rig.git(&["commit", "-q", "-m", "trample"]);
    let mut store = rig.store();
    restore_confirmed(&rig, &mut store, &point).await;
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
    let point = taken(&rig).await;
    assert!(point.captured["index"]["tree"].is_null());
    assert_trees_as_git(&rig, &point).await;
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
    let point = taken(&rig).await;
    assert_eq!(point.captured["index"]["tree"].as_str(), Some(top.as_str()));
    assert!(loose.exists(), "the top tree was written again");
    assert_trees_as_git(&rig, &point).await;
}

/// Names fast-import must be given quoted: quotes, backslashes, control characters, a
/// newline, a leading quote or space, and bytes beyond ASCII.
const ODD_NAMES: &[&str] = &[
    "quote\"d.txt",
    "back\\slash.txt",
    "new\nline.txt",
    "tab\tname.txt",
    "ctl\u{1}char.txt",
    "\"leading-quote.txt",
    " leading space.txt",
    "ünïcödé/fïlé.txt",
    "dir with space/inner file.txt",
];

#[tokio::test]
async fn odd_path_names_are_stored_as_git_stores_them_and_come_back() {
    let rig = Rig::new();
    rig.fx
        .write(&rig.repo, "tracked \"odd\"\\name.txt", "before\n");
    rig.git(&["add", "-A"]);
    rig.git(&["commit", "-q", "-m", "odd"]);
    rig.fx
        .write(&rig.repo, "tracked \"odd\"\\name.txt", "after\n");
    for (i, name) in ODD_NAMES.iter().enumerate() {
        rig.fx.write(&rig.repo, name, &format!("odd {i}\n"));
    }
    let files = tree_of(&rig.repo);
    let point = taken(&rig).await;
    assert_trees_as_git(&rig, &point).await;
    assert_eq!(
        point.captured["worktree"]["hashed"].as_u64(),
        Some(ODD_NAMES.len() as u64 + 1)
    );
    for name in ODD_NAMES {
        std::fs::remove_file(rig.repo.join(name)).unwrap();
    }
    rig.fx
        .write(&rig.repo, "tracked \"odd\"\\name.txt", "trampled\n");
    let mut store = rig.store();
    restore_confirmed(&rig, &mut store, &point).await;
    assert_eq!(tree_of(&rig.repo), files);
}
