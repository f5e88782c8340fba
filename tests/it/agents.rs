//! `agents.presence` against real processes, session stores written in the agents'
//! documented on-disk shapes under a fake home, and other servers' presence records.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use crate::common::{Fixture, Server, gitward_bin};
use crate::presence::{now_ms, record_body};
use crate::tool_snapshot;

/// Appears in every field the detector must never return.
const CANARY: &str = "CANARY-PROMPT-7f3a";
/// A secret the stores hold; it must never leave the detector either.
const SECRET: &str = "sk-SECRET-91c2";

/// A long-running process that looks like an agent, killed with its children on drop.
struct FakeAgent {
    child: Child,
}

impl FakeAgent {
    /// Runs `program` under the name `name`, in `cwd`.
    fn start(fx: &Fixture, program: &str, name: &str, cwd: &Path, args: &[&str]) -> FakeAgent {
        // One directory per program, so `codex` can be both sleep and sh.
        let bin = fx.path("bin").join(program);
        std::fs::create_dir_all(&bin).unwrap();
        let exe = bin.join(name);
        // A symlink, not a copy: the process is named after the link, and no written
        // copy can be held open by a concurrent fork (`ETXTBSY`).
        if !exe.exists() {
            std::os::unix::fs::symlink(which(program), &exe).unwrap();
        }
        let child = Command::new(&exe)
            .args(args)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        FakeAgent { child }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits until the process has started a child (a shell fixture reaching its tool
    /// call): a bound on the setup, not a timing assertion.
    fn wait_for_child(&self) {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let me = self.pid().to_string();
        loop {
            let has_child = std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
                std::fs::read_to_string(e.path().join("stat")).is_ok_and(|stat| {
                    let after = stat.rsplit_once(") ").map(|(_, r)| r).unwrap_or("");
                    after.split_whitespace().nth(1) == Some(me.as_str())
                })
            });
            if has_child {
                return;
            }
            assert!(std::time::Instant::now() < until, "no child of {me}");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// A `sleep` whose parent has exited (so it shares no parent with the server under
/// test), killed on drop.
struct Orphan {
    pid: u32,
    group: u32,
}

impl Orphan {
    fn start() -> Orphan {
        let out = Command::new("sh")
            .args(["-c", "sleep 600 >/dev/null 2>&1 & echo $!"])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .output()
            .unwrap();
        let pid = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        // The group id is the shell's pid, which is gone; find it from the orphan.
        let group = rustix::process::getpgid(rustix::process::Pid::from_raw(pid as i32))
            .unwrap()
            .as_raw_nonzero()
            .get() as u32;
        Orphan { pid, group }
    }
}

impl Drop for Orphan {
    fn drop(&mut self) {
        if let Some(group) = rustix::process::Pid::from_raw(self.group as i32) {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
    }
}

impl Drop for FakeAgent {
    fn drop(&mut self) {
        if let Some(pid) = rustix::process::Pid::from_raw(self.child.id() as i32) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = self.child.wait();
    }
}

fn which(program: &str) -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{program} on PATH"))
}

fn presence(server: &mut Server, repo: &Path, extra: Value) -> Value {
    let mut args = json!({ "repoPath": repo, "budgetMs": 2000 });
    for (k, v) in extra.as_object().unwrap() {
        args[k] = v.clone();
    }
    let result = server.call("agents.presence", args);
    assert!(result.get("error").is_none(), "{result}");
    result
}

fn agents_named<'a>(result: &'a Value, agent: &str) -> Vec<&'a Value> {
    result["data"]["agents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["agent"] == agent)
        .collect()
}

fn assert_private(fx: &Fixture, result: &Value) {
    let text = result.to_string();
    assert!(!text.contains(CANARY), "a forbidden value leaked: {text}");
    assert!(!text.contains(SECRET), "a secret leaked: {text}");
    assert!(
        !text.contains(&fx.home().display().to_string()),
        "a home path leaked: {text}"
    );
}

#[test]
fn running_agents_in_the_repository() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "a\n", "first");
    let other = fx.init("other", &[]);
    std::fs::create_dir_all(repo.join("src")).unwrap();
    // A shell named `claude` running a tool child: working. Its argv carries a secret
    // prompt, which must never come back.
    let claude = FakeAgent::start(
        &fx,
        "sh",
        "claude",
        &repo.join("src"),
        &["-c", "sleep 600 & wait", CANARY, SECRET],
    );
    claude.wait_for_child();
    // An idle `aider` in the repository: open.
    let aider = FakeAgent::start(&fx, "sleep", "aider", &repo, &["600"]);
    // A `codex` in another repository: not reported.
    let _codex = FakeAgent::start(&fx, "sleep", "codex", &other, &["600"]);

    let mut server = fx.server(&[], &[]);
    let result = presence(&mut server, &repo, json!({}));
    assert_private(&fx, &result);

    let found = agents_named(&result, "claude-code");
    assert_eq!(found.len(), 1, "{result}");
    let c = found[0];
    assert_eq!(c["state"], "working");
    assert_eq!(c["sources"], json!(["process"]));
    assert_eq!(c["pid"], claude.pid());
    assert_eq!(c["branch"], "main");
    assert_eq!(c["likelyCaller"], false);
    assert_eq!(c["sameAgentAsCaller"], false);

    let found = agents_named(&result, "aider");
    assert_eq!(found.len(), 1, "{result}");
    assert_eq!(found[0]["state"], "open");
    assert_eq!(found[0]["pid"], aider.pid());

