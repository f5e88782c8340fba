//! The write path end to end with real parts only: a real `gitward gateway` on port 0, the
//! sidecar (the binary over stdio) proposing, a person approving through the human API
//! with the per-start CLI credential, and the repository compared with plain git after.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{Fixture, Server, gitward_bin};

/// Not a timing assert: how long a proposal may take to finish before the test gives up
/// (only a gateway that never executes gets near it).
const PATIENCE: Duration = Duration::from_secs(120);

/// A running `gitward gateway`, killed when dropped.
pub struct Gateway {
    child: Child,
    /// `127.0.0.1:PORT` of the handshake listener.
    pub handshake: String,
    /// `http://127.0.0.1:PORT/` of the human listener.
    pub ui: String,
    token: String,
}

impl Gateway {
    pub fn start(fx: &Fixture, args: &[&str]) -> Gateway {
        Gateway::start_with_env(fx, args, &[])
    }

    /// [`Gateway::start`] with `env` added to the fixture's environment.
    pub fn start_with_env(fx: &Fixture, args: &[&str], env: &[(&str, &str)]) -> Gateway {
        Gateway::start_prepared(fx, args, env, |_| {})
    }

    /// [`Gateway::start_with_env`] with `prepare` applied to the command before it starts
    /// (to run it as another user, say).
    pub fn start_prepared(
        fx: &Fixture,
        args: &[&str],
        env: &[(&str, &str)],
        prepare: impl FnOnce(&mut Command),
    ) -> Gateway {
        let root = fx.root().display().to_string();
        let mut cmd = Command::new(gitward_bin());
        cmd.args([
            "gateway",
            "--addr",
            "127.0.0.1:0",
            "--ui-addr",
            "127.0.0.1:0",
        ])
        .args(["--allowed-root", &root])
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
        for (k, v) in fx.env() {
            cmd.env(k, v);
        }
        cmd.envs(env.iter().copied());
        prepare(&mut cmd);
        let mut child = cmd.spawn().expect("the gateway starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let start: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the start-up line is not JSON ({e}): {line:?}"));
        let token = std::fs::read_to_string(fx.run_dir().join("gateway/cli-token"))
            .unwrap()
            .trim()
            .to_owned();
        Gateway {
            child,
            handshake: start["handshake"].as_str().unwrap().to_owned(),
            ui: start["ui"].as_str().unwrap().to_owned(),
            token,
        }
    }

    /// A sidecar pointed at this gateway.
    pub fn sidecar(&self, fx: &Fixture) -> Server {
        fx.server(&[], &[("FLUXGIT_MCP_HANDSHAKE_ADDR", &self.handshake)])
    }

    /// A POST to the human API as the terminal channel; the status and the JSON answer.
    /// An approval or a restore carries the confirmation code the terminal shows, as
    /// `gitward approve` / `gitward restore` send what the person typed.
    pub fn human_post(&self, path: &str, mut body: Value) -> (u16, Value) {
        // A person approves what the card shows: wait, as the page does, for the preview.
        if let Some(card) = path.strip_suffix("/approve") {
            let mut shown = self.human_get(card);
            for _ in 0..600 {
                if shown["previewPending"] != true {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
                shown = self.human_get(card);
            }
            if body.get("confirmationCode").is_none() {
                body["confirmationCode"] = shown["confirmationCode"].clone();
            }
        }
        if let Some(point) = path.strip_suffix("/restore") {
            if body.get("confirmationCode").is_none() {
                body["confirmationCode"] = self.human_get(point)["confirmationCode"].clone();
            }
        }
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .proxy(None)
            .build()
            .into();
        let mut response = agent
            .post(format!("{}{}", self.ui, path.trim_start_matches('/')))
            .header("Authorization", format!("Bearer {}", self.token))
            .header("X-Gitward-Channel", "tty")
            .header("Content-Type", "application/json")
            .send(body.to_string())
            .unwrap();
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// A GET of the human API as the terminal channel; the JSON answer.
    pub fn human_get(&self, path: &str) -> Value {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .proxy(None)
            .build()
            .into();
        let mut response = agent
            .get(format!("{}{}", self.ui, path.trim_start_matches('/')))
            .header("Authorization", format!("Bearer {}", self.token))
            .header("X-Gitward-Channel", "tty")
            .call()
            .unwrap();
        let text = response.body_mut().read_to_string().unwrap_or_default();
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }

    /// Approves with the destructive checkbox ticked.
    pub fn approve_confirmed(&self, id: &str) {
        let (status, card) = self.human_post(
            &format!("api/proposals/{id}/approve"),
            json!({"confirmDestructive": true}),
        );
        assert_eq!(status, 200, "approving {id}: {card}");
    }

    pub fn approve(&self, id: &str) {
        let (status, card) = self.human_post(
            &format!("api/proposals/{id}/approve"),
            json!({"confirmDestructive": false}),
        );
        assert_eq!(status, 200, "approving {id}: {card}");
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `operation.status` until the proposal leaves the live states; the last answer.
pub fn settle(sidecar: &mut Server, id: &str) -> Value {
    let started = Instant::now();
    loop {
        let status = sidecar.call("operation.status", json!({ "previewId": id }));
        let live = ["pending", "approved", "executing"]
            .contains(&status["status"].as_str().unwrap_or_default());
        if !live {
            return status;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "{id} never finished: {status}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn repo(fx: &Fixture) -> PathBuf {
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "one\n", "first");
    fx.commit(&repo, "b.txt", "b\n", "second");
    fx.write(&repo, "a.txt", "one\ntwo\n");
    fx.write(&repo, "b.txt", "b changed, not proposed\n");
    repo
}

fn head(fx: &Fixture, repo: &Path) -> String {
    fx.git(repo, &["rev-parse", "HEAD"])
}

#[test]
fn operation_preview_commit_end_to_end_through_a_real_gateway() {
    let fx = Fixture::new();
    let repo = repo(&fx);
    let before = head(&fx, &repo);
    let gateway = Gateway::start(&fx, &[]);
    let mut sidecar = gateway.sidecar(&fx);
    let args = json!({"repoPath": repo, "reason": "a.txt gains its second line",
                      "message": "Add the second line", "paths": ["a.txt"],
                      "idempotencyKey": "e2e-commit"});
    let proposed = sidecar.call("operation.preview.commit", args.clone());
    assert_eq!(proposed["accepted"], true, "{proposed}");
    assert_eq!(proposed["status"], "pending");
    let id = proposed["previewId"].as_str().unwrap().to_owned();
    assert_eq!(proposed["data"]["agentId"], "gitward-tests", "{proposed}");

    // The same intent again resolves to the same proposal.
    let retried = sidecar.call("operation.preview.commit", args);
    assert_eq!(retried["previewId"], json!(id), "{retried}");
    let pending = sidecar.call("operation.status", json!({ "previewId": id }));
    assert_eq!(pending["status"], "pending", "{pending}");
    assert_eq!(
        head(&fx, &repo),
        before,
        "nothing is written before a person decides"
    );

    gateway.approve(&id);
    let done = settle(&mut sidecar, &id);
    assert_eq!(done["status"], "completed", "{done}");
    let result = &done["data"]["result"];
    let sha = result["commitSha"].as_str().unwrap();
    assert!(
        result["restorePointId"]
            .as_str()
            .unwrap()
            .starts_with("rp_"),
        "{done}"
    );
    // Exactly the proposed commit: one commit on top, a.txt only, b.txt still changed.
    assert_eq!(head(&fx, &repo), sha);
    assert_eq!(fx.git(&repo, &["rev-parse", "HEAD~1"]), before);
    assert_eq!(
        fx.git(&repo, &["show", "--format=%s", "--name-only", "HEAD"]),
        "Add the second line\n\na.txt"
    );
    assert_eq!(fx.git(&repo, &["show", "HEAD:a.txt"]), "one\ntwo");
    assert_eq!(fx.git(&repo, &["status", "--porcelain"]), " M b.txt");
}

#[test]
fn operation_preview_branch_end_to_end_through_a_real_gateway() {
    let fx = Fixture::new();
    let repo = repo(&fx);
    let gateway = Gateway::start(&fx, &[]);
    let mut sidecar = gateway.sidecar(&fx);
    let proposed = sidecar.call(
        "operation.preview.branch",
        json!({"repoPath": repo, "reason": "work on the fix apart", "name": "agent/fix",
               "startPoint": "HEAD~1", "checkout": false}),
    );
    assert_eq!(proposed["accepted"], true, "{proposed}");
    let id = proposed["previewId"].as_str().unwrap().to_owned();
    gateway.approve(&id);
    let done = settle(&mut sidecar, &id);
    assert_eq!(done["status"], "completed", "{done}");
    assert!(
        done["data"]["result"]["restorePointId"].is_string(),
        "{done}"
    );
    assert_eq!(
        fx.git(&repo, &["rev-parse", "agent/fix"]),
        fx.git(&repo, &["rev-parse", "HEAD~1"])
    );
    assert_eq!(fx.git(&repo, &["branch", "--show-current"]), "main");
}

#[test]
fn operation_preview_worktree_end_to_end_through_a_real_gateway() {
    let fx = Fixture::new();
    let repo = repo(&fx);
    let gateway = Gateway::start(&fx, &[]);
    let mut sidecar = gateway.sidecar(&fx);
    let target = fx.path("parallel");
    let proposed = sidecar.call(
        "operation.preview.worktree",
        json!({"repoPath": repo, "reason": "a parallel task", "branch": "agent/parallel",
               "path": target}),
    );
    assert_eq!(proposed["accepted"], true, "{proposed}");
    let id = proposed["previewId"].as_str().unwrap().to_owned();
    gateway.approve(&id);
    let done = settle(&mut sidecar, &id);
    assert_eq!(done["status"], "completed", "{done}");
    assert!(
        done["data"]["result"]["restorePointId"].is_string(),
        "{done}"
    );
    assert_eq!(
        fx.git(&target, &["branch", "--show-current"]),
        "agent/parallel"
    );
    let listed = fx.git(&repo, &["worktree", "list", "--porcelain"]);
    assert!(
        listed.contains(&format!("worktree {}", target.display())),
        "{listed}"
    );
}

#[test]
fn operation_cancel_end_to_end_by_the_proposing_agent_only() {
    let fx = Fixture::new();
    let repo = repo(&fx);
    let gateway = Gateway::start(&fx, &[]);
    let mut sidecar = gateway.sidecar(&fx);
    let proposed = sidecar.call(
        "operation.preview.branch",
        json!({"repoPath": repo, "reason": "maybe later", "name": "agent/later"}),
    );
    let id = proposed["previewId"].as_str().unwrap().to_owned();
    // Another agent (another declared client name) may not withdraw it.
    let mut other = gateway.sidecar(&fx);
    let reply = other.request_raw(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "Other Agent", "version": "1"}}),
    );
    assert!(reply["result"].is_object(), "{reply}");
    let denied = other.request_raw(
        "tools/call",
        json!({"name": "operation.cancel", "arguments": {"previewId": id}}),
    );
    let text = denied["result"]["content"][0]["text"].as_str().unwrap();
    let payload: Value = serde_json::from_str(text).unwrap();
    assert_eq!(payload["error"]["code"], 10006, "{payload}");
    assert_eq!(payload["error"]["data"]["httpStatus"], 403, "{payload}");

    let cancelled = sidecar.call("operation.cancel", json!({ "previewId": id }));
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    let ended = sidecar.call("operation.status", json!({ "previewId": id }));
    assert_eq!(ended["error"]["code"], 10004, "{ended}");
    assert_eq!(ended["error"]["data"]["status"], "cancelled");
    // Twice is refused: it is no longer pending.
    let again = sidecar.call("operation.cancel", json!({ "previewId": id }));
    assert_eq!(again["error"]["code"], 10006, "{again}");
    assert_eq!(again["error"]["data"]["httpStatus"], 409, "{again}");
    assert!(
        fx.git_output(&repo, &["rev-parse", "--verify", "agent/later"])
            .status
            .code()
            != Some(0)
    );
    // An id the gateway never gave out.
    let unknown = sidecar.call(
        "operation.status",
        json!({ "previewId": "1f3c5b9a-0c1d-4e2f-8a9b-0123456789ab" }),
    );
    assert_eq!(unknown["error"]["code"], 10005, "{unknown}");
}
