//! Restore point cost against `git status --porcelain=v2` on the same repository, and the
//! time to restore a worktree where many files changed. Not a test: figures depend on the
//! machine. Build the repository with `scripts/gen-bench-repo DIR` first; the driver
//! leaves it as it found it (its restore points are pruned at the end).
//!
//! Usage: restore_bench REPO [ROUNDS] [CHANGED]

// A benchmark driver stops at the first failure, with its location, and prints figures.
#![allow(clippy::unwrap_used)]
#![allow(clippy::print_stdout)]
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gitward::config::Config;
use gitward::gateway::server::restore::{self, Caps, Capture, Retention, Steps};
use gitward::gateway::server::store::{Settings, Store};
use jiff::Timestamp;
use tokio_util::sync::CancellationToken;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn status(repo: &Path) -> Duration {
    let start = Instant::now();
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["status", "--porcelain=v2"])
        .output()
        .unwrap();
    assert!(out.status.success());
    start.elapsed()
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let repo_path = PathBuf::from(
        args.get(1)
            .expect("usage: restore_bench REPO [ROUNDS] [CHANGED]"),
    );
    let rounds: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(15);
    let changed: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let repo_path = std::fs::canonicalize(repo_path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gw/gateway.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    std::fs::set_permissions(
        db.parent().unwrap(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let mut store = Store::open(&db, Settings::default()).unwrap();
    let config = Arc::new(Config::default());
    let cancel = CancellationToken::new();
    let repo = gitward::git::repo::open(&config, "repo", &repo_path.display().to_string(), &cancel)
        .await
        .unwrap();
    let refs = vec!["refs/heads/main".to_owned()];
    let caps = Caps::default();
    // Warm both (index and file system caches).
    status(&repo_path);
    restore::take(
        &mut store,
        &repo,
        &cancel,
        &refs,
        None,
        None,
        &caps,
        Timestamp::now(),
    )
    .await
    .unwrap();
    let (mut git, mut ours) = (Vec::new(), Vec::new());
    let mut by_step: BTreeMap<&'static str, (Vec<Duration>, Vec<Duration>)> = BTreeMap::new();
    let what = Capture {
        refs: &refs,
        paths: &[],
        config: &[],
        preview_id: None,
        operation_type: None,
        caps: &caps,
    };
    for round in 0..rounds {
        let take = async {
            let steps = Steps::default();
            let start = Instant::now();
            restore::take_timed(&mut store, &repo, &cancel, &what, Timestamp::now(), &steps)
                .await
                .unwrap();
            let took = start.elapsed();
            for step in steps.list() {
                let slot = by_step.entry(step.name).or_default();
                slot.0.push(step.end - step.start);
                slot.1.push(step.end);
            }
            took
        };
        if round % 2 == 0 {
            git.push(status(&repo_path));
            ours.push(take.await);
        } else {
            ours.push(take.await);
            git.push(status(&repo_path));
        }
    }
    let (g, o) = (median(git), median(ours));
    println!(
        "restore point: median {:.1} ms; git status --porcelain=v2: median {:.1} ms; ratio {:.2} (target <= 1.25)",
        o.as_secs_f64() * 1e3,
        g.as_secs_f64() * 1e3,
        o.as_secs_f64() / g.as_secs_f64()
    );
    println!("  steps (median own time, median end after the start):");
    for (name, (own, end)) in by_step {
        println!(
            "    {name:<16} {:6.1} ms  ends at {:6.1} ms",
            median(own).as_secs_f64() * 1e3,
            median(end).as_secs_f64() * 1e3
        );
    }

    // Restore of a worktree in which `changed` files were rewritten.
    let point = restore::take(
        &mut store,
        &repo,
        &cancel,
        &refs,
        None,
        None,
        &caps,
        Timestamp::now(),
    )
    .await
    .unwrap();
    let files = std::process::Command::new("git")
        .arg("-C")
        .arg(&repo_path)
        .args(["ls-files", "-z"])
        .output()
        .unwrap()
        .stdout;
    let mut originals = Vec::new();
    for name in files
        .split(|b| *b == 0)
        .filter(|n| !n.is_empty())
        .take(changed)
    {
        let path = repo_path.join(std::str::from_utf8(name).unwrap());
        originals.push((path.clone(), std::fs::read(&path).unwrap()));
        std::fs::write(&path, b"rewritten by the benchmark\n").unwrap();
    }
    let start = Instant::now();
    let done = restore::restore_in(&mut store, &repo, &point, true, &cancel, Timestamp::now())
        .await
        .unwrap();
    let took = start.elapsed();
    for (path, bytes) in &originals {
        assert_eq!(&std::fs::read(path).unwrap(), bytes, "{}", path.display());
    }
    println!(
        "restore of {} rewritten files: {:.0} ms (target <= 1500 ms at 10k files); {}",
        originals.len(),
        took.as_secs_f64() * 1e3,
        done.files
    );
    let gone = Retention {
        keep_newest: 0,
        keep_for: Duration::ZERO,
    };
    restore::prune(&mut store, &repo, &cancel, Timestamp::now(), &gone)
        .await
        .unwrap();
}