    assert!(agents_named(&result, "codex").is_empty(), "{result}");
    let data = &result["data"];
    assert_eq!(data["agentCount"], 2);
    assert!(
        data["sourcesChecked"]
            .as_array()
            .unwrap()
            .contains(&json!("process"))
    );
    assert!(data["scan"]["processesScanned"].as_u64().unwrap() >= 3);

    // From the other repository's point of view only codex is there.
    let result = presence(&mut server, &other, json!({}));
    let kinds: Vec<&Value> = result["data"]["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| &a["agent"])
        .collect();
    assert_eq!(kinds, [&json!("codex")]);
}

#[test]
fn linked_worktree_reports_its_own_branch() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "a\n", "first");
    let wt = fx.path("wt");
    fx.git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "feature/x",
            wt.to_str().unwrap(),
        ],
    );
    let _agent = FakeAgent::start(&fx, "sleep", "codex", &wt, &["600"]);
    let mut server = fx.server(&[], &[]);
    // Asked about the main worktree, the agent in the linked one is found.
    let result = presence(&mut server, &repo, json!({}));
    let found = agents_named(&result, "codex");
    assert_eq!(found.len(), 1, "{result}");
    assert_eq!(found[0]["branch"], "feature/x");
    assert_eq!(found[0]["state"], "open");
}

#[test]
fn the_caller_is_marked_and_can_be_left_out() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let bin = fx.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let claude = bin.join("claude");
    std::os::unix::fs::symlink(which("sh"), &claude).unwrap();
    // `claude` runs gitward as its child, as an MCP host does; `; :` keeps the shell alive.
    let mut cmd = Command::new(&claude);
    cmd.args(["-c", "\"$0\"; :"])
        .arg(gitward_bin())
        .current_dir(&repo);
    let mut server = Server::start_cmd(&fx, cmd, &[]);

    let result = presence(&mut server, &repo, json!({}));
    let found = agents_named(&result, "claude-code");
    assert_eq!(found.len(), 1, "{result}");
    assert_eq!(found[0]["likelyCaller"], true);
    assert_eq!(found[0]["sameAgentAsCaller"], true);
    assert_eq!(result["data"]["omittedLikelyCaller"], 0);

    let result = presence(&mut server, &repo, json!({ "includeLikelyCaller": false }));
    assert!(agents_named(&result, "claude-code").is_empty(), "{result}");
    assert_eq!(result["data"]["omittedLikelyCaller"], 1);
    assert_eq!(result["data"]["agentCount"], 0);
}

