//! Cancelling a tool call in flight over HTTP: by `notifications/cancelled` on the same
//! session, and by the client hanging up. Either way the git child is killed, the
//! cancelled request gets no result, and the server keeps answering.

use std::io::Read;
use std::net::{Shutdown, TcpStream};
use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::Fixture;
use crate::http::{HttpServer, init_body, modern};
use crate::protocol::{children, cmdline, wait_until};

/// A repository whose `git status` blocks: git opens the alternates file to find objects,
/// and a FIFO nobody writes to keeps that open waiting until the process is killed.
fn slow_repo(fx: &Fixture) -> PathBuf {
    let repo = fx.init("slow", &[]);
    fx.commit(&repo, "a.txt", "a\n", "first");
    let fifo = repo.join(".git/objects/info/alternates");
    std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    repo
}

/// The server's live `git status` children.
fn git_status_children(pid: u32) -> Vec<u32> {
    children(pid)
        .into_iter()
        .filter(|c| cmdline(*c).contains(" status"))
        .collect()
}

fn status_call(id: &str, repo: &PathBuf) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "repo.status", "arguments": {"repoPath": repo}}})
}

/// Everything the server sends on `stream` until it closes it.
fn read_all(mut stream: TcpStream) -> String {
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    String::from_utf8_lossy(&raw).into_owned()
}

/// A later call on a healthy repository answers.
fn still_answers(http: &HttpServer, fast: &PathBuf) {
    let after = http.post(
        "/mcp",
        &[],
        &modern(
            "tools/call",
            json!({"name": "repo.status", "arguments": {"repoPath": fast}}),
        ),
    );
    assert_eq!(after.status, 200, "{}", after.body);
    assert_eq!(after.json()["result"]["isError"], false, "{}", after.body);
}

#[test]
fn http_cancelled_notification_kills_the_git_child_and_the_server_answers_on() {
    let fx = Fixture::new();
    let slow = slow_repo(&fx);
    let fast = fx.init("fast", &[]);
    let http = HttpServer::start(&fx, &[], &[]);
    let init = http.post("/mcp", &[], &init_body());
    let session = init.header("mcp-session-id").unwrap().to_owned();
    let with = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        http.post("/mcp", &with, &initialized.to_string()).status,
        202
    );

    let stream = http.post_open("/mcp", &with, &status_call("slow", &slow).to_string());
    let reader = std::thread::spawn(move || read_all(stream));
    wait_until("git status to start", || {
        !git_status_children(http.pid()).is_empty()
    });
    // A call in flight holds up no other call of the session.
    let other = http.post("/mcp", &with, &status_call("other", &fast).to_string());
    assert_eq!(other.status, 200, "{}", other.body);
    assert!(other.body.contains("\"other\""), "{}", other.body);
    assert!(!git_status_children(http.pid()).is_empty());

    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": "slow", "reason": "user"}});
    assert_eq!(http.post("/mcp", &with, &cancel.to_string()).status, 202);
    wait_until("the git child to be gone", || {
        git_status_children(http.pid()).is_empty()
    });
    let answered = reader.join().unwrap();
    assert!(
        !answered.contains("\"result\""),
        "a cancelled request gets no result: {answered}"
    );
    still_answers(&http, &fast);
    let ping = json!({"jsonrpc": "2.0", "id": 9, "method": "ping"});
    assert_eq!(http.post("/mcp", &with, &ping.to_string()).status, 200);
}

#[test]
fn http_client_hanging_up_kills_the_git_child_and_the_server_answers_on() {
    let fx = Fixture::new();
    let slow = slow_repo(&fx);
    let fast = fx.init("fast", &[]);
    let http = HttpServer::start(&fx, &[], &[]);
    let body = modern(
        "tools/call",
        json!({"name": "repo.status", "arguments": {"repoPath": slow}}),
    );
    let stream = http.post_open("/mcp", &[], &body);
    wait_until("git status to start", || {
        !git_status_children(http.pid()).is_empty()
    });
    stream.shutdown(Shutdown::Both).unwrap();
    drop(stream);
    wait_until("the git child to be gone", || {
        git_status_children(http.pid()).is_empty()
    });
    still_answers(&http, &fast);
}
