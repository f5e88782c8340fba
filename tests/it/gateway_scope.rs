//! The agent policy judges the refs, repositories and worktrees an operation will really
//! touch, as its own type reads them from the repository, not the fields a proposal
//! names: a rule limited to `refs/heads/agent/*` refuses every way of moving `main`.

use serde_json::{Value, json};

use super::common::Fixture;
use super::gateway_support::{Answer, Gateway, dirty_repo};

fn propose(gw: &Gateway, repo: &std::path::Path, kind: &str, fields: Value) -> Answer {
    let mut body = json!({
        "agentId": "claude-code",
        "operationType": kind,
        "repoPath": repo,
        "reason": "r",
        "requestedAt": "2026-05-28T11:42:09.512Z",
    });
    for (k, v) in fields.as_object().unwrap() {
        body[k] = v.clone();
    }
    gw.post_handshake(&format!("/v1/mcp/operation/preview/{kind}"), &body)
}

fn assert_denied_on(answer: &Answer, refname: &str, what: &str) {
    assert_eq!(answer.status, 403, "{what}: {answer:?}");
    let error = &answer.json()["error"];
    assert_eq!(error["code"], "policyDenied", "{what}");
    assert_eq!(
        error["details"]["rule"], "agents.claude-code.refs",
        "{what}"
    );
    assert_eq!(error["details"]["value"], refname, "{what}");
}

#[test]
fn a_refs_rule_judges_the_refs_each_operation_moves() {
    let fixture = Fixture::new();
    // `dirty`: `main` with a change to commit. `clean`: `main` and `agent/x` diverged,
    // a remote configured.
    let dirty = dirty_repo(&fixture, "dirty");
    let repo = fixture.init("clean", &["-b", "main"]);
    fixture.commit(&repo, "a.txt", "a\n", "first");
    fixture.git(&repo, &["checkout", "-q", "-b", "agent/x"]);
    fixture.commit(&repo, "x.txt", "x\n", "the agent's");
    fixture.git(&repo, &["checkout", "-q", "main"]);
    fixture.commit(&repo, "b.txt", "b\n", "second");
    fixture.git(
        &repo,
        &["remote", "add", "origin", "/nonexistent/remote.git"],
    );
    let policy = fixture.path("policy.json");
    std::fs::write(
        &policy,
        json!({"version": 1,
               "agents": {"claude-code": {"operations": ["*"], "refs": ["refs/heads/agent/*"]}}})
        .to_string(),
    )
    .unwrap();
    let policy = policy.display().to_string();
    let gw = Gateway::start(
        &fixture,
        &[],
        &[("FLUXGIT_MCP_AGENT_POLICY", policy.as_str())],
    );

    // A commit names no branch: it moves the checked-out one.
    let commit = propose(
        &gw,
        &dirty,
        "commit",
        json!({"message": "m", "stageAll": true}),
    );
    let head = fixture.git(&dirty, &["symbolic-ref", "HEAD"]);
    assert_denied_on(&commit, head.trim(), "commit");
    // A reset moves HEAD's branch, whatever `targetRef` names.
    let reset = propose(
        &gw,
        &repo,
        "reset",
        json!({"targetRef": "agent/x", "mode": "soft"}),
    );
    assert_denied_on(&reset, "refs/heads/main", "reset");
    // A rebase without `currentRef` rebases the checked-out branch.
    let rebase = propose(&gw, &repo, "rebase", json!({"ontoRef": "agent/x"}));
    assert_denied_on(&rebase, "refs/heads/main", "rebase");
    // A push without `branch` pushes the checked-out one.
    let push = propose(&gw, &repo, "push", json!({}));
    assert_denied_on(&push, "refs/heads/main", "push");
    // A plan moves what its steps move.
    let plan = propose(
        &gw,
        &repo,
        "plan",
        json!({"steps": [{"operationType": "reset", "targetRef": "agent/x", "mode": "soft"}]}),
    );
    assert_denied_on(&plan, "refs/heads/main", "plan");

    // On the agent's own branch the same proposals reach a person.
    fixture.git(&dirty, &["checkout", "-q", "-b", "agent/z"]);
    let commit = propose(
        &gw,
        &dirty,
        "commit",
        json!({"message": "m", "stageAll": true}),
    );
    assert_eq!(commit.status, 202, "{commit:?}");
    let branch = propose(&gw, &repo, "branch", json!({"name": "agent/y"}));
    assert_eq!(branch.status, 202, "{branch:?}");
    let other = propose(&gw, &repo, "branch", json!({"name": "release"}));
    assert_denied_on(&other, "refs/heads/release", "branch");
}
