//! How a restore point keeps its objects: refs to HEAD's and each branch's commit, to the
//! worktree commit, and to one commit whose tree holds the index file, its tree and git's
//! state files. Everything survives `git gc --prune=now`, a point kept by the earlier
//! layout (refs straight at the index blob, its tree and each state file) restores the
//! same, and pruning removes every ref either layout made.

use std::collections::BTreeSet;
use std::time::Duration;

use gitward::gateway::server::restore::{self, Caps, Retention};
use jiff::Timestamp;
use serde_json::Value;

use super::exec_capture::{tree_git_would_store, whole_tree};
use super::exec_ops::Rig;
use super::exec_restore::{messy, open, restore_confirmed, snapshot, take, trample};

/// The refs under the point's directory, relative to it.
fn point_refs(rig: &Rig, id: &str) -> BTreeSet<String> {
    let base = format!("refs/gitward/restore/{id}/");
    rig.git(&["for-each-ref", "--format=%(refname)", &base])
        .lines()
        .map(|l| l.strip_prefix(&base).unwrap().to_owned())
        .collect()
}

/// Makes everything only the point knows unreachable from the repository's own refs
/// and reflogs, then prunes what is unreachable.
fn forget_and_gc(rig: &Rig) {
    rig.git(&["reflog", "expire", "--expire=now", "--all"]);
    rig.git(&["gc", "-q", "--prune=now"]);
}

async fn restore_by_id(rig: &Rig, id: &str) {
    let mut store = rig.store();
    let point = store.restore_point(id).unwrap().unwrap();
    restore_confirmed(rig, &mut store, &point).await;
}

#[tokio::test]
async fn a_point_keeps_its_index_and_merge_state_through_gc_and_restores_them() {
    let rig = Rig::new();
    messy(&rig);
    let before = snapshot(&rig);
    let mut store = rig.store();
    let refs = vec!["refs/heads/main".to_owned(), "refs/heads/side".to_owned()];
    let id = take(&rig, &mut store, &Caps::default(), &refs).await.0;
    let names = point_refs(&rig, &id);
    let want: BTreeSet<String> = [
        "HEAD",
        "objects",
        "refs/heads/main",
        "refs/heads/side",
        "worktree",
    ]
    .map(str::to_owned)
    .into();
    assert_eq!(names, want);
    let point = store.restore_point(&id).unwrap().unwrap();
    let captured = &point.captured;
    let objects = format!("refs/gitward/restore/{id}/objects");
    assert_eq!(
        rig.git(&["rev-parse", &format!("{objects}:index")]),
        captured["index"]["blob"].as_str().unwrap()
    );
    assert!(
        captured["index"]["tree"].is_null(),
        "a conflict has no tree"
    );
    let state = captured["state"].as_object().unwrap();
    assert!(state.contains_key("MERGE_HEAD"), "{state:?}");
    for (rel, oid) in state {
        let kept = rig.git(&["rev-parse", &format!("{objects}:state/{rel}")]);
        assert_eq!(Value::String(kept), *oid, "{rel}");
    }
    trample(&rig);
    rig.git(&["branch", "-q", "-D", "side"]);
    forget_and_gc(&rig);
    restore_by_id(&rig, &id).await;
    assert_eq!(snapshot(&rig), before);
}

/// Moves the point's refs to the earlier layout: HEAD and the branches as they are, the
/// worktree commit, and refs straight at the index blob, the index tree and each state
/// file, with nothing else left under the point.
fn to_earlier_layout(rig: &Rig, id: &str, captured: &Value) {
    let base = format!("refs/gitward/restore/{id}/");
    for name in point_refs(rig, id) {
        rig.git(&["update-ref", "-d", &format!("{base}{name}")]);
    }
    let mut refs = vec![
        ("HEAD".to_owned(), &captured["head"]["oid"]),
        ("index".to_owned(), &captured["index"]["blob"]),
        ("index-tree".to_owned(), &captured["index"]["tree"]),
        ("worktree".to_owned(), &captured["worktree"]["commit"]),
    ];
    for (name, oid) in captured["refs"].as_object().unwrap() {
        refs.push((name.clone(), oid));
    }
    for (i, oid) in captured["state"].as_object().unwrap().values().enumerate() {
        refs.push((format!("state/{i}"), oid));
    }
    for (name, oid) in refs {
        rig.git(&[
            "update-ref",
            &format!("{base}{name}"),
            oid.as_str().unwrap(),
        ]);
    }
}

