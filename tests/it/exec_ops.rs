//! The write vocabulary executed by the gateway's executor (library level, real git):
//! each operation type leaves the repository exactly as the same plain git commands
//! would, and a precondition that moved between proposal and execution fails `stale`
//! with the repository untouched.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use gitward::config::Config;
use gitward::gateway::api::{Channel, FailureKind, Proposal, Status, StatusRecord};
use gitward::gateway::server::executor::Executor;
use gitward::gateway::server::store::{Settings, Store};
use jiff::Timestamp;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::common::{Fixture, write_executable};

/// A fixture repository, a gateway store and an executor allowed inside the fixture.
pub struct Rig {
    pub fx: Fixture,
    pub repo: PathBuf,
    pub db: PathBuf,
    pub exec: Executor,
    pub cancel: CancellationToken,
}

impl Rig {
    pub fn new() -> Rig {
        let fx = Fixture::new();
        let repo = fx.init("repo", &[]);
        for (k, v) in [
            ("user.name", "Test Author"),
            ("user.email", "author@example.com"),
            ("commit.gpgsign", "false"),
            ("core.autocrlf", "false"),
        ] {
            fx.git(&repo, &["config", k, v]);
        }
        fx.commit(&repo, "a.txt", "one\ntwo\n", "first");
        fx.commit(&repo, "dir/b.txt", "bee\n", "second");
        let db = fx.path("gw/gateway.db");
        std::fs::create_dir_all(db.parent().unwrap()).unwrap();
        let mut perm = std::fs::metadata(db.parent().unwrap())
            .unwrap()
            .permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o700);
        std::fs::set_permissions(db.parent().unwrap(), perm).unwrap();
        let config = Config {
            allowed_roots: vec![fx.root()],
            ..Config::default()
        };
        let exec = Executor::new(&db, Settings::default(), Arc::new(config));
        Rig {
            fx,
            repo,
            db,
            exec,
            cancel: CancellationToken::new(),
        }
    }

    pub fn store(&self) -> Store {
        Store::open(&self.db, Settings::default()).unwrap()
    }

    pub fn git(&self, args: &[&str]) -> String {
        self.fx.git(&self.repo, args)
    }

    /// Inserts a proposal for `op` with `fields` and pins it (as the handshake does).
    pub async fn propose(&self, op: &str, fields: Value) -> Result<String, String> {
        let mut body = json!({
            "agentId": "test-agent",
            "operationType": op,
            "repoPath": self.repo.display().to_string(),
            "reason": "because",
            "requestedAt": "2026-05-28T11:42:09.512Z",
        });
        for (k, v) in fields.as_object().unwrap() {
            body[k] = v.clone();
        }
        let proposal: Proposal = serde_json::from_value(body).unwrap();
        let id = uuid::Uuid::new_v4().to_string();
        self.store()
            .insert(&id, &proposal, Timestamp::now())
            .unwrap();
        self.exec
            .pin(&id, &self.cancel)
            .await
            .map_err(|e| e.to_string())?;
        Ok(id)
    }

    pub fn approve(&self, id: &str) {
        self.store()
            .approve(id, Channel::Web, Timestamp::now())
            .unwrap();
    }

    pub async fn run(&self, id: &str) -> StatusRecord {
        // On the heap, as the gateway's spawned task holds it: a plan's future nests every
        // step's and a rollback's, more than a test thread's stack holds in a debug build.
        Box::pin(self.exec.run(id, &self.cancel)).await.unwrap()
    }

    /// Approves and runs a proposal whose pins moved after it was made: it must fail
    /// `stale`.
    pub async fn approve_and_run_stale(&self, id: &str) -> StatusRecord {
        self.approve(id);
        let record = self.run(id).await;
        assert_eq!(
            record.result.as_ref().unwrap().failure,
            Some(FailureKind::Stale),
            "{record:?}"
        );
        record
    }

    /// Proposes, approves and runs.
    pub async fn execute(&self, op: &str, fields: Value) -> StatusRecord {
        let id = self.propose(op, fields).await.unwrap();
        self.approve(&id);
        self.run(&id).await
    }

    /// A copy of the repository as it is now, for plain git to act on.
    pub fn twin(&self, name: &str) -> PathBuf {
        let dest = self.fx.path(name);
        let ok = std::process::Command::new("cp")
            .args(["-a"])
            .arg(&self.repo)
            .arg(&dest)
            .status()
            .unwrap();
        assert!(ok.success());
        dest
    }
}

