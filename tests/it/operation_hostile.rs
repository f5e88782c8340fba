//! The write tools on every kind of hostile repository: a proposal reads the repository
//! only through the disarmed read path (opening it, and agent detection for the hint), so
//! no repository-named program runs and no secret outside is served, whatever the gateway
//! then does with it.

use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{Fixture, registry};
use crate::hostile_registry::{SECRET, hostile_repos};
use crate::operation_peer::{Peer, Reply};
use crate::operation_status::{ID, record};

/// Not a timing assert: only a hang gets near it.
const WATCHDOG: Duration = Duration::from_secs(300);

/// What an accepting gateway answers to each request a call makes.
fn replies_for(tool: &str) -> Vec<Reply> {
    if tool == "operation.cancel" {
        vec![Reply::Json(
            200,
            json!({"previewId": ID, "status": "cancelled"}),
        )]
    } else {
        let accepted =
            json!({"previewId": ID, "status": "pending", "expiresAt": "2026-05-28T12:12:09.512Z"});
        vec![
            Reply::Json(202, accepted),
            Reply::Json(200, record("pending")),
        ]
    }
}

#[test]
fn operation_write_tools_on_every_hostile_repository_run_nothing() {
    let fx = Fixture::new();
    let marker = fx.path("ran-something");
    let repos = hostile_repos(&fx, &marker);
    assert!(!marker.exists(), "building the repositories ran a canary");
    let tools = registry::write_tools(&mut fx.server(&[], &[]));
    let names = registry::identities(&tools);
    assert!(
        names.iter().any(|n| n == "operation.preview.commit"),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n == "operation.cancel"), "{names:?}");

    let mut calls: Vec<(String, String, Value)> = Vec::new();
    let mut replies = Vec::new();
    for (kind, repo) in &repos {
        for tool in &tools {
            let name = registry::identity(tool["name"].as_str().unwrap());
            let mut args = registry::minimal_arguments(tool, repo);
            if name == "operation.preview.commit" {
                args["paths"] = json!(["d1/a.txt"]);
            }
            replies.extend(replies_for(&name));
            calls.push(((*kind).to_owned(), name, args));
        }
    }
    let peer = Peer::start(replies);
    let mut server = fx.server(&[], &peer.env());
    let pid = server.pid();
    let (done, finished) = mpsc::channel();
    let marker_seen = marker.clone();
    let sweep = std::thread::spawn(move || {
        for (kind, tool, args) in &calls {
            let result = server.call(tool, args.clone());
            assert!(
                result["accepted"] == true || result["status"] == "cancelled",
                "{kind}: {tool} was not proposed: {result}"
            );
            let text = result.to_string();
            assert!(
                !text.contains(SECRET),
                "{kind}: {tool} served the secret: {text}"
            );
            assert!(
                !marker_seen.exists(),
                "{kind}: {tool} ran a repository-chosen program: {}",
                std::fs::read_to_string(&marker_seen).unwrap_or_default()
            );
        }
        let _ = done.send(calls.len());
    });
    let answered = match finished.recv_timeout(WATCHDOG) {
        Ok(answered) => answered,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status();
            let _ = sweep.join();
            panic!("a write tool hung on a hostile repository; the server was killed");
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => match sweep.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the sweep ended without reporting"),
        },
    };
    assert_eq!(answered, repos.len() * tools.len());
    // Every proposal reached the gateway: the sweep did not pass by refusing early.
    let posted = peer
        .requests()
        .iter()
        .filter(|r| r.method == "POST")
        .count();
    assert_eq!(posted, answered);
    assert!(!marker.exists(), "a canary ran");
}
