//! Reads reach only what they may: files gitward reads itself inside a repository are
//! never followed through symlinks nor block on FIFOs, and the server keeps answering
//! while a call meets a hostile file.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

use crate::common::{Fixture, Server};

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

/// Kills the server if the test has not finished within a generous bound, so a call
/// that hangs fails the test instead of hanging the suite. It is a guard, not a timing
/// assertion: a healthy server answers these calls in well under a second.
struct Watchdog(Arc<AtomicBool>);

impl Watchdog {
    fn new(server: &Server) -> Watchdog {
        let done = Arc::new(AtomicBool::new(false));
        let seen = Arc::clone(&done);
        let pid = server.pid().to_string();
        std::thread::spawn(move || {
            for _ in 0..600 {
                if seen.load(Ordering::SeqCst) {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid])
                .status();
        });
        Watchdog(done)
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// A legacy-era session, where hosts send `ping`.
fn legacy(server: &mut Server) {
    let init = server.request_raw(
        "initialize",
        json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "0" } }),
    );
    assert!(init["result"].is_object(), "{init}");
    server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
}

fn send_call(server: &mut Server, id: u64, tool: &str, args: Value) {
    server.send(&json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": tool, "arguments": args },
    }));
}

#[test]
fn symlinked_operation_files_are_never_returned() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "one\n", "first");
    let secret = fx.path("secret");
    std::fs::write(&secret, "refs/heads/leaked-secret-7f3a\n").unwrap();
    let merge = repo.join(".git/rebase-merge");
    std::fs::create_dir(&merge).unwrap();
    for name in ["head-name", "onto"] {
        std::os::unix::fs::symlink(&secret, merge.join(name)).unwrap();
    }
    std::fs::write(merge.join("msgnum"), "1\n").unwrap();
    std::fs::write(merge.join("end"), "2\n").unwrap();

    let result = fx.call("repo.brief", json!({ "repoPath": repo }));
    assert!(result.get("error").is_none(), "{result}");
    assert_eq!(
        result["data"]["operationInProgress"]["kind"], "rebase",
        "{result}"
    );
    assert_eq!(result["data"]["operationInProgress"]["step"], 1, "{result}");
    assert!(
        !result.to_string().contains("leaked-secret"),
        "a file outside the repository was returned: {result}"
    );
}

#[test]
fn fifos_in_the_git_directory_never_stall_the_server() {
    let fx = Fixture::new();

    // brief reads MERGE_HEAD itself.
    let merging = fx.init("merging", &[]);
    fx.commit(&merging, "a.txt", "one\n", "first");
    mkfifo(&merging.join(".git/MERGE_HEAD"));

    // conflict.read reads the replayed commit's id during a rebase with a conflict.
    let conflicted = fx.init("conflicted", &[]);
    fx.commit(&conflicted, "a.txt", "base\n", "base");
    fx.git(&conflicted, &["checkout", "-q", "-b", "other"]);
    fx.commit(&conflicted, "a.txt", "theirs\n", "theirs");
    fx.git(&conflicted, &["checkout", "-q", "main"]);
    fx.commit(&conflicted, "a.txt", "ours\n", "ours");
    let merged = fx.git_output(&conflicted, &["merge", "-q", "other"]);
    assert!(!merged.status.success(), "the merge conflicts");
    std::fs::create_dir(conflicted.join(".git/rebase-merge")).unwrap();
    mkfifo(&conflicted.join(".git/REBASE_HEAD"));

    // fleet.digest reads reflog files itself.
    let logged = fx.init("logged", &[]);
    fx.commit(&logged, "a.txt", "one\n", "first");
    std::fs::remove_file(logged.join(".git/logs/HEAD")).unwrap();
    mkfifo(&logged.join(".git/logs/HEAD"));

    let plain = fx.init("plain", &[]);
    fx.commit(&plain, "a.txt", "one\n", "first");

    let mut server = fx.server(&[], &[]);
    let _guard = Watchdog::new(&server);
    legacy(&mut server);
    send_call(
        &mut server,
        101,
        "repo.brief",
        json!({ "repoPath": merging }),
    );
    send_call(
        &mut server,
        102,
        "conflict.read",
        json!({ "repoPath": conflicted }),
    );
    send_call(
        &mut server,
        103,
        "fleet.digest",
        json!({ "repoPaths": [logged], "since": "2000-01-01T00:00:00Z" }),
    );
    send_call(
        &mut server,
        104,
        "repo.brief",
        json!({ "repoPath": merging }),
    );
    server.send(&json!({ "jsonrpc": "2.0", "id": 105, "method": "ping" }));
    send_call(
        &mut server,
        106,
        "repo.status",
        json!({ "repoPath": plain }),
    );

    let mut answers = std::collections::BTreeMap::new();
    while answers.len() < 6 {
        let reply = server.recv();
        if let Some(id) = reply["id"].as_u64() {
            answers.insert(id, reply);
        }
    }
    assert_eq!(answers[&105]["result"], json!({}), "{:?}", answers[&105]);
    let status = &answers[&106]["result"]["structuredContent"];
    assert_eq!(status["data"]["branch"], "main", "{status}");
    for id in [101, 102, 103, 104] {
        assert!(answers[&id]["result"].is_object(), "{:?}", answers[&id]);
    }
    // The FIFOs are ignored, not waited on: the rest of each answer is there.
    let brief = &answers[&101]["result"]["structuredContent"];
    assert_eq!(brief["data"]["head"]["branch"], "main", "{brief}");
    let conflict = &answers[&102]["result"]["structuredContent"];
    assert_eq!(conflict["data"]["inConflict"], true, "{conflict}");
    assert_eq!(conflict["data"]["operation"], "rebase", "{conflict}");
    let digest = &answers[&103]["result"]["structuredContent"];
    assert!(digest.get("error").is_none(), "{digest}");
}
