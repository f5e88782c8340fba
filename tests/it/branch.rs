//! `repo.branchStack` and `repo.reflog` against real repositories, checked against
//! `git rev-list --left-right --count` and `git reflog`.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::{Fixture, write_executable};
use crate::tool_snapshot;

fn call(fx: &Fixture, tool: &str, args: Value) -> Value {
    let out = fx.call(tool, args);
    assert!(out.get("error").is_none(), "{out}");
    out
}

/// `git rev-list --left-right --count a...b` as (left-only, right-only).
fn left_right(fx: &Fixture, repo: &Path, a: &str, b: &str) -> (u64, u64) {
    let text = fx.git(
        repo,
        &["rev-list", "--left-right", "--count", &format!("{a}...{b}")],
    );
    let mut it = text.split_whitespace().map(|n| n.parse().unwrap());
    (it.next().unwrap(), it.next().unwrap())
}

/// A clone whose `feat/a` has diverged from its upstream, with branches built on it,
/// tracking it, and beside it.
fn stacked(fx: &Fixture) -> std::path::PathBuf {
    let seed = fx.init("seed", &[]);
    fx.commit(&seed, "base.txt", "0\n", "base");
    fx.git(&seed, &["checkout", "-q", "-b", "feat/a"]);
    fx.commit(&seed, "a.txt", "1\n", "a one");
    fx.git(&seed, &["checkout", "-q", "main"]);
    let origin = fx.clone(&seed, "origin.git", true);
    let work = fx.clone(&origin, "work", false);
    fx.git(
        &seed,
        &["remote", "add", "origin", origin.to_str().unwrap()],
    );
    fx.git(&seed, &["checkout", "-q", "feat/a"]);
    fx.commit(&seed, "a.txt", "upstream\n", "a upstream");
    fx.git(&seed, &["push", "-q", "origin", "feat/a"]);
    fx.git(&seed, &["checkout", "-q", "main"]);
    fx.commit(&seed, "base.txt", "1\n", "main moves");
    fx.git(&seed, &["push", "-q", "origin", "main"]);
    fx.git(&work, &["fetch", "-q"]);
    fx.git(&work, &["merge", "-q", "--ff-only", "origin/main"]);
    fx.git(
        &work,
        &["checkout", "-q", "-b", "feat/a", "origin/feat/a~1"],
    );
    fx.git(
        &work,
        &["branch", "-q", "--set-upstream-to", "origin/feat/a"],
    );
    fx.commit(&work, "a.txt", "local\n", "a local");
    fx.git(&work, &["branch", "tracker", "--track", "feat/a"]);
    fx.git(&work, &["checkout", "-q", "-b", "feat/a-child"]);
    fx.commit(&work, "child.txt", "c\n", "child");
    fx.git(&work, &["checkout", "-q", "-b", "other", "main"]);
    fx.commit(&work, "other.txt", "o\n", "other");
    fx.git(&work, &["checkout", "-q", "feat/a"]);
    work
}

