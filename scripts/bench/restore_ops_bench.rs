//! Capture and restore time per operation type: each of the twelve types but `push` (it
//! needs a remote and its undo is a new push, not a restore) runs for real through the
//! executor — propose, pin, approve, run — and is then restored through the executor,
//! as the page's Restore does. Not a test: figures depend on the machine.
//!
//! Works on a copy of REPO (build it with `scripts/gen-bench-repo DIR`), so REPO itself is
//! left alone. The copy gets a submodule (for `submodulePointer`) and a few bench
//! branches; its 100 modified files stay modified except while `rebase` runs, which needs
//! a clean worktree.
//!
//! Per type and round: `capture` is a restore point taken on the state the run then sees
//! (the refs the operation's intent names), `run` is the whole execution (its own restore
//! point, the write, the after-state, the checks), `restore` puts the point back.
//!
//! Usage: restore_ops_bench REPO [ROUNDS]

// A benchmark driver stops at the first failure, with its location, and prints figures.
#![allow(clippy::unwrap_used)]
#![allow(clippy::print_stdout)]
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gitward::config::Config;
use gitward::gateway::api::{Channel, Proposal, Status};
use gitward::gateway::server::executor::Executor;
use gitward::gateway::server::restore::{self, Caps, Capture, Steps};
use gitward::gateway::server::store::{Settings, Store};
use jiff::Timestamp;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const TYPES: &[&str] = &[
    "commit",
    "branch",
    "worktree",
    "merge",
    "discard",
    "reset",
    "rebase",
    "patch",
    "branchDelete",
    "submodulePointer",
    "plan",
];

