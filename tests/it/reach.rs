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
    let modules = fx.path("modules");
    std::fs::write(
        &modules,
        "[submodule \"s\"]\n\tpath = leaked-secret-modules\n\turl = ./s\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(&modules, repo.join(".gitmodules")).unwrap();
    std::fs::write(merge.join("msgnum"), "1\n").unwrap();
    std::fs::write(merge.join("end"), "2\n").unwrap();

    let result = fx.call("repo.brief", json!({ "repoPath": repo }));
    assert!(result.get("error").is_none(), "{result}");
    assert_eq!(result["data"]["operationInProgress"], "rebase", "{result}");
    assert_eq!(result["data"]["operationDetails"]["step"], 1, "{result}");
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

/// A value for each required argument other than `repoPath`, by name. A new tool with a
/// required argument not listed here fails the test until one is added, so every tool
/// taking a repository is covered.
fn example(tool: &str, field: &str) -> Value {
    match field {
        "path" => json!("a.txt"),
        "targetRef" if tool == "operation.preview.merge" => json!("main"),
        "targetRef" | "commit" => json!("HEAD"),
        "since" => json!("2000-01-01T00:00:00Z"),
        "reason" => json!("proposed by the reach test"),
        "message" => json!("A commit"),
        "name" => json!("agent/reach"),
        "branch" => json!("agent/reach-worktree"),
        "eventId" => json!("reflog:HEAD@{0}"),
        "restorePointId" => json!("rp_reach"),
        "targets" => json!([{"repoPath": "/nowhere", "branches": ["agent/reach"]}]),
        "sourceRef" => json!("HEAD"),
        "paths" => json!(["a.txt"]),
        "steps" => json!([{"operationType": "reset", "targetRef": "HEAD", "mode": "soft"}]),
        "ontoRef" => json!("main"),
        "action" => json!("return"),
        "relativePath" => json!("libs/lib"),
        "patchContent" => json!("--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y\n"),
        _ => panic!("{tool}: add an example value for the required argument {field}"),
    }
}

/// Arguments naming `repo` for every listed tool that takes a repository path.
fn repository_calls(server: &mut Server, repo: &Path) -> Vec<(String, Value)> {
    let list = server.request("tools/list", json!({}));
    let mut calls = Vec::new();
    for tool in list["result"]["tools"].as_array().unwrap() {
        let name = crate::common::registry::identity(tool["name"].as_str().unwrap());
        let schema = &tool["inputSchema"];
        let properties = schema["properties"].as_object().unwrap();
        let mut args = json!({});
        if properties.contains_key("repoPath") && !properties.contains_key("repoPaths") {
            args["repoPath"] = json!(repo);
        } else if properties.contains_key("repoPaths") {
            args["repoPaths"] = json!([repo]);
        } else {
            continue;
        }
        for field in schema["required"].as_array().into_iter().flatten() {
            let field = field.as_str().unwrap();
            if field != "repoPath" {
                args[field] = example(&name, field);
            }
        }
        calls.push((name, args));
    }
    calls
}

#[test]
fn git_data_outside_the_allowed_roots_is_refused_by_every_tool() {
    let fx = Fixture::new();
    let allowed = fx.path("allowed");
    std::fs::create_dir_all(&allowed).unwrap();
    let victim = fx.init("outside/victim", &[]);
    let secret = fx.commit(&victim, "a.txt", "private\n", "victim secret commit");
    fx.git(&victim, &["repack", "-a", "-d", "-q"]);
    let victim_git = victim.join(".git");

    // A `.git` file naming the other repository's git directory.
    let gitfile = allowed.join("gitfile");
    std::fs::create_dir_all(&gitfile).unwrap();
    std::fs::write(
        gitfile.join(".git"),
        format!("gitdir: {}\n", victim_git.display()),
    )
    .unwrap();
    // A `.git` symlink.
    let linked = allowed.join("dotgit-link");
    std::fs::create_dir_all(&linked).unwrap();
    std::os::unix::fs::symlink(&victim_git, linked.join(".git")).unwrap();
    // A git directory whose `commondir` is the other repository's.
    let common = allowed.join("commondir");
    std::fs::create_dir_all(common.join(".git")).unwrap();
    std::fs::write(common.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(
        common.join(".git/commondir"),
        format!("{}\n", victim_git.display()),
    )
    .unwrap();
    // A repository of its own that borrows the other one's objects.
    let borrowing = fx.init("allowed/alternates", &[]);
    std::fs::write(
        borrowing.join(".git/objects/info/alternates"),
        format!("{}\n", victim_git.join("objects").display()),
    )
    .unwrap();
    std::fs::write(
        borrowing.join(".git/refs/heads/main"),
        format!("{secret}\n"),
    )
    .unwrap();

    // A repository whose object directory is a symlink.
    let objects_link = fx.init("allowed/objects-link", &[]);
    std::fs::remove_dir_all(objects_link.join(".git/objects")).unwrap();
    std::os::unix::fs::symlink(
        victim_git.join("objects"),
        objects_link.join(".git/objects"),
    )
    .unwrap();
    std::fs::write(
        objects_link.join(".git/refs/heads/main"),
        format!("{secret}\n"),
    )
    .unwrap();
    // A repository whose packs are symlinks.
    let pack_link = fx.init("allowed/pack-link", &[]);
    for pack in std::fs::read_dir(victim_git.join("objects/pack")).unwrap() {
        let pack = pack.unwrap();
        std::os::unix::fs::symlink(
            pack.path(),
            pack_link.join(".git/objects/pack").join(pack.file_name()),
        )
        .unwrap();
    }
    std::fs::write(
        pack_link.join(".git/refs/heads/main"),
        format!("{secret}\n"),
    )
    .unwrap();

    // A repository whose refs are another repository's.
    let refs_link = fx.init("allowed/refs-link", &[]);
    std::fs::remove_dir_all(refs_link.join(".git/refs")).unwrap();
    std::os::unix::fs::symlink(victim_git.join("refs"), refs_link.join(".git/refs")).unwrap();

    let plain = fx.init("allowed/plain", &[]);
    fx.commit(&plain, "a.txt", "one\n", "first");

    let root = allowed.display().to_string();
    let mut server = fx.server(&["--allowed-root", &root], &[]);
    let ok = server.call("repo.status", json!({ "repoPath": plain }));
    assert!(ok.get("error").is_none(), "{ok}");

    for repo in [
        &gitfile,
        &linked,
        &common,
        &borrowing,
        &objects_link,
        &pack_link,
        &refs_link,
    ] {
        // Plain git does show the other repository's commit from here: the test can tell.
        assert_eq!(
            fx.git(repo, &["rev-parse", "main"]),
            secret,
            "{}",
            repo.display()
        );
        let calls = repository_calls(&mut server, repo);
        assert!(calls.len() >= 17, "{calls:?}");
        for (tool, args) in calls {
            let result = server.call(&tool, args.clone());
            let text = result.to_string();
            assert!(
                !text.contains(&secret),
                "{tool} {args} served the other repository: {text}"
            );
            if tool.starts_with("fleet.") {
                assert!(
                    text.contains("is outside the allowed roots"),
                    "{tool} {args}: {text}"
                );
                continue;
            }
            assert_eq!(result["error"]["code"], -32602, "{tool} {args}: {text}");
            assert_eq!(result["error"]["data"]["field"], "repoPath", "{text}");
            let message = result["error"]["message"].as_str().unwrap();
            assert!(
                message.contains("is outside the allowed roots")
                    && message.contains("add an allowed root"),
                "{tool} {args}: {message}"
            );
        }
    }
}