#[test]
fn repo_branch_stack_matches_rev_list() {
    let fx = Fixture::new();
    let work = stacked(&fx);
    let out = call(&fx, "repo.branchStack", json!({ "repoPath": work }));
    let d = &out["data"];
    assert_eq!(d["current"]["ref"], "refs/heads/feat/a");
    let (ahead, behind) = left_right(&fx, &work, "HEAD", "@{u}");
    assert_eq!((ahead, behind), (1, 1), "fixture shape");
    assert_eq!(d["current"]["ahead"], ahead);
    assert_eq!(d["current"]["behind"], behind);
    assert_eq!(d["upstream"]["ref"], "refs/remotes/origin/feat/a");
    assert_eq!(
        d["upstream"]["commit"],
        fx.git(&work, &["rev-parse", "@{u}"])
    );
    assert_eq!(d["base"]["ref"], "refs/heads/main");
    let (from_base, behind_base) = left_right(&fx, &work, "HEAD", "main");
    assert_eq!(d["base"]["distance"]["aheadFromBase"], from_base);
    assert_eq!(d["base"]["distance"]["behindBase"], behind_base);
    let related = d["related"].as_array().unwrap();
    let relations: Vec<(&str, &str)> = related
        .iter()
        .map(|r| {
            (
                r["label"].as_str().unwrap(),
                r["relation"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        relations,
        vec![
            ("tracker", "tracks-current"),
            ("feat/a-child", "descends-from-current"),
            ("other", "shares-base"),
        ]
    );
    for r in related {
        let (a, b) = left_right(&fx, &work, r["ref"].as_str().unwrap(), "HEAD");
        assert_eq!(r["aheadOfCurrent"], a, "{r}");
        assert_eq!(r["behindCurrent"], b, "{r}");
        assert_eq!(
            r["commit"],
            fx.git(&work, &["rev-parse", r["ref"].as_str().unwrap()])
        );
    }
    assert_eq!(d["risk"], "high", "diverged from upstream");
    assert_eq!(d["networkFetchPerformed"], false);
    assert_eq!(d["aheadBehindMethod"], "for-each-ref");
    tool_snapshot!("repo_branch_stack", fx, out);

    // The upstream disappears (as after a fetch --prune): reported as gone, not absent.
    fx.git(&work, &["update-ref", "-d", "refs/remotes/origin/feat/a"]);
    let out = call(&fx, "repo.branchStack", json!({ "repoPath": work }));
    let d = &out["data"];
    assert_eq!(d["upstream"]["gone"], true);
    assert_eq!(d["upstream"]["ref"], "refs/remotes/origin/feat/a");
    assert_eq!(d["current"]["ahead"], json!(null));
    assert_ne!(d["risk"], "low");
}

#[test]
fn detached_unborn_bare_and_sha256() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let out = call(&fx, "repo.branchStack", json!({ "repoPath": repo }));
    let c = &out["data"]["current"];
    assert_eq!(
        (c["unborn"].clone(), c["label"].clone(), c["commit"].clone()),
        (json!(true), json!("main"), json!(null))
    );
    assert_eq!(out["data"]["base"], json!(null));
    tool_snapshot!("repo_branch_stack_unborn", fx, out);

    fx.commit(&repo, "a", "1\n", "one");
    fx.commit(&repo, "a", "2\n", "two");
    fx.git(&repo, &["branch", "develop", "HEAD~1"]);
    fx.git(&repo, &["checkout", "-q", "--detach", "HEAD~1"]);
    fx.commit(&repo, "b", "1\n", "detached work");
    let out = call(&fx, "repo.branchStack", json!({ "repoPath": repo }));
    let d = &out["data"];
    assert_eq!(d["current"]["ref"], json!(null));
    assert_eq!(d["current"]["label"], "HEAD");
    assert_eq!(d["current"]["detached"], true);
    assert_eq!(d["base"]["label"], "main");
    let (a, b) = left_right(&fx, &repo, "HEAD", "main");
    assert_eq!(
        d["base"]["distance"],
        json!({"aheadFromBase": a, "behindBase": b})
    );
    assert_eq!((a, b), (1, 1));

    fx.git(&repo, &["checkout", "-q", "main"]);
    let bare = fx.clone(&repo, "bare.git", true);
    let out = call(
        &fx,
        "repo.branchStack",
        json!({ "repoPath": bare, "baseCandidates": ["develop"] }),
    );
    assert_eq!(out["data"]["current"]["label"], "main");
    assert_eq!(out["data"]["base"]["ref"], "refs/heads/develop");
    assert_eq!(
        out["data"]["base"]["distance"],
        json!({"aheadFromBase": 1, "behindBase": 0})
    );

    let sha = fx.init("sha", &["--object-format=sha256"]);
    fx.commit(&sha, "a", "1\n", "one");
    fx.git(&sha, &["checkout", "-q", "-b", "topic"]);
    let tip = fx.commit(&sha, "a", "2\n", "two");
    let out = call(&fx, "repo.branchStack", json!({ "repoPath": sha }));
    assert_eq!(out["data"]["current"]["commit"], json!(tip));
    assert_eq!(
        out["data"]["base"]["distance"],
        json!({"aheadFromBase": 1, "behindBase": 0})
    );
}

#[test]
fn base_candidates_and_related_cap() {
    let fx = Fixture::new();
    let work = stacked(&fx);
    // Only the remote has `feat/a` besides us; `main` is current and therefore skipped.
    fx.git(&work, &["checkout", "-q", "main"]);
    let out = call(
        &fx,
        "repo.branchStack",
        json!({ "repoPath": work, "baseCandidates": ["nope", "main", "feat/a"] }),
    );
    assert_eq!(out["data"]["base"]["ref"], "refs/remotes/origin/main");
    fx.git(&work, &["branch", "-D", "-q", "feat/a-child", "tracker"]);
    fx.git(&work, &["branch", "-D", "-q", "feat/a"]);
    let out = call(
        &fx,
        "repo.branchStack",
        json!({ "repoPath": work, "baseCandidates": ["trunk", "feat/a"] }),
    );
    assert_eq!(out["data"]["base"]["ref"], "refs/remotes/origin/feat/a");
    let out = call(
        &fx,
        "repo.branchStack",
        json!({ "repoPath": work, "baseCandidates": ["trunk"] }),
    );
    assert_eq!(out["data"]["base"], json!(null));

    for i in 0..12 {
        fx.git(&work, &["branch", &format!("extra-{i:02}")]);
    }
    let out = call(
        &fx,
        "repo.branchStack",
        json!({ "repoPath": work, "maxRelated": 3 }),
    );
    let d = &out["data"];
    assert_eq!(d["related"].as_array().unwrap().len(), 3);
    let branches = fx.git(
        &work,
        &["for-each-ref", "--format=%(refname)", "refs/heads/"],
    );
    assert_eq!(
        d["relatedTotal"],
        branches.lines().count() - 1,
        "all but the current"
    );
    assert_eq!(d["relatedTruncated"], true);
}

#[test]
fn hostile_branch_and_reflog_input() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a", "1\n", "one");
    let mut server = fx.server(&[], &[]);
    let many: Vec<String> = (0..21).map(|i| format!("b{i}")).collect();
    let errors: Vec<Value> = [
        (
            "repo.branchStack",
            json!({ "repoPath": repo, "baseCandidates": ["--all"] }),
        ),
        (
            "repo.branchStack",
            json!({ "repoPath": repo, "baseCandidates": ["main", "a..b"] }),
        ),
        (
            "repo.branchStack",
            json!({ "repoPath": repo, "baseCandidates": ["main\n"] }),
        ),
        (
            "repo.branchStack",
            json!({ "repoPath": repo, "baseCandidates": ["refs/heads/main"] }),
        ),
        (
            "repo.branchStack",
            json!({ "repoPath": repo, "baseCandidates": [] }),
        ),
        (
            "repo.branchStack",
            json!({ "repoPath": repo, "baseCandidates": many }),
        ),
        (
            "repo.branchStack",
            json!({ "repoPath": repo, "maxRelated": 51 }),
        ),
        (
            "repo.reflog",
            json!({ "repoPath": repo, "refName": "--all" }),
        ),
        ("repo.reflog", json!({ "repoPath": repo, "refName": "-n" })),
        (
            "repo.reflog",
            json!({ "repoPath": repo, "refName": "--output=/tmp/x" }),
        ),
        (
            "repo.reflog",
            json!({ "repoPath": repo, "refName": "HEAD@{1}" }),
        ),
        (
            "repo.reflog",
            json!({ "repoPath": repo, "refName": "main..x" }),
        ),
        (
            "repo.reflog",
            json!({ "repoPath": repo, "refName": "a\u{0}b" }),
        ),
        ("repo.reflog", json!({ "repoPath": repo, "refName": "" })),
        (
            "repo.reflog",
            json!({ "repoPath": repo, "refName": "nonexistent" }),
        ),
        ("repo.reflog", json!({ "repoPath": repo, "limit": 0 })),
        ("repo.reflog", json!({ "repoPath": repo, "limit": 101 })),
    ]
    .into_iter()
    .map(|(tool, args)| {
        let out = server.call(tool, args);
        assert_eq!(out["error"]["code"], -32602, "{out}");
        out["error"]["data"].clone()
    })
    .collect();
    tool_snapshot!("repo_branch_reflog_bad_input", fx, json!(errors));
    let out = server.call(
        "repo.reflog",
        json!({ "repoPath": repo, "refName": format!("--output={}", fx.path("pwned").display()) }),
    );
    assert_eq!(out["error"]["code"], -32602);
    assert!(
        !fx.path("pwned").exists(),
        "an option-shaped ref never reaches git"
    );
}

/// Oids `git reflog` reports for `refname`, newest first.
fn git_reflog(fx: &Fixture, repo: &Path, refname: &str) -> Vec<String> {
    fx.git(repo, &["reflog", "show", "--format=%H", refname, "--"])
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn repo_reflog_matches_git_and_flags_lost_commits() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a", "1\n", "one");
    fx.commit(&repo, "a", "2\n", "two");
    let lost = fx.commit(&repo, "a", "3\n", "three");
    fx.git(&repo, &["reset", "-q", "--hard", "HEAD~2"]);
    fx.commit(&repo, "a", "4\n", "four");
    fx.git(&repo, &["commit", "-q", "--amend", "-m", "four amended"]);
    fx.git(&repo, &["checkout", "-q", "-b", "side"]);
    fx.git(&repo, &["checkout", "-q", "main"]);

    let out = call(
        &fx,
        "repo.reflog",
        json!({ "repoPath": repo, "limit": 100 }),
    );
    let d = &out["data"];
    let entries = d["entries"].as_array().unwrap();
    let expected = git_reflog(&fx, &repo, "HEAD");
    let got: Vec<&str> = entries
        .iter()
        .map(|e| e["newOid"].as_str().unwrap())
        .collect();
    assert_eq!(got, expected);
    assert_eq!(d["moreAvailable"], false);
    assert_eq!(d["storage"], "files");
    // Old ids are the recorded ones: each line of the log file, newest first.
    let file = std::fs::read_to_string(repo.join(".git/logs/HEAD")).unwrap();
    let olds: Vec<&str> = file.lines().rev().map(|l| &l[..40]).collect();
    let got_old: Vec<&str> = entries
        .iter()
        .map(|e| e["oldOid"].as_str().unwrap())
        .collect();
    assert_eq!(got_old, olds);
    let all = fx.git(&repo, &["rev-list", "--all"]);
    for (i, e) in entries.iter().enumerate() {
        assert_eq!(e["selector"], format!("HEAD@{{{i}}}"));
        let reachable = all.lines().any(|l| l == e["newOid"].as_str().unwrap());
        assert_eq!(e["unreachable"], !reachable, "{e}");
        assert_eq!(e["recoveryHint"].is_string(), !reachable);
        assert_eq!(e["recoverable"] == json!(true), !reachable);
    }
    let lost_entry = entries.iter().find(|e| e["newOid"] == json!(lost)).unwrap();
    assert_eq!(
        lost_entry["recoveryHint"],
        format!("git branch recover-{} {lost}", &lost[..7])
    );
    let actions: Vec<&str> = entries
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        [
            "checkout", "checkout", "amend", "commit", "reset", "commit", "commit", "commit"
        ]
    );
    let timestamps: Vec<i64> = entries
        .iter()
        .map(|e| e["timestamp"].as_i64().unwrap())
        .collect();
    let git_times: Vec<i64> = fx
        .git(
            &repo,
            &[
                "reflog",
                "show",
                "--format=%gd",
                "--date=unix",
                "HEAD",
                "--",
            ],
        )
        .lines()
        .map(|l| {
            l.trim_start_matches("HEAD@{")
                .trim_end_matches('}')
                .parse::<i64>()
                .unwrap()
                * 1000
        })
        .collect();
    assert_eq!(timestamps, git_times);
    tool_snapshot!("repo_reflog_head", fx, out);

    let out = call(
        &fx,
        "repo.reflog",
        json!({ "repoPath": repo, "refName": "main", "limit": 2 }),
    );
    let d = &out["data"];
    assert_eq!(d["fullRef"], "refs/heads/main");
    assert_eq!(d["entries"][0]["selector"], "main@{0}");
    assert_eq!(d["entryCount"], 2);
    assert_eq!(d["moreAvailable"], true);
    let expected = git_reflog(&fx, &repo, "main");
    assert_eq!(d["entries"][1]["newOid"], json!(expected[1]));

    // A tag has no reflog: an empty, honest answer.
    fx.git(&repo, &["tag", "v1"]);
    let out = call(&fx, "repo.reflog", json!({ "repoPath": repo, "ref": "v1" }));
    assert_eq!(out["data"]["fullRef"], "refs/tags/v1");
    assert_eq!(out["data"]["entries"], json!([]));

    // Older stashes live only in the stash reflog; they are not offered for recovery.
    for text in ["s1\n", "s2\n"] {
        fx.write(&repo, "a", text);
        fx.git(&repo, &["stash", "-q"]);
    }
    let out = call(
        &fx,
        "repo.reflog",
        json!({ "repoPath": repo, "refName": "stash" }),
    );
    let entries = out["data"]["entries"].as_array().unwrap();
    let got: Vec<&str> = entries
        .iter()
        .map(|e| e["newOid"].as_str().unwrap())
        .collect();
    assert_eq!(got, git_reflog(&fx, &repo, "stash"));
    assert_eq!(entries[1]["unreachable"], true);
    assert!(entries.iter().all(|e| e.get("recoveryHint").is_none()));
    assert_eq!(entries[0]["action"], "stash");
}

