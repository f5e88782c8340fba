//! The semantic engine against `git diff`, per commit, for `scripts/bench-semantic.sh`.
//!
//! ```text
//! semantic_bench REPO   every commit of REPO's first-parent history against its parent
//! ```
//!
//! For each commit, alternating which goes first so both see the same machine load: one
//! `git diff --no-color PARENT COMMIT` run (output read to the end), one cold engine call
//! (tree cache emptied first) and one warm call (the base side's trees cached, as after a
//! call on the previous commit). Prints medians, p95, worst and the ratios of the medians.

// A benchmark driver stops at the first failure, with its location.
#![allow(clippy::unwrap_used)]
// A benchmark driver starts git itself and prints its figures.
#![allow(clippy::disallowed_methods, clippy::print_stdout)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gitward::config::Config;
use gitward::git::diff::Sides;
use gitward::git::{Git, Oid, repo};
use gitward::semantic::{self, Query};
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

fn git_diff(repo: &Path, parent: &str, commit: &str) -> Duration {
    let start = Instant::now();
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["diff", "--no-color", parent, commit])
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    assert!(out.status.success());
    start.elapsed()
}

fn pct(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() - 1) as f64 * p).round() as usize]
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
    let (mut plain, mut cold, mut warm) = (Vec::new(), Vec::new(), Vec::new());
    let (mut files, mut fallbacks, mut truncated) = (0, 0, 0);
    let engine = |parent: &str, commit: &str| {
        let sides = Sides::Trees(Oid::parse(parent).unwrap(), Oid::parse(commit).unwrap());
        let git = &git;
        let repo = &repo;
        async move {
            let start = Instant::now();
            let answer = semantic::run(
                git,
                repo,
                Query {
                    sides: &sides,
                    path: None,
                    only: None,
                },
            )
            .await
            .unwrap();
            (start.elapsed(), answer)
        }
    };
    for (i, pair) in commits.windows(2).enumerate() {
        let (parent, commit) = (pair[0], pair[1]);
        if i % 2 == 0 {
            plain.push(git_diff(&repo_path, parent, commit));
        }
        // Cold: nothing cached.
        semantic::clear_cache();
        let (t, answer) = engine(parent, commit).await;
        cold.push(t);
        // Warm: the base side cached, as after a call on the previous commit.
        semantic::clear_cache();
        if i > 0 {
            engine(commits[i - 1], parent).await;
        } else {
            engine(parent, parent).await;
        }
        let (t, _) = engine(parent, commit).await;
        warm.push(t);
        if i % 2 == 1 {
            plain.push(git_diff(&repo_path, parent, commit));
        }
        files += answer.files.len();
        fallbacks += answer.files.iter().filter(|f| f.fallback_to_text).count();
        truncated += usize::from(answer.files_truncated);
    }
    let (g50, c50, w50) = (
        pct(&mut plain, 0.5),
        pct(&mut cold, 0.5),
        pct(&mut warm, 0.5),
    );
    let worst = cold.iter().chain(&warm).max().copied().unwrap_or_default();
    println!(
        "{name}: {n} commits, {files} files ({fallbacks} fell back, {truncated} calls truncated) | git diff p50 {g:.1} ms | cold p50 {c:.1} ms ({cr:.2}x) p95 {c95:.1} | warm p50 {w:.1} ms ({wr:.2}x) p95 {w95:.1} | worst {worst:.1} ms",
        name = repo_path.file_name().unwrap().to_string_lossy(),
        n = cold.len(),
        g = ms(g50),
        c = ms(c50),
        cr = c50.as_secs_f64() / g50.as_secs_f64(),
        c95 = ms(pct(&mut cold, 0.95)),
        w = ms(w50),
        wr = w50.as_secs_f64() / g50.as_secs_f64(),
        w95 = ms(pct(&mut warm, 0.95)),
        worst = ms(worst),
    );
}
