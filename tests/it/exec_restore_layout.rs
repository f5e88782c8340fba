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
