//! The gateway's transitions reach the audit ledger exactly once whatever happens to the
//! ledger or the process: a full disk holds them (reported) until they land, a crash
//! between the ledger write and the store's cursor does not write them again, and
//! `gitward verify-audit --store` tells whether the ledger holds every transition once.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use super::common::Fixture;
use super::gateway_support::{Gateway, Session, command, dirty_repo, preview_id};

/// The ledger's `(previewId, transitionSeq, transition)` entries, in order.
fn transitions(ledger: &Path) -> Vec<(String, i64, String)> {
    std::fs::read_to_string(ledger)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event_type"] == "proposal_transition")
        .map(|e| {
            (
                e["previewId"].as_str().unwrap().to_owned(),
                e["transitionSeq"].as_i64().unwrap(),
                e["transition"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..1200 {
        if done() {
            return;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("timed out waiting for {what}");
}

fn status(session: &Session, id: &str) -> String {
    session.get(&format!("/api/proposals/{id}")).json()["status"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// `gitward verify-audit LEDGER --store DB`: exit code and the JSON line.
fn verify_with_store(fixture: &Fixture, ledger: &Path, db: &Path) -> (i32, Value) {
    let out = command(
        fixture,
        &[
            "verify-audit",
            ledger.to_str().unwrap(),
            "--store",
            db.to_str().unwrap(),
        ],
        &[],
    )
    .output()
    .unwrap();
    let line = String::from_utf8_lossy(&out.stdout);
    let value = serde_json::from_str(line.trim()).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    (out.status.code().unwrap(), value)
}

fn store_path(fixture: &Fixture) -> PathBuf {
    fixture.run_dir().join("gateway").join("gateway.db")
}

/// A small tmpfs, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(dir).unwrap();
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "this test fills a small tmpfs and needs to mount one (root): {out:?}"
        );
        Tmpfs(dir.to_owned())
    }

    /// Fills the file system to the last byte with `filler`.
    fn fill(&self) -> PathBuf {
        use std::io::Write;
        let filler = self.0.join("filler");
        let mut file = std::fs::File::create(&filler).unwrap();
        let chunk = vec![0u8; 4096];
        while file.write_all(&chunk).is_ok() {}
        let mut byte = [0u8; 1];
        while file.write_all(&byte[..]).is_ok() {
            byte[0] = 0;
        }
        let _ = file.sync_all();
        filler
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_holds_the_transitions_until_they_land_and_says_so() {
    let fixture = Fixture::new();
    let dir = fixture.path("audit");
    let disk = Tmpfs::mount(&dir, "256k");
    let ledger = dir.join("mcp.jsonl");
    let ledger_env = ledger.display().to_string();
    let env = [("FLUXGIT_MCP_AUDIT_LOG", ledger_env.as_str())];
    let filler = disk.fill();

    let mut gw = Gateway::start(&fixture, &[], &env);
    let session = gw.login();
    let mut ids = Vec::new();
    for name in ["r1", "r2", "r3"] {
        let repo = dirty_repo(&fixture, name);
        let id = preview_id(&gw.propose_commit(&repo, "claude-code", None));
        let answer = session.post(
            &format!("/api/proposals/{id}/approve"),
            &json!({"confirmDestructive": false}),
        );
        assert_eq!(answer.status, 200, "{answer:?}");
        wait_for("the commit", || status(&session, &id) == "completed");
        ids.push(id);
    }
    // Three commits, four transitions each: none is in the ledger, and nobody is told
    // otherwise.
    assert!(transitions(&ledger).is_empty());
    let gap = session.get("/api/proposals").json()["auditGap"].clone();
    assert_eq!(gap["waiting"], 12, "{gap}");
    assert!(
        gap["error"].as_str().unwrap().contains("No space left"),
        "{gap}"
    );
    let (code, report) = verify_with_store(&fixture, &ledger, &store_path(&fixture));
    assert_eq!(code, 3, "{report}");
    assert_eq!(report["store"]["pending"], 12, "{report}");
    assert_eq!(report["store"]["missing"], 0, "{report}");

    // Space returns: every transition lands, once, in order.
    std::fs::remove_file(&filler).unwrap();
    wait_for("the waiting transitions", || {
        transitions(&ledger).len() >= 12
    });
    std::thread::sleep(Duration::from_millis(300));
    let written = transitions(&ledger);
    assert_eq!(written.len(), 12, "{written:?}");
    for id in &ids {
        let steps: Vec<&str> = written
            .iter()
            .filter(|(i, _, _)| i == id)
            .map(|(_, _, t)| t.as_str())
            .collect();
        assert_eq!(steps, ["proposed", "approved", "executing", "completed"]);
    }
    wait_for("the page to drop the notice", || {
        session.get("/api/proposals").json()["auditGap"].is_null()
    });

    let mut stderr = gw.stderr.take().unwrap();
    gw.kill();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut err).unwrap();
    assert!(
        err.contains("the audit ledger refused transition seq 1"),
        "{err}"
    );
    assert!(err.contains("took the waiting transitions"), "{err}");

    let (code, report) = verify_with_store(&fixture, &ledger, &store_path(&fixture));
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["store"]["transitions"], 12, "{report}");
    drop(disk);
}

#[test]
fn a_crash_after_the_ledger_write_does_not_write_transitions_twice() {
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    let ledger = fixture.path("audit/mcp.jsonl");
    let ledger_env = ledger.display().to_string();
    let env = [("FLUXGIT_MCP_AUDIT_LOG", ledger_env.as_str())];
    let crashing = [
        ("FLUXGIT_MCP_AUDIT_LOG", ledger_env.as_str()),
        ("GITWARD_DEBUG_CRASH_AT", "audit-written"),
    ];

    // The follower writes `proposed` to the ledger and dies before the store records it.
    let mut gw = Gateway::start(&fixture, &[], &crashing);
    let id = preview_id(&gw.propose_commit(&repo, "claude-code", None));
    wait_for("the crash", || gw.child.try_wait().unwrap().is_some());
    assert_eq!(transitions(&ledger).len(), 1);

    let gw = Gateway::start(&fixture, &[], &env);
    let session = gw.login();
    session.post(
        &format!("/api/proposals/{id}/approve"),
        &json!({"confirmDestructive": false}),
    );
    wait_for("the commit in the ledger", || {
        transitions(&ledger)
            .iter()
            .any(|(_, _, t)| t == "completed")
    });
    drop(gw);

    let written = transitions(&ledger);
    let steps: Vec<&str> = written.iter().map(|(_, _, t)| t.as_str()).collect();
    assert_eq!(steps, ["proposed", "approved", "executing", "completed"]);
    let seqs: Vec<i64> = written.iter().map(|(_, s, _)| *s).collect();
    assert_eq!(seqs, [1, 2, 3, 4]);
    let (code, report) = verify_with_store(&fixture, &ledger, &store_path(&fixture));
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["store"]["duplicates"], 0, "{report}");
    assert_eq!(report["store"]["transitions"], 4, "{report}");
}

#[test]
fn a_read_flood_is_counted_and_does_not_rotate_an_approval_out() {
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    let ledger = fixture.path("audit/mcp.jsonl");
    let ledger_env = ledger.display().to_string();
    let env = [("FLUXGIT_MCP_AUDIT_LOG", ledger_env.as_str())];
    let gw = Gateway::start(&fixture, &[], &env);
    let session = gw.login();
    let id = preview_id(&gw.propose_commit(&repo, "claude-code", None));
    session.post(
        &format!("/api/proposals/{id}/approve"),
        &json!({"confirmDestructive": false}),
    );
    wait_for("the commit in the ledger", || {
        transitions(&ledger)
            .iter()
            .any(|(_, _, t)| t == "completed")
    });
    drop(gw);

    // 2,000 reads on a ledger of five 16 KiB segments: recorded one by one they would
    // rotate everything before them out many times over.
    let reads = 2000;
    let requests: Vec<(&str, Value)> = (0..reads)
        .map(|_| ("repo.status", json!({ "repoPath": repo })))
        .collect();
    let out = super::audit::run(
        &fixture,
        &[],
        &[
            ("FLUXGIT_MCP_AUDIT_LOG", ledger_env.as_str()),
            ("GITWARD_AUDIT_ROTATE_BYTES", "16384"),
            ("GITWARD_AUDIT_READ_BUDGET", "10"),
        ],
        &super::audit::calls(&requests),
    );
    assert!(out.status.success(), "{}", super::audit::stderr(&out));

    let mut all = Vec::new();
    for n in (1..=4).rev() {
        let segment = super::audit::rotated(&ledger, n);
        if segment.exists() {
            all.extend(super::audit::lines(&segment));
        }
    }
    all.extend(super::audit::lines(&ledger));
    let steps: Vec<&str> = all
        .iter()
        .filter(|e| e["event_type"] == "proposal_transition" && e["previewId"] == json!(id))
        .map(|e| e["transition"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["proposed", "approved", "executing", "completed"]);
    let own = all
        .iter()
        .filter(|e| e["tool"] == "repo.status" && e["event_type"] == "tool_call")
        .count();
    let counted: u64 = all
        .iter()
        .filter(|e| e["event_type"] == "read_calls")
        .map(|e| e["count"].as_u64().unwrap())
        .sum();
    assert_eq!(own, 10);
    assert_eq!(own as u64 + counted, reads as u64, "no read goes uncounted");
    let (code, report) = super::audit::verify(&fixture, &ledger, &[]);
    assert_eq!(code, 0, "{report}");
}
