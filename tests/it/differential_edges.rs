//! The differential suite on the edge cases where approved writes and their restores
//! once lost bytes or differed from git: names that are not UTF-8, an ignored file that a
//! checkout leaves untracked, a patch of an ignored file, an index whose stat data went
//! stale, a push that sets an upstream, and a commit whose git output passes the capture
//! cap. Same comparison as `differential.rs`: the gateway against plain git on a twin,
//! then the restore against the state before.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::common::Fixture;
use crate::differential::run_all;
use crate::differential_fixtures::Shape;
use crate::differential_ops::{Ctx, MATRIX, Op, VARIANTS};
use crate::differential_support::{git, git_out};

fn nothing(_: &Fixture, _: &Path) {}

fn op(name: &str) -> &'static Op {
    MATRIX
        .iter()
        .chain(VARIANTS)
        .find(|o| o.name == name)
        .unwrap()
}

/// A tracked file and an untracked one whose names are Latin-1, not UTF-8; the tracked
/// one edited.
fn non_utf8(fx: &Fixture, repo: &Path, _: &Path) -> Option<PathBuf> {
    let tracked = repo.join(OsStr::from_bytes(b"caf\xe9.txt"));
    std::fs::write(&tracked, b"committed\n").unwrap();
    git(fx, repo, &["add", "-A"]);
    git(fx, repo, &["commit", "-q", "-m", "a Latin-1 name"]);
    std::fs::write(&tracked, b"edited, not committed\n").unwrap();
    std::fs::write(
        repo.join(OsStr::from_bytes(b"na\xefve.txt")),
        b"untracked\n",
    )
    .unwrap();
    None
}

#[test]
fn names_that_are_not_utf8_match_git_and_restore() {
    let shape = Shape {
        name: "non-utf8",
        before: nothing,
        after: non_utf8,
    };
    let ops = [op("commit"), op("reset-hard"), op("branch"), op("patch")];
    run_all(shape, &ops);
}

/// Branch `new` has no `.gitignore`: checking it out turns the ignored `i.env` into an
/// untracked file.
fn no_ignore_branch(fx: &Fixture, repo: &Path, _: &Path) -> Option<PathBuf> {
    git(fx, repo, &["switch", "-q", "-c", "new"]);
    git(fx, repo, &["rm", "-q", ".gitignore"]);
    git(fx, repo, &["commit", "-q", "-m", "no ignore rules"]);
    git(fx, repo, &["switch", "-q", "main"]);
    None
}

const ONTO_NEW: Op = Op {
    name: "branch-onto-new",
    kind: "branch",
    dirty: false,
    fields: |_| json!({"name": "x", "startPoint": "new"}),
    git: |fx, c| {
        git_out(fx, &c.repo, &["switch", "-q", "-c", "x", "new"], None)
            .status
            .success()
    },
};

/// A patch of the ignored `i.env` (`git apply` changes it like any file).
const PATCH_IGNORED: Op = Op {
    name: "patch-ignored",
    kind: "patch",
    dirty: false,
    fields: |_| json!({"patchContent": IGNORED_PATCH, "applyToIndex": false}),
    git: |fx, c| {
        git_out(fx, &c.repo, &["apply", "-"], Some(IGNORED_PATCH.as_bytes()))
            .status
            .success()
    },
};

const IGNORED_PATCH: &str = "diff --git a/i.env b/i.env\n--- a/i.env\n+++ b/i.env\n@@ -1 +1,2 @@\n ignored, kept\n+SECRET=changed\n";

#[test]
fn ignored_files_a_checkout_or_a_patch_touches_match_git_and_restore() {
    let shape = Shape {
        name: "ignored",
        before: nothing,
        after: no_ignore_branch,
    };
    run_all(shape, &[&ONTO_NEW, &PATCH_IGNORED]);
}

/// `p.txt` touched after its commit: the index's stat data no longer vouch for it.
fn stale_stat(_: &Fixture, repo: &Path, _: &Path) -> Option<PathBuf> {
    let file = std::fs::File::options()
        .write(true)
        .open(repo.join("p.txt"))
        .unwrap();
    file.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    None
}

/// `feature` pushed with `-u`: it has no upstream before.
const PUSH_FEATURE: Op = Op {
    name: "push-new-upstream",
    kind: "push",
    dirty: false,
    fields: |_| json!({"remote": "origin", "branch": "feature", "setUpstream": true}),
    git: |fx, c: &Ctx| {
        git_out(
            fx,
            &c.repo,
            &["push", "-q", "-u", "origin", "feature"],
            None,
        )
        .status
        .success()
    },
};

#[test]
fn a_stale_index_and_a_new_upstream_match_git_and_restore() {
    let shape = Shape {
        name: "stale-stat",
        before: nothing,
        after: stale_stat,
    };
    run_all(shape, &[op("patch"), &PUSH_FEATURE]);
}

/// 1,200 new files with long names: `git commit` prints more than the 256 KiB a write
/// keeps of its output.
fn many_files(_: &Fixture, repo: &Path, _: &Path) -> Option<PathBuf> {
    let dir = repo.join("many");
    std::fs::create_dir_all(&dir).unwrap();
    let long = "a-file-name-long-enough-to-fill-the-commit-summary-".repeat(4);
    for i in 0..1200 {
        let name = format!("{i:05}-{long}.txt");
        std::fs::write(dir.join(name), format!("{i}\n")).unwrap();
    }
    None
}

const COMMIT_MANY: Op = Op {
    name: "commit-many",
    kind: "commit",
    dirty: false,
    fields: |_| json!({"message": "many files", "stageAll": true}),
    git: |fx, c| {
        git_out(fx, &c.repo, &["add", "-A"], None).status.success()
            && git_out(fx, &c.repo, &["commit", "-m", "many files"], None)
                .status
                .success()
    },
};

#[test]
fn a_commit_whose_output_passes_the_cap_matches_git_and_restores() {
    let shape = Shape {
        name: "many",
        before: nothing,
        after: many_files,
    };
    run_all(shape, &[&COMMIT_MANY]);
}
