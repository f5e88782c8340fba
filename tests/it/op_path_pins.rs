//! The pins of the path-naming operations (`commit` with paths, `discard`, `patch`),
//! read from the index file and the files rather than from `git status`: every path
//! state is judged the way plain git judges it (compared path by path with `git
//! status`), an index-only change of a named path is `stale`, a change elsewhere is not.

use std::path::Path;

use gitward::gateway::api::{FailureKind, Status};
use serde_json::{Value, json};

use crate::exec_ops::Rig;

/// A repository holding one path in each state a proposal may name.
fn states(rig: &Rig) {
    let (fx, repo) = (&rig.fx, &rig.repo);
    fx.write(repo, ".gitignore", "*.log\n");
    fx.write(repo, "clean.txt", "clean\n");
    fx.write(repo, "mod.txt", "before\n");
    fx.write(repo, "same_size.txt", "aaaa\n");
    fx.write(repo, "touched.txt", "same\n");
    fx.write(repo, "del.txt", "gone soon\n");
    fx.write(repo, "staged.txt", "one\n");
    fx.write(repo, "staged_del.txt", "one\n");
    fx.write(repo, "tracked.log", "log\n");
    fx.write(repo, "cleandir/x.txt", "x\n");
    fx.write(repo, "moddir/y.txt", "y\n");
    fx.write(repo, "exec.sh", "echo\n");
    fx.write(repo, "crlf.txt", "a\r\nb\r\n");
    fx.write(repo, "crlf_same.txt", "a\r\nb\r\n");
    std::os::unix::fs::symlink("clean.txt", repo.join("link")).unwrap();
    rig.git(&["add", "-A"]);
    rig.git(&["commit", "-q", "-m", "states"]);

    fx.write(repo, "mod.txt", "after, longer\n");
    // Same size, same modification time: only the content tells.
    let stamp = fx.path("stamp");
    std::fs::copy(repo.join("same_size.txt"), &stamp).unwrap();
    touch_like(&stamp, &repo.join("same_size.txt"));
    fx.write(repo, "same_size.txt", "bbbb\n");
    touch_like(&stamp, &repo.join("same_size.txt"));
    fx.write(repo, "touched.txt", "same\n");
    std::fs::remove_file(repo.join("del.txt")).unwrap();
    fx.write(repo, "staged.txt", "two\n");
    rig.git(&["add", "staged.txt"]);
    rig.git(&["rm", "-q", "staged_del.txt"]);
    fx.write(repo, "tracked.log", "log, more\n");
    fx.write(repo, "moddir/y.txt", "y changed\n");
    fx.write(repo, "new.txt", "new\n");
    fx.write(repo, "newdir/f.txt", "new in a new directory\n");
    fx.write(repo, "ign.log", "ignored\n");
    fx.write(repo, "crlf.txt", "a\r\nb\r\nc\r\n");
    fx.write(repo, "crlf_same.txt", "a\r\nb\r\n");
    std::fs::remove_file(repo.join("link")).unwrap();
    std::os::unix::fs::symlink("mod.txt", repo.join("link")).unwrap();
    let mut perm = std::fs::metadata(repo.join("exec.sh"))
        .unwrap()
        .permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(repo.join("exec.sh"), perm).unwrap();
    fx.write(repo, "intent.txt", "intended\n");
    rig.git(&["add", "-N", "intent.txt"]);
}

/// Sets `to`'s modification time to `like`'s.
fn touch_like(like: &Path, to: &Path) {
    let ok = std::process::Command::new("touch")
        .arg("-r")
        .arg(like)
        .arg(to)
        .status()
        .unwrap();
    assert!(ok.success());
}

const PATHS: &[&str] = &[
    "clean.txt",
    "mod.txt",
    "same_size.txt",
    "touched.txt",
    "del.txt",
    "staged.txt",
    "staged_del.txt",
    "tracked.log",
    "cleandir",
    "moddir",
    "moddir/",
    "new.txt",
    "newdir/f.txt",
    "newdir",
    "ign.log",
    "crlf.txt",
    "crlf_same.txt",
    "link",
    "exec.sh",
    "intent.txt",
    "nothere.txt",
    "./mod.txt",
];

/// `git status` of one path: its `XY` lines.
fn status_of(rig: &Rig, path: &str) -> Vec<String> {
    rig.git(&[
        "status",
        "--porcelain=v1",
        "--untracked-files=all",
        "--no-renames",
        "--",
        path,
    ])
    .lines()
    .map(|l| l[..2].to_owned())
    .collect()
}

