//! `repo.status` and `repo.brief` in a repository whose user turned on git's untracked
//! cache and the builtin fsmonitor daemon (`core.fsmonitor=true`; git has no such daemon
//! on Linux and reads the working tree itself): each answer matches plain git's after
//! edits, renames, index changes and ref moves, and no read rewrites the index.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Value, json};

use crate::common::{Fixture, Server};

type Entry = (String, String, Option<String>);

/// `(XY, path, source)` as plain `git status --porcelain=v1 -z` reports them, `.` for an
/// unchanged side as `repo.status` writes it. Plain git may refresh the index and its
/// untracked cache, as it would for the user.
fn plain(fx: &Fixture, repo: &Path) -> BTreeSet<Entry> {
    let out = fx.git_output(repo, &["status", "--porcelain=v1", "-z"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut records = text.split('\0').filter(|r| !r.is_empty());
    let mut entries = BTreeSet::new();
    while let Some(record) = records.next() {
        let (xy, path) = record.split_at(2);
        let xy = if xy == "??" {
            xy.to_owned()
        } else {
            xy.replace(' ', ".")
        };
        let source = xy
            .contains(['R', 'C'])
            .then(|| records.next().unwrap().to_owned());
        entries.insert((xy, path[1..].to_owned(), source));
    }
    entries
}

fn served(status: &Value) -> BTreeSet<Entry> {
    status["data"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["status"].as_str().unwrap().to_owned(),
                e["path"].as_str().unwrap().to_owned(),
                e["origPath"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

/// Asks first (the caches as the last plain git left them), then compares with plain git.
fn agrees(fx: &Fixture, server: &mut Server, repo: &Path, step: &str) {
    let index = std::fs::read(repo.join(".git/index")).unwrap();
    let status = server.call("repo.status", json!({ "repoPath": repo }));
    let brief = server.call("repo.brief", json!({ "repoPath": repo }));
    assert_eq!(
        std::fs::read(repo.join(".git/index")).unwrap(),
        index,
        "{step}: a read rewrote the index"
    );
    let expected = plain(fx, repo);
    assert_eq!(served(&status), expected, "{step}: entries");
    let d = &status["data"];
    assert_eq!(d["changedFiles"], expected.len(), "{step}: total");
    // A clean tree's brief says `clean: true` and leaves the count out.
    let tree = &brief["data"]["workingTree"];
    let changed = tree["changed"].as_u64().unwrap_or(0);
    assert_eq!(changed as usize, expected.len(), "{step}: brief");
    assert_eq!(tree["clean"], expected.is_empty(), "{step}: brief clean");
    assert_eq!(
        d["headOid"],
        fx.git(repo, &["rev-parse", "HEAD"]),
        "{step}: head"
    );
    assert_eq!(
        d["branch"].as_str().unwrap_or_default(),
        fx.git(repo, &["branch", "--show-current"]),
        "{step}: branch"
    );
}

#[test]
fn untracked_cache_and_builtin_fsmonitor_match_plain_git() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    for dir in ["a", "b", "b/deep"] {
        for i in 0..3 {
            fx.write(&repo, &format!("{dir}/f{i}.txt"), &format!("{dir} {i}\n"));
        }
    }
    fx.commit(&repo, ".gitignore", "*.log\n", "first");
    fx.git(&repo, &["config", "core.untrackedCache", "true"]);
    fx.git(&repo, &["config", "core.fsmonitor", "true"]);
    // The user's own status writes the cache into the index.
    fx.git(&repo, &["update-index", "--untracked-cache"]);
    fx.git(&repo, &["status"]);
    let index = std::fs::read(repo.join(".git/index")).unwrap();
    assert!(
        index.windows(4).any(|w| w == b"UNTR"),
        "the index holds an untracked cache"
    );
    let mut server = fx.server(&[], &[]);
    agrees(&fx, &mut server, &repo, "clean");

    fx.write(&repo, "a/f0.txt", "edited\n");
    fx.write(&repo, "b/deep/new.txt", "untracked\n");
    fx.write(&repo, "c/new dir/file.txt", "untracked dir\n");
    fx.write(&repo, "b/ignored.log", "ignored\n");
    agrees(&fx, &mut server, &repo, "edits and untracked files");

    fx.git(&repo, &["mv", "a/f1.txt", "b/renamed.txt"]);
    std::fs::rename(repo.join("b/f2.txt"), repo.join("b/deep/moved.txt")).unwrap();
    agrees(&fx, &mut server, &repo, "renames");

    fx.git(&repo, &["add", "a/f0.txt", "b/deep/new.txt"]);
    std::fs::remove_file(repo.join("b/deep/f0.txt")).unwrap();
    fx.write(&repo, ".gitignore", "*.log\nc/\n");
    agrees(
        &fx,
        &mut server,
        &repo,
        "index changes and a new ignore rule",
    );

    fx.git(&repo, &["commit", "-q", "-m", "second"]);
    agrees(&fx, &mut server, &repo, "commit");
    fx.git(&repo, &["reset", "-q", "--soft", "HEAD~1"]);
    agrees(&fx, &mut server, &repo, "ref moved back");
    fx.git(&repo, &["checkout", "-q", "-b", "topic"]);
    fx.git(&repo, &["add", "-A"]);
    fx.git(&repo, &["commit", "-q", "-m", "on topic"]);
    fx.git(&repo, &["checkout", "-q", "-"]);
    agrees(&fx, &mut server, &repo, "branch switched");
    fx.git(&repo, &["update-ref", "refs/heads/main", "topic"]);
    agrees(&fx, &mut server, &repo, "branch moved under the worktree");
}