/// Claude Code's project directory name for a path.
fn claude_dir(path: &Path) -> String {
    path.display()
        .to_string()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

fn write_lines(path: &Path, lines: &[Value], tail: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut text = String::new();
    for line in lines {
        text.push_str(&line.to_string());
        text.push('\n');
    }
    text.push_str(tail);
    std::fs::write(path, text).unwrap();
}

fn claude_transcript(repo: &Path) -> Vec<Value> {
    let r = repo.display().to_string();
    vec![
        json!({ "type": "user", "cwd": r, "gitBranch": "old-branch", "sessionId": "s1",
                "message": { "role": "user", "content": format!("{CANARY} please use {SECRET}") } }),
        json!({ "type": "assistant", "cwd": r, "gitBranch": "old-branch",
                "message": { "content": [
                    { "type": "thinking", "thinking": CANARY },
                    { "type": "tool_use", "name": "Edit", "id": "t1",
                      "input": { "file_path": format!("{r}/src/lib.rs"), "old_string": CANARY, "new_string": SECRET } } ] } }),
        json!({ "type": "user", "cwd": r, "gitBranch": "feature/claude",
                "message": { "content": [{ "type": "tool_result", "tool_use_id": "t1", "content": CANARY }] },
                "toolUseResult": { "stdout": CANARY } }),
        json!({ "type": "file-history-snapshot", "snapshot": { "files": { "a": CANARY } } }),
        json!({ "type": "summary", "summary": CANARY }),
        json!({ "type": "ai-title", "aiTitle": CANARY }),
        json!({ "type": "assistant", "cwd": r, "gitBranch": "feature/claude",
                "message": { "content": [
                    { "type": "text", "text": CANARY },
                    { "type": "tool_use", "name": "Read", "id": "t2", "input": { "file_path": "/etc/hosts" } },
                    { "type": "tool_use", "name": "Write", "id": "t3",
                      "input": { "file_path": format!("{r}/docs/notes.md"), "content": SECRET } } ] } }),
    ]
}

fn write_claude(fx: &Fixture, repo: &Path) {
    let file = fx
        .home()
        .join(".claude/projects")
        .join(claude_dir(repo))
        .join("8c1e7d0e-1111-4222-8333-444455556666.jsonl");
    // The final line is a write in progress: never parsed.
    write_lines(
        &file,
        &claude_transcript(repo),
        &format!("{{\"type\":\"user\",\"message\":\"{CANARY}"),
    );
    // Files that must never be opened hold canaries too.
    std::fs::write(
        fx.home().join(".claude/history.jsonl"),
        format!("{{\"display\":\"{CANARY}\"}}\n"),
    )
    .unwrap();
}

fn write_codex(fx: &Fixture, repo: &Path) {
    let r = repo.display().to_string();
    let day = jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date();
    let dir = fx.home().join(format!(
        ".codex/sessions/{:04}/{:02}/{:02}",
        day.year(),
        day.month(),
        day.day()
    ));
    let patch = format!(
        "*** Begin Patch\n*** Update File: src/login.rs\n@@\n-{CANARY}\n+{SECRET}\n*** Add File: src/new.rs\n+{CANARY}\n*** End Patch\n"
    );
    let lines = vec![
        json!({ "timestamp": "2026-01-03T12:00:00Z", "type": "session_meta", "payload": {
            "id": "0199a213-81c0-7800-8aa1-bbab2a035a53", "cwd": r, "originator": "codex_cli_rs",
            "cli_version": "0.50.0", "base_instructions": { "text": CANARY.repeat(2000) } },
            "git": { "branch": "ignored-sibling" } }),
        json!({ "timestamp": "2026-01-03T12:00:01Z", "type": "turn_context", "payload": { "cwd": "/elsewhere", "model": "m" } }),
        json!({ "timestamp": "2026-01-03T12:00:02Z", "type": "event_msg", "payload": { "type": "user_message", "message": CANARY } }),
        json!({ "timestamp": "2026-01-03T12:00:03Z", "type": "turn_context", "payload": { "cwd": r, "model": "m" } }),
        json!({ "timestamp": "2026-01-03T12:00:04Z", "type": "response_item", "payload": {
            "type": "function_call", "name": "shell", "arguments": json!({ "command": ["bash", "-lc", CANARY] }).to_string(), "call_id": "c1" } }),
        json!({ "timestamp": "2026-01-03T12:00:05Z", "type": "response_item", "payload": { "type": "function_call_output", "call_id": "c1", "output": SECRET } }),
        json!({ "timestamp": "2026-01-03T12:00:06Z", "type": "response_item", "payload": { "type": "reasoning", "summary": [{ "text": CANARY }] } }),
        json!({ "timestamp": "2026-01-03T12:00:07Z", "type": "response_item", "payload": {
            "type": "custom_tool_call", "name": "apply_patch", "input": patch, "call_id": "c2" } }),
    ];
    write_lines(
        &dir.join("rollout-2026-01-03T12-00-00-0199a213-81c0-7800-8aa1-bbab2a035a53.jsonl"),
        &lines,
        "",
    );
    // The branch lives in the session_meta payload's `git` in current versions.
    let path = dir.join("rollout-2026-01-03T12-00-00-0199a213-81c0-7800-8aa1-bbab2a035a53.jsonl");
    let text = std::fs::read_to_string(&path).unwrap().replacen(
        "\"originator\"",
        "\"git\":{\"branch\":\"codex/fix-login\",\"commit_hash\":\"abc\"},\"originator\"",
        1,
    );
    std::fs::write(&path, text).unwrap();
}

fn write_opencode(fx: &Fixture, repo: &Path) {
    let r = repo.display().to_string();
    let dir = fx.home().join(".local/share/opencode");
    std::fs::create_dir_all(&dir).unwrap();
    let db = rusqlite::Connection::open(dir.join("opencode.db")).unwrap();
    let now = now_ms() as i64;
    db.execute_batch(
        "CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT, vcs TEXT, name TEXT, time_created INTEGER, time_updated INTEGER);
         CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, slug TEXT, directory TEXT, title TEXT, version TEXT, time_created INTEGER, time_updated INTEGER);
         CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT);
         CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT);",
    )
    .unwrap();
    db.execute(
        "INSERT INTO session VALUES ('ses_1', 'p1', NULL, 's', ?1, ?2, '1.2.0', ?3, ?3)",
        rusqlite::params![r, CANARY, now - 1000],
    )
    .unwrap();
    db.execute(
        "INSERT INTO session VALUES ('ses_2', 'p1', NULL, 's', '/somewhere/else', ?1, '1.2.0', ?2, ?2)",
        rusqlite::params![CANARY, now],
    )
    .unwrap();
    db.execute(
        "INSERT INTO message VALUES ('m1', 'ses_1', ?1, ?1, ?2)",
        rusqlite::params![
            now - 3000,
            json!({ "role": "user", "text": CANARY }).to_string()
        ],
    )
    .unwrap();
    let parts = [
        (
            "p1",
            now - 2000,
            json!({ "type": "tool", "tool": "read", "callID": "x",
            "state": { "status": "completed", "input": { "filePath": format!("{r}/README.md") }, "output": CANARY, "title": CANARY } }),
        ),
        (
            "p2",
            now - 1000,
            json!({ "type": "tool", "tool": "edit", "callID": "y",
            "state": { "status": "running", "input": { "filePath": format!("{r}/src/main.rs"), "oldString": SECRET } } }),
        ),
        ("p3", now - 500, json!({ "type": "text", "text": CANARY })),
    ];
    for (id, at, data) in parts {
        db.execute(
            "INSERT INTO part VALUES (?1, 'm1', 'ses_1', ?2, ?2, ?3)",
            rusqlite::params![id, at, data.to_string()],
        )
        .unwrap();
    }
}

