//! The readings pins take from the repository's files instead of git, against plain git:
//! a branch named by its short name, the branches checked out in the worktrees, the
//! gitlink an index records and the tree a whole index amounts to. Each must say what
//! git says or leave the question to git, and a change after the proposal to what it read
//! makes the proposal `stale` (or refuses it when it decides a refusal).

use std::path::Path;

use gitward::gateway::api::{FailureKind, Status};
use gitward::git::ref_file::{branch_named, checked_out};
use gitward::git::{Oid, Repo, index_lookup};
use serde_json::{Value, json};

use crate::exec_ops::Rig;

async fn open(rig: &Rig, dir: &Path) -> std::sync::Arc<Repo> {
    gitward::git::repo::open(
        rig.exec.config(),
        "repoPath",
        &dir.display().to_string(),
        &rig.cancel,
    )
    .await
    .unwrap()
}

/// What git resolves `name` to as a commit; `None` when it resolves to none.
fn git_commit(rig: &Rig, name: &str) -> Option<Oid> {
    let spec = format!("{name}^{{commit}}");
    let out = rig
        .fx
        .git_output(&rig.repo, &["rev-parse", "--verify", "--quiet", &spec]);
    Oid::parse(String::from_utf8_lossy(&out.stdout).trim())
}

#[tokio::test]
async fn a_branch_named_by_its_short_name_is_the_commit_git_resolves() {
    let rig = Rig::new();
    rig.git(&["branch", "side", "HEAD~1"]);
    rig.git(&["branch", "dup", "HEAD~1"]);
    rig.git(&["tag", "-a", "-m", "t", "dup", "HEAD"]);
    rig.git(&["branch", "nested/x", "HEAD~1"]);
    rig.git(&["branch", "abc", "HEAD~1"]);
    rig.git(&["update-ref", "refs/remotes/origin/r", "HEAD"]);
    rig.git(&["update-ref", "ORIG_HEAD", "HEAD~1"]);
    let check = |repo: &Repo, packed: bool| {
        for name in [
            "side",
            "heads/side",
            "refs/heads/side",
            "nested/x",
            "main",
            "dup",
            "abc",
            "origin/r",
            "ORIG_HEAD",
            "HEAD",
            "none",
        ] {
            match branch_named(repo, name) {
                Some((full, oid)) => {
                    assert!(full.starts_with("refs/heads/"), "{name}: {full}");
                    assert_eq!(
                        Some(oid),
                        git_commit(&rig, name),
                        "{name} (packed {packed})"
                    );
                }
                // Left to git: a tag comes first, a remote-tracking ref, a file in the
                // git directory, a name that reads as an object id, nothing there.
                None => assert!(
                    ["dup", "abc", "origin/r", "ORIG_HEAD", "HEAD", "none"].contains(&name),
                    "{name} (packed {packed})"
                ),
            }
        }
    };
    let repo = open(&rig, &rig.repo).await;
    check(&repo, false);
    rig.git(&["pack-refs", "--all"]);
    assert!(!rig.repo.join(".git/refs/heads/side").exists());
    check(&repo, true);
}

