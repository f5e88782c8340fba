//! `gitward audit export`: the real binary verifies a real server's signed, rotated ledger
//! and streams it; a tampered ledger exports nothing unless asked, and then says so on
//! every row. The benchmark (ignored; run by hand) measures throughput and peak memory
//! on a ledger of `GITWARD_BENCH_LEDGER_MB` (default 1024) megabytes.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::audit::{copy_ledger, edit_lines, keygen, run, serve, stderr};
use crate::common::Fixture;

fn export(fx: &Fixture, args: &[&str]) -> Output {
    let mut all = vec!["audit", "export"];
    all.extend_from_slice(args);
    run(fx, &all, &[], b"")
}

fn ledger_lines(log: &Path) -> Vec<String> {
    let mut lines = Vec::new();
    for n in (1..=4).rev() {
        let rotated = format!("{}.{n}", log.display());
        if let Ok(text) = std::fs::read_to_string(&rotated) {
            lines.extend(text.lines().map(str::to_owned));
        }
    }
    lines.extend(
        std::fs::read_to_string(log)
            .unwrap()
            .lines()
            .map(str::to_owned),
    );
    lines
}

#[test]
fn export_streams_the_verified_ledger_as_jsonl_or_csv_and_refuses_a_broken_one() {
    let fx = Fixture::new();
    let (key, public) = keygen(&fx);
    let repo = fx.init("repo", &[]);
    let log = fx.path("ledger/mcp.jsonl");
    let requests: Vec<(&str, Value)> = (0..12)
        .map(|i| {
            (
                "repo.status",
                json!({ "repoPath": repo, "maxEntries": 1 + i }),
            )
        })
        .chain([("no.such.tool", json!({}))])
        .collect();
    serve(
        &fx,
        &[
            ("FLUXGIT_MCP_AUDIT_LOG", log.to_str().unwrap()),
            ("FLUXGIT_MCP_AUDIT_SIGN_KEY", key.to_str().unwrap()),
            ("GITWARD_AUDIT_ROTATE_BYTES", "4000"),
        ],
        &requests,
    );
    let (log_s, pub_s) = (log.to_str().unwrap(), public.to_str().unwrap());
    let lines = ledger_lines(&log);
    assert!(Path::new(&format!("{log_s}.1")).exists(), "rotated");

    let out = export(&fx, &["--format", "jsonl", "--pubkey", pub_s, log_s]);
    assert!(out.status.success(), "{}", stderr(&out));
    let exported: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(exported, lines);

    let out = export(
        &fx,
        &[
            "--format",
            "csv",
            "--event-type",
            "write_block",
            "--pubkey",
            pub_s,
            log_s,
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let csv = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert!(rows[0].starts_with("verified,sequence,timestamp,id,event_type,tool,"));
    assert_eq!(rows.len(), 2, "{csv}");
    assert!(rows[1].starts_with("true,") && rows[1].contains(",write_block,"));

    let out = export(
        &fx,
        &[
            "--format",
            "jsonl",
            "--since",
            "2999-01-01T00:00:00Z",
            "--pubkey",
            pub_s,
            log_s,
        ],
    );
    assert!(out.status.success() && out.stdout.is_empty(), "{out:?}");
    let out = export(&fx, &["--format", "jsonl", "--since", "yesterday", log_s]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");

    let broken = copy_ledger(&fx, &log, "broken");
    edit_lines(&broken, |lines| {
        let line = lines
            .iter_mut()
            .find(|l| l.contains("\"success\""))
            .unwrap();
        *line = line.replace("\"success\"", "\"error\"");
    });
    let broken_s = broken.to_str().unwrap();
    let out = export(&fx, &["--format", "jsonl", "--pubkey", pub_s, broken_s]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    assert!(
        stderr(&out).contains("nothing exported"),
        "{}",
        stderr(&out)
    );

    let out = export(
        &fx,
        &[
            "--format",
            "jsonl",
            "--allow-broken",
            "--pubkey",
            pub_s,
            broken_s,
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let marked = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(marked.lines().count(), lines.len());
    assert!(
        marked
            .lines()
            .all(|l| serde_json::from_str::<Value>(l).unwrap()["verified"] == false)
    );
    assert!(
        stderr(&out).contains("marked unverified"),
        "{}",
        stderr(&out)
    );
}

/// Throughput and peak memory of an export of a large ledger (run with `--ignored`).
#[test]
#[ignore = "benchmark: writes a ledger of GITWARD_BENCH_LEDGER_MB megabytes"]
fn export_benchmark() {
    use gitward::audit::{AuditConfig, Entry, Ledger};
    let mb: u64 = std::env::var("GITWARD_BENCH_LEDGER_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let fx = Fixture::new();
    let log = fx.path("ledger/mcp.jsonl");
    let mut ledger = Ledger::open(AuditConfig {
        path: log.clone(),
        signer: None,
        rotate_bytes: 1 << 30,
    })
    .unwrap();
    let started = std::time::Instant::now();
    let mut written = 0u64;
    let mut n = 0u64;
    while written < mb << 20 {
        let batch: Vec<Entry> = (0..4096)
            .map(|i| {
                Entry::now()
                    .with("event_type", "tool_call")
                    .with("tool", "repo.status")
                    .with("repo_scope", "repoPath:sha256:0123456789abcdef")
                    .with("result", "success")
                    .with("summary", format!("ok {}", n + i))
            })
            .collect();
        n += 4096;
        ledger.append_batch(batch).unwrap();
        written = ledger_bytes(&log);
    }
    eprintln!(
        "wrote {n} entries, {} MB, in {:.1}s",
        written >> 20,
        started.elapsed().as_secs_f64()
    );
    for format in ["jsonl", "csv"] {
        let started = std::time::Instant::now();
        let out = std::process::Command::new("/usr/bin/time")
            .arg("-f")
            .arg("maxrss_kb=%M")
            .arg(crate::common::gitward_bin())
            .args(["audit", "export", "--format", format, log.to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let secs = started.elapsed().as_secs_f64();
        assert!(out.status.success(), "{out:?}");
        eprintln!(
            "export {format}: {} MB in {secs:.1}s = {:.1} MB/s, {:.0} entries/s; {}",
            written >> 20,
            (written >> 20) as f64 / secs,
            n as f64 / secs,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
}

fn ledger_bytes(log: &Path) -> u64 {
    let mut total = std::fs::metadata(log).map_or(0, |m| m.len());
    for k in 1..=4 {
        total += std::fs::metadata(format!("{}.{k}", log.display())).map_or(0, |m| m.len());
    }
    total
}