#[test]
fn agents_presence_session_stores_and_presence_records() {
    let fx = Fixture::new();
    // A path with `_`, `.` and a space, which Claude's directory encoding flattens.
    let repo = fx.init("work/my_app.v2 x", &[]);
    fx.commit(&repo, "a.txt", "a\n", "first");
    write_claude(&fx, &repo);
    write_codex(&fx, &repo);
    write_opencode(&fx, &repo);

    // Another server for this repository, a stale one, and one for another repository.
    let sidecar = Orphan::start();
    let dir = fx.run_dir().join("presence/mcp");
    std::fs::create_dir_all(&dir).unwrap();
    let now = now_ms();
    let write = |name: &str, pid: u32, updated: u64, repo: &Path, client: &str| {
        std::fs::write(
            dir.join(name),
            record_body(pid, name, updated, repo, client),
        )
        .unwrap();
    };
    write("a.json", sidecar.pid, now, &repo, "cursor-vscode");
    write(
        "b.json",
        sidecar.pid,
        now - 25 * 3600 * 1000,
        &repo,
        "goose",
    );
    write("c.json", sidecar.pid, now, &fx.path("elsewhere"), "amp");

    let mut server = fx.server(&[], &[]);
    // Our own record exists once a call was accepted; it is never reported.
    server.call("repo.status", json!({ "repoPath": repo }));
    let result = presence(&mut server, &repo, json!({}));
    assert_private(&fx, &result);
    let data = &result["data"];
    assert_eq!(data["sourcesUnavailable"], json!([]), "{result}");

    let claude = agents_named(&result, "claude-code");
    assert_eq!(claude.len(), 1, "{result}");
    assert_eq!(claude[0]["state"], "working");
    assert_eq!(claude[0]["sources"], json!(["session"]));
    assert_eq!(
        claude[0]["branch"], "feature/claude",
        "the newest record's branch"
    );
    assert_eq!(claude[0]["lastTool"], "Write");
    assert_eq!(claude[0]["files"], json!(["docs/notes.md", "src/lib.rs"]));
    assert_eq!(claude[0]["pid"], json!(null));

    let codex = agents_named(&result, "codex");
    assert_eq!(codex.len(), 1, "{result}");
    assert_eq!(codex[0]["branch"], "codex/fix-login");
    assert_eq!(codex[0]["lastTool"], "apply_patch");
    assert_eq!(codex[0]["files"], json!(["src/login.rs", "src/new.rs"]));

    let opencode = agents_named(&result, "opencode");
    assert_eq!(opencode.len(), 1, "{result}");
    assert_eq!(opencode[0]["state"], "working");
    assert_eq!(opencode[0]["lastTool"], "edit");
    assert_eq!(opencode[0]["files"], json!(["src/main.rs", "README.md"]));
    assert_eq!(opencode[0]["branch"], "main", "derived from the worktree");

    let cursor = agents_named(&result, "cursor");
    assert_eq!(cursor.len(), 1, "{result}");
    assert_eq!(cursor[0]["sources"], json!(["mcpPresence"]));
    assert_eq!(cursor[0]["mcpClient"], "cursor-vscode");
    assert_eq!(cursor[0]["lastTool"], "repo.status");
    assert_eq!(cursor[0]["state"], "working");
    assert!(
        agents_named(&result, "goose").is_empty(),
        "stale record: {result}"
    );
    assert!(
        agents_named(&result, "amp").is_empty(),
        "another repository: {result}"
    );
    assert!(
        !result.to_string().contains("gitward-tests"),
        "our own record is excluded: {result}"
    );
    assert_eq!(data["agentCount"], 4, "{result}");

    // The SQLite store was opened immutable: no journal files appeared beside it.
    let oc = fx.home().join(".local/share/opencode");
    assert!(!oc.join("opencode.db-wal").exists());
    assert!(!oc.join("opencode.db-shm").exists());
    assert!(!oc.join("opencode.db-journal").exists());

    // Snapshot of the whole answer, with times and pids redacted.
    let mut shown = result.clone();
    let agents = shown["data"]["agents"].as_array_mut().unwrap();
    // Equal activity times would order agents by chance; the snapshot orders by kind.
    agents.sort_by(|a, b| a["agent"].as_str().cmp(&b["agent"].as_str()));
    for agent in agents {
        agent["lastActivityMs"] = json!("[MS]");
    }
    shown["data"]["scan"] = json!("[SCAN]");
    tool_snapshot!("agents_presence_stores", fx, shown);
}

#[test]
fn a_large_store_is_read_from_its_tail_within_bounds() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let r = repo.display().to_string();
    let file = fx
        .home()
        .join(".claude/projects")
        .join(claude_dir(&repo))
        .join("big.jsonl");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    // ~50 MB of history, then a 2 MiB tool result, then the newest tool call.
    let filler = json!({ "type": "user", "cwd": r, "message": { "content": format!("{CANARY} {}", "x".repeat(4000)) } }).to_string();
    let mut text = String::with_capacity(52 * 1024 * 1024);
    while text.len() < 50 * 1024 * 1024 {
        text.push_str(&filler);
        text.push('\n');
    }
    text.push_str(&json!({ "type": "user", "cwd": r, "message": { "content": [{ "type": "tool_result", "content": "y".repeat(2 << 20) }] } }).to_string());
    text.push('\n');
    text.push_str(&json!({ "type": "assistant", "cwd": r, "gitBranch": "main",
        "message": { "content": [{ "type": "tool_use", "name": "Grep", "input": { "pattern": CANARY } }] } }).to_string());
    text.push('\n');
    std::fs::write(&file, text).unwrap();

    let mut server = fx.server(&[], &[]);
    let result = presence(&mut server, &repo, json!({}));
    assert_private(&fx, &result);
    let claude = agents_named(&result, "claude-code");
    assert_eq!(claude.len(), 1, "{result}");
    assert_eq!(claude[0]["lastTool"], "Grep");
    let read = result["data"]["scan"]["bytesRead"].as_u64().unwrap();
    assert!(
        read <= 1024 * 1024 + 64 * 1024,
        "read {read} bytes of a 52 MB store"
    );
    assert!(read >= 256 * 1024, "the tail was read: {read}");

    // Unchanged, it is not read again; appended to, it is. A read of the store costs at
    // least one 256 KiB step; small records that changed meanwhile (this server's own
    // presence heartbeat) may still be read.
    let again = presence(&mut server, &repo, json!({}));
    assert_eq!(agents_named(&again, "claude-code")[0]["lastTool"], "Grep");
    let reread = again["data"]["scan"]["bytesRead"].as_u64().unwrap();
    assert!(reread < 16 * 1024, "{again}");
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    use std::io::Write;
    let line = json!({ "type": "assistant", "cwd": r,
        "message": { "content": [{ "type": "tool_use", "name": "Glob", "input": {} }] } });
    writeln!(file, "{line}").unwrap();
    drop(file);
    let changed = presence(&mut server, &repo, json!({}));
    assert_eq!(
        agents_named(&changed, "claude-code")[0]["lastTool"],
        "Glob",
        "{changed}"
    );
    assert!(changed["data"]["scan"]["bytesRead"].as_u64().unwrap() > 0);
}

