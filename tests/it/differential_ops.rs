//! The operations of the differential suite: for each, the fields proposed to the gateway
//! and the plain git commands a person would type for the same change. Every one of the
//! twelve operation types is here at least once.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::Fixture;
use crate::differential_support::git_out;

/// Where an operation runs: the repository path, its side and the checked-out branch.
pub struct Ctx {
    pub repo: PathBuf,
    pub side: PathBuf,
    pub branch: String,
}

/// One operation: what the gateway is asked, and what plain git is told.
#[derive(Clone, Copy)]
pub struct Op {
    pub name: &'static str,
    pub kind: &'static str,
    /// Whether the fixture's worktree carries staged and unstaged changes (git refuses
    /// to rebase or merge over them; the other operations are run with them).
    pub dirty: bool,
    pub fields: fn(&Ctx) -> Value,
    /// The plain git commands; whether all succeeded (the first failure stops them).
    pub git: fn(&Fixture, &Ctx) -> bool,
}

/// Runs each command in turn in `dir` until one fails; whether all succeeded.
fn all(fx: &Fixture, dir: &Path, commands: &[&[&str]]) -> bool {
    commands
        .iter()
        .all(|args| git_out(fx, dir, args, None).status.success())
}

/// A patch that changes `p.txt` and adds `dir1/new.txt`.
pub const PATCH: &str = "diff --git a/p.txt b/p.txt\n--- a/p.txt\n+++ b/p.txt\n@@ -1 +1,2 @@\n patch me\n+patched\n\
diff --git a/dir1/new.txt b/dir1/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/dir1/new.txt\n@@ -0,0 +1 @@\n+fresh\n";

/// `git apply [--index]`; to the index after a refresh, as `git status` would make one
/// (stale stat data alone must not make `--index` refuse a file whose bytes match).
fn apply(fx: &Fixture, c: &Ctx, index: bool) -> bool {
    let args: &[&str] = if index {
        let _ = git_out(fx, &c.repo, &["update-index", "-q", "--refresh"], None);
        &["apply", "--index", "-"]
    } else {
        &["apply", "-"]
    };
    git_out(fx, &c.repo, args, Some(PATCH.as_bytes()))
        .status
        .success()
}

fn wt(c: &Ctx) -> String {
    c.side.join("wt").display().to_string()
}

/// One operation of each type, the ones every fixture runs.
pub const MATRIX: &[Op] = &[
    Op {
        name: "commit",
        kind: "commit",
        dirty: true,
        fields: |_| json!({"message": "diff commit", "stageAll": true}),
        git: |fx, c| {
            all(
                fx,
                &c.repo,
                &[&["add", "-A"], &["commit", "-q", "-m", "diff commit"]],
            )
        },
    },
    Op {
        name: "branch",
        kind: "branch",
        dirty: true,
        fields: |_| json!({"name": "topic", "startPoint": "side"}),
        git: |fx, c| all(fx, &c.repo, &[&["switch", "-q", "-c", "topic", "side"]]),
    },
    Op {
        name: "branchDelete",
        kind: "branchDelete",
        dirty: true,
        fields: |c| json!({"targets": [{"repoPath": c.repo, "branches": ["merged"]}]}),
        git: |fx, c| all(fx, &c.repo, &[&["branch", "-q", "-d", "merged"]]),
    },
    Op {
        name: "merge",
        kind: "merge",
        dirty: false,
        fields: |c| json!({"sourceRef": "side", "targetRef": c.branch}),
        git: |fx, c| all(fx, &c.repo, &[&["merge", "-q", "--no-edit", "side"]]),
    },
    Op {
        name: "discard",
        kind: "discard",
        dirty: true,
        fields: |_| json!({"paths": ["a.txt", "u.txt"]}),
        git: |fx, c| {
            all(
                fx,
                &c.repo,
                &[
                    &["restore", "--worktree", "--", "a.txt"],
                    &["clean", "-q", "-f", "--", "u.txt"],
                ],
            )
        },
    },
    Op {
        name: "reset",
        kind: "reset",
        dirty: true,
        fields: |_| json!({"targetRef": "HEAD~1", "mode": "mixed"}),
        git: |fx, c| all(fx, &c.repo, &[&["reset", "-q", "HEAD~1"]]),
    },
    Op {
        name: "plan",
        kind: "plan",
        dirty: false,
        fields: |c| {
            json!({"steps": [
                {"operationType": "merge", "sourceRef": "feature", "targetRef": c.branch},
                {"operationType": "reset", "targetRef": "HEAD~1", "mode": "soft"},
            ]})
        },
        git: |fx, c| {
            all(
                fx,
                &c.repo,
                &[
                    &["merge", "-q", "--no-edit", "feature"],
                    &["reset", "-q", "--soft", "HEAD~1"],
                ],
            )
        },
    },
    Op {
        name: "rebase",
        kind: "rebase",
        dirty: false,
        fields: |_| json!({"ontoRef": "side"}),
        git: |fx, c| all(fx, &c.repo, &[&["rebase", "-q", "side"]]),
    },
    Op {
        name: "patch",
        kind: "patch",
        dirty: true,
        fields: |_| json!({"patchContent": PATCH, "applyToIndex": true}),
        git: |fx, c| apply(fx, c, true),
    },
    Op {
        name: "push",
        kind: "push",
        dirty: true,
        fields: |c| json!({"remote": "origin", "branch": c.branch, "setUpstream": true}),
        git: |fx, c| {
            let branch = c.branch.as_str();
            all(fx, &c.repo, &[&["push", "-q", "-u", "origin", branch]])
        },
    },
    Op {
        name: "submodulePointer",
        kind: "submodulePointer",
        dirty: true,
        fields: |_| {
            json!({"action": "record", "parentPath": "", "relativePath": "lib",
                   "message": "bump lib"})
        },
        git: |fx, c| {
            all(
                fx,
                &c.repo,
                &[&["commit", "-q", "-m", "bump lib", "--only", "--", "lib"]],
            )
        },
    },
    Op {
        name: "worktree",
        kind: "worktree",
        dirty: true,
        fields: |c| json!({"branch": "wt-new", "path": wt(c)}),
        git: |fx, c| {
            let path = wt(c);
            all(
                fx,
                &c.repo,
                &[&["worktree", "add", "-q", "-b", "wt-new", &path]],
            )
        },
    },
];

