//! Cancelling a call over HTTP once its response has become an event stream of progress:
//! `notifications/cancelled` on the session kills the git child, the stream ends with no
//! answer, and the server answers on. (Without the cancellation the radar would answer on
//! that stream once the blocked repository's own deadline passed.)

use std::io::Read;
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::Fixture;
use crate::http::{HttpServer, init_body};
use crate::progress::fleet;
use crate::protocol::{children, cmdline, wait_until};

/// A repository whose `git status` blocks until it is killed (see `http_cancel`).
fn slow_repo(fx: &Fixture) -> PathBuf {
    let repo = fx.init("slow", &["-b", "main"]);
    fx.commit(&repo, "a.txt", "a\n", "first");
    let fifo = repo.join(".git/objects/info/alternates");
    std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    repo
}

fn blocked(pid: u32) -> bool {
    children(pid)
        .into_iter()
        .any(|c| cmdline(c).contains(" status"))
}

/// A radar over the slow repository and `fast` ones, asking for progress as `token`.
fn radar_params(repos: &[PathBuf], token: &str) -> Value {
    json!({"name": "fleet.radar", "arguments": {"repoPaths": repos},
           "_meta": {"progressToken": token}})
}

/// Reads `stream` until it has shown `needle`; what it read.
fn read_until(stream: &mut TcpStream, needle: &str) -> String {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains(needle) {
        let n = stream.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "closed before {needle:?}: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&seen).into_owned()
}

#[test]
fn a_streaming_call_cancelled_on_its_session_ends_unanswered() {
    let fx = Fixture::new();
    let mut repos = vec![slow_repo(&fx)];
    repos.extend(fleet(&fx, 5));
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

    let call = json!({"jsonrpc": "2.0", "id": "c", "method": "tools/call",
                      "params": radar_params(&repos, "t")});
    let mut stream = http.post_open("/mcp", &with, &call.to_string());
    let head = read_until(&mut stream, "notifications/progress");
    assert!(head.contains("text/event-stream"), "{head}");
    wait_until("the slow git status runs", || blocked(http.pid()));

    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": "c", "reason": "user"}});
    assert_eq!(http.post("/mcp", &with, &cancel.to_string()).status, 202);
    wait_until("the slow git status is killed", || !blocked(http.pid()));
    let mut rest = String::new();
    stream.read_to_string(&mut rest).unwrap();
    assert!(
        !rest.contains("\"result\""),
        "a cancelled call is not answered: {rest}"
    );
    let ping = json!({"jsonrpc": "2.0", "id": 9, "method": "ping"});
    assert_eq!(http.post("/mcp", &with, &ping.to_string()).status, 200);
}