#[test]
fn disabled_detection_is_error_10011() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let mut server = fx.server(&[], &[("FLUXGIT_MCP_AGENT_DETECTION_DISABLED", "0")]);
    let result = server.call("agents.presence", json!({ "repoPath": repo }));
    assert_eq!(result["error"]["code"], 10011, "{result}");
}

#[test]
fn bad_and_hostile_input() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let mut server = fx.server(&[], &[]);
    let errors: Vec<Value> = [
        json!({}),
        json!({ "repoPath": "relative" }),
        json!({ "repoPath": "--output=/tmp/x" }),
        json!({ "repoPath": format!("{}\n", repo.display()) }),
        json!({ "repoPath": repo.join("..").join("..") }),
        json!({ "repoPath": repo, "budgetMs": 10 }),
        json!({ "repoPath": repo, "maxAgents": 0 }),
        json!({ "repoPath": repo, "includeRecent": "yes" }),
        json!({ "repoPath": repo, "unknown": 1 }),
    ]
    .into_iter()
    .map(|args| {
        let result = server.call("agents.presence", args);
        assert_eq!(result["error"]["code"], -32602, "{result}");
        result["error"]["data"].clone()
    })
    .collect();
    tool_snapshot!("agents_presence_bad_input", fx, json!(errors));
}

#[test]
fn processes_merge_with_their_stores_and_more_store_shapes() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "a\n", "first");
    let r = repo.display().to_string();
    let home = fx.home();

    // Claude: a live process, its live-session index entry and its transcript.
    let claude = FakeAgent::start(&fx, "sleep", "claude", &repo, &["600"]);
    let sessions = home.join(".claude/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::write(
        sessions.join(format!("{}.json", claude.pid())),
        json!({ "pid": claude.pid(), "sessionId": "sess-1", "cwd": r, "startedAt": now_ms() })
            .to_string(),
    )
    .unwrap();
    write_lines(
        &home
            .join(".claude/projects")
            .join(claude_dir(&repo))
            .join("sess-1.jsonl"),
        &[
            json!({ "type": "assistant", "cwd": r, "gitBranch": "stale-branch", "message": { "content": [
            { "type": "tool_use", "name": "Bash", "input": { "command": CANARY, "description": SECRET } }] } }),
        ],
        "",
    );

    // Aider: a live process and its chat history in the repository (mtime only).
    let aider = FakeAgent::start(&fx, "sleep", "aider", &repo, &["600"]);
    std::fs::write(repo.join(".aider.chat.history.md"), format!("# {CANARY}\n")).unwrap();

    // Codex: only the thread index knows this thread; archived and foreign rows are not it.
    let codex = home.join(".codex");
    std::fs::create_dir_all(&codex).unwrap();
    let db = rusqlite::Connection::open(codex.join("state_5.sqlite")).unwrap();
    db.execute_batch(
        "CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT, created_at INTEGER, updated_at INTEGER,
           source TEXT, model_provider TEXT, cwd TEXT, title TEXT, sandbox_policy TEXT, approval_mode TEXT,
           tokens_used INTEGER, archived INTEGER, archived_at INTEGER, git_sha TEXT, git_branch TEXT,
           git_origin_url TEXT, first_user_message TEXT);",
    )
    .unwrap();
    let secs = (now_ms() / 1000) as i64;
    for (id, cwd, archived, branch) in [
        ("t1", r.as_str(), 0, "codex/db-branch"),
        ("t2", r.as_str(), 1, "archived-branch"),
        ("t3", "/elsewhere", 0, "foreign-branch"),
    ] {
        db.execute(
            "INSERT INTO threads (id, rollout_path, created_at, updated_at, cwd, title, archived, git_branch, first_user_message)
             VALUES (?1, ?2, ?3, ?3, ?4, ?5, ?6, ?7, ?5)",
            rusqlite::params![id, codex.join("sessions/none.jsonl").display().to_string(), secs, cwd, CANARY, archived, branch],
        )
        .unwrap();
    }
    drop(db);

    // Gemini CLI: the project registry names the slug directory of the chats.
    let gemini = home.join(".gemini");
    std::fs::create_dir_all(&gemini).unwrap();
    std::fs::write(
        gemini.join("projects.json"),
        json!({ "projects": { r.clone(): "repo" } }).to_string(),
    )
    .unwrap();
    write_lines(
        &gemini.join("tmp/repo/chats/session-2026-01-03T12-00-abcd1234.jsonl"),
        &[
            json!({ "sessionId": "abcd1234-0000", "projectHash": "x", "startTime": "2026-01-03T12:00:00Z", "kind": "main" }),
            json!({ "id": "m1", "type": "user", "content": [{ "text": CANARY }] }),
            json!({ "id": "m2", "type": "gemini", "content": CANARY, "thoughts": [{ "description": CANARY }],
                    "toolCalls": [{ "id": "c1", "name": "replace", "status": "success", "result": [{ "text": CANARY }],
                                    "args": { "file_path": format!("{r}/src/x.rs"), "old_string": CANARY, "new_string": SECRET } }] }),
            json!({ "$set": { "summary": CANARY } }),
        ],
        "",
    );
    std::fs::write(
        gemini.join("tmp/repo/logs.json"),
        format!("[{{\"message\":\"{CANARY}\"}}]"),
    )
    .unwrap();

    // Goose: sessions whose working directory is the repository.
    let goose = home.join(".local/share/goose/sessions");
    std::fs::create_dir_all(&goose).unwrap();
    let db = rusqlite::Connection::open(goose.join("sessions.db")).unwrap();
    db.execute_batch(&format!(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT, working_dir TEXT, session_type TEXT,
           created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
         CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content_json TEXT);
         INSERT INTO sessions (id, name, working_dir, session_type) VALUES ('g1', '{CANARY}', '{r}', 'user');
         INSERT INTO messages (session_id, role, content_json) VALUES ('g1', 'user', '{CANARY}');"
    ))
    .unwrap();
    drop(db);

    let mut server = fx.server(&[], &[]);
    let result = presence(&mut server, &repo, json!({}));
    assert_private(&fx, &result);
    assert_eq!(result["data"]["sourcesUnavailable"], json!([]), "{result}");

    let c = agents_named(&result, "claude-code");
    assert_eq!(c.len(), 1, "{result}");
    assert_eq!(c[0]["sources"], json!(["process", "session"]));
    assert_eq!(c[0]["pid"], claude.pid());
    assert_eq!(c[0]["state"], "working", "its transcript was just written");
    assert_eq!(c[0]["lastTool"], "Bash");
    assert_eq!(
        c[0]["branch"], "main",
        "a live process: the worktree's HEAD, not the record"
    );

    let a = agents_named(&result, "aider");
    assert_eq!(a.len(), 1, "{result}");
    assert_eq!(a[0]["sources"], json!(["process", "repoFiles"]));
    assert_eq!(a[0]["pid"], aider.pid());
    assert_eq!(a[0]["state"], "working");
    assert_eq!(a[0]["lastTool"], json!(null));

    let x = agents_named(&result, "codex");
    assert_eq!(x.len(), 1, "{result}");
    assert_eq!(x[0]["branch"], "codex/db-branch");
    assert_eq!(x[0]["sources"], json!(["session"]));

    let g = agents_named(&result, "gemini-cli");
    assert_eq!(g.len(), 1, "{result}");
    assert_eq!(g[0]["lastTool"], "replace");
    assert_eq!(g[0]["files"], json!(["src/x.rs"]));
    assert_eq!(g[0]["branch"], "main");

    let o = agents_named(&result, "goose");
    assert_eq!(o.len(), 1, "{result}");
    assert_eq!(o[0]["state"], "working");
    assert_eq!(result["data"]["agentCount"], 5, "{result}");
}

