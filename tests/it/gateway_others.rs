//! `otherAgents` on a gateway card: the gateway detects the other agents in the proposal's
//! repository once the proposal is answered — here a Claude Code session store and another
//! MCP server's presence record, both real files in the places those programs keep them —
//! and the card shows who else works there and which of the proposal's paths they touched.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::common::Fixture;
use super::gateway_support::{Gateway, Session, preview_id};
use super::presence::{now_ms, record_body};

/// A live process for a presence record to name; killed on drop.
struct Alive(Child);

impl Alive {
    fn start() -> Alive {
        Alive(
            Command::new("sleep")
                .arg("600")
                .stdin(Stdio::null())
                .spawn()
                .unwrap(),
        )
    }
}

impl Drop for Alive {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A Claude Code transcript under the fixture's home: it edited `src/lib.rs` and wrote
/// `docs/notes.md` in `repo`, on branch `feature/claude`.
fn claude_session(fx: &Fixture, repo: &Path) {
    let r = repo.display().to_string();
    let dir: String = r
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let file = fx
        .home()
        .join(".claude/projects")
        .join(dir)
        .join("5b0c3a52-1111-4222-8333-444455556666.jsonl");
    let lines = [
        json!({"type": "assistant", "cwd": r, "gitBranch": "feature/claude",
               "message": {"content": [{"type": "tool_use", "name": "Edit", "id": "t1",
                   "input": {"file_path": format!("{r}/src/lib.rs"), "old_string": "a", "new_string": "b"}}]}}),
        json!({"type": "assistant", "cwd": r, "gitBranch": "feature/claude",
               "message": {"content": [{"type": "tool_use", "name": "Write", "id": "t2",
                   "input": {"file_path": format!("{r}/docs/notes.md"), "content": "c"}}]}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, text).unwrap();
}

fn presence_record(fx: &Fixture, name: &str, pid: u32, repo: &Path, client: &str) {
    let dir = fx.run_dir().join("presence/mcp");
    std::fs::create_dir_all(&dir).unwrap();
    let body = record_body(pid, name, now_ms(), repo, client);
    std::fs::write(dir.join(format!("{name}.json")), body).unwrap();
}

/// The card once its detection has been stored (a bound on a background step).
fn card_with_others(session: &Session, id: &str) -> Value {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let card = session.get(&format!("/api/proposals/{id}")).json();
        if !card["otherAgents"].is_null() {
            return card;
        }
        assert!(Instant::now() < until, "no otherAgents on {card}");
        std::thread::sleep(Duration::from_millis(25));
    }
}

fn names(others: &Value) -> Vec<&str> {
    let mut names: Vec<&str> = others["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["agent"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    names
}

#[test]
fn the_card_shows_the_other_agents_in_the_repository_and_their_overlap() {
    let fx = Fixture::new();
    let repo = fx.init("r", &[]);
    fx.commit(&repo, "src/lib.rs", "one\n", "first");
    fx.write(&repo, "src/lib.rs", "two\n");
    fx.write(&repo, "docs/notes.md", "notes\n");
    claude_session(&fx, &repo);
    // Another MCP server working here, and the proposer's own (same client name).
    let (other, own) = (Alive::start(), Alive::start());
    presence_record(&fx, "other", other.0.id(), &repo, "cursor-vscode");
    presence_record(&fx, "own", own.0.id(), &repo, "my-agent");

    let gw = Gateway::start(&fx, &[], &[]);
    let session = gw.login();
    let answer = gw.post_handshake(
        "/v1/mcp/operation/preview/commit",
        &json!({
            "agentId": "my-agent", "operationType": "commit", "repoPath": repo,
            "reason": "save lib", "requestedAt": "2026-05-28T11:42:09.512Z",
            "message": "lib", "paths": ["src/lib.rs"],
        }),
    );
    assert_eq!(answer.status, 202, "{answer:?}");
    let id = preview_id(&answer);
    let card = card_with_others(&session, &id);
    let others = &card["otherAgents"];
    assert_eq!(names(others), ["claude-code", "cursor"], "{others}");
    assert_eq!(
        others["omittedLikelyCaller"], 1,
        "the proposer's own: {others}"
    );
    assert_eq!(others["proposalPathsKnown"], true);
    assert_eq!(others["overlappingAgentCount"], 1);
    let claude = others["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["agent"] == "claude-code")
        .unwrap();
    assert_eq!(claude["branch"], "feature/claude");
    assert_eq!(claude["files"], json!(["docs/notes.md", "src/lib.rs"]));
    assert_eq!(claude["overlappingPaths"], json!(["src/lib.rs"]));
    assert_eq!(claude["sameAgentAsCaller"], false);

    // Every reading of the card shows the same finding: the queue list too.
    let list = session.get("/api/proposals?view=pending").json();
    assert_eq!(list["cards"][0]["otherAgents"], *others);

    // A proposal that names no paths still shows who works here, without overlap.
    let answer = gw.propose_commit(&repo, "my-agent", None);
    let card = card_with_others(&session, &preview_id(&answer));
    assert_eq!(card["otherAgents"]["proposalPathsKnown"], false);
    assert_eq!(card["otherAgents"]["overlappingAgentCount"], 0);
    assert_eq!(names(&card["otherAgents"]), ["claude-code", "cursor"]);
}
