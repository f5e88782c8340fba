//! `commit.details` against real repositories.

use serde_json::{Value, json};

use crate::common::{Fixture, assert_refused};
use crate::hostile;
use crate::tool_snapshot;

fn paths(result: &Value) -> Vec<String> {
    result["data"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_owned())
        .collect()
}

fn git_paths(fx: &Fixture, repo: &std::path::Path, args: &[&str]) -> Vec<String> {
    let out = fx.git_output(repo, args);
    assert!(out.status.success());
    out.stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect()
}

#[test]
fn renames_binaries_and_odd_names() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.write(&repo, "old name.txt", "one\ntwo\nthree\nfour\n");
    fx.write(&repo, "bin.dat", "x\0y");
    fx.commit(&repo, "keep.txt", "k\n", "first");
    fx.git(&repo, &["mv", "old name.txt", "new name.txt"]);
    fx.write(&repo, "bin.dat", "z\0y");
    fx.write(&repo, "keep.txt", "k\nmore\n");
    fx.write(&repo, "line\nbreak.txt", "n\n");
    {
        use std::os::unix::ffi::OsStrExt;
        let name = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
        std::fs::write(repo.join(name), "latin1\n").unwrap();
    }
    fx.git(&repo, &["add", "-A"]);
    fx.git(
        &repo,
        &[
            "commit",
            "-q",
            "-m",
            "second",
            "-m",
            "The body\nhas two lines.",
        ],
    );

    let result = tool_snapshot!(
        "commit_details_second",
        fx,
        "commit.details",
        json!({ "repoPath": repo, "commit": "HEAD" })
    );
    let data = &result["data"];
    assert_eq!(data["diffAgainst"], "parent");
    assert_eq!(
        data["commit"]["message"],
        "second\n\nThe body\nhas two lines."
    );
    // Every path git lists, new names for renames, in git's order.
    let expected: Vec<String> = git_paths(
        &fx,
        &repo,
        &[
            "diff-tree",
            "-r",
            "-z",
            "--no-commit-id",
            "--name-only",
            "-M",
            "HEAD",
        ],
    );
    assert_eq!(paths(&result), expected);
    let shortstat = fx.git(
        &repo,
        &["diff-tree", "--shortstat", "-M", "--no-commit-id", "HEAD"],
    );
    let stats = &data["stats"];
    assert!(
        shortstat.contains(&format!("{} files changed", stats["files"]))
            && shortstat.contains(&format!("{} insertion", stats["insertions"])),
        "{shortstat} vs {stats}"
    );
    let renamed = data["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["status"] == "R")
        .unwrap();
    assert_eq!(renamed["origPath"], "old name.txt");
    assert_eq!(renamed["similarity"], 100);
}

#[test]
fn a_rename_source_has_the_same_form_as_its_path() {
    use std::os::unix::ffi::OsStrExt;
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let old = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
    std::fs::write(repo.join(old), "one\ntwo\nthree\n").unwrap();
    fx.git(&repo, &["add", "-A"]);
    fx.git(&repo, &["commit", "-q", "-m", "first"]);
    std::fs::rename(repo.join(old), repo.join("cafe.txt")).unwrap();
    fx.git(&repo, &["add", "-A"]);
    fx.git(&repo, &["commit", "-q", "-m", "rename"]);

    let result = fx.call(
        "commit.details",
        json!({ "repoPath": repo, "commit": "HEAD" }),
    );
    let renamed = &result["data"]["files"][0];
    assert_eq!(renamed["status"], "R", "{result}");
    assert_eq!(renamed["path"], "cafe.txt");
    assert_eq!(renamed["origPath"], "caf\u{fffd}.txt");
    assert_eq!(renamed["origPathBytesB64"], "Y2Fm6S50eHQ=");
    assert_eq!(renamed["origPathEncoding"], "non-utf8");
    assert!(renamed.get("pathBytesB64").is_none(), "{renamed}");
}