fn git(repo: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

struct Bench {
    scratch: PathBuf,
    repo: PathBuf,
    db: PathBuf,
    exec: Executor,
    cancel: CancellationToken,
}

/// A commit on `parent` that adds `file`, as branch `name` (plain git plumbing on a
/// private index, so the worktree and index are untouched).
fn side_commit(b: &Bench, name: &str, parent: &str, file: &str) {
    let index = b.scratch.join("side-index");
    let env_git = |args: &[&str], stdin: Option<&str>| -> String {
        use std::io::Write;
        let mut cmd = std::process::Command::new("git");
        cmd.arg("-C")
            .arg(&b.repo)
            .args(args)
            .env("GIT_INDEX_FILE", &index)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let mut input = child.stdin.take().unwrap();
        input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
        drop(input);
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    env_git(&["read-tree", parent], None);
    let blob = env_git(
        &["hash-object", "-w", "--stdin"],
        Some(&format!("{name}\n")),
    );
    let info = format!("100644,{blob},{file}");
    env_git(&["update-index", "--add", "--cacheinfo", &info], None);
    let tree = env_git(&["write-tree"], None);
    let commit = env_git(&["commit-tree", &tree, "-p", parent, "-m", name], None);
    git(
        &b.repo,
        &["update-ref", &format!("refs/heads/{name}"), &commit],
    );
    let _ = std::fs::remove_file(&index);
}

/// The copy, its identity, a drifted submodule and the branches the types use.
fn setup(source: &Path) -> Bench {
    let scratch = tempfile::tempdir().unwrap().keep();
    let repo = scratch.join("repo");
    let ok = std::process::Command::new("cp")
        .arg("-a")
        .arg(source)
        .arg(&repo)
        .status()
        .unwrap();
    assert!(ok.success());
    for (k, v) in [
        ("user.name", "Bench"),
        ("user.email", "bench@example.com"),
        ("commit.gpgsign", "false"),
        ("protocol.file.allow", "always"),
    ] {
        git(&repo, &["config", k, v]);
    }
    let lib = scratch.join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    git(&lib, &["init", "-q", "-b", "main"]);
    let mut oids = Vec::new();
    for v in ["v1", "v2"] {
        std::fs::write(lib.join("lib.txt"), v).unwrap();
        git(&lib, &["add", "lib.txt"]);
        git(
            &lib,
            &[
                "-c",
                "user.name=Bench",
                "-c",
                "user.email=bench@example.com",
                "commit",
                "-q",
                "-m",
                v,
            ],
        );
        oids.push(git(&lib, &["rev-parse", "HEAD"]));
    }
    let url = lib.display().to_string();
    git(
        &repo,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            &url,
            "libs/lib",
        ],
    );
    let sub = repo.join("libs/lib");
    git(&sub, &["checkout", "-q", "--detach", &oids[0]]);
    git(&repo, &["add", "libs/lib"]);
    git(
        &repo,
        &[
            "commit",
            "-q",
            "-m",
            "add lib at v1",
            "--",
            ".gitmodules",
            "libs/lib",
        ],
    );
    git(&sub, &["checkout", "-q", "--detach", &oids[1]]);
    let db = scratch.join("gw/gateway.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    std::fs::set_permissions(
        db.parent().unwrap(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let config = Config {
        allowed_roots: vec![scratch.clone()],
        ..Config::default()
    };
    let exec = Executor::new(&db, Settings::default(), Arc::new(config));
    let b = Bench {
        scratch,
        repo,
        db,
        exec,
        cancel: CancellationToken::new(),
    };
    side_commit(&b, "bench/side", "HEAD", "bench/side.txt");
    side_commit(&b, "bench/onto", "HEAD~1", "bench/onto.txt");
    b
}

fn new_file_patch(path: &str, line: &str) -> String {
    format!(
        "diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+{line}\n"
    )
}

/// The proposal fields of `kind` for `round`, after preparing what it acts on.
fn prepare(b: &Bench, kind: &str, round: usize) -> Value {
    let repo = &b.repo;
    match kind {
        "commit" => {
            std::fs::create_dir_all(repo.join("bench")).unwrap();
            std::fs::write(repo.join("bench/commit.txt"), format!("round {round}\n")).unwrap();
            json!({"message": "bench commit", "paths": ["bench/commit.txt"]})
        }
        "branch" => json!({"name": format!("bench/b{round}")}),
        "worktree" => json!({
            "branch": format!("bench/w{round}"),
            "path": b.scratch.join(format!("wt{round}")).display().to_string(),
        }),
        "merge" => json!({"sourceRef": "bench/side", "targetRef": "main"}),
        "discard" => {
            std::fs::write(
                repo.join("d001/f00100.txt"),
                format!("local edit {round}\n"),
            )
            .unwrap();
            json!({"paths": ["d001/f00100.txt"]})
        }
        "reset" => json!({"targetRef": "HEAD~1", "mode": "mixed"}),
        "rebase" => json!({"ontoRef": "bench/onto"}),
        "patch" => json!({"patchContent": new_file_patch("bench/patch.txt", "patched")}),
        "branchDelete" => {
            let name = format!("bench/del{round}");
            git(repo, &["branch", &name, "HEAD~1"]);
            json!({"targets": [{"repoPath": repo.display().to_string(), "branches": [name]}]})
        }
        "submodulePointer" => {
            json!({"action": "record", "relativePath": "libs/lib", "message": "bump lib"})
        }
        "plan" => json!({"steps": [
            {"operationType": "patch", "patchContent": new_file_patch("bench/plan.txt", "planned")},
            {"operationType": "reset", "targetRef": "HEAD~1", "mode": "soft"},
        ]}),
        other => panic!("no bench for {other}"),
    }
}

/// Removes what a restore leaves on purpose (a worktree made by the operation).
fn tidy(b: &Bench, kind: &str, round: usize) {
    if kind == "worktree" {
        let path = b.scratch.join(format!("wt{round}"));
        git(
            &b.repo,
            &["worktree", "remove", "--force", &path.display().to_string()],
        );
        git(&b.repo, &["branch", "-D", &format!("bench/w{round}")]);
    }
}

/// One round of `kind`: (capture, run, restore).
async fn round(b: &Bench, kind: &str, n: usize) -> (Duration, Duration, Duration) {
    let fields = prepare(b, kind, n);
    let head = git(&b.repo, &["rev-parse", "HEAD"]);
    let mut body = json!({
        "agentId": "bench",
        "operationType": kind,
        "repoPath": b.repo.display().to_string(),
        "reason": "benchmark",
        "requestedAt": "2026-05-28T11:42:09.512Z",
    });
    for (k, v) in fields.as_object().unwrap() {
        body[k] = v.clone();
    }
    let proposal: Proposal = serde_json::from_value(body).unwrap();
    let id = uuid::Uuid::new_v4().to_string();
    let mut store = Store::open(&b.db, Settings::default()).unwrap();
    store.insert(&id, &proposal, Timestamp::now()).unwrap();
    let pins = b.exec.pin(&id, &b.cancel).await.unwrap();
    store.approve(&id, Channel::Web, Timestamp::now()).unwrap();
    let op = gitward::operation::find(kind).unwrap();
    let refs = op.intent(&proposal.fields, &pins).unwrap().refs();
    let repo = gitward::git::repo::open(
        b.exec.config(),
        "repoPath",
        &b.repo.display().to_string(),
        &b.cancel,
    )
    .await
    .unwrap();
    let caps = Caps::default();
    let what = Capture {
        refs: &refs,
        paths: &[],
        config: &[],
        preview_id: None,
        operation_type: Some(kind),
        caps: &caps,
    };
    let start = Instant::now();
    restore::take_timed(
        &mut store,
        &repo,
        &b.cancel,
        &what,
        Timestamp::now(),
        &Steps::default(),
    )
    .await
    .unwrap();
    let capture = start.elapsed();
    let start = Instant::now();
    let record = b.exec.run(&id, &b.cancel).await.unwrap();
    let run = start.elapsed();
    assert_eq!(record.status, Status::Completed, "{kind}: {record:?}");
    let point = record.result.unwrap().restore_point_id.unwrap();
    let start = Instant::now();
    b.exec.restore(&point, true, &b.cancel).await.unwrap();
    let restore = start.elapsed();
    assert_eq!(
        git(&b.repo, &["rev-parse", "HEAD"]),
        head,
        "{kind}: HEAD is back"
    );
    tidy(b, kind, n);
    (capture, run, restore)
}

/// The modified tracked files and their bytes, so a clean worktree can be made and the
/// changes put back.
fn dirty_files(repo: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    git(repo, &["diff", "--name-only", "-z", "--ignore-submodules"])
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let path = repo.join(p);
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect()
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let source =
        std::fs::canonicalize(args.get(1).expect("usage: restore_ops_bench REPO [ROUNDS]"))
            .unwrap();
    let rounds: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(5);
    let b = setup(&source);
    println!(
        "{:<17} {:>11} {:>9} {:>11}   (medians of {rounds}, ms)",
        "type", "capture", "run", "restore"
    );
    for kind in TYPES {
        let saved = (*kind == "rebase").then(|| {
            let saved = dirty_files(&b.repo);
            git(&b.repo, &["checkout", "--", "."]);
            saved
        });
        let (mut c, mut r, mut s) = (Vec::new(), Vec::new(), Vec::new());
        for n in 0..rounds {
            let (capture, run, restore) = round(&b, kind, n).await;
            c.push(capture);
            r.push(run);
            s.push(restore);
        }
        for (path, bytes) in saved.unwrap_or_default() {
            std::fs::write(path, bytes).unwrap();
        }
        println!(
            "{kind:<17} {:>11.1} {:>9.1} {:>11.1}",
            ms(median(c)),
            ms(median(r)),
            ms(median(s))
        );
    }
    let _ = std::fs::remove_dir_all(&b.scratch);
}
