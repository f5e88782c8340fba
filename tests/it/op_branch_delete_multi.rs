//! `operation.preview.branchDelete` across repositories, end to end through a real
//! gateway: every target repository is assessed and deleted in under its own lock, each
//! gets its own restore point and Restore brings every branch back; a tip that moved in
//! any of them makes the whole proposal stale; the limits and the allowed roots and agent
//! policy refuse before a card opens.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::Fixture;
use crate::op_support::{card, restore};
use crate::operation_e2e::{Gateway, settle};

/// A repository with `main` two commits long, `done` merged into it and `wip` with a
/// commit of its own.
fn repo(fx: &Fixture, name: &str) -> PathBuf {
    let repo = fx.init(name, &[]);
    fx.commit(&repo, "a.txt", "one\n", "first");
    fx.git(&repo, &["branch", "done"]);
    fx.commit(&repo, "a.txt", "one\ntwo\n", "second");
    fx.git(&repo, &["checkout", "-q", "-b", "wip"]);
    fx.commit(&repo, "w.txt", "w\n", "local only");
    fx.git(&repo, &["checkout", "-q", "main"]);
    repo
}

fn refs(fx: &Fixture, repo: &Path) -> String {
    fx.git(
        repo,
        &[
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            "refs/heads",
        ],
    )
}

fn three(fx: &Fixture) -> [PathBuf; 3] {
    [repo(fx, "one"), repo(fx, "two"), repo(fx, "three")]
}

fn targets(repos: &[PathBuf; 3]) -> Value {
    json!([
        {"repoPath": repos[0], "branches": ["done", "wip"]},
        {"repoPath": repos[1], "branches": ["done"]},
        {"repoPath": repos[2], "branches": ["wip", "done"]},
    ])
}

fn propose(sidecar: &mut crate::common::Server, repo: &Path, targets: Value) -> Value {
    sidecar.call(
        "operation.preview.branchDelete",
        json!({"repoPath": repo, "reason": "tidy up merged branches", "targets": targets}),
    )
}