#[test]
fn root_merge_bare_and_sha256() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let root_commit = fx.commit(&repo, "a.txt", "a\n", "root");
    let root = fx.call(
        "commit.details",
        json!({ "repoPath": repo, "commit": root_commit }),
    );
    assert_eq!(root["data"]["diffAgainst"], "root");
    assert_eq!(paths(&root), ["a.txt"]);
    assert_eq!(root["data"]["files"][0]["kind"], "added");

    fx.git(&repo, &["checkout", "-q", "-b", "side"]);
    fx.commit(&repo, "side.txt", "s\n", "side work");
    fx.git(&repo, &["checkout", "-q", "main"]);
    fx.commit(&repo, "main.txt", "m\n", "main work");
    fx.git(&repo, &["merge", "-q", "--no-edit", "side"]);
    let merge = fx.call(
        "commit.details",
        json!({ "repoPath": repo, "commit": "HEAD" }),
    );
    assert_eq!(merge["data"]["diffAgainst"], "first-parent");
    assert_eq!(
        merge["data"]["commit"]["parents"].as_array().unwrap().len(),
        2
    );
    let expected = git_paths(&fx, &repo, &["diff", "-z", "--name-only", "HEAD^1", "HEAD"]);
    assert_eq!(paths(&merge), expected);
    assert_eq!(expected, ["side.txt"]);

    let top = fx.root();
    fx.git(
        &top,
        &["clone", "-q", "--bare", repo.to_str().unwrap(), "bare.git"],
    );
    let bare = fx.call(
        "commit.details",
        json!({ "repoPath": fx.path("bare.git"), "commit": "main~1" }),
    );
    assert_eq!(paths(&bare), ["main.txt"]);

    let sha = fx.init("sha256", &["--object-format=sha256"]);
    fx.commit(&sha, "a.txt", "a\n", "first");
    let oid = fx.commit(&sha, "a.txt", "a\nb\n", "second");
    let result = fx.call(
        "commit.details",
        json!({ "repoPath": sha, "commit": &oid[..12] }),
    );
    assert_eq!(result["data"]["commit"]["oid"], json!(oid));
    assert_eq!(result["data"]["stats"]["insertions"], 1);
}

#[test]
fn files_are_capped_but_stats_are_not() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    for i in 0..5 {
        fx.write(&repo, &format!("f{i}.txt"), "x\ny\n");
    }
    fx.commit(&repo, "last.txt", "z\n", "many");
    let result = fx.call(
        "commit.details",
        json!({ "repoPath": repo, "commit": "HEAD", "maxFiles": 2 }),
    );
    let data = &result["data"];
    assert_eq!(data["files"].as_array().unwrap().len(), 2);
    assert_eq!(data["filesTotal"], 6);
    assert_eq!(data["filesTruncated"], true);
    assert_eq!(data["stats"]["files"], 6);
    assert_eq!(data["stats"]["insertions"], 11);
}

#[test]
fn bad_and_hostile_input() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "a\n", "first");
    let marker = repo.join("created-by-option");
    let mut server = fx.server(&[], &[]);
    let base = json!({ "repoPath": repo, "commit": "HEAD" });
    assert_refused(
        &mut server,
        "commit.details",
        &base,
        "commit",
        &hostile::hostile_revs(&marker),
    );
    assert!(!marker.exists(), "a refused value created a file");
    let missing = server.call(
        "commit.details",
        json!({ "repoPath": repo, "commit": "nope" }),
    );
    assert_eq!(missing["error"]["code"], -32602);
    assert_eq!(missing["error"]["data"]["field"], "commit");
    let absent = server.call("commit.details", json!({ "repoPath": repo }));
    assert_eq!(absent["error"]["data"]["field"], "commit");
    // A tree is not a commit.
    let tree = server.call(
        "commit.details",
        json!({ "repoPath": repo, "commit": "HEAD^{tree}" }),
    );
    assert_eq!(tree["error"]["code"], -32602);
}

#[test]
fn the_message_is_returned_as_written() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.write(&repo, "a.txt", "a\n");
    fx.git(&repo, &["add", "a.txt"]);
    let message =
        "a subject that\nwraps onto two lines\n\n  indented body\n\nSigned-off-by: A <a@b>";
    fx.git(
        &repo,
        &["commit", "-q", "--cleanup=verbatim", "-m", message],
    );
    let result = fx.call(
        "commit.details",
        json!({ "repoPath": repo, "commit": "HEAD" }),
    );
    let commit = &result["data"]["commit"];
    assert_eq!(commit["message"], message);
    assert_eq!(commit["subject"], "a subject that wraps onto two lines");
    assert_eq!(commit["messageTruncated"], false);
}