#[tokio::test]
async fn commit_and_discard_refuse_exactly_the_paths_git_sees_nothing_in() {
    let rig = Rig::new();
    states(&rig);
    judged_as_git_judges(&rig, PATHS).await;
    // Conversions configured: git judges every path.
    rig.git(&["config", "core.autocrlf", "true"]);
    judged_as_git_judges(&rig, PATHS).await;
    // A tracked attributes file: content may be converted, git decides more of it.
    rig.fx
        .write(&rig.repo, "attr/.gitattributes", "*.txt -text\n");
    rig.fx.write(&rig.repo, "attr/z.txt", "z\n");
    rig.git(&["add", "attr"]);
    rig.fx.write(&rig.repo, "attr/z.txt", "z changed\n");
    let mut with_attr = PATHS.to_vec();
    with_attr.push("attr/z.txt");
    judged_as_git_judges(&rig, &with_attr).await;
}

#[tokio::test]
async fn a_user_attributes_file_leaves_the_judgement_to_git() {
    let rig = Rig::new();
    // Kept as UTF-16 in the worktree, stored as UTF-8: the bytes (with no CR for a reader
    // to notice) never match the blob, yet git reads the file back unchanged.
    let attributes = rig.fx.path("user-attributes");
    std::fs::write(&attributes, "u.txt working-tree-encoding=UTF-16LE\n").unwrap();
    rig.git(&[
        "config",
        "core.attributesFile",
        attributes.to_str().unwrap(),
    ]);
    std::fs::write(rig.repo.join("u.txt"), b"h\0i\0\n\0").unwrap();
    rig.git(&["add", "u.txt"]);
    rig.git(&["commit", "-q", "-m", "u"]);
    // Same size, a later time: git compares the content, as converted.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(rig.repo.join("u.txt"))
        .unwrap()
        .set_modified(later)
        .unwrap();
    assert!(status_of(&rig, "u.txt").is_empty(), "git sees no change");
    judged_as_git_judges(&rig, &["u.txt"]).await;
}

/// Each path proposed alone: commit is refused exactly when `status` lists nothing for
/// it, discard exactly when `status` shows no worktree change.
async fn judged_as_git_judges(rig: &Rig, paths: &[&str]) {
    for path in paths {
        let lines = status_of(rig, path);
        let commit = rig
            .propose("commit", json!({"message": "m", "paths": [path]}))
            .await;
        assert_eq!(
            commit.is_ok(),
            !lines.is_empty(),
            "commit {path}: {commit:?} {lines:?}"
        );
        if let Err(e) = commit {
            assert!(e.contains("no change to commit"), "{path}: {e}");
        }
        let worktree = lines.iter().any(|xy| xy == "??" || !xy.ends_with(' '));
        let discard = rig.propose("discard", json!({"paths": [path]})).await;
        assert_eq!(
            discard.is_ok(),
            worktree,
            "discard {path}: {discard:?} {lines:?}"
        );
        if let Err(e) = discard {
            assert!(e.contains("no working-tree change"), "{path}: {e}");
        }
        withdraw_all(rig);
    }
}

/// Cancels every pending proposal (a refused one stays pending in this library-level
/// rig), so the agent's pending cap is never reached.
fn withdraw_all(rig: &Rig) {
    let mut store = rig.store();
    for record in store.list_in(Status::Pending).unwrap() {
        store
            .cancel(&record.preview_id, "test-agent", jiff::Timestamp::now())
            .unwrap();
    }
}

#[tokio::test]
async fn a_conflicted_path_is_refused_by_discard_and_committable() {
    let rig = Rig::new();
    rig.git(&["checkout", "-q", "-b", "side"]);
    rig.fx.commit(&rig.repo, "a.txt", "side\n", "side");
    rig.git(&["checkout", "-q", "-"]);
    rig.fx.commit(&rig.repo, "a.txt", "main\n", "main");
    let merge = rig.fx.git_output(&rig.repo, &["merge", "-q", "side"]);
    assert!(!merge.status.success());
    let err = rig
        .propose("discard", json!({"paths": ["a.txt"]}))
        .await
        .unwrap_err();
    assert!(err.contains("conflict"), "{err}");
    rig.propose("commit", json!({"message": "m", "paths": ["a.txt"]}))
        .await
        .unwrap();
}