/// What plain git says about a repository: HEAD's target, tree and message, the index
/// and the status.
pub fn state(fx: &Fixture, repo: &Path) -> Value {
    json!({
        "head": fx.git_output(repo, &["symbolic-ref", "-q", "HEAD"]).stdout,
        "tree": fx.git(repo, &["rev-parse", "HEAD^{tree}"]),
        "parent": fx.git(repo, &["rev-parse", "HEAD~1"]),
        "message": fx.git(repo, &["log", "-1", "--format=%B"]),
        "index": fx.git(repo, &["ls-files", "-s"]),
        "status": fx.git(repo, &["status", "--porcelain=v2", "--untracked-files=all"]),
        "branches": fx.git(repo, &["for-each-ref", "--format=%(refname) %(objectname)", "refs/heads"]),
    })
}

/// [`state`] without the branch tips: commits made at another second have other ids.
pub fn content_state(fx: &Fixture, repo: &Path) -> Value {
    let mut s = state(fx, repo);
    s.as_object_mut().unwrap().remove("branches");
    s
}

fn result(record: &StatusRecord) -> Value {
    serde_json::to_value(record.result.as_ref().unwrap()).unwrap()
}

fn dirty(rig: &Rig) {
    rig.fx.write(&rig.repo, "a.txt", "one\ntwo\nthree\n");
    rig.fx.write(&rig.repo, "new.txt", "fresh\n");
    rig.fx.write(&rig.repo, "dir/b.txt", "bee changed\n");
    rig.git(&["add", "dir/b.txt"]);
    rig.fx
        .write(&rig.repo, "other.txt", "untracked, not listed\n");
}

#[tokio::test]
async fn commit_of_listed_paths_is_what_plain_git_commits() {
    let rig = Rig::new();
    dirty(&rig);
    let twin = rig.twin("twin");
    let record = rig
        .execute(
            "commit",
            json!({"message": "Add three", "paths": ["a.txt", "new.txt"]}),
        )
        .await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    let r = result(&record);
    assert_eq!(r["commitSha"], rig.git(&["rev-parse", "HEAD"]));
    assert!(r["restorePointId"].as_str().unwrap().starts_with("rp_"));
    rig.fx.git(&twin, &["add", "-A", "--", "a.txt", "new.txt"]);
    rig.fx.git(
        &twin,
        &[
            "commit",
            "-q",
            "-m",
            "Add three",
            "--only",
            "--",
            "a.txt",
            "new.txt",
        ],
    );
    assert_eq!(
        content_state(&rig.fx, &rig.repo),
        content_state(&rig.fx, &twin)
    );
    // The staged change that was not listed stays staged.
    assert!(
        rig.git(&["diff", "--cached", "--name-only"])
            .contains("dir/b.txt")
    );
}

#[tokio::test]
async fn commit_of_everything_and_of_the_index_match_plain_git() {
    let rig = Rig::new();
    dirty(&rig);
    let twin = rig.twin("twin");
    let record = rig
        .execute("commit", json!({"message": "All of it", "stageAll": true}))
        .await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    rig.fx.git(&twin, &["add", "-A"]);
    rig.fx.git(&twin, &["commit", "-q", "-m", "All of it"]);
    assert_eq!(
        content_state(&rig.fx, &rig.repo),
        content_state(&rig.fx, &twin)
    );

    let rig = Rig::new();
    dirty(&rig);
    let twin = rig.twin("twin");
    let record = rig
        .execute("commit", json!({"message": "Staged only"}))
        .await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    rig.fx.git(&twin, &["commit", "-q", "-m", "Staged only"]);
    assert_eq!(
        content_state(&rig.fx, &rig.repo),
        content_state(&rig.fx, &twin)
    );
}

#[tokio::test]
async fn commit_runs_the_hooks_and_a_refusing_hook_fails_it_as_git() {
    let rig = Rig::new();
    dirty(&rig);
    let hook = rig.repo.join(".git/hooks/pre-commit");
    write_executable(&hook, "#!/bin/sh\necho 'no commits today' >&2\nexit 1\n");
    let head = rig.git(&["rev-parse", "HEAD"]);
    let record = rig
        .execute("commit", json!({"message": "m", "stageAll": true}))
        .await;
    assert_eq!(record.status, Status::Failed);
    let r = result(&record);
    assert_eq!(r["failure"], "git");
    assert!(
        r["message"].as_str().unwrap().contains("no commits today"),
        "{r}"
    );
    assert!(r["restorePointId"].is_string());
    assert_eq!(rig.git(&["rev-parse", "HEAD"]), head);
}

