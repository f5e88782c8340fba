//! `merge`, `discard`, `reset` and `plan` executed by the gateway's executor (library
//! level, real git): the repository ends exactly as the same plain git commands leave a
//! copy of it, the restore point puts every byte back, a pin that moved fails `stale`
//! with nothing written, and a refusal leaves the repository as it was.

use std::collections::BTreeMap;
use std::path::Path;

use gitward::gateway::api::{FailureKind, Status, StatusRecord};
use serde_json::{Value, json};

use super::exec_ops::{Rig, content_state};
use super::exec_restore::tree_of;
use crate::common::Fixture;

/// Everything a restore must put back: files, the index file, HEAD, the branches and the
/// stash.
pub fn snapshot(rig: &Rig) -> Value {
    snapshot_at(&rig.fx, &rig.repo)
}

/// [`snapshot`] of any fixture repository.
pub fn snapshot_at(fx: &Fixture, repo: &Path) -> Value {
    let files: BTreeMap<String, Value> = tree_of(repo)
        .into_iter()
        .map(|(k, (m, b))| (k, json!([m, String::from_utf8_lossy(&b)])))
        .collect();
    let git_dir = repo.join(".git");
    let state = ["MERGE_HEAD", "SQUASH_MSG", "rebase-merge"].map(|f| git_dir.join(f).exists());
    json!({
        "files": files,
        "index": format!("{:x?}", std::fs::read(git_dir.join("index")).unwrap()),
        "head": std::fs::read_to_string(git_dir.join("HEAD")).unwrap(),
        "refs": fx.git(repo, &["for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/stash"]),
        "state": state,
    })
}

/// [`snapshot`] with the index's entries instead of its bytes.
fn logical(rig: &Rig) -> Value {
    let mut s = snapshot(rig);
    s["index"] = json!(rig.git(&["ls-files", "-s"]));
    s
}

/// main: c1 a.txt, c2 dir/b.txt, c3 a.txt gains `main`; `side` (from c3) adds c.txt;
/// `feature` (from c3) adds e.txt; `clash` (from c2) gives a.txt another third line.
pub fn history(rig: &Rig) {
    history_in(&rig.fx, &rig.repo);
}

/// [`history`] in any fixture repository.
pub fn history_in(fx: &Fixture, r: &Path) {
    let git = |args: &[&str]| fx.git(r, args);
    git(&["switch", "-q", "-c", "clash"]);
    fx.commit(r, "a.txt", "one\ntwo\nclash\n", "clash a");
    git(&["switch", "-q", "main"]);
    fx.commit(r, "a.txt", "one\ntwo\nmain\n", "main a");
    git(&["switch", "-q", "-c", "side"]);
    fx.commit(r, "c.txt", "sea\n", "side c");
    fx.commit(r, "c.txt", "sea\nmore\n", "side c again");
    git(&["switch", "-q", "-c", "feature", "main"]);
    fx.commit(r, "e.txt", "eee\n", "feature e");
    git(&["switch", "-q", "main"]);
}

pub fn result(record: &StatusRecord) -> Value {
    serde_json::to_value(record.result.as_ref().unwrap()).unwrap()
}