#[test]
fn reflog_in_reftable_linked_worktree_and_sha256() {
    let fx = Fixture::new();
    let repo = fx.init("rt", &["--ref-format=reftable"]);
    fx.commit(&repo, "a", "1\n", "one");
    let lost = fx.commit(&repo, "a", "2\n", "two");
    fx.git(&repo, &["reset", "-q", "--hard", "HEAD~1"]);
    let out = call(&fx, "repo.reflog", json!({ "repoPath": repo }));
    let d = &out["data"];
    assert_eq!(d["storage"], "reftable");
    let got: Vec<&str> = d["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["newOid"].as_str().unwrap())
        .collect();
    assert_eq!(got, git_reflog(&fx, &repo, "HEAD"));
    assert_eq!(d["entries"][0]["oldOid"], json!(lost));
    assert_eq!(d["entries"][0]["oldOidInferred"], true);
    assert_eq!(d["entries"][1]["unreachable"], true);
    assert_eq!(
        d["entries"][2]["oldOid"],
        json!(null),
        "the first entry has no older one"
    );

    let main = fx.init("main", &[]);
    fx.commit(&main, "a", "1\n", "one");
    let linked = fx.path("linked");
    fx.git(
        &main,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "wt",
            linked.to_str().unwrap(),
        ],
    );
    fx.commit(&linked, "b", "1\n", "in linked");
    let out = call(&fx, "repo.reflog", json!({ "repoPath": linked }));
    let got: Vec<&str> = out["data"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["newOid"].as_str().unwrap())
        .collect();
    assert_eq!(got, git_reflog(&fx, &linked, "HEAD"));
    assert_ne!(
        got,
        git_reflog(&fx, &main, "HEAD"),
        "each worktree has its own HEAD log"
    );
    // Another worktree's HEAD, named the way git names it.
    let oids = |out: &Value| -> Vec<String> {
        out["data"]["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["newOid"].as_str().unwrap().to_owned())
            .collect()
    };
    let out = call(
        &fx,
        "repo.reflog",
        json!({ "repoPath": main, "refName": "worktrees/linked/HEAD" }),
    );
    assert_eq!(oids(&out), git_reflog(&fx, &linked, "HEAD"));
    let out = call(
        &fx,
        "repo.reflog",
        json!({ "repoPath": linked, "refName": "main-worktree/HEAD" }),
    );
    assert_eq!(oids(&out), git_reflog(&fx, &main, "HEAD"));

    let sha = fx.init("sha", &["--object-format=sha256"]);
    let oid = fx.commit(&sha, "a", "1\n", "one");
    let out = call(&fx, "repo.reflog", json!({ "repoPath": sha }));
    assert_eq!(out["data"]["entries"][0]["newOid"], json!(oid));
    assert_eq!(
        out["data"]["entries"][0]["oldOid"].as_str().unwrap().len(),
        64
    );
}

/// The first `git` on `PATH`, as an absolute path.
fn real_git() -> std::path::PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join("git"))
        .find(|p| p.is_file())
        .expect("git on PATH")
}

