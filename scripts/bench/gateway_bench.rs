//! Approval gateway speed: a state transition in the store (`synchronous=FULL`), a
//! preview POST (with the one status read a sidecar makes) against a real gateway, and
//! approve → execution started (from the store's own transition times).
//!
//! Usage: gateway_bench GITWARD_BIN [N]   (build the binary with --release first)

// A benchmark driver stops at the first failure, with its location.
#![allow(clippy::unwrap_used)]
#![allow(clippy::print_stdout)]
#![allow(clippy::disallowed_methods)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gitward::gateway::api::{Channel, Proposal};
use gitward::gateway::server::store::{Settings, Store};
use serde_json::{Map, Value, json};

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[i]
}

fn report(name: &str, samples: &mut [Duration]) {
    let p50 = percentile(samples, 0.5);
    let p99 = percentile(samples, 0.99);
    println!(
        "{name}: n={} p50={:.2}ms p99={:.2}ms",
        samples.len(),
        p50.as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3
    );
}

fn transitions(dir: &Path, n: u32) {
    let settings = Settings {
        max_pending_per_agent: n + 1,
        ..Settings::default()
    };
    let mut store = Store::open(&dir.join("bench/gateway.db"), settings).unwrap();
    let mut inserts = Vec::new();
    let mut decisions = Vec::new();
    for i in 0..n {
        let proposal = Proposal {
            preview_id: None,
            agent_id: "bench".into(),
            operation_type: "commit".into(),
            repo_path: Some("/bench/repo".into()),
            reason: "bench".into(),
            requested_at: "2026-05-28T11:42:09.512Z".into(),
            idempotency_key: Some(format!("commit:{i}")),
            fields: Map::new(),
        };
        let id = uuid::Uuid::new_v4().to_string();
        let t = Instant::now();
        store
            .insert(&id, &proposal, jiff::Timestamp::now())
            .unwrap();
        inserts.push(t.elapsed());
        let t = Instant::now();
        if i % 2 == 0 {
            store
                .approve(&id, Channel::Web, jiff::Timestamp::now())
                .unwrap();
        } else {
            store
                .reject(&id, Channel::Web, None, jiff::Timestamp::now())
                .unwrap();
        }
        decisions.push(t.elapsed());
    }
    report("store insert (pending)", &mut inserts);
    report("store transition (approve/reject)", &mut decisions);
}

fn http(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    s.write_all(head.as_bytes()).unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let status = raw.split_whitespace().nth(1).unwrap().parse().unwrap();
    let body = raw
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(ok.success(), "git {args:?}");
}

fn main() {
    let mut args = std::env::args().skip(1);
    let bin = args.next().expect("usage: gateway_bench GITWARD_BIN [N]");
    let n: u32 = args.next().map_or(200, |v| v.parse().unwrap());
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    transitions(&root, n);

    let repo = root.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    git(
        &repo,
        &[
            "-c",
            "user.name=b",
            "-c",
            "user.email=b@b",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "init",
        ],
    );
    std::fs::write(repo.join("a.txt"), "change\n").unwrap();
    let run = root.join("run");
    let mut child = Command::new(&bin)
        .args(["gateway", "--addr", "127.0.0.1:0", "--allowed-root"])
        .arg(&root)
        .args(["--max-pending-per-agent", "100000"])
        .env("FLUXGIT_RUN_DIR", &run)
        .env("FLUXGIT_MCP_AUDIT_DISABLED", "1")
        .env(
            "GIT_CONFIG_PARAMETERS",
            "'user.name'='b' 'user.email'='b@b'",
        )
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let start: Value = serde_json::from_str(&line).unwrap();
    let hs = start["handshake"].as_str().unwrap().to_owned();
    let ui = start["ui"]
        .as_str()
        .unwrap()
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();

    let mut posts = Vec::new();
    let mut with_status = Vec::new();
    let mut ids = Vec::new();
    for _ in 0..n {
        let body = json!({"agentId": "bench", "operationType": "commit", "repoPath": repo,
            "reason": "bench", "requestedAt": "2026-05-28T11:42:09.512Z",
            "message": "bench", "stageAll": true});
        let t = Instant::now();
        let (status, answer) = http(
            &hs,
            "POST",
            "/v1/mcp/operation/preview/commit",
            &[("Content-Type", "application/json")],
            &body.to_string(),
        );
        posts.push(t.elapsed());
        assert_eq!(status, 202, "{answer}");
        let id = serde_json::from_str::<Value>(&answer).unwrap()["previewId"]
            .as_str()
            .unwrap()
            .to_owned();
        http(
            &hs,
            "GET",
            &format!("/v1/mcp/operation/status/{id}"),
            &[],
            "",
        );
        with_status.push(t.elapsed());
        ids.push(id);
    }
    report("preview POST", &mut posts);
    report("preview POST + status read", &mut with_status);

    // Approvals go through the CLI's bearer token (the same route as the page's).
    let bearer = format!(
        "Bearer {}",
        std::fs::read_to_string(run.join("gateway/cli-token")).unwrap()
    );
    let approvals = ids.iter().take(20).cloned().collect::<Vec<_>>();
    for id in &approvals {
        let (status, answer) = http(
            &ui,
            "POST",
            &format!("/api/proposals/{id}/approve"),
            &[
                ("Authorization", &bearer),
                ("X-Gitward-Channel", "tty"),
                ("Content-Type", "application/json"),
            ],
            r#"{"confirmDestructive":false}"#,
        );
        assert_eq!(status, 200, "{answer}");
        for _ in 0..400 {
            let (_, record) = http(
                &hs,
                "GET",
                &format!("/v1/mcp/operation/status/{id}"),
                &[],
                "",
            );
            let s = serde_json::from_str::<Value>(&record).unwrap()["status"]
                .as_str()
                .unwrap()
                .to_owned();
            if s == "completed" || s == "failed" {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    let db = rusqlite::Connection::open(run.join("gateway/gateway.db")).unwrap();
    let mut starts = Vec::new();
    for id in &approvals {
        let at = |to: &str| -> i64 {
            db.query_row(
                "SELECT at FROM transitions WHERE preview_id = ?1 AND to_status = ?2",
                [id.as_str(), to],
                |r| r.get(0),
            )
            .unwrap()
        };
        let ms = (at("executing") - at("approved")).max(0) as u64;
        starts.push(Duration::from_millis(ms));
    }
    report(
        "approve → execution started (store times, ms resolution)",
        &mut starts,
    );
    let _ = child.kill();
    let _ = child.wait();
}
