//! The semantic engine against `git diff`, per commit, for `scripts/bench-semantic.sh`.
//!
//! ```text
//! semantic_bench REPO              every commit of REPO's first-parent history against its parent
//! semantic_bench REPO warm|cold N  only that kind of engine call, N rounds over the history,
//!                                  untimed: a steady load for a profiler
//! ```
//!
//! For each commit, three timed runs in an order that rotates from commit to commit, so
//! all three see the same machine load:
//! - `git diff` with the arguments the engine itself gives git (`--raw -p -z -U0 …`),
//!   output read to the end;
//! - a cold engine call: the tree cache emptied first;
//! - a warm engine call: only the base side's trees cached (every tree of a blob in the
//!   parent commit), as when an agent asks again about the same base.
//!
//! Prints p50, p95 and the worst run of each, and the ratios of the medians.

// A benchmark driver stops at the first failure, with its location.
#![allow(clippy::unwrap_used)]
// A benchmark driver starts git itself and prints its figures.
#![allow(clippy::disallowed_methods, clippy::print_stdout)]

use std::collections::HashSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gitward::config::Config;
use gitward::git::diff::{DiffQuery, Sides};
use gitward::git::{Git, Oid, Repo, repo};
use gitward::semantic::{self, Answer, Query};
use tokio_util::sync::CancellationToken;

fn git_out(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Blob ids in `commit`'s tree.
fn blobs(repo: &Path, commit: &str) -> HashSet<String> {
    git_out(repo, &["ls-tree", "-r", "--full-tree", commit])
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_owned))
        .collect()
}

/// One `git diff` with the engine's own arguments; returns its wall time.
fn git_diff(repo: &Path, sides: &Sides) -> Duration {
    let argv = DiffQuery { sides, path: None }.raw_patch_argv(semantic::FULL_CONTEXT);
    let start = Instant::now();
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["-c", "core.quotePath=false"])
        .args(&argv)
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    let took = start.elapsed();
    assert!(out.status.success(), "git {argv:?}");
    took
}

async fn engine(git: &Git<'_>, repo: &Repo, sides: &Sides) -> (Duration, Answer) {
    let start = Instant::now();
    let query = Query {
        sides,
        path: None,
        only: None,
    };
    let answer = semantic::run(git, repo, query).await.unwrap();
    (start.elapsed(), answer)
}

/// Only warm or only cold engine calls, over and over, for a profiler. Warm calls drop
/// only the blobs new in their commit, so nothing but warm calls runs after the first round.
async fn profile(
    git: &Git<'_>,
    repo: &Repo,
    repo_path: &Path,
    commits: &[&str],
    kind: &str,
    rounds: usize,
) {
    let pairs: Vec<(Sides, HashSet<String>)> = commits
        .windows(2)
        .map(|pair| {
            let sides = Sides::Trees(Oid::parse(pair[0]).unwrap(), Oid::parse(pair[1]).unwrap());
            let base = blobs(repo_path, pair[0]);
            let fresh = blobs(repo_path, pair[1])
                .difference(&base)
                .cloned()
                .collect();
            (sides, fresh)
        })
        .collect();
    for (sides, _) in &pairs {
        engine(git, repo, sides).await;
    }
    for _ in 0..rounds {
        for (sides, fresh) in &pairs {
            if kind == "warm" {
                semantic::retain_cached(|oid| !fresh.contains(oid));
            } else {
                semantic::clear_cache();
            }
            engine(git, repo, sides).await;
        }
    }
}

struct Figures(Vec<Duration>);

impl Figures {
    fn pct(&mut self, p: f64) -> Duration {
        self.0.sort();
        self.0[((self.0.len() - 1) as f64 * p).round() as usize]
    }

    fn show(&mut self, name: &str, base: Option<Duration>) -> String {
        let (p50, p95) = (self.pct(0.5), self.pct(0.95));
        let max = self.0.last().copied().unwrap_or_default();
        let ratio = base.map_or(String::new(), |b| {
            format!(" ({:.2}x)", p50.as_secs_f64() / b.as_secs_f64())
        });
        format!(
            "{name} p50 {:.1}{ratio} p95 {:.1} max {:.1}",
            ms(p50),
            ms(p95),
            ms(max)
        )
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let repo_path =
        std::fs::canonicalize(std::env::args().nth(1).expect("usage: semantic_bench REPO"))
            .unwrap();
    let config = Config {
        allowed_roots: vec![repo_path.parent().unwrap().to_path_buf()],
        ..Config::default()
    };
    let cancel = CancellationToken::new();
    let repo = repo::open(&config, "repo", repo_path.to_str().unwrap(), &cancel)
        .await
        .unwrap();
    let git = Git::new(&repo, &cancel);
    let list = git_out(
        &repo_path,
        &["rev-list", "--first-parent", "--reverse", "HEAD"],
    );
    let commits: Vec<&str> = list.lines().collect();
    if let Some(kind) = std::env::args().nth(2) {
        let rounds: usize = std::env::args().nth(3).map_or(10, |n| n.parse().unwrap());
        return profile(&git, &repo, &repo_path, &commits, &kind, rounds).await;
    }
    let (mut plain, mut cold, mut warm) = (Vec::new(), Vec::new(), Vec::new());
    let (mut files, mut fallbacks, mut truncated) = (0, 0, 0);
    for (i, pair) in commits.windows(2).enumerate() {
        let sides = Sides::Trees(Oid::parse(pair[0]).unwrap(), Oid::parse(pair[1]).unwrap());
        let base = blobs(&repo_path, pair[0]);
        for step in 0..3 {
            match (i + step) % 3 {
                0 => plain.push(git_diff(&repo_path, &sides)),
                1 => {
                    semantic::clear_cache();
                    let (t, answer) = engine(&git, &repo, &sides).await;
                    cold.push(t);
                    files += answer.files.len();
                    fallbacks += answer.files.iter().filter(|f| f.fallback_to_text).count();
                    truncated += usize::from(answer.files_truncated);
                }
                _ => {
                    semantic::clear_cache();
                    engine(&git, &repo, &sides).await;
                    semantic::retain_cached(|oid| base.contains(oid));
                    warm.push(engine(&git, &repo, &sides).await.0);
                }
            }
        }
    }
    let g50 = Figures(plain.clone()).pct(0.5);
    let n = cold.len();
    println!(
        "{name}: {n} commits, {files} files ({fallbacks} fell back, {truncated} calls truncated) | {} | {} | {}",
        Figures(plain).show("git diff", None),
        Figures(warm).show("warm", Some(g50)),
        Figures(cold).show("cold", Some(g50)),
        name = repo_path.file_name().unwrap().to_string_lossy(),
    );
}
