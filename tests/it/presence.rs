//! The presence file: written after accepted calls, private, bounded, removed on exit.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::Fixture;

fn presence_dir(fx: &Fixture) -> PathBuf {
    fx.run_dir().join("presence").join("mcp")
}

/// The records in the presence directory (temp files aside).
fn records(fx: &Fixture) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(presence_dir(fx)) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect();
    out.sort();
    out
}

/// The record of server `pid`, once `ready` accepts it. The file is written off the
/// call path, so it is polled for (a bound, not a timing assertion).
fn record_of(fx: &Fixture, pid: u32, ready: impl Fn(&Value) -> bool) -> (PathBuf, Value) {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        for path in records(fx) {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with(&format!("{pid}-"))
                && let Ok(bytes) = std::fs::read(&path)
                && let Ok(body) = serde_json::from_slice::<Value>(&bytes)
                && ready(&body)
            {
                return (path, body);
            }
        }
        assert!(Instant::now() < until, "no presence record for {pid}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn written_after_an_accepted_call_private_and_removed_on_stdin_close() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let mut server = fx.server(&[], &[]);
    // A subdirectory is recorded as its canonical top level.
    std::fs::create_dir_all(repo.join("sub")).unwrap();
    server.call("repo.status", json!({ "repoPath": repo.join("sub") }));
    let pid = server.pid();
    let (path, body) = record_of(&fx, pid, |b| {
        b["repositories"].as_array().is_some_and(|r| !r.is_empty())
    });

    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(&presence_dir(&fx)), 0o700);
    let session = body["sessionId"].as_str().unwrap();
    assert_eq!(
        path.file_name().unwrap().to_string_lossy(),
        format!("{pid}-{session}.json")
    );
    assert_eq!(body["schemaVersion"], 1);
    assert_eq!(body["pid"], pid);
    assert_eq!(
        body["client"],
        json!({ "name": "gitward-tests", "version": "1.0.0" })
    );
    let repos = body["repositories"].as_array().unwrap();
    assert_eq!(repos.len(), 1);
    assert_eq!(repos[0]["repoPath"], json!(repo));
    assert_eq!(repos[0]["lastTool"], "repo.status");
    assert!(repos[0]["lastCallAtMs"].as_u64().unwrap() >= body["startedAtMs"].as_u64().unwrap());
    let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "schemaVersion",
            "pid",
            "sessionId",
            "startedAtMs",
            "updatedAtMs",
            "client",
            "repositories"
        ]
    );

    server.finish();
    assert!(!path.exists(), "removed on clean exit (stdin closed)");
}

#[test]
fn legacy_clients_are_named_by_initialize() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let mut server = fx.server(&[], &[]);
    server.request_raw(
        "initialize",
        json!({ "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": { "name": "legacy-host", "version": "0.9" } }),
    );
    let reply = server.request_raw(
        "tools/call",
        json!({ "name": "repo.status", "arguments": { "repoPath": repo } }),
    );
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    let (_, body) = record_of(&fx, server.pid(), |_| true);
    assert_eq!(
        body["client"],
        json!({ "name": "legacy-host", "version": "0.9" })
    );
    assert_eq!(body["repositories"][0]["repoPath"], json!(repo));
}

#[test]
fn failed_calls_are_not_recorded() {
    let fx = Fixture::new();
    let refused = fx.init("refused", &[]);
    let accepted = fx.init("accepted", &[]);
    let mut server = fx.server(&[], &[]);
    let error = server.call(
        "repo.status",
        json!({ "repoPath": refused, "maxEntries": 0 }),
    );
    assert_eq!(error["error"]["code"], -32602);
    let unknown = server.request("tools/call", json!({ "name": "no.such", "arguments": {} }));
    assert_eq!(unknown["error"]["code"], -32602);
    server.call("repo.status", json!({ "repoPath": accepted }));
    let (_, body) = record_of(&fx, server.pid(), |b| {
        !b["repositories"].as_array().unwrap().is_empty()
    });
    assert_eq!(
        body["repositories"],
        json!([{ "repoPath": accepted, "lastCallAtMs": body["repositories"][0]["lastCallAtMs"], "lastTool": "repo.status" }])
    );
}

