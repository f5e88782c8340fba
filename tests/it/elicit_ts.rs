//! Review in the host through URL-mode elicitation, with the official MCP TypeScript SDK
//! client's elicitation handler (tests/interop/ts_elicit.mjs) against the real binary and
//! a real gateway: the host is asked to open the card, its answer decides nothing, and
//! the flow is said to be complete once a person decided on the gateway's side.

use std::io::{BufRead, BufReader, Lines, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{Fixture, gitward_bin};
use crate::http::HttpServer;
use crate::operation_e2e::Gateway;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn node_ready() -> bool {
    let sdk = root().join("node_modules/@modelcontextprotocol/sdk/package.json");
    let v2 = root().join("node_modules/@modelcontextprotocol/client/package.json");
    if sdk.exists() && v2.exists() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "node_modules lacks the pinned MCP SDK or v2 client in CI: scripts/setup must install it"
    );
    eprintln!("SKIPPED elicitation interop: run scripts/setup to install the pinned Node packages");
    false
}

/// `main` with `feature` one commit ahead.
fn repo(fx: &Fixture) -> PathBuf {
    let repo = fx.init("repo", &["-b", "main"]);
    fx.commit(&repo, "a.txt", "one\n", "first");
    fx.git(&repo, &["checkout", "-q", "-b", "feature"]);
    fx.commit(&repo, "b.txt", "two\n", "second");
    fx.git(&repo, &["checkout", "-q", "main"]);
    repo
}

/// The proposal every test makes.
fn merge_call(repo: &Path) -> Value {
    json!({"name": "operation_preview_merge", "arguments": {
        "repoPath": repo, "reason": "bring the feature in",
        "sourceRef": "feature", "targetRef": "main"}})
}

/// `node` in the checkout with the fixture's environment, pointed at `gateway`.
fn node(fx: &Fixture, gateway: &Gateway) -> Command {
    let mut cmd = Command::new("node");
    cmd.current_dir(root())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(fx.env())
        .env("FLUXGIT_MCP_HANDSHAKE_ADDR", &gateway.handshake);
    cmd
}

/// The driver, running: its events line by line, its stdin to say "decided".
struct Driver {
    child: Child,
    events: Lines<BufReader<ChildStdout>>,
    /// Events read ahead of the one asked for.
    early: Vec<Value>,
}

impl Driver {
    fn start(fx: &Fixture, gateway: &Gateway, repo: &Path, answer: Value, http: Value) -> Driver {
        let plan = json!({
            "bin": gitward_bin(),
            "serverArgs": [],
            "http": http,
            "answer": answer,
            "call": merge_call(repo),
        });
        let mut child = node(fx, gateway)
            .arg("tests/interop/ts_elicit.mjs")
            .arg(plan.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let events = BufReader::new(child.stdout.take().unwrap()).lines();
        Driver {
            child,
            events,
            early: Vec::new(),
        }
    }

    /// The event `kind`, whenever it came (the request and the answer race).
    fn next(&mut self, kind: &str) -> Value {
        if let Some(at) = self.early.iter().position(|e| e["event"] == kind) {
            return self.early.remove(at);
        }
        loop {
            let line = self.events.next().unwrap_or_else(|| {
                panic!("the driver ended before {kind}: {:?}", self.child.wait())
            });
            let event: Value = serde_json::from_str(&line.unwrap()).unwrap();
            if event["event"] == kind {
                return event;
            }
            self.early.push(event);
        }
    }

    fn decided(&mut self) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(b"decided\n").unwrap();
    }

    fn finish(mut self) {
        assert!(self.child.wait().unwrap().success());
        assert_eq!(self.early, Vec::<Value>::new());
    }
}

/// The proposal's status as the gateway keeps it.
fn status(gateway: &Gateway, id: &str) -> String {
    let url = format!("http://{}/v1/mcp/operation/status/{id}", gateway.handshake);
    let agent: ureq::Agent = ureq::Agent::config_builder().proxy(None).build().into();
    let body = agent
        .get(url)
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    let record: Value = serde_json::from_str(&body).unwrap();
    record["status"].as_str().unwrap().to_owned()
}

