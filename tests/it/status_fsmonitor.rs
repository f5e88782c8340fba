//! `repo.status` and `repo.brief` with git's builtin fsmonitor daemon running: a repeated
//! call is answered without running `git status`, and every change git would see —
//! in the working tree, the index, the refs, the stash, the exclude files, the
//! configuration — is seen: each answer equals what the same git prints.
//!
//! These need a git whose daemon works on this platform (git 2.55 and later on Linux):
//! `GITWARD_TEST_FSMONITOR_GIT` names one, else the git on `PATH` and then
//! `/opt/git-next/bin/git` (a git built from source) are tried. Older gits (CI's among
//! them) have no daemon on Linux, and then the test says so and skips.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::common::{Fixture, Server, write_executable};

const GIT_VAR: &str = "GITWARD_TEST_FSMONITOR_GIT";
const FALLBACK: &str = "/opt/git-next/bin/git";

/// The first git found whose daemon starts, probed once.
fn capable_git() -> Option<PathBuf> {
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let candidates = std::env::var_os(GIT_VAR)
                .map(PathBuf::from)
                .into_iter()
                .chain(which::which("git").ok())
                .chain([PathBuf::from(FALLBACK)]);
            candidates.into_iter().find(|git| daemon_works(git))
        })
        .clone()
}

fn daemon_works(git: &Path) -> bool {
    if !git.is_file() {
        return false;
    }
    let fx = Fixture::new();
    let repo = fx.path("probe");
    std::fs::create_dir_all(&repo).unwrap();
    let mut ok = run(&fx, git, &repo, &["init", "-q"]).status.success();
    ok = ok
        && run(&fx, git, &repo, &["fsmonitor--daemon", "start"])
            .status
            .success();
    run(&fx, git, &repo, &["fsmonitor--daemon", "stop"]);
    ok
}

/// Runs `git` (the capable one) with the fixture's environment.
fn run(fx: &Fixture, git: &Path, dir: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(git);
    cmd.current_dir(dir)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_AUTHOR_DATE", "1767225600 +0000")
        .env("GIT_COMMITTER_DATE", "1767225600 +0000")
        .stdin(Stdio::null());
    for (k, v) in fx.env() {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// The daemon of one repository, stopped when the test ends, however it ends.
struct World {
    fx: Fixture,
    git: PathBuf,
    repo: PathBuf,
    log: PathBuf,
}

impl World {
    fn git(&self, args: &[&str]) -> String {
        let out = run(&self.fx, &self.git, &self.repo, args);
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim_end().to_owned()
    }

    /// How many `git status` runs gitward started so far.
    fn status_runs(&self) -> usize {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains(" status --porcelain=v2"))
            .count()
    }
}

impl Drop for World {
    fn drop(&mut self) {
        run(
            &self.fx,
            &self.git,
            &self.repo,
            &["fsmonitor--daemon", "stop"],
        );
    }
}

/// What plain git says: entries as `(XY, path, origPath)` and the branch headers.
#[derive(Debug, PartialEq)]
struct Said {
    entries: Vec<(String, String, Option<String>)>,
    oid: Option<String>,
    head: Option<String>,
    upstream: Option<String>,
    ahead_behind: Option<(i64, i64)>,
}

fn plain(w: &World) -> Said {
    let out = run(
        &w.fx,
        &w.git,
        &w.repo,
        &["status", "--porcelain=v2", "-z", "--branch"],
    );
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut said = Said {
        entries: Vec::new(),
        oid: None,
        head: None,
        upstream: None,
        ahead_behind: None,
    };
    let mut records = text.split('\0').filter(|r| !r.is_empty());
    while let Some(r) = records.next() {
        let fields = |n: usize| r.splitn(n, ' ').collect::<Vec<_>>();
        match r.as_bytes()[0] {
            b'#' => {
                let f = fields(3);
                let value = f[2].to_owned();
                match f[1] {
                    "branch.oid" if value != "(initial)" => said.oid = Some(value),
                    "branch.head" if value != "(detached)" => said.head = Some(value),
                    "branch.upstream" => said.upstream = Some(value),
                    "branch.ab" => {
                        let (a, b) = value.split_once(' ').unwrap();
                        said.ahead_behind = Some((a.parse().unwrap(), -b.parse::<i64>().unwrap()));
                    }
                    _ => {}
                }
            }
            b'1' => said
                .entries
                .push((fields(9)[1].into(), fields(9)[8].into(), None)),
            b'2' => {
                let orig = records.next().map(str::to_owned);
                said.entries
                    .push((fields(10)[1].into(), fields(10)[9].into(), orig));
            }
            b'u' => said
                .entries
                .push((fields(11)[1].into(), fields(11)[10].into(), None)),
            b'?' => said.entries.push(("??".into(), r[2..].into(), None)),
            _ => {}
        }
    }
    said.entries.sort();
    said
}

fn served(status: &Value) -> Said {
    let d = &status["data"];
    let text = |v: &Value| v.as_str().map(str::to_owned);
    let mut entries: Vec<_> = d["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                text(&e["status"]).unwrap(),
                text(&e["path"]).unwrap(),
                text(&e["origPath"]),
            )
        })
        .collect();
    entries.sort();
    Said {
        entries,
        oid: text(&d["headOid"]),
        head: text(&d["branch"]),
        upstream: text(&d["upstream"]),
        ahead_behind: d["ahead"].as_i64().zip(d["behind"].as_i64()),
    }
}

