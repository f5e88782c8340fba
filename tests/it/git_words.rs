//! Approved writes leave git's own words: each operation runs through the executor on
//! one copy and the plain git commands a person would type run on a twin copy; the
//! reflogs, commit subjects, `ORIG_HEAD` and hook calls must read the same. A restore
//! puts `ORIG_HEAD` back with the rest and logs no move that did not happen.

use std::path::Path;

use gitward::gateway::api::Status;
use serde_json::{Value, json};

use super::exec_history::{history, result};
use super::exec_ops::Rig;
use crate::common::{Fixture, redact_oids, write_executable};

/// Every hook a history write can run appends its name and arguments to `hooks.log` in
/// the git directory (object ids redacted: replayed commits differ by their time).
fn canaries(rig: &Rig) {
    for hook in [
        "pre-rebase",
        "post-checkout",
        "post-merge",
        "post-rewrite",
        "reference-transaction",
    ] {
        let body = if hook == "reference-transaction" {
            // Only the state, not the lines: those carry ids of commits made now.
            format!("#!/bin/sh\necho \"{hook} $1\" >> \"$(git rev-parse --git-dir)/hooks.log\"\n")
        } else {
            format!("#!/bin/sh\necho \"{hook} $*\" >> \"$(git rev-parse --git-dir)/hooks.log\"\n")
        };
        write_executable(&rig.repo.join(".git/hooks").join(hook), &body);
    }
}