#[test]
fn older_git_falls_back_to_rev_list_with_the_same_answer() {
    let fx = Fixture::new();
    let work = stacked(&fx);
    // A git that calls itself 2.40, one release before %(ahead-behind:…).
    let wrapper = fx.path("old-git");
    write_executable(
        &wrapper,
        &format!(
            "#!/bin/sh\nfor last in \"$@\"; do :; done\nif [ \"$last\" = --version ]; then echo 'git version 2.40.1'; exit 0; fi\nexec '{}' \"$@\"\n",
            real_git().display()
        ),
    );
    let args = json!({ "repoPath": work });
    let new = fx.call("repo.branchStack", args.clone());
    let old = fx
        .server(&[], &[("GITWARD_GIT", wrapper.to_str().unwrap())])
        .call("repo.branchStack", args);
    assert_eq!(new["data"]["aheadBehindMethod"], "for-each-ref");
    assert_eq!(old["data"]["aheadBehindMethod"], "rev-list");
    let mut old = old;
    old["data"]["aheadBehindMethod"] = json!("for-each-ref");
    assert_eq!(old, new);
}

#[test]
fn reflog_of_a_name_shared_by_a_branch_and_a_tag_is_the_one_git_shows() {
    let fx = Fixture::new();
    for reftable in [false, true] {
        let flags: &[&str] = if reftable {
            &["--ref-format=reftable"]
        } else {
            &[]
        };
        let repo = fx.init(if reftable { "rt" } else { "files" }, flags);
        fx.commit(&repo, "a.txt", "1\n", "one");
        fx.git(&repo, &["branch", "x"]);
        fx.commit(&repo, "a.txt", "2\n", "two");
        fx.git(&repo, &["tag", "x"]);
        fx.git(&repo, &["branch", "-f", "x", "HEAD"]);

        let data = call(
            &fx,
            "repo.reflog",
            json!({ "repoPath": repo, "refName": "x" }),
        )["data"]
            .clone();
        assert_eq!(data["fullRef"], "refs/heads/x", "{data:#}");
        let oids: Vec<String> = data["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["newOid"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(oids, git_reflog(&fx, &repo, "x"));
        assert_eq!(oids.len(), 2);
        // The selectors name the branch without ambiguity.
        assert_eq!(data["entries"][1]["selector"], "refs/heads/x@{1}");
        assert_eq!(fx.git(&repo, &["rev-parse", "refs/heads/x@{1}"]), oids[1]);
    }
}
