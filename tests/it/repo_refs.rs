//! `repo.refs` against real repositories.

use serde_json::{Value, json};

use crate::common::{Fixture, assert_refused};
use crate::tool_snapshot;

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn branches_tags_remotes_and_stashes() {
    let fx = Fixture::new();
    let origin = fx.init("origin.git", &["--bare"]);
    let root = fx.root();
    fx.git(&root, &["clone", "-q", origin.to_str().unwrap(), "work"]);
    let repo = fx.path("work");
    fx.commit(&repo, "a.txt", "a\n", "first");
    fx.git(&repo, &["push", "-q", "-u", "origin", "main"]);
    fx.git(&repo, &["remote", "set-head", "origin", "main"]);
    fx.commit(&repo, "a.txt", "a\nb\n", "second");
    fx.git(&repo, &["tag", "v1"]);
    fx.git(&repo, &["tag", "-a", "-m", "release", "v2"]);
    fx.git(&repo, &["branch", "feature"]);
    fx.git(&repo, &["branch", "topic", "HEAD~1"]);
    fx.git(&repo, &["branch", "--set-upstream-to=origin/main", "topic"]);
    fx.git(
        &repo,
        &[
            "remote",
            "add",
            "mirror",
            "https://user:hunter2@example.com/r.git",
        ],
    );
    fx.git(
        &repo,
        &[
            "remote",
            "add",
            "token",
            "https://ghp_abcdef@github.com/o/r.git",
        ],
    );
    fx.write(&repo, "a.txt", "dirty\n");
    fx.git(&repo, &["stash", "push", "-q", "-m", "keep this"]);

    let result = fx.call("repo.refs", json!({ "repoPath": repo }));
    let text = result.to_string();
    assert!(
        !text.contains("hunter2") && !text.contains("ghp_abcdef"),
        "{text}"
    );
    let data = &result["data"];
    let git_list = |pattern: &str| -> Vec<String> {
        fx.git(
            &repo,
            &["for-each-ref", "--format=%(refname:lstrip=2)", pattern],
        )
        .lines()
        .map(str::to_owned)
        .collect()
    };
    assert_eq!(names(&data["local"]), git_list("refs/heads"));
    assert_eq!(names(&data["tags"]), git_list("refs/tags"));
    assert_eq!(names(&data["remote"]), git_list("refs/remotes"));
    let local = data["local"].as_array().unwrap();
    let main = local.iter().find(|b| b["name"] == "main").unwrap();
    let ahead = fx.git(&repo, &["rev-list", "--count", "origin/main..main"]);
    assert_eq!(main["ahead"].to_string(), ahead);
    assert_eq!(main["behind"], 0);
    assert_eq!(
        data["head"]["oid"],
        json!(fx.git(&repo, &["rev-parse", "HEAD"]))
    );
    assert_eq!(
        data["stashes"][0]["oid"],
        json!(fx.git(&repo, &["rev-parse", "stash@{0}"]))
    );
    assert_eq!(
        data["tags"][1]["targetOid"],
        json!(fx.git(&repo, &["rev-parse", "v2^{commit}"]))
    );
    tool_snapshot!("repo_refs_full", fx, result);
}

#[test]
fn unborn_detached_bare_and_sha256() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let unborn = fx.call("repo.refs", json!({ "repoPath": repo }));
    assert_eq!(
        unborn["data"]["head"],
        json!({ "ref": "refs/heads/main", "oid": null, "detached": false, "unborn": true })
    );
    assert_eq!(unborn["data"]["localTotal"], 0);

    let first = fx.commit(&repo, "a.txt", "a\n", "first");
    fx.commit(&repo, "a.txt", "b\n", "second");
    fx.git(&repo, &["checkout", "-q", "--detach", &first]);
    let detached = fx.call("repo.refs", json!({ "repoPath": repo }));
    assert_eq!(
        detached["data"]["head"],
        json!({ "ref": null, "oid": first, "detached": true, "unborn": false })
    );
    assert_eq!(names(&detached["data"]["local"]), ["main"]);

    fx.git(&repo, &["checkout", "-q", "main"]);
    let root = fx.root();
    fx.git(
        &root,
        &["clone", "-q", "--bare", repo.to_str().unwrap(), "bare.git"],
    );
    let bare = fx.call("repo.refs", json!({ "repoPath": fx.path("bare.git") }));
    assert_eq!(bare["data"]["head"]["ref"], "refs/heads/main");
    assert_eq!(names(&bare["data"]["local"]), ["main"]);

    let sha = fx.init("sha256", &["--object-format=sha256"]);
    let oid = fx.commit(&sha, "a.txt", "a\n", "first");
    fx.git(&sha, &["tag", "-a", "-m", "t", "v1"]);
    let result = fx.call("repo.refs", json!({ "repoPath": sha }));
    assert_eq!(oid.len(), 64);
    assert_eq!(result["data"]["local"][0]["oid"], json!(oid));
    assert_eq!(result["data"]["tags"][0]["targetOid"], json!(oid));
}