fn reflog(fx: &Fixture, repo: &Path, name: &str) -> Vec<String> {
    let out = fx.git_output(repo, &["reflog", "show", "--format=%gs", name, "--"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(redact_oids)
        .collect()
}

/// What git says happened: the reflogs of HEAD and every branch, the subjects on HEAD,
/// `ORIG_HEAD` and the hooks that ran.
fn words(fx: &Fixture, repo: &Path) -> Value {
    let branches = fx.git(repo, &["for-each-ref", "--format=%(refname)", "refs/heads"]);
    let mut logs = serde_json::Map::new();
    for name in std::iter::once("HEAD").chain(branches.lines()) {
        logs.insert(name.to_owned(), json!(reflog(fx, repo, name)));
    }
    let orig = fx.git_output(repo, &["rev-parse", "--verify", "-q", "ORIG_HEAD"]);
    let hooks = std::fs::read_to_string(repo.join(".git/hooks.log")).unwrap_or_default();
    json!({
        "reflogs": logs,
        "subjects": fx.git(repo, &["log", "--format=%s", "-8", "HEAD"]),
        "origHead": String::from_utf8_lossy(&orig.stdout).trim(),
        "hooks": redact_oids(&hooks),
    })
}

async fn approved(rig: &Rig, op: &str, fields: Value) -> Value {
    let record = rig.execute(op, fields).await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    result(&record)
}

/// `main` one commit ahead of where `feature` forked, so a merge makes a merge commit.
fn diverged(rig: &Rig) {
    rig.fx.commit(&rig.repo, "m.txt", "mmm\n", "main moves on");
}

#[tokio::test]
async fn a_fast_forward_merge_reads_as_git_merge() {
    let rig = Rig::new();
    history(&rig);
    canaries(&rig);
    let twin = rig.twin("twin");
    approved(
        &rig,
        "merge",
        json!({"sourceRef": "feature", "targetRef": "main"}),
    )
    .await;
    rig.fx.git(&twin, &["merge", "--no-edit", "feature"]);
    let ours = words(&rig.fx, &rig.repo);
    assert_eq!(ours["reflogs"]["HEAD"][0], "merge feature: Fast-forward");
    assert_eq!(ours, words(&rig.fx, &twin));
}

#[tokio::test]
async fn a_merge_commit_has_gits_subject_and_reflog() {
    let rig = Rig::new();
    history(&rig);
    rig.git(&["switch", "-q", "-c", "y", "main"]);
    diverged(&rig);
    canaries(&rig);
    let twin = rig.twin("twin");
    approved(
        &rig,
        "merge",
        json!({"sourceRef": "feature", "targetRef": "y"}),
    )
    .await;
    rig.fx.git(&twin, &["merge", "--no-edit", "feature"]);
    let ours = words(&rig.fx, &rig.repo);
    assert!(
        ours["subjects"]
            .as_str()
            .unwrap()
            .starts_with("Merge branch 'feature' into y\n"),
        "{ours}"
    );
    assert_eq!(ours, words(&rig.fx, &twin));
}

#[tokio::test]
async fn a_squash_merge_reads_as_git_merge_squash_and_commit() {
    let rig = Rig::new();
    history(&rig);
    diverged(&rig);
    canaries(&rig);
    let twin = rig.twin("twin");
    approved(
        &rig,
        "merge",
        json!({"sourceRef": "feature", "targetRef": "main", "strategy": "squash"}),
    )
    .await;
    rig.fx.git(&twin, &["merge", "--squash", "feature"]);
    rig.fx.git(&twin, &["commit", "--no-edit"]);
    assert_eq!(words(&rig.fx, &rig.repo), words(&rig.fx, &twin));
}

#[tokio::test]
async fn a_reset_reads_as_git_reset_with_the_users_revision() {
    let rig = Rig::new();
    history(&rig);
    canaries(&rig);
    let twin = rig.twin("twin");
    approved(
        &rig,
        "reset",
        json!({"targetRef": "HEAD~1", "mode": "soft"}),
    )
    .await;
    rig.fx.git(&twin, &["reset", "-q", "--soft", "HEAD~1"]);
    let ours = words(&rig.fx, &rig.repo);
    assert_eq!(ours["reflogs"]["HEAD"][0], "reset: moving to HEAD~1");
    assert_eq!(ours, words(&rig.fx, &twin));
}

#[tokio::test]
async fn a_checked_out_branch_is_created_from_the_users_start_point() {
    let rig = Rig::new();
    history(&rig);
    canaries(&rig);
    let twin = rig.twin("twin");
    approved(&rig, "branch", json!({"name": "x", "startPoint": "side"})).await;
    rig.fx.git(&twin, &["switch", "-q", "-c", "x", "side"]);
    let ours = words(&rig.fx, &rig.repo);
    assert_eq!(
        ours["reflogs"]["refs/heads/x"][0],
        "branch: Created from side"
    );
    assert_eq!(ours, words(&rig.fx, &twin));
}

#[tokio::test]
async fn a_rebase_passes_the_upstream_as_git_does_and_logs_its_own_entries() {
    let rig = Rig::new();
    history(&rig);
    rig.git(&["switch", "-q", "feature"]);
    canaries(&rig);
    let twin = rig.twin("twin");
    approved(&rig, "rebase", json!({"ontoRef": "side"})).await;
    rig.fx.git(&twin, &["rebase", "side"]);
    let ours = words(&rig.fx, &rig.repo);
    assert!(
        ours["hooks"]
            .as_str()
            .unwrap()
            .starts_with("pre-rebase side\n"),
        "{ours}"
    );
    assert_eq!(
        ours["reflogs"]["HEAD"][0],
        "rebase (finish): returning to refs/heads/feature"
    );
    assert_eq!(ours, words(&rig.fx, &twin));
}

/// The rebase strategy of a merge is `git rebase <target> <source-commit>` (detached: the
/// source branch never moves), then `git switch <target>` and `git merge --ff-only` of
/// the replayed tip.
#[tokio::test]
async fn the_rebase_strategy_runs_the_hooks_of_the_commands_it_stands_for() {
    let rig = Rig::new();
    history(&rig);
    diverged(&rig);
    canaries(&rig);
    let twin = rig.twin("twin");
    approved(
        &rig,
        "merge",
        json!({"sourceRef": "feature", "targetRef": "main", "strategy": "rebase"}),
    )
    .await;
    let source = rig.fx.git(&twin, &["rev-parse", "feature"]);
    let source = source.trim();
    rig.fx.git(
        &twin,
        &[
            "rebase",
            "--no-autostash",
            "--no-update-refs",
            "main",
            source,
        ],
    );
    let tip = rig.fx.git(&twin, &["rev-parse", "HEAD"]);
    rig.fx.git(&twin, &["switch", "-q", "main"]);
    rig.fx.git(&twin, &["merge", "--ff-only", tip.trim()]);
    let ours = words(&rig.fx, &rig.repo);
    let hooks = ours["hooks"].as_str().unwrap();
    assert!(hooks.contains("post-merge 0"), "{hooks}");
    assert_eq!(ours, words(&rig.fx, &twin));
    assert_eq!(
        rig.git(&["rev-parse", "feature"]).trim(),
        source,
        "the source branch never moves"
    );
}

/// `ORIG_HEAD` is part of what a restore puts back: absent again when it was absent, its
/// old commit when it had one; and HEAD's reflog gains no entry for a move that did not
/// happen.
#[tokio::test]
async fn a_restore_puts_orig_head_back_and_logs_no_move_of_head_that_did_not_happen() {
    for before in [None, Some("HEAD~2")] {
        let rig = Rig::new();
        history(&rig);
        if let Some(at) = before {
            let oid = rig.git(&["rev-parse", at]);
            rig.git(&["update-ref", "--no-deref", "ORIG_HEAD", oid.trim()]);
        }
        let orig = || {
            rig.fx
                .git_output(&rig.repo, &["rev-parse", "-q", "--verify", "ORIG_HEAD"])
                .stdout
        };
        let was = orig();
        let r = approved(
            &rig,
            "merge",
            json!({"sourceRef": "feature", "targetRef": "main"}),
        )
        .await;
        assert_ne!(orig(), was, "the merge sets ORIG_HEAD as git does");
        let head_log = reflog(&rig.fx, &rig.repo, "HEAD").len();
        let rp = r["restorePointId"].as_str().unwrap();
        rig.exec.restore(rp, false, &rig.cancel).await.unwrap();
        assert_eq!(orig(), was, "ORIG_HEAD as before the merge ({before:?})");
        // One entry for main's move back (logged on HEAD too, as git does), none for HEAD
        // pointing at main, where it already pointed.
        assert_eq!(reflog(&rig.fx, &rig.repo, "HEAD").len(), head_log + 1);
        let tops = rig.git(&["reflog", "show", "--format=%H", "-2", "HEAD", "--"]);
        let tops: Vec<&str> = tops.lines().collect();
        assert_ne!(tops[0], tops[1], "a no-op entry on HEAD: {tops:?}");
    }
}
