//! Stopping or doubling a real gateway never leaves a repository half-done or a status
//! false: a second gateway on the same store refuses and touches nothing; SIGTERM or
//! SIGINT during a long plan rebase ends with the repository either rebased and
//! `completed` or untouched and `failed/interrupted` — never mid-rebase — and the ledger
//! says what the store says.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

use gitward::gateway::api::{FailureKind, Status, StatusRecord};
use gitward::gateway::server::store::{Settings, Store};
use serde_json::{Value, json};

use super::common::Fixture;
use super::gateway_support::{Gateway, command, dirty_repo, preview_id};

/// Commits the rebase replays.
const COMMITS: usize = 150;

fn ledger_entries(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The ledger's transitions of proposal `id`, in order.
fn transitions(ledger: &Path, id: &str) -> Vec<String> {
    ledger_entries(ledger)
        .into_iter()
        .filter(|e| e["event_type"] == "proposal_transition" && e["previewId"] == json!(id))
        .map(|e| e["transition"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The store's record of `id`, read with no gateway running (so nothing reconciles it).
fn stored(fx: &Fixture, id: &str) -> StatusRecord {
    let db = fx.run_dir().join("gateway/gateway.db");
    let mut store = Store::open(&db, Settings::default()).unwrap();
    store.get(id, jiff::Timestamp::now()).unwrap()
}

/// `topic`: COMMITS commits of their own files on `base`; `main` moved on by one. `topic`
/// is checked out and each commit git makes waits a moment in `post-commit`, so the
/// rebase onto `main` takes seconds.
fn long_rebase_repo(fx: &Fixture) -> PathBuf {
    let repo = fx.init("r", &[]);
    fx.commit(&repo, "a.txt", "base\n", "base");
    fx.git(&repo, &["switch", "-q", "-c", "topic"]);
    for i in 0..COMMITS {
        fx.commit(
            &repo,
            &format!("f/{i}.txt"),
            &format!("{i}\n"),
            &format!("c{i}"),
        );
    }
    fx.git(&repo, &["switch", "-q", "main"]);
    fx.commit(&repo, "m.txt", "main\n", "main moves on");
    fx.git(&repo, &["switch", "-q", "topic"]);
    super::common::write_executable(
        &repo.join(".git/hooks/post-commit"),
        "#!/bin/sh\nsleep 0.05\n",
    );
    repo
}

fn propose_plan_rebase(gw: &Gateway, repo: &Path) -> String {
    let body = json!({"agentId": "claude-code", "operationType": "plan", "repoPath": repo,
        "reason": "bring topic up to date", "requestedAt": "2026-05-28T11:42:09.512Z",
        "steps": [{"operationType": "rebase", "ontoRef": "main"}]});
    preview_id(&gw.post_handshake("/v1/mcp/operation/preview/plan", &body))
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "{what} never happened"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn signal(gw: &Gateway, sig: Signal) {
    let pid = Pid::from_raw(i32::try_from(gw.pid()).unwrap()).unwrap();
    rustix::process::kill_process(pid, sig).unwrap();
}

/// Waits for the gateway to exit; its exit status and stderr.
fn exited(mut gw: Gateway) -> (std::process::ExitStatus, String) {
    let mut status = None;
    wait_for("the gateway's exit", || {
        status = gw.child.try_wait().unwrap();
        status.is_some()
    });
    let mut err = String::new();
    if let Some(mut s) = gw.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut s, &mut err);
    }
    (status.unwrap(), err)
}

/// A signal during the rebase: the repository ends rebased and `completed` or untouched
/// and `failed/interrupted`, never in between; the exit status, the store and the ledger
/// agree. Returns the final status.
fn signal_mid_rebase(sig: Signal, args: &[&str]) -> Status {
    let fx = Fixture::new();
    let repo = long_rebase_repo(&fx);
    let before = fx.git(&repo, &["rev-parse", "topic"]);
    let ledger = fx.path("audit/mcp.jsonl");
    let ledger_env = ledger.display().to_string();
    let env = [("FLUXGIT_MCP_AUDIT_LOG", ledger_env.as_str())];
    let gw = Gateway::start(&fx, args, &env);
    let session = gw.login();
    let id = propose_plan_rebase(&gw, &repo);
    let approved = session.post(
        &format!("/api/proposals/{id}/approve"),
        &json!({"confirmDestructive": true}),
    );
    assert!(matches!(approved.status, 200 | 202), "{approved:?}");
    wait_for("the rebase's start", || {
        repo.join(".git/rebase-merge").is_dir()
    });
    signal(&gw, sig);
    let (status, stderr) = exited(gw);

    assert!(
        !repo.join(".git/rebase-merge").exists(),
        "left mid-rebase: {stderr}"
    );
    assert!(!repo.join(".git/rebase-apply").exists(), "{stderr}");
    assert_eq!(fx.git(&repo, &["symbolic-ref", "HEAD"]), "refs/heads/topic");
    assert_eq!(fx.git(&repo, &["status", "--porcelain"]), "", "{stderr}");
    let record = stored(&fx, &id);
    let result = record
        .result
        .clone()
        .unwrap_or_else(|| panic!("{record:?}"));
    assert!(
        result.fields.get("reconciled").is_none(),
        "ended by its own gateway, not a later start: {record:?}"
    );
    let after = fx.git(&repo, &["rev-parse", "topic"]);
    match record.status {
        Status::Completed => {
            assert!(status.success(), "{status:?} {stderr}");
            fx.git(&repo, &["merge-base", "--is-ancestor", "main", "topic"]);
            let replayed = fx.git(&repo, &["rev-list", "--count", "main..topic"]);
            assert_eq!(replayed, COMMITS.to_string());
        }
        Status::Failed => {
            assert!(
                !status.success(),
                "an interrupted write exits non-zero: {stderr}"
            );
            assert_eq!(result.failure, Some(FailureKind::Interrupted), "{record:?}");
            let point = result
                .restore_point_id
                .clone()
                .expect("the restore point's id");
            assert!(point.starts_with("rp_"), "{point}");
            assert_eq!(after, before, "untouched: {record:?}");
            assert_eq!(
                result.fields["inProgress"]["action"], "aborted",
                "{record:?}"
            );
        }
        other => panic!("{other:?}: {record:?} {stderr}"),
    }
    let end = record.status.as_str();
    assert_eq!(
        transitions(&ledger, &id),
        ["proposed", "approved", "executing", end],
        "the ledger agrees with the store"
    );
    record.status
}

#[test]
fn sigterm_during_a_long_plan_rebase_lets_it_finish_and_records_the_truth() {
    // The default bound (30 s) outlasts the rebase.
    let status = signal_mid_rebase(Signal::TERM, &[]);
    assert_eq!(status, Status::Completed);
}

#[test]
fn sigint_past_the_bound_aborts_the_rebase_and_puts_the_repository_back() {
    let status = signal_mid_rebase(Signal::INT, &["--stop-timeout", "1s"]);
    assert_eq!(status, Status::Failed);
}

/// Runs a gateway that must refuse to start: its output once it exited; one still
/// running after a while is stopped and the test fails.
fn refused(mut cmd: std::process::Command) -> std::process::Output {
    let mut child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "a second gateway started on the same store: {}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_second_gateway_on_the_same_store_refuses_and_touches_nothing() {
    let fx = Fixture::new();
    let repo = dirty_repo(&fx, "r");
    let first = Gateway::start(&fx, &[], &[]);
    let session = first.login();
    let id = preview_id(&first.propose_commit(&repo, "claude-code", None));
    let run_files = fx.run_dir().join("gateway");
    let files_before: Vec<(PathBuf, Vec<u8>)> = ["ui.json", "cli-token"]
        .iter()
        .map(|f| (run_files.join(f), std::fs::read(run_files.join(f)).unwrap()))
        .collect();

    let root = fx.root().display().to_string();
    let second = refused(command(
        &fx,
        &["gateway", "--addr", "127.0.0.1:0", "--allowed-root", &root],
        &[],
    ));
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "{err}");
    assert_eq!(second.stdout, b"", "no start-up line");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains(&format!("pid {}", first.pid())), "{err}");
    assert!(err.contains(&first.handshake), "{err}");
    assert!(err.contains(&first.ui), "{err}");
    for (path, bytes) in &files_before {
        assert_eq!(&std::fs::read(path).unwrap(), bytes, "{}", path.display());
    }
    // The same store named with --db from elsewhere is refused too.
    let db = run_files.join("gateway.db").display().to_string();
    let third = refused(command(
        &fx,
        &[
            "gateway",
            "--addr",
            "127.0.0.1:0",
            "--db",
            &db,
            "--allowed-root",
            &root,
        ],
        &[("FLUXGIT_RUN_DIR", fx.path("other-run").to_str().unwrap())],
    ));
    assert!(!third.status.success());
    assert!(String::from_utf8_lossy(&third.stderr).contains("pid"));

    // The first one carries on: its write completes and is recorded so.
    let approved = session.post(
        &format!("/api/proposals/{id}/approve"),
        &json!({"confirmDestructive": false}),
    );
    assert!(matches!(approved.status, 200 | 202), "{approved:?}");
    let mut record = Value::Null;
    wait_for("the commit's end", || {
        record = first
            .get_handshake(&format!("/v1/mcp/operation/status/{id}"))
            .json();
        !matches!(record["status"].as_str(), Some("approved" | "executing"))
    });
    assert_eq!(record["status"], "completed", "{record}");
    assert_eq!(fx.git(&repo, &["rev-list", "--count", "HEAD"]), "2");
}