/// gitward answers first (with whatever it stored), then plain git must say the same;
/// then, with nothing changed, a repeated call must come without running git.
fn agrees(w: &World, server: &mut Server, step: &str) {
    let args = json!({ "repoPath": w.repo });
    let status = server.call("repo.status", args.clone());
    let brief = server.call("repo.brief", args.clone());
    let expected = plain(w);
    assert_eq!(served(&status), expected, "{step}: status");
    let head = &brief["data"]["head"];
    assert_eq!(
        (
            head["branch"].as_str().map(str::to_owned),
            head["upstream"].as_str().map(str::to_owned),
            head["ahead"].as_i64().zip(head["behind"].as_i64()),
        ),
        (
            expected.head.clone(),
            expected.upstream.clone(),
            expected.ahead_behind
        ),
        "{step}: brief head"
    );
    assert_eq!(
        brief["data"]["workingTree"]["changed"]
            .as_u64()
            .unwrap_or(0),
        expected.entries.len() as u64,
        "{step}: brief count"
    );
    // Plain git rewrote the index: the next call runs git and stores its answer, one
    // after it is served from the store. An answer naming a ref file written within the
    // store's clock slack (50 ms) is not kept, so a fast server may need a few rounds.
    let mut reused = false;
    for round in 0..20 {
        if round > 0 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let runs = w.status_runs();
        let again = server.call("repo.status", args.clone());
        let brief_again = server.call("repo.brief", args.clone());
        assert_eq!(served(&again), expected, "{step}: repeated status");
        assert_eq!(
            brief_again["data"]["workingTree"], brief["data"]["workingTree"],
            "{step}: repeated brief"
        );
        if w.status_runs() == runs {
            reused = true;
            break;
        }
    }
    assert!(reused, "{step}: a repeated call ran git status every time");
}

#[test]
fn repeated_status_is_reused_until_anything_git_sees_changes() {
    let Some(git) = capable_git() else {
        eprintln!(
            "skipped: no git with a working fsmonitor daemon ({GIT_VAR}, PATH or {FALLBACK}); \
             git before 2.55 has none on Linux"
        );
        return;
    };
    let fx = Fixture::new();
    let repo = fx.path("repo");
    std::fs::create_dir_all(&repo).unwrap();
    // gitward finds `git` on PATH: a wrapper that logs each run and hands it on.
    let bin = fx.path("bin");
    let log = fx.path("git-runs.log");
    write_executable(
        &bin.join("git"),
        &format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            git.display()
        ),
    );
    let w = World { fx, git, repo, log };
    w.git(&["init", "-q"]);
    w.git(&["config", "core.fsmonitor", "true"]);
    w.git(&["config", "core.untrackedCache", "true"]);
    for (name, text) in [
        ("a.txt", "a\n"),
        ("b.txt", "b\n"),
        ("d/c.txt", "c\n"),
        (".gitignore", "*.log\n"),
    ] {
        w.fx.write(&w.repo, name, text);
    }
    w.git(&["add", "-A"]);
    w.git(&["commit", "-q", "-m", "first"]);
    // The commit may have started the daemon already, as git does for its user.
    run(&w.fx, &w.git, &w.repo, &["fsmonitor--daemon", "start"]);
    w.git(&["fsmonitor--daemon", "status"]);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut server = w.fx.server(&[], &[("PATH", &path)]);
    agrees(&w, &mut server, "clean");
    steps(&w, &mut server);
}