/// What a stale result names as moved (each `moved[].what`), in order.
pub fn moved(result: &Value) -> Vec<&str> {
    result["moved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["what"].as_str().unwrap())
        .collect()
}

fn restore_point(record: &StatusRecord) -> String {
    record
        .result
        .as_ref()
        .unwrap()
        .restore_point_id
        .clone()
        .unwrap()
}

async fn restores_every_byte(rig: &Rig, record: &StatusRecord, before: &Value) {
    let rp = restore_point(record);
    rig.exec.restore(&rp, false, &rig.cancel).await.unwrap();
    assert_eq!(&snapshot(rig), before, "restoring {rp}");
}

#[tokio::test]
async fn each_merge_strategy_is_what_plain_git_makes_and_is_undone_by_its_restore_point() {
    for (strategy, source, plain) in [
        ("merge", "side", vec![vec!["merge", "--no-edit", "side"]]),
        ("merge", "clash~1", vec![]),
        (
            "squash",
            "side",
            vec![
                vec!["merge", "--squash", "side"],
                vec!["commit", "--no-edit"],
            ],
        ),
        (
            "rebase",
            "side",
            vec![
                vec!["rebase", "main", "side"],
                vec!["switch", "main"],
                vec!["merge", "--ff-only", "side"],
            ],
        ),
    ] {
        let rig = Rig::new();
        history(&rig);
        if strategy != "rebase" {
            // A merge carries unrelated local edits over; a rebase wants a clean worktree.
            rig.fx.write(&rig.repo, "dir/b.txt", "local edit, kept\n");
        }
        let before = snapshot(&rig);
        let twin = rig.twin("twin");
        let side_tip = rig.git(&["rev-parse", "side"]);
        let proposed = rig
            .propose(
                "merge",
                json!({"sourceRef": source, "targetRef": "main", "strategy": strategy}),
            )
            .await;
        if plain.is_empty() {
            // Already contained in main: refused when proposed, naming the field.
            let err = proposed.unwrap_err();
            assert!(
                err.contains("sourceRef") && err.contains("already merged"),
                "{err}"
            );
            continue;
        }
        let id = proposed.unwrap();
        let preview = rig.exec.preview(&id, &rig.cancel).await.unwrap();
        assert_eq!(preview["clean"], true, "{preview}");
        assert_eq!(preview["commitsToMerge"], 2, "{preview}");
        assert_eq!(
            preview["files"],
            json!([{"path": "c.txt", "status": "added"}])
        );
        rig.approve(&id);
        let record = rig.run(&id).await;
        assert_eq!(record.status, Status::Completed, "{strategy}: {record:?}");
        let r = result(&record);
        assert_eq!(r["commitSha"], rig.git(&["rev-parse", "HEAD"]), "{r}");
        assert_eq!(r["conflicts"], json!([]));
        for args in plain {
            rig.fx.git(&twin, &args);
        }
        if strategy == "rebase" {
            // The source branch itself never moves; the twin's plain rebase moved its own.
            assert_eq!(rig.git(&["rev-parse", "side"]), side_tip);
            assert_eq!(
                rig.git(&["log", "--format=%s", "-3"]),
                rig.fx.git(&twin, &["log", "--format=%s", "-3"])
            );
        }
        assert_eq!(
            content_state(&rig.fx, &rig.repo),
            content_state(&rig.fx, &twin),
            "{strategy}"
        );
        restores_every_byte(&rig, &record, &before).await;
    }
}

#[tokio::test]
async fn a_fast_forward_merge_moves_the_branch_to_the_source() {
    let rig = Rig::new();
    history(&rig);
    let record = rig
        .execute(
            "merge",
            json!({"sourceRef": "feature", "targetRef": "main"}),
        )
        .await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    assert_eq!(result(&record)["fastForward"], true);
    assert_eq!(
        rig.git(&["rev-parse", "main"]),
        rig.git(&["rev-parse", "feature"])
    );
}

#[tokio::test]
async fn a_conflicting_merge_aborts_cleanly_and_reports_its_conflicts() {
    for strategy in ["merge", "squash", "rebase"] {
        let rig = Rig::new();
        history(&rig);
        rig.fx.write(&rig.repo, "loose.txt", "untracked, kept\n");
        let id = rig
            .propose(
                "merge",
                json!({"sourceRef": "clash", "targetRef": "main", "strategy": strategy}),
            )
            .await
            .unwrap();
        let preview = rig.exec.preview(&id, &rig.cancel).await.unwrap();
        assert_eq!(preview["clean"], false, "{preview}");
        assert_eq!(preview["conflicts"][0]["path"], "a.txt", "{preview}");
        let before = logical(&rig);
        rig.approve(&id);
        let record = rig.run(&id).await;
        assert_eq!(record.status, Status::Failed, "{strategy}");
        let r = result(&record);
        assert_eq!(r["failure"], "git", "{r}");
        assert_eq!(r["conflicts"], json!(["a.txt"]), "{strategy}: {r}");
        assert!(r["restorePointId"].is_string());
        // Aborting rewrites the index file (its stat data), never its entries.
        assert_eq!(logical(&rig), before, "{strategy}");
    }
}

#[tokio::test]
async fn a_merge_whose_branch_moved_is_stale_and_writes_nothing() {
    let rig = Rig::new();
    history(&rig);
    let id = rig
        .propose("merge", json!({"sourceRef": "side", "targetRef": "main"}))
        .await
        .unwrap();
    rig.fx.commit(&rig.repo, "late.txt", "late\n", "moved on");
    let before = snapshot(&rig);
    rig.approve(&id);
    let record = rig.run(&id).await;
    assert_eq!(record.status, Status::Failed);
    assert_eq!(
        record.result.as_ref().unwrap().failure,
        Some(FailureKind::Stale)
    );
    let r = result(&record);
    let what = moved(&r);
    assert!(what.contains(&"head oid"), "{r}");
    assert_eq!(snapshot(&rig), before);
}

#[tokio::test]
async fn a_merge_into_a_branch_not_checked_out_is_refused_naming_target_ref() {
    let rig = Rig::new();
    history(&rig);
    let err = rig
        .propose(
            "merge",
            json!({"sourceRef": "side", "targetRef": "feature"}),
        )
        .await
        .unwrap_err();
    assert!(
        err.contains("targetRef") && err.contains("checked-out"),
        "{err}"
    );
}

#[tokio::test]
async fn each_reset_mode_is_what_plain_git_makes_and_hard_lists_what_it_overwrites() {
    for mode in ["soft", "mixed", "hard"] {
        let rig = Rig::new();
        history(&rig);
        rig.fx.write(&rig.repo, "a.txt", "one\ntwo\nmain\nlocal\n");
        rig.fx.write(&rig.repo, "dir/b.txt", "staged\n");
        rig.git(&["add", "dir/b.txt"]);
        rig.fx.write(&rig.repo, "loose.txt", "untracked\n");
        let before = snapshot(&rig);
        let twin = rig.twin("twin");
        let id = rig
            .propose("reset", json!({"targetRef": "HEAD~1", "mode": mode}))
            .await
            .unwrap();
        let preview = rig.exec.preview(&id, &rig.cancel).await.unwrap();
        assert_eq!(preview["commitsLeftBehind"]["total"], 1, "{preview}");
        assert_eq!(
            preview["commitsLeftBehind"]["commits"][0]["subject"],
            "main a"
        );
        if mode == "hard" {
            let paths: Vec<&str> = preview["overwritten"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["path"].as_str().unwrap())
                .collect();
            assert_eq!(paths, ["a.txt", "dir/b.txt"], "{preview}");
        } else {
            assert!(preview.get("overwritten").is_none());
        }
        rig.approve(&id);
        let record = rig.run(&id).await;
        assert_eq!(record.status, Status::Completed, "{mode}: {record:?}");
        rig.fx
            .git(&twin, &["reset", "-q", &format!("--{mode}"), "HEAD~1"]);
        assert_eq!(
            content_state(&rig.fx, &rig.repo),
            content_state(&rig.fx, &twin),
            "{mode}"
        );
        assert_eq!(
            rig.git(&["rev-parse", "HEAD"]),
            rig.fx.git(&twin, &["rev-parse", "HEAD"])
        );
        restores_every_byte(&rig, &record, &before).await;
    }
}

#[tokio::test]
async fn a_hard_reset_after_a_new_local_edit_is_stale_and_keeps_the_edit() {
    let rig = Rig::new();
    history(&rig);
    let id = rig
        .propose("reset", json!({"targetRef": "HEAD~1", "mode": "hard"}))
        .await
        .unwrap();
    rig.fx
        .write(&rig.repo, "a.txt", "typed after the proposal\n");
    rig.approve_and_run_stale(&id).await;
    assert_eq!(
        std::fs::read_to_string(rig.repo.join("a.txt")).unwrap(),
        "typed after the proposal\n"
    );
}

#[tokio::test]
async fn a_hard_reset_pins_the_files_its_card_lists_when_the_card_is_computed() {
    let rig = Rig::new();
    history(&rig);
    let id = rig
        .propose("reset", json!({"targetRef": "HEAD~1", "mode": "hard"}))
        .await
        .unwrap();
    // An edit before the card is computed is on the card (and pinned with it) ...
    rig.fx.write(
        &rig.repo,
        "a.txt",
        "seen on the card
",
    );
    let preview = rig.exec.preview(&id, &rig.cancel).await.unwrap();
    assert_eq!(preview["overwritten"][0]["path"], "a.txt", "{preview}");
    let pins = rig.store().pins(&id).unwrap().unwrap();
    assert_eq!(pins["changes"]["a.txt"]["status"], ".M", "{pins}");
    // ... an edit after it is not, and stops the reset.
    rig.fx.write(
        &rig.repo,
        "a.txt",
        "typed after the card
",
    );
    rig.approve(&id);
    let record = rig.run(&id).await;
    let result = record.result.as_ref().unwrap();
    assert_eq!(result.failure, Some(FailureKind::Stale), "{record:?}");
    assert_eq!(
        std::fs::read_to_string(rig.repo.join("a.txt")).unwrap(),
        "typed after the card\n"
    );
}

/// Another git process holds the index: git refuses and the repository stays as it was.
fn hold_index(rig: &Rig) {
    std::fs::write(rig.repo.join(".git/index.lock"), b"").unwrap();
}

#[tokio::test]
async fn a_reset_git_refuses_fails_with_its_message_and_writes_nothing() {
    let rig = Rig::new();
    history(&rig);
    let head = rig.git(&["rev-parse", "HEAD"]);
    let id = rig
        .propose("reset", json!({"targetRef": "HEAD~1"}))
        .await
        .unwrap();
    hold_index(&rig);
    rig.approve(&id);
    let record = rig.run(&id).await;
    assert_eq!(record.status, Status::Failed);
    let r = result(&record);
    assert_eq!(r["failure"], "git");
    assert!(r["message"].as_str().unwrap().contains("index.lock"), "{r}");
    assert_eq!(rig.git(&["rev-parse", "HEAD"]), head);
}

fn dirty(rig: &Rig) {
    rig.fx
        .write(&rig.repo, "a.txt", "one\ntwo\nmain\nlost line\n");
    rig.fx.write(&rig.repo, "dir/b.txt", "staged, kept\n");
    rig.git(&["add", "dir/b.txt"]);
    rig.fx
        .write(&rig.repo, "dir/b.txt", "staged, kept\nthen edited\n");
    rig.fx.write(&rig.repo, "new/n.txt", "untracked, lost\n");
    rig.fx
        .write(&rig.repo, "keep.txt", "untracked, not listed\n");
}

#[tokio::test]
async fn discard_is_what_plain_git_does_after_a_safety_stash_and_is_undone_by_its_restore_point() {
    let rig = Rig::new();
    history(&rig);
    dirty(&rig);
    let before = snapshot(&rig);
    let twin = rig.twin("twin");
    let twin_before = rig.twin("twin-before");
    let id = rig
        .propose("discard", json!({"paths": ["a.txt", "dir", "new"]}))
        .await
        .unwrap();
    let preview = rig.exec.preview(&id, &rig.cancel).await.unwrap();
    assert_eq!(
        preview["files"],
        json!([{"path": "a.txt", "status": "modified"}, {"path": "dir/b.txt", "status": "modified"},
               {"path": "new/n.txt", "status": "untracked", "bytes": 16}])
    );
    let diff = preview["diff"].as_str().unwrap();
    assert!(
        diff.contains("+lost line") && diff.contains("+then edited"),
        "{diff}"
    );
    rig.approve(&id);
    let record = rig.run(&id).await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    rig.fx.git(
        &twin,
        &["restore", "--worktree", "--", "a.txt", "dir/b.txt"],
    );
    rig.fx.git(&twin, &["clean", "-f", "-q", "--", "new/n.txt"]);
    assert_eq!(
        content_state(&rig.fx, &rig.repo),
        content_state(&rig.fx, &twin)
    );
    // The safety stash holds what was lost, in git's own layout.
    assert_eq!(rig.git(&["stash", "list"]).lines().count(), 1);
    assert_eq!(
        rig.git(&["show", "stash@{0}:a.txt"]),
        "one\ntwo\nmain\nlost line"
    );
    assert_eq!(rig.git(&["show", "stash@{0}^2:dir/b.txt"]), "staged, kept");
    let shown = rig.git(&["stash", "show", "--name-only", "--include-untracked"]);
    assert_eq!(shown, "a.txt\ndir/b.txt\nnew/n.txt");
    assert_eq!(
        rig.git(&["show", "stash@{0}^3:new/n.txt"]),
        "untracked, lost"
    );
    assert_eq!(
        result(&record)["stashSha"],
        rig.git(&["rev-parse", "stash@{0}"])
    );
    // `git stash apply` in a copy brings the lost work back.
    let applied = rig.twin("applied");
    rig.fx.git(&applied, &["stash", "apply", "-q", "--index"]);
    let lost = |top: &std::path::Path| {
        ["a.txt", "dir/b.txt", "new/n.txt"].map(|p| std::fs::read_to_string(top.join(p)).unwrap())
    };
    assert_eq!(lost(&applied), lost(&twin_before));
    assert_eq!(
        rig.fx.git(&applied, &["diff", "--cached", "--name-only"]),
        "dir/b.txt"
    );
    restores_every_byte(&rig, &record, &before).await;
}

#[tokio::test]
async fn a_discard_after_the_file_changed_again_is_stale_and_a_refusal_writes_nothing() {
    let rig = Rig::new();
    history(&rig);
    dirty(&rig);
    let err = rig
        .propose("discard", json!({"paths": ["c.txt"]}))
        .await
        .unwrap_err();
    assert!(
        err.contains("paths") && err.contains("no working-tree change"),
        "{err}"
    );
    let id = rig
        .propose("discard", json!({"paths": ["a.txt"]}))
        .await
        .unwrap();
    rig.fx.write(&rig.repo, "a.txt", "edited again\n");
    rig.approve_and_run_stale(&id).await;
    assert_eq!(
        std::fs::read_to_string(rig.repo.join("a.txt")).unwrap(),
        "edited again\n"
    );

    let id = rig
        .propose("discard", json!({"paths": ["a.txt"]}))
        .await
        .unwrap();
    hold_index(&rig);
    rig.approve(&id);
    let record = rig.run(&id).await;
    assert_eq!(record.status, Status::Failed);
    assert_eq!(result(&record)["failure"], "git", "{record:?}");
    assert_eq!(
        std::fs::read_to_string(rig.repo.join("a.txt")).unwrap(),
        "edited again\n"
    );
}

#[tokio::test]
async fn untracked_names_that_look_like_pathspec_magic_are_only_names_to_a_hard_reset() {
    let rig = Rig::new();
    history(&rig);
    rig.fx.write(&rig.repo, "a.txt", "one\ntwo\nmain\nlocal\n");
    for odd in [":!odd", ":(glob)*"] {
        rig.fx.write(&rig.repo, odd, "untracked\n");
    }
    let id = rig
        .propose("reset", json!({"targetRef": "HEAD~1", "mode": "hard"}))
        .await
        .unwrap();
    let preview = rig.exec.preview(&id, &rig.cancel).await.unwrap();
    let paths: Vec<&str> = preview["overwritten"]
        .as_array()
        .unwrap_or_else(|| panic!("{preview}"))
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["a.txt"], "{preview}");
}