/// The tool answered as it does for every client: accepted, pending, promptly.
fn proposed(result: &Value) -> String {
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["structured"]["accepted"], true, "{result}");
    assert_eq!(result["structured"]["status"], "pending", "{result}");
    assert!(result["ms"].as_f64().unwrap() < 10_000.0, "{result}");
    result["structured"]["previewId"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A `gitward serve --http` pointed at `gateway`, when asked for.
fn served(fx: &Fixture, gateway: &Gateway, http: bool) -> Option<HttpServer> {
    let env = [(
        "FLUXGIT_MCP_HANDSHAKE_ADDR".to_owned(),
        gateway.handshake.clone(),
    )];
    http.then(|| HttpServer::start(fx, &[], &env))
}

/// The host is asked with the card's link (no secret in it) and a short summary; its
/// answer changes nothing; the person's decision ends the flow.
fn asked_then_completed(answer: &str, http: bool) {
    let fx = Fixture::new();
    let repo = repo(&fx);
    let gateway = Gateway::start(&fx, &[]);
    let server = served(&fx, &gateway, http);
    let url = server
        .as_ref()
        .map_or(Value::Null, |s| json!(s.url("/mcp")));
    let mut driver = Driver::start(&fx, &gateway, &repo, json!(answer), url);
    let id = proposed(&driver.next("result"));
    let asked = driver.next("elicit")["params"].clone();
    assert_eq!(asked["mode"], "url", "{asked}");
    assert_eq!(
        asked["url"],
        json!(format!("{}#proposal={id}", gateway.ui)),
        "{asked}"
    );
    assert_eq!(
        asked["message"], "gitward asks you to review: merge feature into main",
        "{asked}"
    );
    assert!(asked.get("requestedSchema").is_none(), "{asked}");
    let login = std::fs::read_to_string(fx.run_dir().join("gateway/cli-token")).unwrap();
    assert!(!asked.to_string().contains(login.trim()), "{asked}");

    // The host's answer, whatever it is, leaves the proposal to the person.
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(status(&gateway, &id), "pending");
    if answer == "accept" {
        gateway.approve(&id);
    } else {
        let (code, body) = gateway.human_post(
            &format!("api/proposals/{id}/reject"),
            json!({"reason": "not now"}),
        );
        assert_eq!(code, 200, "{body}");
    }
    let complete = driver.next("complete")["params"].clone();
    assert_eq!(
        complete["elicitationId"], asked["elicitationId"],
        "{complete}"
    );
    assert_ne!(status(&gateway, &id), "pending");
    driver.finish();
}

#[test]
fn an_accepted_url_elicitation_leads_to_the_card_and_completes_on_approval() {
    if node_ready() {
        asked_then_completed("accept", false);
    }
}

#[test]
fn a_declined_url_elicitation_decides_nothing_and_completes_on_rejection() {
    if node_ready() {
        asked_then_completed("decline", false);
    }
}

#[test]
fn url_elicitation_over_streamable_http_rides_the_session_stream() {
    if node_ready() {
        asked_then_completed("accept", true);
    }
}

#[test]
fn a_client_without_url_elicitation_is_sent_nothing_new() {
    if !node_ready() {
        return;
    }
    let fx = Fixture::new();
    let repo = repo(&fx);
    let gateway = Gateway::start(&fx, &[]);
    let mut driver = Driver::start(&fx, &gateway, &repo, Value::Null, Value::Null);
    let id = proposed(&driver.next("result"));
    gateway.approve(&id);
    for _ in 0..200 {
        if status(&gateway, &id) != "pending" {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    driver.decided();
    let quiet = driver.next("quiet");
    assert_eq!(quiet["requests"], json!([]), "{quiet}");
    assert_eq!(quiet["notifications"], json!([]), "{quiet}");
    driver.finish();
}

/// 2026-07-28: the call itself asks (`input_required`), the client's handler answers, and
/// its second call gets the proposal the first one made, still pending; without the
/// capability the call answers at once, unasked.
fn asked_inside_the_call(answer: Value) {
    let fx = Fixture::new();
    let repo = repo(&fx);
    let gateway = Gateway::start(&fx, &[]);
    let plan = json!({"bin": gitward_bin(), "answer": answer, "call": merge_call(&repo)});
    let out = node(&fx, &gateway)
        .arg("tests/interop/ts_v2_elicit.mjs")
        .arg(plan.to_string())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut events: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let result = events.pop().unwrap();
    assert_eq!(result["event"], "result", "{result}");
    assert_eq!(result["protocolVersion"], "2026-07-28", "{result}");
    let id = proposed(&result);
    if answer.is_null() {
        assert_eq!(events, Vec::<Value>::new());
    } else {
        assert_eq!(events.len(), 1, "{events:?}");
        let asked = &events[0]["params"];
        assert_eq!(asked["mode"], "url", "{asked}");
        assert_eq!(
            asked["url"],
            json!(format!("{}#proposal={id}", gateway.ui)),
            "{asked}"
        );
        assert_eq!(
            asked["message"], "gitward asks you to review: merge feature into main",
            "{asked}"
        );
    }
    assert_eq!(status(&gateway, &id), "pending");
}

#[test]
fn in_the_2026_era_an_accepted_review_is_asked_inside_the_call() {
    if node_ready() {
        asked_inside_the_call(json!("accept"));
    }
}

#[test]
fn in_the_2026_era_a_declined_review_still_gets_the_proposal() {
    if node_ready() {
        asked_inside_the_call(json!("decline"));
    }
}

#[test]
fn in_the_2026_era_a_client_without_url_elicitation_is_answered_unasked() {
    if node_ready() {
        asked_inside_the_call(Value::Null);
    }
}