#[tokio::test]
async fn a_point_in_the_earlier_layout_restores_after_gc_and_prunes_whole() {
    let rig = Rig::new();
    rig.fx
        .write(&rig.repo, "a.txt", "staged, never committed\n");
    rig.git(&["add", "a.txt"]);
    rig.fx.write(&rig.repo, "a.txt", "unstaged on top\n");
    rig.fx.write(&rig.repo, "u/new.txt", "untracked\n");
    std::fs::write(rig.repo.join(".git/MERGE_MSG"), "a message kept\n").unwrap();
    let before = snapshot(&rig);
    let mut store = rig.store();
    let refs = vec!["refs/heads/main".to_owned()];
    let id = take(&rig, &mut store, &Caps::default(), &refs).await.0;
    let point = store.restore_point(&id).unwrap().unwrap();
    assert!(point.captured["index"]["tree"].is_string());
    to_earlier_layout(&rig, &id, &point.captured);
    let names = point_refs(&rig, &id);
    assert!(
        names.contains("index") && names.contains("state/0"),
        "{names:?}"
    );
    rig.git(&["reset", "-q", "--hard", "HEAD~1"]);
    std::fs::remove_file(rig.repo.join("u/new.txt")).unwrap();
    // `reset --hard` may have removed it already.
    let _ = std::fs::remove_file(rig.repo.join(".git/MERGE_MSG"));
    forget_and_gc(&rig);
    restore_by_id(&rig, &id).await;
    assert_eq!(snapshot(&rig), before);
    let repo = open(&rig).await;
    let gone = Retention {
        keep_newest: 0,
        keep_for: Duration::ZERO,
    };
    let pruned = restore::prune(&mut store, &repo, &rig.cancel, Timestamp::now(), &gone)
        .await
        .unwrap();
    assert!(pruned.contains(&id), "{pruned:?}");
    let left = rig.git(&["for-each-ref", "refs/gitward/restore/"]);
    assert_eq!(left, "", "every ref of both layouts is pruned");
}

/// Changes of every kind beside a clean index: an edit, a removal, an untracked file, a
/// link and a file made executable.
fn changed_beside_a_clean_index(rig: &Rig) {
    rig.fx.write(&rig.repo, "a.txt", "edited\n");
    std::fs::remove_file(rig.repo.join("dir/b.txt")).unwrap();
    rig.fx.write(&rig.repo, "u/new.txt", "untracked\n");
    std::os::unix::fs::symlink("a.txt", rig.repo.join("u/link")).unwrap();
    rig.fx.write(&rig.repo, "run.sh", "#!/bin/sh\n");
    rig.git(&["add", "run.sh"]);
    rig.git(&["commit", "-q", "-m", "run"]);
    std::fs::set_permissions(
        rig.repo.join("run.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
}

#[tokio::test]
async fn a_point_stores_only_the_changes_beside_the_index_tree() {
    let rig = Rig::new();
    changed_beside_a_clean_index(&rig);
    let mut store = rig.store();
    let refs = vec!["refs/heads/main".to_owned()];
    let id = take(&rig, &mut store, &Caps::default(), &refs).await.0;
    let point = store.restore_point(&id).unwrap().unwrap();
    let worktree = &point.captured["worktree"];
    assert_eq!(worktree["base"], point.captured["index"]["tree"]);
    assert!(worktree["tree"].is_null(), "{worktree}");
    let changes = worktree["changes"].as_str().unwrap();
    assert_eq!(
        rig.git(&[
            "rev-parse",
            &format!("refs/gitward/restore/{id}/worktree^{{tree}}")
        ]),
        changes
    );
    let stored = rig.git(&["ls-tree", "-r", "--format=%(objectmode) %(path)", changes]);
    assert_eq!(
        stored.lines().collect::<Vec<_>>(),
        [
            "100644 removed",
            "100644 worktree/a.txt",
            "100755 worktree/run.sh",
            "120000 worktree/u/link",
            "100644 worktree/u/new.txt",
        ]
    );
    let removed = rig.git(&["cat-file", "blob", &format!("{changes}:removed")]);
    assert_eq!(removed, "dir/b.txt\0");
    // The whole tree is made when a restore needs it, the same each time, and kept by a
    // ref of the point.
    let whole = whole_tree(&rig, &point).await;
    assert_eq!(whole, tree_git_would_store(&rig));
    let kept = format!("refs/gitward/restore/{id}/tree");
    let commit = rig.git(&["rev-parse", &kept]);
    assert_eq!(rig.git(&["rev-parse", &format!("{kept}^{{tree}}")]), whole);
    assert_eq!(whole_tree(&rig, &point).await, whole);
    assert_eq!(
        rig.git(&["rev-parse", &kept]),
        commit,
        "made again, the same"
    );
}

#[tokio::test]
async fn a_point_recorded_with_its_whole_worktree_tree_restores_after_gc() {
    let rig = Rig::new();
    changed_beside_a_clean_index(&rig);
    let before = snapshot(&rig);
    let mut store = rig.store();
    let refs = vec!["refs/heads/main".to_owned()];
    let id = take(&rig, &mut store, &Caps::default(), &refs).await.0;
    let point = store.restore_point(&id).unwrap().unwrap();
    // As points were recorded before only the changes were stored: the worktree commit's
    // tree is the whole worktree, and the record names it.
    let whole = whole_tree(&rig, &point).await;
    let base = format!("refs/gitward/restore/{id}/");
    rig.git(&["update-ref", "-d", &format!("{base}tree")]);
    let commit = rig.git(&["commit-tree", "-m", "worktree", &whole]);
    rig.git(&["update-ref", &format!("{base}worktree"), &commit]);
    let mut captured = point.captured.clone();
    captured["worktree"] = serde_json::json!({
        "commit": commit,
        "tree": whole,
        "hashed": point.captured["worktree"]["hashed"],
    });
    store.update_restore_point_captured(&id, &captured).unwrap();
    rig.git(&["reset", "-q", "--hard", "HEAD~1"]);
    std::fs::remove_file(rig.repo.join("u/new.txt")).unwrap();
    forget_and_gc(&rig);
    restore_by_id(&rig, &id).await;
    assert_eq!(snapshot(&rig), before);
    assert!(
        !point_refs(&rig, &id).contains("tree"),
        "a whole tree is never made again"
    );
}