#[test]
fn an_unreadable_store_is_reported_not_fatal() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let dir = fx.home().join(".local/share/opencode");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("opencode.db"), vec![0x5au8; 8192]).unwrap();
    let mut server = fx.server(&[], &[]);
    let result = presence(&mut server, &repo, json!({}));
    assert_eq!(
        result["data"]["sourcesUnavailable"],
        json!([{ "source": "opencode", "reason": "corrupt" }]),
        "{result}"
    );
    assert_eq!(result["data"]["agentCount"], 0);
}

#[test]
fn editors_with_built_in_agents() {
    let fx = Fixture::new();
    let repo = fx.init("my repo", &[]);
    let other = fx.init("other", &[]);
    let uri = |p: &Path| format!("file://{}", p.display().to_string().replace(' ', "%20"));
    let config = fx.home().join(".config");
    // VS Code: a folder window on the repository with a Copilot chat session.
    let code = config.join("Code/User/workspaceStorage");
    let ws = code.join("0a1b2c");
    std::fs::create_dir_all(ws.join("chatSessions")).unwrap();
    std::fs::write(
        ws.join("workspace.json"),
        json!({ "folder": uri(&repo) }).to_string(),
    )
    .unwrap();
    std::fs::write(
        ws.join("chatSessions/s1.json"),
        json!({ "version": 3, "customTitle": CANARY, "requests": [{ "message": { "text": SECRET } }] }).to_string(),
    )
    .unwrap();
    // ...and one on another folder, also chatting: not this repository.
    let elsewhere = code.join("9f8e7d");
    std::fs::create_dir_all(elsewhere.join("chatSessions")).unwrap();
    std::fs::write(
        elsewhere.join("workspace.json"),
        json!({ "folder": uri(&other) }).to_string(),
    )
    .unwrap();
    std::fs::write(elsewhere.join("chatSessions/s2.json"), "{}").unwrap();
    // Cursor: a multi-root workspace file inside the repository, with recent state.
    let cursor = config.join("Cursor/User/workspaceStorage/c0ffee");
    std::fs::create_dir_all(&cursor).unwrap();
    std::fs::write(
        cursor.join("workspace.json"),
        json!({ "workspace": uri(&repo.join("all.code-workspace")) }).to_string(),
    )
    .unwrap();
    std::fs::write(cursor.join("state.vscdb"), CANARY).unwrap();

    let mut server = fx.server(&[], &[]);
    let result = presence(&mut server, &repo, json!({}));
    assert_private(&fx, &result);
    let code = agents_named(&result, "vscode-copilot");
    assert_eq!(code.len(), 1, "{result}");
    assert_eq!(code[0]["sources"], json!(["editor"]));
    assert_eq!(code[0]["state"], "working");
    let cursor = agents_named(&result, "cursor");
    assert_eq!(cursor.len(), 1, "{result}");
    assert_eq!(cursor[0]["sources"], json!(["editor"]));
    assert_eq!(result["data"]["agentCount"], 2, "{result}");

    let result = presence(&mut server, &other, json!({}));
    assert_eq!(agents_named(&result, "vscode-copilot").len(), 1, "{result}");
    assert!(agents_named(&result, "cursor").is_empty(), "{result}");
}

