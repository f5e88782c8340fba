//! The five FluxGit-required tools (`safety.timeline`, `safety.eventDetails`,
//! `flux.latestRestorePoint`, `flux.restorePoints`, `flux.restorePointDetails`): against a
//! real gateway holding real restore points, compared with plain git; and without one.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::Fixture;
use crate::operation_e2e::{Gateway, settle};

const TOOLS: [&str; 5] = [
    "safety.timeline",
    "safety.eventDetails",
    "flux.latestRestorePoint",
    "flux.restorePoints",
    "flux.restorePointDetails",
];

fn args(tool: &str, repo: &Path) -> Value {
    match tool {
        "safety.eventDetails" => json!({"repoPath": repo, "eventId": "reflog:HEAD@{0}"}),
        "flux.restorePointDetails" => json!({"repoPath": repo, "restorePointId": "rp_x"}),
        _ => json!({"repoPath": repo}),
    }
}

fn repo(fx: &Fixture, name: &str) -> PathBuf {
    let repo = fx.init(name, &[]);
    fx.commit(&repo, "a.txt", "one\n", "first");
    fx.write(&repo, "a.txt", "one\ntwo\n");
    repo
}

/// Approves one proposal and returns its restore point id.
fn approved(
    gateway: &Gateway,
    sidecar: &mut crate::common::Server,
    tool: &str,
    args: Value,
) -> String {
    let proposed = sidecar.call(tool, args);
    let id = proposed["previewId"].as_str().unwrap().to_owned();
    gateway.approve(&id);
    let done = settle(sidecar, &id);
    assert_eq!(done["status"], "completed", "{done}");
    done["data"]["result"]["restorePointId"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn without_a_gateway_every_fluxgit_tool_is_10001_with_an_upgrade_hint() {
    let fx = Fixture::new();
    let repo = repo(&fx, "repo");
    // A port nothing listens on: configured, not reachable.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = closed.local_addr().unwrap().to_string();
    drop(closed);
    for (env, configured) in [(None, false), (Some(addr.as_str()), true)] {
        let env: Vec<(&str, &str)> = env
            .map(|a| vec![("FLUXGIT_MCP_HANDSHAKE_ADDR", a)])
            .unwrap_or_default();
        let mut server = fx.server(&[], &env);
        for tool in TOOLS {
            let answer = server.call(tool, args(tool, &repo));
            assert_eq!(answer["error"]["code"], 10001, "{tool}: {answer}");
            let data = &answer["error"]["data"];
            assert_eq!(data["gatewayConfigured"], configured, "{tool}: {answer}");
            assert_eq!(data["tool"], tool);
            assert_eq!(data["tier"], "fluxgit");
            assert!(data["upgradeHint"].is_string(), "{answer}");
            assert_eq!(answer["readOnly"], true);
        }
        // No caller-supplied run directory: the schema is closed.
        let reply = server.request(
            "tools/call",
            json!({"name": "safety.timeline", "arguments": {"repoPath": repo, "runDir": "/tmp"}}),
        );
        assert!(reply.to_string().contains("runDir"), "{reply}");
        assert_eq!(reply["result"]["isError"], true, "{reply}");
    }
}

/// A repository with two restore points (a commit, then a branch checked out), and a
/// third point in another repository.
struct Rig {
    fx: Fixture,
    repo: PathBuf,
    _gateway: Gateway,
    sidecar: crate::common::Server,
    before: String,
    committed: String,
    first: String,
    second: String,
    foreign: String,
}

fn rig() -> Rig {
    let fx = Fixture::new();
    let repo = repo(&fx, "repo");
    let other = repo_other(&fx);
    let gateway = Gateway::start(&fx, &[]);
    let mut sidecar = gateway.sidecar(&fx);
    let before = fx.git(&repo, &["rev-parse", "HEAD"]);
    let first = approved(
        &gateway,
        &mut sidecar,
        "operation.preview.commit",
        json!({"repoPath": repo, "reason": "r", "message": "Second line", "paths": ["a.txt"]}),
    );
    let committed = fx.git(&repo, &["rev-parse", "HEAD"]);
    let second = approved(
        &gateway,
        &mut sidecar,
        "operation.preview.branch",
        json!({"repoPath": repo, "reason": "r", "name": "agent/next", "checkout": true}),
    );
    let foreign = approved(
        &gateway,
        &mut sidecar,
        "operation.preview.branch",
        json!({"repoPath": other, "reason": "r", "name": "elsewhere", "checkout": false}),
    );
    Rig {
        fx,
        repo,
        _gateway: gateway,
        sidecar,
        before,
        committed,
        first,
        second,
        foreign,
    }
}

/// Nothing of the gateway's own files reaches an answer.
fn names_no_gateway_file(rig: &Rig, answer: &Value) {
    let run_dir = rig.fx.run_dir().display().to_string();
    let text = answer.to_string();
    assert!(!text.contains(&run_dir), "{text}");
    assert!(
        !text.contains("gateway.db") && !text.contains("checkpointPath"),
        "{text}"
    );
}

#[test]
fn flux_restore_points_lists_this_repository_newest_first() {
    let mut rig = rig();
    let repo = rig.repo.clone();
    let listed = rig
        .sidecar
        .call("flux.restorePoints", json!({"repoPath": repo}));
    assert_eq!(listed["source"], "fluxgit-gateway", "{listed}");
    let points = listed["data"]["restorePoints"].as_array().unwrap();
    let ids: Vec<_> = points
        .iter()
        .map(|p| p["restorePointId"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [rig.second.as_str(), rig.first.as_str()],
        "this repository only"
    );
    assert_eq!(points[1]["operation"], "commit");
    assert_eq!(points[1]["before"], json!(rig.before));
    assert_eq!(points[1]["after"], json!(rig.committed));
    assert_eq!(points[0]["operation"], "branch");
    assert_eq!(points[0]["metadata"]["afterRef"], "refs/heads/agent/next");
    assert_eq!(points[1]["approvalRequired"], true);
    assert_eq!(
        listed["data"]["current"]["branchRef"],
        "refs/heads/agent/next"
    );
    names_no_gateway_file(&rig, &listed);
    let one = rig
        .sidecar
        .call("flux.restorePoints", json!({"repoPath": repo, "limit": 1}));
    assert_eq!(one["data"]["count"], 1);
    assert_eq!(one["data"]["moreAvailable"], true);
}

#[test]
fn flux_latest_restore_point_is_the_newest_with_head_now() {
    let mut rig = rig();
    let repo = rig.repo.clone();
    let latest = rig
        .sidecar
        .call("flux.latestRestorePoint", json!({"repoPath": repo}));
    assert_eq!(
        latest["data"]["restorePointId"],
        json!(rig.second),
        "{latest}"
    );
    assert_eq!(
        latest["data"]["metadata"]["currentHead"],
        json!(rig.committed)
    );
    names_no_gateway_file(&rig, &latest);
    // A repository with none yet has nothing to serve.
    let empty = rig.fx.init("empty", &[]);
    rig.fx.commit(&empty, "e.txt", "e\n", "e");
    let none = rig
        .sidecar
        .call("flux.latestRestorePoint", json!({"repoPath": empty}));
    assert_eq!(none["error"]["code"], 10002, "{none}");
}

#[test]
fn flux_restore_point_details_by_id_and_only_this_repositorys() {
    let mut rig = rig();
    let repo = rig.repo.clone();
    let details = rig.sidecar.call(
        "flux.restorePointDetails",
        json!({"repoPath": repo, "restorePointId": rig.first}),
    );
    assert_eq!(details["data"]["before"], json!(rig.before), "{details}");
    assert_eq!(details["data"]["metadata"]["branchRef"], "refs/heads/main");
    assert_eq!(details["data"]["metadata"]["indexCaptured"], true);
    assert_eq!(
        details["data"]["metadata"]["currentHead"],
        json!(rig.committed)
    );
    names_no_gateway_file(&rig, &details);
    let foreign = rig.foreign.clone();
    for (id, why) in [
        (foreign.as_str(), "another repository's"),
        ("rp_nothing", "unknown"),
    ] {
        let refused = rig.sidecar.call(
            "flux.restorePointDetails",
            json!({"repoPath": repo, "restorePointId": id}),
        );
        assert_eq!(refused["error"]["code"], 10002, "{why}: {refused}");
    }
}

#[test]
fn safety_timeline_merges_restore_points_with_heads_reflog() {
    let mut rig = rig();
    let repo = rig.repo.clone();
    let timeline = rig
        .sidecar
        .call("safety.timeline", json!({"repoPath": repo}));
    let events = timeline["data"]["events"].as_array().unwrap();
    assert_eq!(timeline["data"]["eventCount"], json!(events.len()));
    assert_eq!(timeline["data"]["networkFetchPerformed"], false);
    let times: Vec<i64> = events
        .iter()
        .map(|e| e["occurredAtUnix"].as_i64().unwrap())
        .collect();
    assert!(
        times.windows(2).all(|w| w[0] >= w[1]),
        "newest first: {times:?}"
    );
    let restore: Vec<_> = events
        .iter()
        .filter(|e| e["source"] == "restore_point")
        .collect();
    assert_eq!(restore.len(), 2, "{timeline}");
    assert_eq!(restore[0]["id"], json!(format!("restore:{}", rig.second)));
    // The reflog events are HEAD's moves as plain git lists them.
    let git_moves = rig.fx.git(&repo, &["reflog", "--format=%H %gs", "HEAD"]);
    let reflog: Vec<String> = events
        .iter()
        .filter(|e| e["source"] == "reflog")
        .map(|e| {
            let after = e["headAfter"].as_str().unwrap();
            format!("{after} {}", e["summary"].as_str().unwrap())
        })
        .collect();
    assert_eq!(reflog, git_moves.lines().collect::<Vec<_>>());
    names_no_gateway_file(&rig, &timeline);
    let only_points = rig.sidecar.call(
        "safety.timeline",
        json!({"repoPath": repo, "includeReflog": false}),
    );
    assert_eq!(only_points["data"]["eventCount"], 2, "{only_points}");
}

#[test]
fn safety_event_details_of_a_restore_point_and_of_a_reflog_move() {
    let mut rig = rig();
    let repo = rig.repo.clone();
    let event = rig.sidecar.call(
        "safety.eventDetails",
        json!({"repoPath": repo, "eventId": format!("restore:{}", rig.first)}),
    );
    let point = &event["data"]["restorePoint"];
    assert_eq!(point["restorePointId"], json!(rig.first), "{event}");
    let newest = rig.sidecar.call(
        "safety.eventDetails",
        json!({"repoPath": repo, "eventId": "reflog:HEAD@{0}"}),
    );
    let entry = &newest["data"]["reflogEntry"];
    assert_eq!(entry["new"], json!(rig.committed), "{newest}");
    let message = rig.fx.git(&repo, &["reflog", "-1", "--format=%gs", "HEAD"]);
    assert_eq!(entry["message"], json!(message));
    names_no_gateway_file(&rig, &event);
    names_no_gateway_file(&rig, &newest);
    for bad in ["reflog:HEAD@{99}", "restore:rp_nothing", "whatever"] {
        let refused = rig.sidecar.call(
            "safety.eventDetails",
            json!({"repoPath": repo, "eventId": bad}),
        );
        assert_eq!(refused["error"]["code"], 10002, "{bad}: {refused}");
    }
}

fn repo_other(fx: &Fixture) -> PathBuf {
    let other = fx.init("other", &[]);
    fx.commit(&other, "x.txt", "x\n", "x");
    other
}

#[test]
fn safety_timeline_merges_the_reflog_of_the_ref_it_is_named() {
    let mut rig = rig();
    let repo = rig.repo.clone();
    let timeline = rig.sidecar.call(
        "safety.timeline",
        json!({"repoPath": repo, "refName": "main", "includeRestorePoints": false}),
    );
    let events = timeline["data"]["events"].as_array().unwrap();
    let git_moves = rig
        .fx
        .git(&repo, &["reflog", "--format=%H %gs", "refs/heads/main"]);
    let reflog: Vec<String> = events
        .iter()
        .map(|e| {
            assert!(e["title"].as_str().unwrap().starts_with("main "), "{e}");
            format!(
                "{} {}",
                e["headAfter"].as_str().unwrap(),
                e["summary"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(reflog, git_moves.lines().collect::<Vec<_>>(), "{timeline}");
    let head_moves = rig.fx.git(&repo, &["reflog", "--format=%H %gs", "HEAD"]);
    assert_ne!(git_moves, head_moves, "the fixture tells the two apart");
    assert_eq!(events[0]["id"], "reflog:main@{0}");
    let details = rig.sidecar.call(
        "safety.eventDetails",
        json!({"repoPath": repo, "eventId": "reflog:main@{0}"}),
    );
    let message = rig
        .fx
        .git(&repo, &["reflog", "-1", "--format=%gs", "refs/heads/main"]);
    assert_eq!(details["data"]["reflogEntry"]["message"], json!(message));
    assert_eq!(details["data"]["reflogEntry"]["selector"], "main@{0}");

    // One ref, named as a ref: never an option, a revision or a ref that is not there.
    for bad in ["--all", "-n", "HEAD@{1}", "main..HEAD", "no-such-branch"] {
        let refused = rig
            .sidecar
            .call("safety.timeline", json!({"repoPath": repo, "refName": bad}));
        assert_eq!(
            refused["error"]["data"]["field"], "refName",
            "{bad}: {refused}"
        );
        assert!(refused["data"].is_null(), "{bad}: {refused}");
    }
    // The gateway checks it too, whoever asks.
    let url = format!(
        "http://{}/v1/mcp/safety/timeline?repoPath={}&refName=--all",
        rig._gateway.handshake,
        repo.display()
    );
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .build()
        .into();
    let mut answer = agent.get(&url).call().unwrap();
    assert_eq!(answer.status().as_u16(), 422);
    let body = answer.body_mut().read_to_string().unwrap();
    assert!(body.contains("refName"), "{body}");
}