/// Proposes, lets `mover` act, approves and runs: the failure's moved names (empty when
/// it completed).
async fn moved_after(rig: &Rig, op: &str, fields: Value, mover: impl FnOnce(&Rig)) -> Vec<String> {
    let id = rig.propose(op, fields).await.unwrap();
    mover(rig);
    rig.approve(&id);
    let record = rig.run(&id).await;
    if record.status == Status::Completed {
        return Vec::new();
    }
    let r = record.result.as_ref().unwrap();
    assert_eq!(r.failure, Some(FailureKind::Stale), "{record:?}");
    r.fields["moved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["what"].as_str().unwrap().to_owned())
        .collect()
}

const PATCH: &str = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n";

#[tokio::test]
async fn an_index_only_change_of_a_named_path_is_stale() {
    let stage = |r: &Rig| r.git(&["add", "a.txt"]).len();
    let rig = Rig::new();
    rig.fx.write(&rig.repo, "a.txt", "one\ntwo\nthree\n");
    let commit = json!({"message": "m", "paths": ["a.txt"]});
    let moved = moved_after(&rig, "commit", commit, |r| {
        stage(r);
    })
    .await;
    assert!(moved.contains(&"changes a.txt".to_owned()), "{moved:?}");

    let rig = Rig::new();
    rig.fx.write(&rig.repo, "a.txt", "one\ntwo\nthree\n");
    let moved = moved_after(&rig, "discard", json!({"paths": ["a.txt"]}), |r| {
        stage(r);
    })
    .await;
    assert_eq!(moved, ["changes a.txt"]);

    // The index entry changes, the worktree file is back as it was.
    let rig = Rig::new();
    let moved = moved_after(&rig, "patch", json!({"patchContent": PATCH}), |r| {
        r.fx.write(&r.repo, "a.txt", "staged only\n");
        stage(r);
        r.fx.write(&r.repo, "a.txt", "one\ntwo\n");
    })
    .await;
    assert_eq!(moved, ["paths a.txt"]);
}

#[tokio::test]
async fn an_edit_of_a_named_path_with_the_same_size_and_time_is_stale() {
    let rig = Rig::new();
    rig.fx.write(&rig.repo, "a.txt", "one\ntwo\n3\n");
    let stamp = rig.fx.path("stamp");
    std::fs::copy(rig.repo.join("a.txt"), &stamp).unwrap();
    let moved = moved_after(&rig, "discard", json!({"paths": ["a.txt"]}), |r| {
        r.fx.write(&r.repo, "a.txt", "one\ntwo\n4\n");
        touch_like(&stamp, &r.repo.join("a.txt"));
    })
    .await;
    assert_eq!(moved, ["changes a.txt"]);
}

#[tokio::test]
async fn a_change_elsewhere_leaves_the_proposal_valid() {
    let rig = Rig::new();
    rig.fx.write(&rig.repo, "a.txt", "one\ntwo\nthree\n");
    let commit = json!({"message": "m", "paths": ["a.txt"]});
    let moved = moved_after(&rig, "commit", commit, |r| {
        r.fx.write(&r.repo, "dir/b.txt", "edited, not staged\n");
        r.fx.write(&r.repo, "untracked.txt", "new\n");
    })
    .await;
    assert!(moved.is_empty(), "{moved:?}");
    assert_eq!(rig.git(&["show", "HEAD:a.txt"]), "one\ntwo\nthree");

    rig.fx.write(&rig.repo, "a.txt", "discard me\n");
    let moved = moved_after(&rig, "discard", json!({"paths": ["a.txt"]}), |r| {
        r.git(&["add", "dir/b.txt"]);
    })
    .await;
    assert!(moved.is_empty(), "{moved:?}");
    assert_eq!(
        std::fs::read_to_string(rig.repo.join("a.txt")).unwrap(),
        "one\ntwo\nthree\n"
    );

    let rig = Rig::new();
    let moved = moved_after(&rig, "patch", json!({"patchContent": PATCH}), |r| {
        r.fx.write(&r.repo, "dir/b.txt", "staged elsewhere\n");
        r.git(&["add", "dir/b.txt"]);
    })
    .await;
    assert!(moved.is_empty(), "{moved:?}");
    assert_eq!(
        std::fs::read_to_string(rig.repo.join("a.txt")).unwrap(),
        "one\nTWO\n"
    );
}