/// `repo name:branch` of each entry, the repository by its directory name.
fn named(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|b| {
            let repo = Path::new(b["repoPath"].as_str().unwrap());
            format!(
                "{}:{}",
                repo.file_name().unwrap().to_str().unwrap(),
                b["branch"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn branch_delete_across_three_repositories_deletes_keeps_and_restores_each() {
    let fx = Fixture::new();
    let repos = three(&fx);
    let before: Vec<String> = repos.iter().map(|r| refs(&fx, r)).collect();
    let gateway = Gateway::start(&fx, &[]);
    let mut sidecar = gateway.sidecar(&fx);
    let proposed = propose(&mut sidecar, &repos[0], targets(&repos));
    assert_eq!(proposed["accepted"], true, "{proposed}");
    let id = proposed["previewId"].as_str().unwrap().to_owned();

    // The card lists every repository's branches, each with its decision and reason.
    let shown = card(&gateway, &id);
    let preview = &shown["preview"];
    assert_eq!(preview["deletable"], 3, "{preview}");
    assert_eq!(preview["kept"], 2, "{preview}");
    let listed: Vec<Vec<String>> = preview["repositories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| named(&r["branches"]))
        .collect();
    assert_eq!(
        listed,
        [
            vec!["one:done", "one:wip"],
            vec!["two:done"],
            vec!["three:wip", "three:done"]
        ]
    );
    let wip = &preview["repositories"][2]["branches"][0];
    assert_eq!(wip["delete"], false);
    assert!(
        wip["reason"]
            .as_str()
            .unwrap()
            .contains("neither in HEAD nor in its upstream"),
        "{wip}"
    );
    let nothing_yet: Vec<String> = repos.iter().map(|r| refs(&fx, r)).collect();
    assert_eq!(nothing_yet, before, "nothing before a person decides");

    gateway.approve(&id);
    let done = settle(&mut sidecar, &id);
    assert_eq!(done["status"], "completed", "{done}");
    let result = &done["data"]["result"];
    assert_eq!(
        named(&result["deleted"]),
        ["one:done", "two:done", "three:done"]
    );
    assert_eq!(named(&result["skipped"]), ["one:wip", "three:wip"]);
    assert_eq!(named(&result["failed"]), Vec::<String>::new());
    for (repo, b) in repos.iter().zip(&before) {
        let plain = b.lines().filter(|l| !l.starts_with("refs/heads/done "));
        assert_eq!(refs(&fx, repo), plain.collect::<Vec<_>>().join("\n"));
    }

    // One restore point per repository, each restoring its own branches.
    let points = result["restorePoints"].as_array().unwrap();
    let paths: Vec<&str> = points
        .iter()
        .map(|p| p["repoPath"].as_str().unwrap())
        .collect();
    let expected: Vec<String> = repos.iter().map(|r| r.display().to_string()).collect();
    assert_eq!(paths, expected);
    assert_eq!(points[0]["restorePointId"], result["restorePointId"]);
    for (point, (repo, b)) in points.iter().zip(repos.iter().zip(&before)) {
        let rp = point["restorePointId"].as_str().unwrap();
        let (status, answer) = restore(&gateway, rp);
        assert_eq!(status, 200, "{answer}");
        assert_eq!(&refs(&fx, repo), b, "{rp} brings back {}", repo.display());
    }
}

#[test]
fn branch_delete_across_repositories_is_stale_when_a_tip_moves_in_any_of_them() {
    let fx = Fixture::new();
    let repos = three(&fx);
    let gateway = Gateway::start(&fx, &[]);
    let mut sidecar = gateway.sidecar(&fx);
    let proposed = propose(&mut sidecar, &repos[0], targets(&repos));
    let id = proposed["previewId"].as_str().unwrap().to_owned();
    fx.git(&repos[2], &["branch", "-f", "done", "wip"]);
    let moved: Vec<String> = repos.iter().map(|r| refs(&fx, r)).collect();
    gateway.approve(&id);
    let done = settle(&mut sidecar, &id);
    assert_eq!(done["error"]["data"]["status"], "failed", "{done}");
    let result = &done["error"]["data"]["statusBody"]["result"];
    assert_eq!(result["failure"], "stale", "{done}");
    let what = super::exec_history::moved(result);
    assert_eq!(
        what,
        [format!("{}: refs/heads/done", repos[2].display())],
        "{result}"
    );
    let after: Vec<String> = repos.iter().map(|r| refs(&fx, r)).collect();
    assert_eq!(after, moved, "nothing deleted in any repository");
}

fn many(fx: &Fixture, repos: usize, each: usize) -> Value {
    let repo = fx.path("r");
    let list: Vec<Value> = (0..repos)
        .map(|r| {
            let b: Vec<String> = (0..each).map(|i| format!("b{r}-{i}")).collect();
            json!({"repoPath": repo.join(format!("{r}")), "branches": b})
        })
        .collect();
    json!(list)
}

#[test]
fn branch_delete_limits_and_roots_refuse_before_a_card_opens() {
    let fx = Fixture::new();
    let repos = three(&fx);
    let gateway = Gateway::start(&fx, &[]);
    let mut sidecar = gateway.sidecar(&fx);
    for (targets, says) in [
        (many(&fx, 21, 1), "1-20 repositories"),
        (many(&fx, 1, 21), "1-20 branches per repository"),
        (
            {
                let mut t = many(&fx, 5, 20);
                t.as_array_mut().unwrap().push(many(&fx, 1, 1)[0].clone());
                t
            },
            "at most 100 branches in all",
        ),
    ] {
        let refused = propose(&mut sidecar, &repos[0], targets);
        let text = refused.to_string();
        assert!(text.contains(says), "{says}: {refused}");
        assert_ne!(refused["accepted"], true, "{refused}");
    }

    // A repository outside the allowed roots is refused by name, in the gateway too.
    let elsewhere = Fixture::new();
    let outside = repo(&elsewhere, "outside");
    let mut t = targets(&repos);
    t.as_array_mut()
        .unwrap()
        .push(json!({"repoPath": outside, "branches": ["done"]}));
    let refused = propose(&mut sidecar, &repos[0], t.clone());
    assert_ne!(refused["accepted"], true, "{refused}");
    assert!(refused.to_string().contains("targets"), "{refused}");
    // One gateway per store: the direct one starts after the sidecar's ends.
    drop(sidecar);
    drop(gateway);
    let direct = crate::gateway_support::Gateway::start(&fx, &[], &[]);
    let answer = direct.post_handshake(
        "/v1/mcp/operation/preview/branchDelete",
        &json!({"agentId": "claude-code", "operationType": "branchDelete",
                "repoPath": repos[0], "reason": "r",
                "requestedAt": "2026-05-28T11:42:09.512Z", "targets": t}),
    );
    assert_eq!(answer.status, 422, "{answer:?}");
    assert_eq!(
        answer.json()["error"]["details"]["field"],
        "targets[].repoPath"
    );
    assert_eq!(refs(&elsewhere, &outside).lines().count(), 3, "untouched");
}

#[test]
fn branch_delete_asks_the_agent_policy_about_every_repository() {
    let fx = Fixture::new();
    let repos = three(&fx);
    let policy = fx.path("policy.json");
    let allowed: Vec<String> = repos[..2].iter().map(|r| r.display().to_string()).collect();
    std::fs::write(
        &policy,
        json!({"version": 1, "default": {"operations": ["*"],
               "pathConstraints": {"repositories": allowed}}})
        .to_string(),
    )
    .unwrap();
    let policy = policy.display().to_string();
    let gw = crate::gateway_support::Gateway::start(
        &fx,
        &[],
        &[("FLUXGIT_MCP_AGENT_POLICY", policy.as_str())],
    );
    let body = |targets: Value| {
        json!({"agentId": "claude-code", "operationType": "branchDelete",
               "repoPath": repos[0], "reason": "r",
               "requestedAt": "2026-05-28T11:42:09.512Z", "targets": targets})
    };
    let path = "/v1/mcp/operation/preview/branchDelete";
    let two = json!([{"repoPath": repos[0], "branches": ["done"]},
                     {"repoPath": repos[1], "branches": ["done"]}]);
    assert_eq!(gw.post_handshake(path, &body(two)).status, 202);
    let denied = gw.post_handshake(path, &body(targets(&repos)));
    assert_eq!(denied.status, 403, "{denied:?}");
    let error = &denied.json()["error"];
    assert_eq!(error["code"], "policyDenied");
    assert_eq!(error["details"]["value"], repos[2].display().to_string());
}

/// Proposes and approves deleting `done` in each of `repos` on a gateway that aborts at
/// `point`; returns the proposal's id once the gateway is gone.
fn crash_at(fx: &Fixture, repos: &[PathBuf], point: &str) -> String {
    use crate::gateway_support::{Gateway, preview_id};
    let mut gw = Gateway::start(fx, &[], &[("GITWARD_DEBUG_CRASH_AT", point)]);
    let session = gw.login();
    let targets: Vec<Value> = repos
        .iter()
        .map(|r| json!({"repoPath": r, "branches": ["done"]}))
        .collect();
    let proposed = gw.post_handshake(
        "/v1/mcp/operation/preview/branchDelete",
        &json!({"agentId": "claude-code", "operationType": "branchDelete",
                "repoPath": repos[0], "reason": "r",
                "requestedAt": "2026-05-28T11:42:09.512Z", "targets": targets}),
    );
    let id = preview_id(&proposed);
    // Approval waits for the card's preview; an early one would be refused, not crash.
    session.approve_into_crash(&id);
    let status = gw.child.wait().unwrap();
    assert!(!status.success(), "{point}: the gateway did not crash");
    id
}

#[test]
fn branch_delete_across_repositories_is_reconciled_in_each_after_a_crash() {
    for (point, ends) in [
        ("after-restore-point", "failed"),
        ("after-write", "completed"),
    ] {
        let fx = Fixture::new();
        let repos = [repo(&fx, "one"), repo(&fx, "two")];
        let id = crash_at(&fx, &repos, point);
        let gw = crate::gateway_support::Gateway::start(&fx, &[], &[]);
        let mut record = Value::Null;
        for _ in 0..400 {
            record = gw
                .get_handshake(&format!("/v1/mcp/operation/status/{id}"))
                .json();
            if !matches!(record["status"].as_str(), Some("approved" | "executing")) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        assert_eq!(record["status"], ends, "{point}: {record}");
        let points = record["result"]["restorePoints"].as_array().unwrap();
        let paths: Vec<&str> = points
            .iter()
            .map(|p| p["repoPath"].as_str().unwrap())
            .collect();
        let expected: Vec<String> = repos.iter().map(|r| r.display().to_string()).collect();
        assert_eq!(paths, expected, "{point}: {record}");
        assert!(
            points.iter().all(|p| p["restorePointId"].is_string()),
            "{point}: {record}"
        );
        let gone = ends == "completed";
        for r in &repos {
            assert_eq!(
                !refs(&fx, r).contains("refs/heads/done "),
                gone,
                "{point}: {}",
                r.display()
            );
        }
    }
}