#[test]
fn at_most_sixteen_repositories_least_recently_used_evicted() {
    let fx = Fixture::new();
    let repos: Vec<PathBuf> = (0..17).map(|i| fx.init(&format!("r{i:02}"), &[])).collect();
    let mut server = fx.server(&[], &[]);
    for repo in &repos {
        server.call("repo.status", json!({ "repoPath": repo }));
    }
    // r01 is used again, so r00 and then r02 are the oldest.
    server.call("repo.status", json!({ "repoPath": repos[1] }));
    let first = |b: &Value| b["repositories"][0]["repoPath"] == json!(repos[1]);
    let (_, body) = record_of(&fx, server.pid(), first);
    let kept: Vec<&str> = body["repositories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["repoPath"].as_str().unwrap())
        .collect();
    assert_eq!(kept.len(), 16);
    let expected: Vec<String> = std::iter::once(1)
        .chain((2..17).rev())
        .map(|i| repos[i].display().to_string())
        .collect();
    assert_eq!(kept, expected, "most recent first; r00 evicted");
}

fn signal_removes_the_record(signal: rustix::process::Signal) {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let mut server = fx.server(&[], &[]);
    server.call("repo.status", json!({ "repoPath": repo }));
    let (path, _) = record_of(&fx, server.pid(), |_| true);
    let pid = rustix::process::Pid::from_raw(server.pid() as i32).unwrap();
    rustix::process::kill_process(pid, signal).unwrap();
    let status = server.wait();
    assert!(status.success(), "{status:?}");
    assert!(!path.exists(), "removed on {signal:?}");
}

#[test]
fn removed_on_sigterm() {
    signal_removes_the_record(rustix::process::Signal::TERM);
}

#[test]
fn removed_on_sigint() {
    signal_removes_the_record(rustix::process::Signal::INT);
}

#[test]
fn left_by_kill_and_swept_by_the_next_start() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let mut killed = fx.server(&[], &[]);
    killed.call("repo.status", json!({ "repoPath": repo }));
    let (orphan, _) = record_of(&fx, killed.pid(), |_| true);
    let pid = rustix::process::Pid::from_raw(killed.pid() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).unwrap();
    killed.wait();
    assert!(orphan.exists(), "a killed server cannot clean up");

    // A record of a live process not updated for more than 24 hours is stale too; a
    // fresh one of a live process stays.
    let dir = presence_dir(&fx);
    let me = std::process::id();
    let now = now_ms();
    let old = dir.join(format!("{me}-00000000-0000-4000-8000-000000000001.json"));
    let fresh = dir.join(format!("{me}-00000000-0000-4000-8000-000000000002.json"));
    for (path, updated) in [(&old, now - 25 * 3600 * 1000), (&fresh, now)] {
        std::fs::write(path, record_body(me, "x", updated, &repo, "cursor")).unwrap();
    }

    let mut next = fx.server(&[], &[]);
    next.request("tools/list", Value::Null);
    assert!(!orphan.exists(), "swept once its pid is gone");
    assert!(!old.exists(), "swept after 24 hours");
    assert!(fresh.exists(), "a live, fresh record stays");
}

#[test]
fn disabled_by_the_environment() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let mut off = fx.server(&[], &[("FLUXGIT_MCP_PRESENCE_DISABLED", "")]);
    off.call("repo.status", json!({ "repoPath": repo }));
    // A server started later whose record is visible proves the first one had time.
    let mut on = fx.server(&[], &[]);
    on.call("repo.status", json!({ "repoPath": repo }));
    record_of(&fx, on.pid(), |_| true);
    let names: Vec<String> = records(&fx)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(!names[0].starts_with(&format!("{}-", off.pid())));
}

pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// A presence record as another server would write it.
pub fn record_body(pid: u32, session: &str, updated: u64, repo: &Path, client: &str) -> String {
    json!({
        "schemaVersion": 1,
        "pid": pid,
        "sessionId": session,
        "startedAtMs": updated,
        "updatedAtMs": updated,
        "client": { "name": client, "version": "9.9" },
        "repositories": [{ "repoPath": repo, "lastCallAtMs": updated, "lastTool": "repo.status" }],
    })
    .to_string()
}