#[tokio::test]
async fn commit_preview_lists_the_exact_files_with_counts_and_the_diff() {
    let rig = Rig::new();
    dirty(&rig);
    let id = rig
        .propose(
            "commit",
            json!({"message": "m", "paths": ["a.txt", "new.txt"]}),
        )
        .await
        .unwrap();
    let index_before = std::fs::read(rig.repo.join(".git/index")).unwrap();
    let preview = rig.exec.preview(&id, &rig.cancel).await.unwrap();
    assert_eq!(
        preview["files"],
        json!([
            {"path": "a.txt", "status": "modified", "additions": 1, "deletions": 0},
            {"path": "new.txt", "status": "added", "additions": 1, "deletions": 0},
        ])
    );
    let diff = preview["diff"].as_str().unwrap();
    assert!(
        diff.contains("+three") && diff.contains("+fresh") && !diff.contains("bee"),
        "{diff}"
    );
    assert_eq!(preview["diffTruncated"], false);
    assert_eq!(rig.store().preview(&id).unwrap().unwrap(), preview);
    // The user's index is untouched by the preview.
    assert_eq!(
        std::fs::read(rig.repo.join(".git/index")).unwrap(),
        index_before
    );
}

#[tokio::test]
async fn a_commit_with_nothing_to_commit_is_refused_at_proposal() {
    let rig = Rig::new();
    let err = rig
        .propose("commit", json!({"message": "m"}))
        .await
        .unwrap_err();
    assert!(err.contains("nothing is staged"), "{err}");
    let err = rig
        .propose("commit", json!({"message": "m", "paths": ["a.txt"]}))
        .await
        .unwrap_err();
    assert!(err.contains("no change"), "{err}");
}

#[tokio::test]
async fn branch_with_and_without_checkout_matches_plain_git() {
    let rig = Rig::new();
    let twin = rig.twin("twin");
    let first = rig.git(&["rev-parse", "HEAD~1"]);
    let record = rig
        .execute(
            "branch",
            json!({"name": "feature/x", "startPoint": "HEAD~1", "checkout": false}),
        )
        .await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    assert_eq!(result(&record)["branchOid"], first);
    rig.fx.git(&twin, &["branch", "feature/x", "HEAD~1"]);
    let record = rig.execute("branch", json!({"name": "topic"})).await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    rig.fx.git(&twin, &["switch", "-q", "-c", "topic"]);
    assert_eq!(state(&rig.fx, &rig.repo), state(&rig.fx, &twin));
}

#[tokio::test]
async fn worktree_on_a_new_and_an_existing_branch_matches_plain_git() {
    let rig = Rig::new();
    rig.git(&["branch", "existing", "HEAD~1"]);
    let twin = rig.twin("twin");
    let path = rig.fx.path("wt/new");
    let record = rig
        .execute(
            "worktree",
            json!({"branch": "agent/task", "path": path.display().to_string()}),
        )
        .await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    let r = result(&record);
    assert_eq!(r["worktreePath"], path.display().to_string());
    assert_eq!(r["newBranch"], true);
    let record = rig.execute("worktree", json!({"branch": "existing"})).await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    let default = rig.fx.path("repo.worktrees/existing");
    assert_eq!(
        result(&record)["worktreePath"],
        default.display().to_string()
    );
    assert_eq!(
        std::fs::read_to_string(default.join("a.txt")).unwrap(),
        "one\ntwo\n"
    );
    assert!(!default.join("dir").exists());
    rig.fx.git(&twin, &["branch", "agent/task"]);
    assert_eq!(
        rig.git(&[
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            "refs/heads"
        ]),
        rig.fx.git(
            &twin,
            &[
                "for-each-ref",
                "--format=%(refname) %(objectname)",
                "refs/heads"
            ]
        ),
    );
    let list = rig.git(&["worktree", "list", "--porcelain"]);
    assert!(
        list.contains("branch refs/heads/agent/task")
            && list.contains("branch refs/heads/existing"),
        "{list}"
    );
}

