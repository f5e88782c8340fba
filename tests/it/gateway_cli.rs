//! `gitward pending / approve / reject / restore` against a real gateway, found through
//! the run directory and authenticated with the start's bearer token.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};

use super::common::Fixture;
use super::gateway_support::{Gateway, command, dirty_repo, preview_id};
use super::gateway_tty::{Terminal, prompted_code};

/// `gitward restore` on a terminal, typing the code it asks for, then `answers` to the
/// questions after it; whether it succeeded and everything it showed.
fn restore_on_terminal(fixture: &Fixture, rp: &str, answers: &[&str]) -> (bool, String) {
    let mut term = Terminal::start(fixture, &["restore", rp]);
    let code = prompted_code(term.expect("to restore: "));
    term.type_line(&code);
    for answer in answers {
        term.expect("Type yes");
        term.type_line(answer);
    }
    let (exit, screen) = term.finish();
    (exit.success(), screen)
}

fn cli(fixture: &Fixture, args: &[&str]) -> (bool, String, String) {
    let out = command(fixture, args, &[])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn wait_for_end(gw: &Gateway, id: &str) -> Value {
    for _ in 0..400 {
        let record = gw
            .get_handshake(&format!("/v1/mcp/operation/status/{id}"))
            .json();
        if record["status"] == "completed" || record["status"] == "failed" {
            return record;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("{id} did not finish");
}

#[test]
fn pending_lists_reject_decides_and_approve_needs_a_terminal() {
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    let (ok, _, err) = cli(&fixture, &["pending"]);
    assert!(!ok && err.contains("no gateway found"), "{err}");

    let gw = Gateway::start(&fixture, &[], &[]);
    let id = preview_id(&gw.propose_commit(&repo, "claude-code", None));
    let (ok, out, err) = cli(&fixture, &["pending"]);
    assert!(ok, "{err}");
    let line = out.lines().next().unwrap();
    let cols: Vec<&str> = line.split("  ").collect();
    assert_eq!(
        &cols[..4],
        [id.as_str(), "claude-code", "commit", repo.to_str().unwrap()]
    );
    assert!(cols[4].ends_with('s'), "{line}");

    let (ok, _, err) = cli(&fixture, &["approve", &id]);
    assert!(!ok && err.contains("needs a terminal"), "{err}");
    let record = gw
        .get_handshake(&format!("/v1/mcp/operation/status/{id}"))
        .json();
    assert_eq!(record["status"], "pending");

    let (ok, out, err) = cli(&fixture, &["reject", &id, "--why", "not today"]);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), format!("{id} rejected"));
    let record = gw
        .get_handshake(&format!("/v1/mcp/operation/status/{id}"))
        .json();
    assert_eq!(record["rejectReason"], "not today");
    assert_eq!(record["decidedBy"]["channel"], "tty");
    let (ok, _, err) = cli(&fixture, &["reject", &id]);
    assert!(!ok && err.contains("already rejected"), "{err}");
    let (_, out, _) = cli(&fixture, &["pending"]);
    assert_eq!(out.trim(), "no pending proposals");
}

#[test]
fn restore_puts_the_repository_back_and_can_itself_be_undone() {
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    let gw = Gateway::start(&fixture, &[], &[]);
    let session = gw.login();
    let before = fixture.git(&repo, &["rev-parse", "HEAD"]);
    let id = preview_id(&gw.propose_commit(&repo, "claude-code", None));
    session.post(
        &format!("/api/proposals/{id}/approve"),
        &json!({"confirmDestructive": false}),
    );
    let record = wait_for_end(&gw, &id);
    assert_eq!(record["status"], "completed", "{record}");
    let rp = record["result"]["restorePointId"]
        .as_str()
        .unwrap()
        .to_owned();

    // Work done after the write (an untracked file) refuses the restore, both ways.
    std::fs::write(repo.join("notes.txt"), "mine\n").unwrap();
    let answer = session.post(
        &format!("/api/restore-points/{rp}/restore"),
        &json!({"confirmMoved": false}),
    );
    assert_eq!(answer.status, 409, "{}", answer.body);
    let moved = &answer.json()["error"]["details"]["moved"];
    assert_eq!(moved[0]["what"], "changes notes.txt", "{moved}");
    assert_eq!(moved.as_array().map(Vec::len), Some(1), "{moved}");
    let (ok, _, err) = cli(&fixture, &["restore", &rp]);
    assert!(!ok && err.contains("needs a terminal"), "{err}");
    let (ok, screen) = restore_on_terminal(&fixture, &rp, &["no"]);
    assert!(
        !ok && screen.contains("  file  notes.txt  new, untracked"),
        "{screen}"
    );
    assert_ne!(fixture.git(&repo, &["rev-parse", "HEAD"]), before);
    std::fs::remove_file(repo.join("notes.txt")).unwrap();

    let (ok, out) = restore_on_terminal(&fixture, &rp, &[]);
    assert!(ok, "{out}");
    assert_eq!(fixture.git(&repo, &["rev-parse", "HEAD"]), before);
    assert_eq!(
        std::fs::read_to_string(repo.join("a.txt")).unwrap(),
        "two lines\nnow\n"
    );
    assert_eq!(fixture.git(&repo, &["status", "--porcelain"]), " M a.txt");
    let undo = out.trim().rsplit(' ').next().unwrap().to_owned();
    assert!(undo.starts_with("rp_") && undo != rp, "{out}");
    assert!(out.contains(&format!("restored {rp}; undo with")), "{out}");

    let (ok, _, err) = cli(&fixture, &["restore", "rp_missing"]);
    assert!(!ok, "{err}");
}

#[test]
fn a_restore_after_the_repository_moved_on_shows_what_changed_and_needs_that_confirmed() {
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    let gw = Gateway::start(&fixture, &[], &[]);
    let session = gw.login();
    let before = fixture.git(&repo, &["rev-parse", "HEAD"]);
    let id = preview_id(&gw.propose_commit(&repo, "claude-code", None));
    session.post(
        &format!("/api/proposals/{id}/approve"),
        &json!({"confirmDestructive": false}),
    );
    let record = wait_for_end(&gw, &id);
    let rp = record["result"]["restorePointId"]
        .as_str()
        .unwrap()
        .to_owned();
    let written = fixture.git(&repo, &["rev-parse", "HEAD"]);

    // Work after the write: a commit on the branch, and a new file.
    let later = fixture.commit(&repo, "b.txt", "b\n", "later");
    std::fs::write(repo.join("notes.txt"), "mine\n").unwrap();
    let path = format!("/api/restore-points/{rp}/restore");
    let answer = session.post(&path, &json!({"confirmMoved": false}));
    assert_eq!(answer.status, 409, "{}", answer.body);
    let details = answer.json()["error"]["details"].clone();
    let changed = &details["changedSince"];
    assert_eq!(
        changed["refs"],
        json!([
            {"ref": "HEAD", "before": written, "now": later},
            {"ref": "refs/heads/main", "before": written, "now": later},
        ]),
        "{changed}"
    );
    assert_eq!(
        changed["files"],
        json!([{"path": "notes.txt", "change": "new, untracked"}]),
        "{changed}"
    );
    assert_eq!(
        changed["index"], true,
        "the commit moved the index: {changed}"
    );

    // Confirming what was shown, after the repository moved on again: refused anew.
    std::fs::write(repo.join("notes.txt"), "mine, edited\n").unwrap();
    let stale = json!({"confirmMoved": true, "moved": details["moved"]});
    let answer = session.post(&path, &stale);
    assert_eq!(answer.status, 409, "{}", answer.body);
    let details = answer.json()["error"]["details"].clone();
    assert_eq!(
        fixture.git(&repo, &["rev-parse", "HEAD"]),
        later,
        "untouched"
    );

    // Confirming what is now: restored, and the answer says what it undid.
    let answer = session.post(
        &path,
        &json!({"confirmMoved": true, "moved": details["moved"]}),
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    let done = answer.json();
    assert_eq!(done["changedSince"], details["changedSince"]);
    assert_eq!(fixture.git(&repo, &["rev-parse", "HEAD"]), before);
    assert!(!repo.join("notes.txt").exists());
    assert_eq!(fixture.git(&repo, &["status", "--porcelain"]), " M a.txt");

    // The undo of the undo brings the later work back, notes included.
    let undo = done["restorePointId"].as_str().unwrap().to_owned();
    let (ok, out) = restore_on_terminal(&fixture, &undo, &[]);
    assert!(ok, "{out}");
    assert_eq!(fixture.git(&repo, &["rev-parse", "HEAD"]), later);
    assert_eq!(
        std::fs::read_to_string(repo.join("notes.txt")).unwrap(),
        "mine, edited\n"
    );
}