fn listed_branches(rig: &Rig, dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = rig
        .fx
        .git(dir, &["worktree", "list", "--porcelain"])
        .lines()
        .filter_map(|l| l.strip_prefix("branch ").map(str::to_owned))
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn the_checked_out_branches_are_those_git_lists() {
    let rig = Rig::new();
    let linked = rig.fx.path("linked");
    let detached = rig.fx.path("detached");
    let l = linked.display().to_string();
    let d = detached.display().to_string();
    rig.git(&["worktree", "add", "-q", "-b", "wt", &l, "HEAD~1"]);
    rig.git(&["worktree", "add", "-q", "--detach", &d, "HEAD"]);
    let repo = open(&rig, &rig.repo).await;
    let mut read = checked_out(&repo).unwrap();
    read.sort();
    assert_eq!(read, listed_branches(&rig, &rig.repo));
    assert_eq!(read, ["refs/heads/main", "refs/heads/wt"]);
    // From a linked worktree the main one may be bare: git is asked.
    assert_eq!(checked_out(&*open(&rig, &linked).await), None);
}

#[tokio::test]
async fn the_index_gives_its_gitlink_and_its_tree_as_git_does() {
    let rig = Rig::new();
    let repo = open(&rig, &rig.repo).await;
    let index = rig.repo.join(".git/index");
    let format = repo.object_format;
    let head_tree = Oid::parse(&rig.git(&["rev-parse", "HEAD^{tree}"])).unwrap();
    assert_eq!(index_lookup::tree(&index, format), Some(head_tree.clone()));
    assert_eq!(index_lookup::gitlink(&index, format, b"a.txt"), Some(None));

    let link = rig.git(&["rev-parse", "HEAD~1"]);
    let info = format!("160000,{link},libs/sub");
    rig.git(&["update-index", "--add", "--cacheinfo", &info]);
    // Staging invalidates the cache tree: the tree is git's to say.
    assert_eq!(index_lookup::tree(&index, format), None);
    assert_eq!(
        index_lookup::gitlink(&index, format, b"libs/sub"),
        Some(Oid::parse(&link))
    );
    let written = Oid::parse(&rig.git(&["write-tree"])).unwrap();
    assert_ne!(written, head_tree);
    assert_eq!(index_lookup::tree(&index, format), Some(written));

    rig.fx.write(&rig.repo, "new.txt", "n\n");
    rig.git(&["add", "-N", "new.txt"]);
    rig.git(&["write-tree"]);
    assert_eq!(index_lookup::tree(&index, format), None, "intent to add");
    rig.git(&["rm", "-q", "--cached", "new.txt"]);

    rig.git(&["update-index", "--split-index"]);
    assert_eq!(index_lookup::tree(&index, format), None, "split index");
    assert_eq!(index_lookup::gitlink(&index, format, b"libs/sub"), None);
}

/// Proposes, lets `mover` change the repository, approves and runs: the record must be
/// `stale` naming `what`, with HEAD where it was.
async fn stale_after(rig: &Rig, op: &str, fields: Value, mover: impl FnOnce(&Rig), what: &str) {
    let id = rig.propose(op, fields).await.unwrap();
    mover(rig);
    let head = rig.git(&["rev-parse", "HEAD"]);
    rig.approve(&id);
    let record = rig.run(&id).await;
    assert_eq!(record.status, Status::Failed, "{record:?}");
    let r = record.result.as_ref().unwrap();
    assert_eq!(r.failure, Some(FailureKind::Stale), "{r:?}");
    let moved = r.fields["moved"].to_string();
    assert!(moved.contains(what), "{what} not in {moved}");
    assert_eq!(rig.git(&["rev-parse", "HEAD"]), head);
}

/// `main` plus a `feature` branch one commit ahead, its refs packed.
fn with_feature(rig: &Rig) {
    rig.git(&["switch", "-q", "-c", "feature"]);
    rig.fx.commit(&rig.repo, "f.txt", "f\n", "feature");
    rig.git(&["switch", "-q", "main"]);
    rig.git(&["pack-refs", "--all"]);
}

#[tokio::test]
async fn merge_reads_its_source_from_the_ref_files_and_refuses_a_staged_index() {
    let rig = Rig::new();
    with_feature(&rig);
    let fields = json!({"sourceRef": "feature", "targetRef": "main"});
    stale_after(
        &rig,
        "merge",
        fields.clone(),
        |r| {
            r.git(&["branch", "-f", "feature", "HEAD~1"]);
        },
        "sourceOid",
    )
    .await;
    rig.git(&["branch", "-f", "feature", "HEAD"]);
    rig.git(&["switch", "-q", "feature"]);
    rig.fx.commit(&rig.repo, "g.txt", "g\n", "more");
    rig.git(&["switch", "-q", "main"]);

    // Staged, then a valid cache tree that differs from HEAD's: refused either way.
    rig.fx.write(&rig.repo, "a.txt", "staged\n");
    rig.git(&["add", "a.txt"]);
    let err = rig.propose("merge", fields.clone()).await.unwrap_err();
    assert!(err.contains("staged changes"), "{err}");
    rig.git(&["write-tree"]);
    let err = rig.propose("merge", fields.clone()).await.unwrap_err();
    assert!(err.contains("staged changes"), "{err}");

    // Only the worktree differs: nothing is staged.
    rig.git(&["reset", "-q"]);
    rig.git(&["write-tree"]);
    stale_after(
        &rig,
        "merge",
        fields,
        |r| {
            r.git(&["add", "a.txt"]);
        },
        "index",
    )
    .await;
}

#[tokio::test]
async fn branch_delete_reads_worktrees_and_upstream_counts_and_goes_stale_on_them() {
    let rig = Rig::new();
    rig.git(&["branch", "gone", "HEAD~1"]);
    let fields = json!({"targets": [{"repoPath": rig.repo, "branches": ["gone"]}]});
    let linked = rig.fx.path("linked").display().to_string();
    stale_after(
        &rig,
        "branchDelete",
        fields.clone(),
        |r| {
            r.git(&["worktree", "add", "-q", &linked, "gone"]);
        },
        "refs/heads/gone",
    )
    .await;
    rig.git(&["worktree", "remove", "--force", &linked]);

    // Not in HEAD, but every commit is in its upstream: deletable until the upstream
    // moves back.
    rig.git(&["switch", "-q", "-c", "up"]);
    rig.fx.commit(&rig.repo, "u.txt", "u\n", "up");
    rig.git(&["switch", "-q", "main"]);
    rig.git(&["update-ref", "refs/remotes/origin/up", "up"]);
    rig.git(&["remote", "add", "origin", "/nonexistent"]);
    rig.git(&["config", "branch.up.remote", "origin"]);
    rig.git(&["config", "branch.up.merge", "refs/heads/up"]);
    let up = json!({"targets": [{"repoPath": rig.repo, "branches": ["up"]}]});
    let id = rig.propose("branchDelete", up.clone()).await.unwrap();
    let pins = rig.store().pins(&id).unwrap().unwrap();
    let branch = &pins["repositories"][0]["branches"][0];
    assert_eq!(branch["delete"], true, "{branch}");
    assert_eq!(
        branch["reason"],
        "every commit is in its upstream refs/remotes/origin/up"
    );
    stale_after(
        &rig,
        "branchDelete",
        up,
        |r| {
            r.git(&["update-ref", "refs/remotes/origin/up", "main"]);
        },
        "refs/heads/up",
    )
    .await;
}

#[tokio::test]
async fn a_worktree_for_a_branch_checked_out_in_a_linked_worktree_is_refused() {
    let rig = Rig::new();
    rig.git(&["branch", "busy", "HEAD~1"]);
    let linked = rig.fx.path("linked").display().to_string();
    rig.git(&["worktree", "add", "-q", &linked, "busy"]);
    let err = rig
        .propose("worktree", json!({"branch": "busy"}))
        .await
        .unwrap_err();
    assert!(err.contains("already checked out"), "{err}");
}