#[test]
fn a_running_codex_is_tied_to_the_rollout_it_holds_open() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "a\n", "first");
    let r = repo.display().to_string();
    // Dated long ago: only the open file descriptor leads to it.
    let rollout = fx
        .home()
        .join(".codex/sessions/2020/01/01/rollout-2020-01-01T00-00-00-0199a213-0000-7000-8000-000000000001.jsonl");
    write_lines(
        &rollout,
        &[
            json!({ "type": "session_meta", "payload": { "id": "x", "cwd": r, "git": { "branch": "codex/held" } } }),
            json!({ "type": "turn_context", "payload": { "cwd": r } }),
            json!({ "type": "response_item", "payload": { "type": "function_call", "name": "exec_command",
                    "arguments": json!({ "cmd": CANARY }).to_string() } }),
        ],
        "",
    );
    let idle = FakeAgent::start(&fx, "sleep", "codex", &repo, &["600"]);
    let holder = FakeAgent::start(
        &fx,
        "sh",
        "codex",
        &repo,
        &[
            "-c",
            "exec 3<\"$0\"; sleep 600 & wait",
            rollout.to_str().unwrap(),
        ],
    );
    holder.wait_for_child();
    let mut server = fx.server(&[], &[]);
    let result = presence(&mut server, &repo, json!({}));
    assert_private(&fx, &result);
    let codex = agents_named(&result, "codex");
    assert_eq!(codex.len(), 2, "{result}");
    let held: Vec<&&Value> = codex.iter().filter(|a| a["pid"] == holder.pid()).collect();
    assert_eq!(held.len(), 1, "{result}");
    assert_eq!(held[0]["sources"], json!(["process", "session"]));
    assert_eq!(held[0]["lastTool"], "exec_command");
    let other: Vec<&&Value> = codex.iter().filter(|a| a["pid"] == idle.pid()).collect();
    assert_eq!(other.len(), 1, "{result}");
    assert_eq!(other[0]["sources"], json!(["process"]));
    assert_eq!(other[0]["state"], "open");
}

#[test]
fn unborn_bare_and_empty() {
    let fx = Fixture::new();
    // Unborn: the worktree's HEAD names a branch without commits; that is its branch.
    let unborn = fx.init("unborn", &[]);
    let _agent = FakeAgent::start(&fx, "sleep", "gemini", &unborn, &["600"]);
    let mut server = fx.server(&[], &[]);
    let result = presence(&mut server, &unborn, json!({}));
    let found = agents_named(&result, "gemini-cli");
    assert_eq!(found.len(), 1, "{result}");
    assert_eq!(found[0]["branch"], "main");
    // A bare repository has no worktree of its own: nothing works in it, and that is fine.
    let bare = fx.init("bare.git", &["--bare"]);
    let result = presence(&mut server, &bare, json!({}));
    assert_eq!(result["data"]["agents"], json!([]), "{result}");
    assert_eq!(result["data"]["agentCount"], 0);
    assert_eq!(result["repoPath"], json!(bare));
}

#[test]
fn copilot_cli_sessions() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let r = repo.display().to_string();
    let state = fx.home().join(".copilot/session-state");
    let live = state.join("5f1c0000-0000-4000-8000-000000000001");
    std::fs::create_dir_all(&live).unwrap();
    std::fs::write(
        live.join("workspace.yaml"),
        format!("id: 5f1c\ncwd: {r}\ngit_root: {r}\nbranch: copilot/fix\nsummary: {CANARY}\nname: {SECRET}\n"),
    )
    .unwrap();
    write_lines(
        &live.join("events.jsonl"),
        &[
            json!({ "type": "session.start", "data": { "context": { "cwd": r } } }),
            json!({ "type": "user.message", "data": { "content": CANARY } }),
            json!({ "type": "tool.execution_start", "data": { "toolName": "str_replace_editor", "arguments": { "path": SECRET } } }),
        ],
        "",
    );
    // A session elsewhere is not this repository's.
    let other = state.join("5f1c0000-0000-4000-8000-000000000002");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("workspace.yaml"), "cwd: /elsewhere\n").unwrap();
    write_lines(
        &other.join("events.jsonl"),
        &[json!({ "type": "session.idle" })],
        "",
    );

    let mut server = fx.server(&[], &[]);
    let result = presence(&mut server, &repo, json!({}));
    assert_private(&fx, &result);
    let found = agents_named(&result, "copilot-cli");
    assert_eq!(found.len(), 1, "{result}");
    assert_eq!(found[0]["state"], "working");
    assert_eq!(found[0]["branch"], "copilot/fix");
    assert_eq!(found[0]["lastTool"], "str_replace_editor");
    assert_eq!(found[0]["sources"], json!(["session"]));
}