#[tokio::test]
async fn a_worktree_outside_the_allowed_roots_or_on_an_existing_path_is_refused() {
    let rig = Rig::new();
    let err = rig
        .propose(
            "worktree",
            json!({"branch": "x", "path": "/tmp/gitward-elsewhere/x"}),
        )
        .await
        .unwrap_err();
    assert!(err.contains("outside the allowed roots"), "{err}");
    let err = rig
        .propose(
            "worktree",
            json!({"branch": "x", "path": rig.repo.join("dir").display().to_string()}),
        )
        .await
        .unwrap_err();
    assert!(err.contains("already exists"), "{err}");
}

/// Proposes, moves something, approves and runs: the proposal fails `stale` naming what
/// moved, and the repository is exactly as the mover left it.
async fn assert_stale(rig: &Rig, op: &str, fields: Value, mover: impl FnOnce(&Rig), what: &str) {
    let id = rig.propose(op, fields).await.unwrap();
    mover(rig);
    let before = state(&rig.fx, &rig.repo);
    let index = std::fs::read(rig.repo.join(".git/index")).unwrap();
    rig.approve(&id);
    let record = rig.run(&id).await;
    assert_eq!(record.status, Status::Failed, "{record:?}");
    let r = record.result.as_ref().unwrap();
    assert_eq!(r.failure, Some(FailureKind::Stale));
    let moved: Vec<String> = r.fields["moved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["what"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        moved.iter().any(|m| m.contains(what)),
        "{what} not in {moved:?}"
    );
    assert_eq!(state(&rig.fx, &rig.repo), before);
    assert_eq!(std::fs::read(rig.repo.join(".git/index")).unwrap(), index);
}

#[tokio::test]
async fn commit_pins_head_index_and_path_contents() {
    let fields = json!({"message": "m", "paths": ["a.txt"]});
    let rig = Rig::new();
    dirty(&rig);
    assert_stale(
        &rig,
        "commit",
        fields.clone(),
        |r| {
            r.git(&["commit", "-q", "--allow-empty", "-m", "moved on"]);
        },
        "head",
    )
    .await;
    let rig = Rig::new();
    dirty(&rig);
    assert_stale(
        &rig,
        "commit",
        fields.clone(),
        |r| {
            r.fx.write(&r.repo, "zz.txt", "z\n");
            r.git(&["add", "zz.txt"]);
        },
        "index",
    )
    .await;
    assert_stale(
        &rig,
        "commit",
        fields,
        |r| {
            r.fx.write(&r.repo, "a.txt", "edited again\n");
        },
        "changes a.txt",
    )
    .await;
}

#[tokio::test]
async fn branch_and_worktree_pins_go_stale() {
    let rig = Rig::new();
    rig.git(&["branch", "base"]);
    assert_stale(
        &rig,
        "branch",
        json!({"name": "n1", "startPoint": "base"}),
        |r| {
            r.git(&["branch", "-f", "base", "HEAD~1"]);
        },
        "startOid",
    )
    .await;
    assert_stale(
        &rig,
        "branch",
        json!({"name": "n2", "checkout": false}),
        |r| {
            r.git(&["branch", "n2"]);
        },
        "branch",
    )
    .await;
    let path = rig.fx.path("wt/a");
    let p = path.display().to_string();
    assert_stale(
        &rig,
        "worktree",
        json!({"branch": "w1", "path": p}),
        |_| {
            std::fs::create_dir_all(&path).unwrap();
        },
        "pathExists",
    )
    .await;
    assert_stale(
        &rig,
        "worktree",
        json!({"branch": "base"}),
        |r| {
            r.git(&["branch", "-f", "base", "HEAD"]);
        },
        "branch",
    )
    .await;
}

#[tokio::test]
async fn two_runners_racing_one_proposal_execute_it_once() {
    let rig = Rig::new();
    dirty(&rig);
    let id = rig
        .propose("commit", json!({"message": "once", "stageAll": true}))
        .await
        .unwrap();
    rig.approve(&id);
    let (a, b) = tokio::join!(
        rig.exec.run(&id, &rig.cancel),
        rig.exec.run(&id, &rig.cancel)
    );
    assert_eq!(a.is_ok() as u8 + b.is_ok() as u8, 1, "{a:?} {b:?}");
    assert_eq!(rig.git(&["rev-list", "--count", "HEAD"]), "3");
}
