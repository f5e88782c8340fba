//! A real gateway's lifecycle over HTTP: expiry by read and by timer, racing decisions,
//! execution after approval, and the refusals to start.

use std::time::Duration;

use serde_json::json;

use super::common::Fixture;
use super::gateway_support::{Gateway, command, dirty_repo, preview_id};

fn status_of(gw: &Gateway, id: &str) -> String {
    let record = gw
        .get_handshake(&format!("/v1/mcp/operation/status/{id}"))
        .json();
    record["status"].as_str().unwrap().to_owned()
}

#[test]
fn proposals_expire_on_read_and_by_the_timer_and_cannot_be_approved_after() {
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    let gw = Gateway::start(&fixture, &["--expiry", "1s"], &[]);
    let session = gw.login();
    let read = preview_id(&gw.propose_commit(&repo, "claude-code", None));
    let timed = preview_id(&gw.propose_commit(&repo, "codex", None));
    std::thread::sleep(Duration::from_millis(1300));
    // Read: the status answer itself expires it.
    assert_eq!(status_of(&gw, &read), "expired");
    // Timer: nobody reads `timed`, yet it shows in the history as expired.
    let mut expired_by_timer = false;
    for _ in 0..100 {
        let history = session.get("/api/proposals?view=history").json();
        let cards = history["cards"].as_array().unwrap().clone();
        if cards
            .iter()
            .any(|c| c["previewId"] == json!(timed) && c["status"] == "expired")
        {
            expired_by_timer = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(expired_by_timer);
    let late = session.post(
        &format!("/api/proposals/{timed}/approve"),
        &json!({"confirmDestructive": false}),
    );
    assert_eq!(late.status, 409, "{late:?}");
    assert_eq!(late.json()["error"]["details"]["status"], "expired");
    assert!(
        late.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("expired")
    );
}

#[test]
fn a_hundred_racing_decisions_over_http_have_one_winner() {
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    let gw = Gateway::start(&fixture, &[], &[]);
    let session = gw.login();
    let id = preview_id(&gw.propose_commit(&repo, "claude-code", None));
    let statuses: Vec<u16> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..100)
            .map(|i| {
                let session = session.clone();
                let id = id.clone();
                scope.spawn(move || {
                    if i % 2 == 0 {
                        let path = format!("/api/proposals/{id}/approve");
                        session
                            .post(&path, &json!({"confirmDestructive": false}))
                            .status
                    } else {
                        let path = format!("/api/proposals/{id}/reject");
                        session.post(&path, &json!({"reason": "race"})).status
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let winners = statuses.iter().filter(|s| **s == 200).count();
    let losers = statuses.iter().filter(|s| **s == 409).count();
    assert_eq!((winners, losers), (1, 99), "{statuses:?}");
}

#[test]
fn an_approved_commit_is_executed_and_completes_with_a_restore_point() {
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    let gw = Gateway::start(&fixture, &[], &[]);
    let session = gw.login();
    let before = fixture.git(&repo, &["rev-parse", "HEAD"]);
    let id = preview_id(&gw.propose_commit(&repo, "claude-code", None));
    let approved = session.post(
        &format!("/api/proposals/{id}/approve"),
        &json!({"confirmDestructive": false}),
    );
    assert_eq!(approved.status, 200, "{approved:?}");
    let mut record = json!(null);
    for _ in 0..400 {
        record = gw
            .get_handshake(&format!("/v1/mcp/operation/status/{id}"))
            .json();
        if record["status"] == "completed" || record["status"] == "failed" {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    assert_eq!(record["status"], "completed", "{record}");
    let sha = record["result"]["commitSha"].as_str().unwrap();
    assert_eq!(fixture.git(&repo, &["rev-parse", "HEAD"]), sha);
    assert_eq!(fixture.git(&repo, &["rev-parse", "HEAD~1"]), before);
    assert_eq!(fixture.git(&repo, &["status", "--porcelain"]), "");
    let rp = record["result"]["restorePointId"].as_str().unwrap();
    assert!(rp.starts_with("rp_"), "{rp}");
    let listed = session
        .get(&format!("/api/restore-points?repoPath={}", repo.display()))
        .json();
    assert_eq!(listed["restorePoints"][0]["id"], json!(rp));
}

fn refusal(fixture: &Fixture, args: &[&str], env: &[(&str, &str)]) -> String {
    let root = fixture.root().display().to_string();
    let mut all = vec!["gateway", "--allowed-root", &root];
    all.extend_from_slice(args);
    let out = command(fixture, &all, env).output().unwrap();
    assert!(!out.status.success(), "started: {out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    stderr
}

#[test]
fn the_gateway_refuses_to_start_with_one_clear_line() {
    let fixture = Fixture::new();
    let broken = fixture.path("policy.json");
    std::fs::write(
        &broken,
        "{\"version\": 1, \"agents\": {\"a\": {\"operations\": [\"gc\"]}}}",
    )
    .unwrap();
    let broken = broken.display().to_string();
    let why = refusal(
        &fixture,
        &["--addr", "127.0.0.1:0"],
        &[("FLUXGIT_MCP_AGENT_POLICY", &broken)],
    );
    assert!(why.contains("agent policy"), "{why}");
    let missing = fixture.path("absent.json").display().to_string();
    let why = refusal(
        &fixture,
        &["--addr", "127.0.0.1:0"],
        &[("FLUXGIT_MCP_AGENT_POLICY", &missing)],
    );
    assert!(why.contains("agent policy"), "{why}");

    let why = refusal(&fixture, &["--addr", "0.0.0.0:0"], &[]);
    assert!(why.contains("loopback"), "{why}");
    let why = refusal(
        &fixture,
        &["--addr", "127.0.0.1:0", "--ui-addr", "192.168.1.1:0"],
        &[],
    );
    assert!(why.contains("loopback"), "{why}");

    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = busy.local_addr().unwrap().to_string();
    let why = refusal(&fixture, &["--addr", &busy], &[]);
    assert!(why.contains("already in use"), "{why}");

    let blocked = fixture.path("not-a-dir");
    std::fs::write(&blocked, "").unwrap();
    let db = blocked.join("gateway.db").display().to_string();
    let why = refusal(&fixture, &["--addr", "127.0.0.1:0", "--db", &db], &[]);
    assert!(why.contains("store"), "{why}");
}
