//! `kill -9` of a real gateway at each named point of a proposal's life, then a restart:
//! nothing lost, nothing executed twice, nothing left `executing`. The points are the
//! development builds' `GITWARD_DEBUG_CRASH_AT` (the process aborts there, as SIGKILL
//! would leave it).

use std::time::Duration;

use serde_json::{Value, json};

use super::common::Fixture;
use super::gateway_support::{Gateway, dirty_repo, preview_id, try_request};

fn commits(fixture: &Fixture, repo: &std::path::Path) -> usize {
    fixture
        .git(repo, &["rev-list", "--count", "HEAD"])
        .parse()
        .unwrap()
}

fn settled(gw: &Gateway, id: &str) -> Value {
    for _ in 0..400 {
        let record = gw
            .get_handshake(&format!("/v1/mcp/operation/status/{id}"))
            .json();
        if !matches!(record["status"].as_str(), Some("approved" | "executing")) {
            return record;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("{id} never settled");
}

/// Proposes and approves a commit on a gateway that aborts at `point`; returns the id.
fn crash_at(fixture: &Fixture, repo: &std::path::Path, point: &str) -> String {
    let mut gw = Gateway::start(fixture, &[], &[("GITWARD_DEBUG_CRASH_AT", point)]);
    let id = if point == "after-insert" {
        let body = json!({"agentId": "claude-code", "operationType": "commit",
            "repoPath": repo, "reason": "r", "requestedAt": "2026-05-28T11:42:09.512Z",
            "message": "m", "stageAll": true, "idempotencyKey": "commit:crash"});
        let answer = try_request(
            &gw.handshake,
            "POST",
            "/v1/mcp/operation/preview/commit",
            &[
                ("Host", gw.handshake.as_str()),
                ("Content-Type", "application/json"),
            ],
            body.to_string().as_bytes(),
        );
        assert!(answer.is_none(), "answered before crashing: {answer:?}");
        String::new()
    } else {
        let session = gw.login();
        let id = preview_id(&gw.propose_commit(repo, "claude-code", None));
        session.approve_into_crash(&id);
        id
    };
    let status = gw.child.wait().unwrap();
    assert!(!status.success(), "{point}: the gateway did not crash");
    id
}

#[test]
fn a_crash_at_each_point_loses_nothing_and_runs_nothing_twice() {
    for point in [
        "after-insert",
        "after-approve",
        "after-intent",
        "restore-refs-written",
        "restore-point-recorded",
        "after-restore-point",
        "mid-write",
        "after-write",
    ] {
        let fixture = Fixture::new();
        let repo = dirty_repo(&fixture, "r");
        let before = commits(&fixture, &repo);
        let id = crash_at(&fixture, &repo, point);
        let gw = Gateway::start(&fixture, &[], &[]);
        if point == "after-insert" {
            // The retry the sidecar makes finds the stored proposal.
            let retry = gw.post_handshake(
                "/v1/mcp/operation/preview/commit",
                &json!({"agentId": "claude-code", "operationType": "commit",
                    "repoPath": repo, "reason": "r", "requestedAt": "2026-05-28T11:42:09.512Z",
                    "message": "m", "stageAll": true, "idempotencyKey": "commit:crash"}),
            );
            assert_eq!(retry.status, 200, "{point}: {retry:?}");
            assert_eq!(retry.json()["status"], "pending");
            continue;
        }
        let record = settled(&gw, &id);
        let after = commits(&fixture, &repo);
        eprintln!(
            "{point}: {} {}",
            record["status"], record["result"]["failure"]
        );
        match record["status"].as_str() {
            Some("completed") => assert_eq!(after, before + 1, "{point}: {record}"),
            Some("failed") => {
                assert_eq!(
                    record["result"]["failure"], "interrupted",
                    "{point}: {record}"
                );
                assert_eq!(after, before, "{point}: {record}");
            }
            other => panic!("{point}: {other:?} {record}"),
        }
        // Every restore point's refs belong to a recorded point: one whose record the
        // crash prevented is gone, one recorded is the proposal's.
        let points = fixture.git(
            &repo,
            &[
                "for-each-ref",
                "--format=%(refname)",
                "refs/gitward/restore/",
            ],
        );
        let kept = &record["result"]["restorePointId"];
        match point {
            "after-intent" | "restore-refs-written" => {
                assert_eq!(points, "", "{point}: {record}");
                assert!(kept.is_null(), "{point}: {record}");
            }
            _ => {
                let id = kept.as_str().unwrap_or_else(|| panic!("{point}: {record}"));
                assert!(points.contains(id), "{point}: {points}");
            }
        }
        if point == "after-approve" {
            // Approved but never claimed: it resumes through the normal claim.
            assert_eq!(record["status"], "completed", "{record}");
        }
        // A second restart changes nothing.
        drop(gw);
        let gw = Gateway::start(&fixture, &[], &[]);
        let again = settled(&gw, &id);
        assert_eq!(again["status"], record["status"], "{point}");
        assert_eq!(commits(&fixture, &repo), after, "{point}");
    }
}