/// More of each type, run on the plain fixture: the other strategies, modes and choices.
pub const VARIANTS: &[Op] = &[
    Op {
        name: "commit-paths",
        kind: "commit",
        dirty: true,
        fields: |_| json!({"message": "two paths", "paths": ["a.txt", "u.txt"]}),
        git: |fx, c| {
            all(
                fx,
                &c.repo,
                &[
                    &["add", "-A", "--", "a.txt", "u.txt"],
                    &[
                        "commit",
                        "-q",
                        "-m",
                        "two paths",
                        "--only",
                        "--",
                        "a.txt",
                        "u.txt",
                    ],
                ],
            )
        },
    },
    Op {
        name: "commit-index",
        kind: "commit",
        dirty: true,
        fields: |_| json!({"message": "the index"}),
        git: |fx, c| all(fx, &c.repo, &[&["commit", "-q", "-m", "the index"]]),
    },
    Op {
        name: "branch-no-checkout",
        kind: "branch",
        dirty: true,
        fields: |_| json!({"name": "later", "startPoint": "feature", "checkout": false}),
        git: |fx, c| all(fx, &c.repo, &[&["branch", "later", "feature"]]),
    },
    Op {
        name: "merge-ff",
        kind: "merge",
        dirty: false,
        fields: |c| json!({"sourceRef": "feature", "targetRef": c.branch}),
        git: |fx, c| all(fx, &c.repo, &[&["merge", "-q", "feature"]]),
    },
    Op {
        name: "merge-squash",
        kind: "merge",
        dirty: false,
        fields: |c| json!({"sourceRef": "side", "targetRef": c.branch, "strategy": "squash"}),
        git: |fx, c| {
            all(
                fx,
                &c.repo,
                &[
                    &["merge", "-q", "--squash", "side"],
                    &["commit", "-q", "--no-edit"],
                ],
            )
        },
    },
    Op {
        name: "merge-rebase",
        kind: "merge",
        dirty: false,
        fields: |c| json!({"sourceRef": "side", "targetRef": c.branch, "strategy": "rebase"}),
        // Replays side's commits on main (detached, so side stays), then main checked out
        // again takes them by a fast-forward.
        git: |fx, c| {
            let b = c.branch.as_str();
            let side = git_out(fx, &c.repo, &["rev-parse", "side"], None);
            let side = String::from_utf8_lossy(&side.stdout).trim().to_owned();
            if !all(fx, &c.repo, &[&["rebase", "-q", b, &side]]) {
                return false;
            }
            let tip = git_out(fx, &c.repo, &["rev-parse", "HEAD"], None);
            let tip = String::from_utf8_lossy(&tip.stdout).trim().to_owned();
            all(
                fx,
                &c.repo,
                &[&["checkout", "-q", b], &["merge", "-q", "--ff-only", &tip]],
            )
        },
    },
    Op {
        name: "reset-soft",
        kind: "reset",
        dirty: true,
        fields: |_| json!({"targetRef": "merged", "mode": "soft"}),
        git: |fx, c| all(fx, &c.repo, &[&["reset", "-q", "--soft", "merged"]]),
    },
    Op {
        name: "reset-hard",
        kind: "reset",
        dirty: true,
        fields: |_| json!({"targetRef": "HEAD~1", "mode": "hard"}),
        git: |fx, c| all(fx, &c.repo, &[&["reset", "-q", "--hard", "HEAD~1"]]),
    },
    Op {
        name: "rebase-branch",
        kind: "rebase",
        dirty: false,
        fields: |_| json!({"ontoRef": "main", "currentRef": "side"}),
        git: |fx, c| all(fx, &c.repo, &[&["rebase", "-q", "main", "side"]]),
    },
    Op {
        name: "patch-worktree",
        kind: "patch",
        dirty: true,
        fields: |_| json!({"patchContent": PATCH, "applyToIndex": false}),
        git: |fx, c| apply(fx, c, false),
    },
    Op {
        name: "push-force",
        kind: "push",
        dirty: true,
        fields: |c| json!({"remote": "origin", "branch": c.branch, "forceWithLease": true}),
        git: |fx, c| {
            let branch = c.branch.as_str();
            all(
                fx,
                &c.repo,
                &[&["push", "-q", "--force-with-lease", "origin", branch]],
            )
        },
    },
    Op {
        name: "submodule-return",
        kind: "submodulePointer",
        dirty: true,
        fields: |_| json!({"action": "return", "parentPath": "", "relativePath": "lib"}),
        git: |fx, c| {
            let lib = c.repo.join("lib");
            let recorded = git_out(fx, &c.repo, &["rev-parse", "HEAD:lib"], None);
            let oid = String::from_utf8_lossy(&recorded.stdout).trim().to_owned();
            all(fx, &lib, &[&["switch", "-q", "--detach", &oid]])
        },
    },
    Op {
        name: "worktree-existing",
        kind: "worktree",
        dirty: true,
        fields: |c| json!({"branch": "merged", "path": wt(c)}),
        git: |fx, c| {
            let path = wt(c);
            all(fx, &c.repo, &[&["worktree", "add", "-q", &path, "merged"]])
        },
    },
];
