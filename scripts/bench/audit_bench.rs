//! Audit ledger throughput: appends per second (signed and unsigned, through the writer
//! thread: queued without waiting, and as the server uses it, with many calls in flight
//! each waiting until its entry is written or synced; and one synced append at a time),
//! and the time to verify a full 4 MiB segment. Run with `scripts/bench-audit.sh`.
//!
//! Usage: audit_bench [DIR] [ENTRIES]  (DIR defaults to a temporary directory)

// A benchmark driver stops at the first failure, with its location.
#![allow(clippy::unwrap_used)]
#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use gitward::audit::writer::{AuditWriter, Durability};
use gitward::audit::{AuditConfig, AuditSigner, Entry, Ledger, canonical, verify_audit_ledger};
use serde_json::json;

fn entry(i: u64) -> Entry {
    let args = json!({ "repoPath": "/home/user/src/project", "maxEntries": i % 500 });
    let mut entry = Entry::now();
    entry
        .set("tool", "repo.status")
        .set("event_type", "tool_call")
        .set(
            "repo_scope",
            format!(
                "repoPath:{}",
                canonical::sha256_tag(b"\"/home/user/src/project\"")
            ),
        )
        .set(
            "args_fingerprint",
            canonical::sha256_tag(&canonical::to_vec(&args)),
        )
        .set("risk", "none")
        .set("approval", "not_required")
        .set("result", "success")
        .set("session_id", "0d8f0a56-4a8e-4f7e-9f4c-8d1c3f6b2a10")
        .set("duration_ms", i % 40)
        .set("summary", "ok")
        .set("readOnly", true)
        .set("sidecarReadOnly", true);
    entry
}

fn config(dir: &Path, name: &str, signer: Option<Arc<AuditSigner>>) -> AuditConfig {
    AuditConfig {
        path: dir.join(name).join("mcp.jsonl"),
        signer,
        rotate_bytes: 4 * 1024 * 1024,
    }
}

/// CPU seconds (user + system) this process has used, from `/proc/self/stat`: on a
/// shared, loaded machine wall time says little about the ledger's own cost.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of the whole line; 12 and 13 after the name.
    (ticks(11) + ticks(12)) / 100.0
}

/// Rates per wall second and per CPU second.
struct Rate {
    wall: f64,
    cpu: f64,
}

impl std::fmt::Display for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:>9.0}/s wall, {:>9.0}/s CPU", self.wall, self.cpu)
    }
}

fn measure(n: u64, work: impl FnOnce()) -> Rate {
    let (start, cpu) = (Instant::now(), cpu_seconds());
    work();
    Rate {
        wall: n as f64 / start.elapsed().as_secs_f64(),
        cpu: n as f64 / (cpu_seconds() - cpu).max(0.01),
    }
}

fn writer_thread(dir: &Path, name: &str, signer: Option<Arc<AuditSigner>>, n: u64) -> Rate {
    let writer = AuditWriter::spawn(Ledger::open(config(dir, name, signer)).unwrap()).unwrap();
    measure(n, || {
        for i in 0..n {
            writer.submit(Box::new(move || entry(i)));
        }
        writer.finish();
    })
}

/// `concurrency` callers, each submitting and waiting for its entry before the next, as
/// concurrent `tools/call`s do: what group commit is for.
fn waiting(
    dir: &Path,
    name: &str,
    signer: Option<Arc<AuditSigner>>,
    n: u64,
    durability: Durability,
) -> Rate {
    let concurrency = 256;
    let writer = AuditWriter::spawn(Ledger::open(config(dir, name, signer)).unwrap()).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    measure(n, || {
        runtime.block_on(async {
            let mut tasks = tokio::task::JoinSet::new();
            for c in 0..concurrency {
                let writer = Arc::clone(&writer);
                tasks.spawn(async move {
                    for i in (c..n).step_by(concurrency as usize) {
                        let _ = writer
                            .submit_waiting(Box::new(move || entry(i)), durability)
                            .await;
                    }
                });
            }
            while tasks.join_next().await.is_some() {}
        });
        writer.finish();
    })
}

fn one_at_a_time(dir: &Path, name: &str, signer: Option<Arc<AuditSigner>>, n: u64) -> Rate {
    let mut ledger = Ledger::open(config(dir, name, signer)).unwrap();
    measure(n, || {
        for i in 0..n {
            ledger.append(entry(i)).unwrap();
        }
    })
}

fn main() {
    let mut args = std::env::args().skip(1);
    let temp;
    let dir: PathBuf = match args.next() {
        Some(dir) => PathBuf::from(dir),
        None => {
            temp = std::env::temp_dir().join(format!("gitward-audit-bench-{}", std::process::id()));
            temp.clone()
        }
    };
    let n: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(50_000);
    let (private, public) = gitward::audit::signing::generate_pem_pair().unwrap();
    let key = {
        use ed25519_dalek::pkcs8::DecodePrivateKey;
        ed25519_dalek::SigningKey::from_pkcs8_pem(&private).unwrap()
    };
    let signer = Some(Arc::new(AuditSigner::new(key)));
    let public = {
        use ed25519_dalek::pkcs8::DecodePublicKey;
        ed25519_dalek::VerifyingKey::from_public_key_pem(&public).unwrap()
    };

    println!("ledger directory: {}", dir.display());
    println!(
        "appends, writer thread, unsigned: {}",
        writer_thread(&dir, "w-unsigned", None, n)
    );
    println!(
        "appends, writer thread, signed:   {}",
        writer_thread(&dir, "w-signed", signer.clone(), n)
    );
    println!(
        "appends, 256 waiting, written:    {}",
        waiting(&dir, "c-written", signer.clone(), n, Durability::Written)
    );
    println!(
        "appends, 256 waiting, synced:     {}",
        waiting(&dir, "c-synced", signer.clone(), n, Durability::Synced)
    );
    let m = (n / 25).max(200);
    println!(
        "appends, synced each, unsigned:   {}",
        one_at_a_time(&dir, "s-unsigned", None, m)
    );
    println!(
        "appends, synced each, signed:     {}",
        one_at_a_time(&dir, "s-signed", signer.clone(), m)
    );

    // One full 4 MiB signed segment (stop just before it would rotate).
    let cfg = config(&dir, "verify", signer);
    let path = cfg.path.clone();
    let mut ledger = Ledger::open(cfg).unwrap();
    ledger.append_batch((0..100).map(entry).collect()).unwrap();
    let per_line = std::fs::metadata(&path).unwrap().len() / 100;
    let lines = (4 * 1024 * 1024 / per_line).saturating_sub(110);
    ledger
        .append_batch((100..lines).map(entry).collect())
        .unwrap();
    let size = std::fs::metadata(&path).unwrap().len();
    let (start, cpu) = (Instant::now(), cpu_seconds());
    let report = verify_audit_ledger(&path, &[public], true).unwrap();
    let (wall, cpu) = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu);
    println!(
        "verify {} signed entries in {} segment(s), {:.2} MiB active: {:.0} ms wall, {:.0} ms CPU",
        report.entries,
        report.segments,
        size as f64 / (1024.0 * 1024.0),
        wall * 1000.0,
        cpu * 1000.0
    );
    let _ = std::fs::remove_dir_all(&dir);
}
