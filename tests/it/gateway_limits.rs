//! Resource bounds of the gateway and `serve --http`: pending proposals are capped for
//! all agents together and every list says how many there are; connections that say
//! nothing are closed, the number open is bounded without locking out the page, and a
//! full session table still takes new sessions.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::json;

use super::common::Fixture;
use super::gateway_support::{Gateway, command, dirty_repo};
use super::http::{HttpServer, init_body};

#[test]
fn pending_proposals_are_capped_for_all_agents_and_listed_with_their_total() {
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    let gw = Gateway::start(&fixture, &["--max-pending", "3"], &[]);
    // Each under another self-declared name: the per-agent cap never applies.
    for agent in ["a1", "a2", "a3"] {
        assert_eq!(gw.propose_commit(&repo, agent, None).status, 202, "{agent}");
    }
    let over = gw.propose_commit(&repo, "a4", None);
    assert_eq!(over.status, 429, "{over:?}");
    let error = &over.json()["error"];
    assert_eq!(error["code"], "quotaExceeded");
    assert_eq!(error["details"], json!({"limit": 3, "scope": "allAgents"}));

    let list = gw.login().get("/api/proposals?view=pending").json();
    assert_eq!(list["total"], 3);
    assert_eq!(list["cards"].as_array().unwrap().len(), 3);
    assert_eq!(list["cards"][2]["agentId"], "a3");

    let out = command(&fixture, &["pending"], &[])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().any(|l| l == "3 pending"), "{text}");
}

/// True when the server closes `stream` (end of file, or reset) within `within`.
fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    stream.set_read_timeout(Some(within)).unwrap();
    let mut byte = [0u8; 1];
    match stream.read(&mut byte) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
    }
}

#[test]
fn connections_that_say_nothing_are_closed_and_cannot_crowd_out_the_page() {
    let fixture = Fixture::new();
    let gw = Gateway::start(&fixture, &[], &[]);
    // Headers that never end: closed once the header time is up.
    let mut slow = TcpStream::connect(&gw.ui).unwrap();
    slow.write_all(b"GET / HTTP/1.1\r\nHost: ").unwrap();
    let started = Instant::now();
    assert!(closed_within(&mut slow, Duration::from_secs(20)));
    assert!(started.elapsed() < Duration::from_secs(15));

    // More idle connections than the bound: the oldest idle ones make room at once.
    let mut idle: Vec<TcpStream> = (0..300)
        .map(|_| TcpStream::connect(&gw.ui).unwrap())
        .collect();
    assert!(closed_within(&mut idle[0], Duration::from_secs(3)));
    // The page still answers.
    let page = gw.ui_get_raw("/api/session", &[]);
    assert!(page.status > 0 && page.status != 503, "{page:?}");
    let handshake =
        gw.get_handshake("/v1/mcp/operation/status/00000000-0000-4000-8000-000000000000");
    assert_eq!(handshake.status, 404, "{handshake:?}");
}

#[test]
fn a_full_session_table_still_takes_new_sessions() {
    let fx = Fixture::new();
    let http = HttpServer::start(&fx, &[], &[]);
    for i in 0..1100 {
        let init = http.post("/mcp", &[], &init_body());
        assert_eq!(init.status, 200, "initialize {i}: {}", init.body);
    }
    let init = http.post("/mcp", &[], &init_body());
    let session = init.header("mcp-session-id").expect("a session").to_owned();
    // The new session answers.
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let with = [
        ("Mcp-Session-Id", session.as_str()),
        ("Mcp-Protocol-Version", "2025-11-25"),
    ];
    let listed = http.post("/mcp", &with, &list);
    assert_eq!(listed.status, 200, "{}", listed.body);
}
