//! Every lifecycle transition of a real gateway reaches the audit ledger through the one
//! writer, beside the sidecar's tool calls, and `gitward verify-audit` accepts the whole.

use std::time::Duration;

use serde_json::{Value, json};

use super::common::Fixture;
use super::gateway_support::{Gateway, command, dirty_repo, preview_id};

fn entries(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn the_gateway_and_the_sidecar_write_one_verifiable_ledger() {
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    let ledger = fixture.path("audit/mcp.jsonl");
    let ledger_env = ledger.display().to_string();
    let env = [("FLUXGIT_MCP_AUDIT_LOG", ledger_env.as_str())];
    let gw = Gateway::start(&fixture, &[], &env);
    let session = gw.login();
    let approved = preview_id(&gw.propose_commit(&repo, "claude-code", None));
    session.post(
        &format!("/api/proposals/{approved}/approve"),
        &json!({"confirmDestructive": false}),
    );
    let rejected = preview_id(&gw.propose_commit(&repo, "codex", None));
    session.post(&format!("/api/proposals/{rejected}/reject"), &json!({}));

    let repo_arg = json!({"repoPath": repo}).to_string();
    let out = command(&fixture, &["call", "repo.status", &repo_arg], &env)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");

    // The approved one runs to its end; the follower writes each step.
    let mut seen = Vec::new();
    for _ in 0..400 {
        seen = entries(&ledger)
            .into_iter()
            .filter(|e| e["event_type"] == "proposal_transition")
            .map(|e| {
                (
                    e["previewId"].as_str().unwrap().to_owned(),
                    e["transition"].as_str().unwrap().to_owned(),
                )
            })
            .collect::<Vec<_>>();
        if seen
            .iter()
            .any(|(id, t)| id == &approved && t == "completed")
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let of = |id: &str| -> Vec<&str> {
        seen.iter()
            .filter(|(i, _)| i == id)
            .map(|(_, t)| t.as_str())
            .collect()
    };
    assert_eq!(
        of(&approved),
        ["proposed", "approved", "executing", "completed"]
    );
    assert_eq!(of(&rejected), ["proposed", "rejected"]);

    let all = entries(&ledger);
    let decision = all
        .iter()
        .find(|e| e["previewId"] == json!(approved) && e["transition"] == "approved")
        .unwrap();
    assert_eq!(decision["channel"], "web");
    assert_eq!(decision["agentId"], "claude-code");
    assert_eq!(decision["operation"], "commit");
    assert!(
        decision["repo_scope"]
            .as_str()
            .unwrap()
            .starts_with("repoPath:sha256:")
    );
    assert!(!decision.to_string().contains(repo.to_str().unwrap()));
    let completed = all
        .iter()
        .find(|e| e["previewId"] == json!(approved) && e["transition"] == "completed")
        .unwrap();
    assert!(
        completed["restorePointId"]
            .as_str()
            .unwrap()
            .starts_with("rp_")
    );
    assert!(all.iter().any(|e| e["tool"] == "repo.status"));

    drop(gw);
    let out = command(&fixture, &["verify-audit", &ledger_env], &[])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}