#[test]
fn extension_host_agents_and_amp() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let r = repo.display().to_string();
    let home = fx.home();

    // Cline in VS Code: the task index names the cwd; task metadata names the files.
    let cline = home.join(".config/Code/User/globalStorage/saoudrizwan.claude-dev");
    std::fs::create_dir_all(cline.join("state")).unwrap();
    std::fs::write(
        cline.join("state/taskHistory.json"),
        json!([
            { "id": "1733000000000", "ts": now_ms(), "task": CANARY, "cwdOnTaskInitialization": r, "tokensIn": 1 },
            { "id": "1733000000001", "ts": now_ms(), "task": SECRET, "cwdOnTaskInitialization": "/elsewhere" },
            { "id": "../escape", "ts": now_ms(), "task": CANARY, "cwdOnTaskInitialization": r },
        ])
        .to_string(),
    )
    .unwrap();
    let task = cline.join("tasks/1733000000000");
    std::fs::create_dir_all(&task).unwrap();
    std::fs::write(
        task.join("task_metadata.json"),
        json!({ "files_in_context": [
            { "path": "src/old.ts", "record_state": "active", "record_source": "read_tool" },
            { "path": "src/app.ts", "record_state": "active", "record_source": "cline_edited" },
            { "path": "../../outside.txt", "record_source": "read_tool" },
        ], "model_usage": [] })
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        task.join("ui_messages.json"),
        json!([{ "text": CANARY }]).to_string(),
    )
    .unwrap();

    // Continue: the sessions index maps a workspace; the session file is mtime only.
    let sessions = home.join(".continue/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::write(
        sessions.join("sessions.json"),
        json!([{ "sessionId": "c-1", "title": CANARY, "dateCreated": "1", "workspaceDirectory": format!("file://{r}") }])
            .to_string(),
    )
    .unwrap();
    std::fs::write(
        sessions.join("c-1.json"),
        json!({ "history": [CANARY] }).to_string(),
    )
    .unwrap();

    // Amp: a local thread whose first tree is the repository.
    let threads = home.join(".local/share/amp/threads");
    std::fs::create_dir_all(&threads).unwrap();
    std::fs::write(
        threads.join("T-0000-1111.json"),
        json!({ "v": 1, "id": "T-0000-1111", "title": CANARY, "messages": [{ "content": SECRET }],
                "env": { "initial": { "trees": [{ "uri": format!("file://{r}"), "displayName": "repo" }] } } })
        .to_string(),
    )
    .unwrap();
    std::fs::write(home.join(".local/share/amp/secrets.json"), SECRET).unwrap();

    let mut server = fx.server(&[], &[]);
    let result = presence(&mut server, &repo, json!({}));
    assert_private(&fx, &result);
    let c = agents_named(&result, "cline");
    assert_eq!(c.len(), 1, "{result}");
    assert_eq!(c[0]["files"], json!(["src/app.ts", "src/old.ts"]));
    assert_eq!(c[0]["state"], "working");
    assert_eq!(agents_named(&result, "continue").len(), 1, "{result}");
    assert_eq!(agents_named(&result, "amp").len(), 1, "{result}");
    assert_eq!(result["data"]["agentCount"], 3, "{result}");
}

#[test]
fn claude_sub_agents_keep_a_session_working() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let dir = fx.home().join(".claude/projects").join(claude_dir(&repo));
    let main = dir.join("5e55-0001.jsonl");
    write_lines(&main, &claude_transcript(&repo), "");
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let age = |path: &Path| {
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(hour_ago)
            .unwrap();
    };
    age(&main);
    let mut server = fx.server(&[], &[]);
    let result = presence(&mut server, &repo, json!({}));
    assert_eq!(
        agents_named(&result, "claude-code")[0]["state"],
        "recent",
        "{result}"
    );

    // A sub-agent of that session writes now: the session is working.
    let sub = dir.join("5e55-0001/subagents/agent-1.jsonl");
    write_lines(
        &sub,
        &[json!({ "type": "user", "message": { "content": CANARY } })],
        "",
    );
    let result = presence(&mut server, &repo, json!({}));
    assert_private(&fx, &result);
    let found = agents_named(&result, "claude-code");
    assert_eq!(found.len(), 1, "{result}");
    assert_eq!(found[0]["state"], "working");
    assert_eq!(found[0]["lastTool"], "Write");
}

#[test]
fn aider_commits_in_the_reflog() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "a\n", "an old commit of a person");
    fx.write(&repo, "src/x.py", "print(1)\n");
    fx.git(&repo, &["add", "-A"]);
    // Aider commits now, as `<name> (aider)`; the message must never come back.
    let out = Command::new("git")
        .current_dir(&repo)
        .args(["commit", "-q", "-m", CANARY])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .envs(fx.env())
        .env("GIT_AUTHOR_NAME", "Dev (aider)")
        .env("GIT_COMMITTER_NAME", "Dev (aider)")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let mut server = fx.server(&[], &[]);
    let result = presence(&mut server, &repo, json!({}));
    assert_private(&fx, &result);
    let found = agents_named(&result, "aider");
    assert_eq!(found.len(), 1, "{result}");
    assert_eq!(found[0]["sources"], json!(["gitCommits"]));
    assert_eq!(found[0]["state"], "working");
    assert_eq!(found[0]["branch"], "main");
    assert!(!result.to_string().contains("Dev (aider)"), "{result}");
}