#[test]
fn lists_are_capped_with_true_totals() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "a\n", "first");
    for i in 0..5 {
        fx.git(&repo, &["branch", &format!("b{i}")]);
        fx.git(&repo, &["tag", &format!("t{i}")]);
    }
    let result = fx.call("repo.refs", json!({ "repoPath": repo, "maxPerList": 2 }));
    let data = &result["data"];
    assert_eq!(data["local"].as_array().unwrap().len(), 2);
    assert_eq!(data["localTotal"], 6);
    assert_eq!(data["localTruncated"], true);
    assert_eq!(data["tagsTotal"], 5);
    assert_eq!(data["tagsTruncated"], true);
    assert_eq!(data["remoteTruncated"], false);
}

#[test]
fn gone_upstream_and_a_branch_named_like_an_option() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "a\n", "first");
    fx.git(
        &repo,
        &["remote", "add", "origin", "/nonexistent/origin.git"],
    );
    fx.git(&repo, &["branch", "tracking"]);
    fx.git(&repo, &["config", "branch.tracking.remote", "origin"]);
    fx.git(
        &repo,
        &["config", "branch.tracking.merge", "refs/heads/old"],
    );
    fx.git(&repo, &["update-ref", "refs/heads/-n", "HEAD"]);
    let result = fx.call("repo.refs", json!({ "repoPath": repo }));
    let local = result["data"]["local"].as_array().unwrap();
    let tracking = local.iter().find(|b| b["name"] == "tracking").unwrap();
    assert_eq!(tracking["upstreamGone"], true);
    assert_eq!(tracking["ahead"], json!(null));
    assert!(local.iter().any(|b| b["name"] == "-n"));
}

#[test]
fn bad_input() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let mut server = fx.server(&[], &[]);
    let base = json!({ "repoPath": repo });
    assert_refused(
        &mut server,
        "repo.refs",
        &base,
        "maxPerList",
        &[json!(0), json!("5")],
    );
    for args in [
        json!({ "repoPath": repo, "bogus": 1 }),
        json!({ "repoPath": "relative" }),
    ] {
        let result = server.call("repo.refs", args.clone());
        assert_eq!(result["error"]["code"], -32602, "{args}: {result}");
    }
}

#[test]
fn remote_urls_are_the_ones_git_remote_shows() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "a\n", "first");
    fx.git(&repo, &["remote", "add", "origin", "gh:o/r.git"]);
    fx.git(
        &repo,
        &["remote", "add", "fork", "https://tok@example.com/f.git"],
    );
    fx.git(
        &repo,
        &[
            "config",
            "remote.fork.pushurl",
            "https://user:pw@example.com/p.git",
        ],
    );
    fx.git(
        &repo,
        &["config", "url.https://github.com/.insteadOf", "gh:"],
    );
    fx.git(
        &repo,
        &["config", "url.git@github.com:.pushInsteadOf", "gh:"],
    );

    let data = fx.call("repo.refs", json!({ "repoPath": repo }))["data"].clone();
    let origin = data["remotes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "origin")
        .unwrap();
    assert_eq!(origin["fetchUrl"], "https://github.com/o/r.git", "{data:#}");
    // What `git remote -v` prints, credentials aside.
    let mut expected: Vec<String> = Vec::new();
    for remote in data["remotes"].as_array().unwrap() {
        let name = remote["name"].as_str().unwrap();
        expected.push(format!(
            "{name}\t{} (fetch)",
            remote["fetchUrl"].as_str().unwrap()
        ));
        for push in remote["pushUrls"].as_array().unwrap() {
            expected.push(format!("{name}\t{} (push)", push.as_str().unwrap()));
        }
    }
    let shown = fx
        .git(&repo, &["remote", "-v"])
        .replace("tok@", "***@")
        .replace("user:pw@", "***@");
    assert_eq!(expected.join("\n"), shown, "{data:#}");
    assert!(shown.contains("https://github.com/o/r.git (fetch)"));
    assert!(shown.contains("git@github.com:o/r.git (push)"));
    assert_eq!(data["remotesTotal"], 2);
}