fn steps(w: &World, server: &mut Server) {
    let fx = &w.fx;
    fx.write(&w.repo, "a.txt", "edited\n");
    agrees(w, server, "edit");
    fx.write(&w.repo, "d/new.txt", "new\n");
    agrees(w, server, "new untracked file");
    std::fs::remove_file(w.repo.join("b.txt")).unwrap();
    agrees(w, server, "delete");
    std::fs::rename(w.repo.join("d/c.txt"), w.repo.join("d/renamed.txt")).unwrap();
    agrees(w, server, "rename");
    fx.write(&w.repo, "x.tmp", "x\n");
    agrees(w, server, "untracked to be ignored");
    fx.write(&w.repo, ".gitignore", "*.log\n*.tmp\n");
    agrees(w, server, ".gitignore edit");
    w.git(&["add", "-A"]);
    agrees(w, server, "git add");
    w.git(&["commit", "-q", "-m", "second"]);
    agrees(w, server, "commit");
    w.git(&["checkout", "-q", "-b", "topic", "HEAD~1"]);
    agrees(w, server, "branch switch");
    w.git(&["checkout", "-q", "main"]);
    agrees(w, server, "branch switch back");
    w.git(&["update-ref", "refs/remotes/origin/main", "HEAD~1"]);
    for (key, value) in [
        ("remote.origin.url", "/nonexistent"),
        ("remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"),
        ("branch.main.remote", "origin"),
        ("branch.main.merge", "refs/heads/main"),
    ] {
        w.git(&["config", key, value]);
    }
    agrees(w, server, "config change: an upstream");
    w.git(&["update-ref", "refs/remotes/origin/main", "HEAD"]);
    agrees(w, server, "upstream ref move");
    w.git(&["pack-refs", "--all"]);
    w.git(&["update-ref", "refs/remotes/origin/main", "HEAD~1"]);
    agrees(w, server, "upstream ref move after packing");
    fx.write(&w.repo, "a.txt", "stashed\n");
    agrees(w, server, "edit to stash");
    w.git(&["stash", "push", "-q"]);
    agrees(w, server, "stash push");
    fx.write(&w.repo, "y.skip", "y\n");
    agrees(w, server, "untracked to be excluded");
    fx.write(&w.repo, ".git/info/exclude", "*.skip\n");
    agrees(w, server, "info/exclude edit");
    fx.write(&w.repo, "z.glob", "z\n");
    let global = fx.home().join("ignore");
    std::fs::write(&global, "*.nothing\n").unwrap();
    w.git(&["config", "core.excludesFile", &global.display().to_string()]);
    agrees(w, server, "config change: global excludes");
    std::fs::write(&global, "*.glob\n").unwrap();
    agrees(w, server, "global excludes edit");

    // The daemon does not look inside submodules: with a gitlink, every call runs git.
    let head = w.git(&["rev-parse", "HEAD"]);
    let gitlink = format!("160000,{head},sub");
    w.git(&["update-index", "--add", "--cacheinfo", &gitlink]);
    let args = json!({ "repoPath": w.repo });
    for _ in 0..3 {
        let runs = w.status_runs();
        server.call("repo.status", args.clone());
        assert_eq!(w.status_runs(), runs + 1, "with a gitlink, status runs git");
    }
}
