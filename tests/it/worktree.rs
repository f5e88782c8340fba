//! `worktree.changes` and `worktree.list` against real repositories.

use serde_json::{Value, json};

use crate::common::{Fixture, assert_refused};
use crate::hostile;
use crate::tool_snapshot;

fn list_paths(data: &Value, list: &str) -> Vec<String> {
    data[list]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn changes_sorted_like_git_status() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.write(&repo, "staged.txt", "s\n");
    fx.write(&repo, "both.txt", "b\n");
    fx.write(&repo, "old name.txt", "rename me please\n");
    fx.commit(&repo, "unstaged.txt", "u\n", "first");
    fx.write(&repo, "staged.txt", "s2\n");
    fx.write(&repo, "both.txt", "b2\n");
    fx.git(&repo, &["add", "staged.txt", "both.txt"]);
    fx.write(&repo, "both.txt", "b3\n");
    fx.write(&repo, "unstaged.txt", "u2\n");
    fx.git(&repo, &["mv", "old name.txt", "new\nname.txt"]);
    fx.write(&repo, "dir/untracked.txt", "x\n");

    let result = fx.call("worktree.changes", json!({ "repoPath": repo }));
    tool_snapshot!("worktree_changes", fx, result);
    let data = &result["data"];
    let git_names = |args: &[&str]| -> Vec<String> {
        let out = fx.git_output(&repo, args);
        out.stdout
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect()
    };
    let mut staged = list_paths(data, "staged");
    staged.sort();
    let mut expected = git_names(&["diff", "--cached", "-z", "--name-only", "-M"]);
    expected.sort();
    assert_eq!(staged, expected);
    let mut unstaged = list_paths(data, "unstaged");
    unstaged.sort();
    assert_eq!(unstaged, git_names(&["diff", "-z", "--name-only"]));
    assert_eq!(
        list_paths(data, "untracked"),
        git_names(&[
            "ls-files",
            "-z",
            "--others",
            "--exclude-standard",
            "--directory"
        ])
    );
    let renamed = data["staged"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "renamed")
        .unwrap();
    assert_eq!(renamed["origPath"], "old name.txt");

    let filtered = fx.call(
        "worktree.changes",
        json!({ "repoPath": repo, "path": "both.txt" }),
    );
    assert_eq!(list_paths(&filtered["data"], "staged"), ["both.txt"]);
    assert_eq!(list_paths(&filtered["data"], "unstaged"), ["both.txt"]);
    assert_eq!(filtered["data"]["untrackedTotal"], 0);
}

#[test]
fn conflicts_only_in_their_own_list() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "c.txt", "base\n", "base");
    fx.git(&repo, &["checkout", "-q", "-b", "side"]);
    fx.commit(&repo, "c.txt", "theirs\n", "theirs");
    fx.git(&repo, &["checkout", "-q", "main"]);
    fx.commit(&repo, "c.txt", "ours\n", "ours");
    let merge = fx.git_output(&repo, &["merge", "side"]);
    assert!(!merge.status.success(), "the merge conflicts");
    let result = fx.call("worktree.changes", json!({ "repoPath": repo }));
    let data = &result["data"];
    assert_eq!(list_paths(data, "conflicted"), ["c.txt"]);
    assert_eq!(data["conflicted"][0]["kind"], "both-modified");
    assert_eq!(data["stagedTotal"], 0);
    assert_eq!(data["unstagedTotal"], 0);
}

#[test]
fn submodules_caps_and_bare() {
    let fx = Fixture::new();
    let sub = fx.init("sub", &[]);
    fx.commit(&sub, "s.txt", "s\n", "sub");
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "a\n", "first");
    fx.git(
        &repo,
        &["submodule", "add", "-q", sub.to_str().unwrap(), "mod"],
    );
    fx.git(&repo, &["commit", "-q", "-m", "add submodule"]);
    fx.write(&repo.join("mod"), "s.txt", "changed\n");
    for i in 0..4 {
        fx.write(&repo, &format!("u{i}.txt"), "x\n");
    }
    let result = fx.call(
        "worktree.changes",
        json!({ "repoPath": repo, "maxPerList": 2 }),
    );
    let data = &result["data"];
    assert_eq!(data["unstaged"][0]["path"], "mod");
    assert_eq!(
        data["unstaged"][0]["submodule"],
        json!({ "commitChanged": false, "modified": true, "untracked": false })
    );
    assert_eq!(data["untracked"].as_array().unwrap().len(), 2);
    assert_eq!(data["untrackedTotal"], 4);
    assert_eq!(data["untrackedTruncated"], true);

    let root = fx.root();
    fx.git(
        &root,
        &["clone", "-q", "--bare", sub.to_str().unwrap(), "bare.git"],
    );
    let bare = fx.call(
        "worktree.changes",
        json!({ "repoPath": fx.path("bare.git") }),
    );
    assert_eq!(bare["error"]["code"], 10010, "{bare}");
}

#[test]
fn changes_refuse_hostile_paths() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let marker = repo.join("created");
    let mut server = fx.server(&[], &[]);
    let base = json!({ "repoPath": repo });
    assert_refused(
        &mut server,
        "worktree.changes",
        &base,
        "path",
        &hostile::hostile_paths(),
    );
    assert!(!marker.exists(), "a refused value created a file");
    let result = server.call(
        "worktree.changes",
        json!({ "repoPath": repo, "maxPerList": 0 }),
    );
    assert_eq!(result["error"]["code"], -32602);
}

#[test]
fn list_main_linked_locked_prunable() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let unborn = fx.call("worktree.list", json!({ "repoPath": repo }));
    assert_eq!(unborn["data"]["worktrees"][0]["unborn"], true);
    assert_eq!(unborn["data"]["worktrees"][0]["headOid"], json!(null));
    assert_eq!(unborn["data"]["worktrees"][0]["branch"], "main");

    let head = fx.commit(&repo, "a.txt", "a\n", "first");
    let linked = fx.path("linked one");
    fx.git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "topic",
            linked.to_str().unwrap(),
        ],
    );
    fx.git(
        &repo,
        &[
            "worktree",
            "lock",
            "--reason",
            "on a usb disk",
            linked.to_str().unwrap(),
        ],
    );
    let odd = fx.path("odd\nname");
    fx.git(
        &repo,
        &["worktree", "add", "-q", "--detach", odd.to_str().unwrap()],
    );
    let gone = fx.path("gone");
    fx.git(
        &repo,
        &["worktree", "add", "-q", "--detach", gone.to_str().unwrap()],
    );
    std::fs::remove_dir_all(&gone).unwrap();

    let result = fx.call("worktree.list", json!({ "repoPath": linked }));
    // Linked worktrees come in the order git reads its worktrees directory; sort them so
    // the snapshot does not depend on the file system.
    let mut shown = result.clone();
    let list = shown["data"]["worktrees"].as_array_mut().unwrap();
    list[1..].sort_by_key(|w| w["path"].as_str().unwrap().to_owned());
    tool_snapshot!("worktree_list", fx, shown);
    let data = &result["data"];
    assert_eq!(data["total"], 4);
    let porcelain = fx.git(&repo, &["worktree", "list", "--porcelain"]);
    assert_eq!(porcelain.matches("worktree ").count(), 4);
    let wts = data["worktrees"].as_array().unwrap();
    assert_eq!(wts[0]["isMain"], true);
    assert_eq!(wts[0]["headOid"], json!(head));
    let current: Vec<_> = wts.iter().filter(|w| w["isCurrent"] == true).collect();
    assert_eq!(current.len(), 1);
    assert_eq!(current[0]["path"], json!(linked));
    assert_eq!(current[0]["lockedReason"], "on a usb disk");
    assert!(
        wts.iter()
            .any(|w| w["path"] == json!(odd) && w["detached"] == true)
    );
    assert!(
        wts.iter()
            .any(|w| w["path"] == json!(gone) && w["prunable"] == true)
    );
}

#[test]
fn list_in_bare_and_sha256() {
    let fx = Fixture::new();
    let src = fx.init("src", &["--object-format=sha256"]);
    let oid = fx.commit(&src, "a.txt", "a\n", "first");
    let root = fx.root();
    fx.git(
        &root,
        &["clone", "-q", "--bare", src.to_str().unwrap(), "bare.git"],
    );
    let bare = fx.path("bare.git");
    let wt = fx.path("wt");
    fx.git(
        &bare,
        &["worktree", "add", "-q", wt.to_str().unwrap(), "main"],
    );
    let result = fx.call("worktree.list", json!({ "repoPath": bare }));
    let wts = result["data"]["worktrees"].as_array().unwrap();
    assert_eq!(wts[0]["bare"], true);
    assert_eq!(wts[0]["isCurrent"], true);
    assert_eq!(wts[0]["headOid"], json!(null));
    assert_eq!(wts[1]["headOid"], json!(oid));
    assert_eq!(wts[1]["branch"], "main");
}

#[test]
fn changes_in_a_linked_worktree_and_sha256() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &["--object-format=sha256"]);
    fx.commit(&repo, "a.txt", "a\n", "first");
    let linked = fx.path("linked");
    fx.git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "topic",
            linked.to_str().unwrap(),
        ],
    );
    fx.write(&linked, "a.txt", "changed in linked\n");
    fx.write(&repo, "main-only.txt", "x\n");
    let result = fx.call("worktree.changes", json!({ "repoPath": linked }));
    let data = &result["data"];
    assert_eq!(result["repoPath"], json!(linked));
    assert_eq!(list_paths(data, "unstaged"), ["a.txt"]);
    assert_eq!(
        data["untrackedTotal"], 0,
        "the main worktree's files are not ours"
    );
}

/// Runs git with arguments that need not be UTF-8; returns stdout.
fn git_bytes(fx: &Fixture, dir: &std::path::Path, args: &[&[u8]]) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    let mut cmd = std::process::Command::new("git");
    cmd.current_dir(dir)
        .args(args.iter().map(|a| std::ffi::OsStr::from_bytes(a)))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default());
    for (k, v) in fx.env() {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    out.stdout
}

fn b64(text: &Value) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(text.as_str().unwrap_or_else(|| panic!("no bytes: {text}")))
        .unwrap()
}

#[test]
fn branch_names_that_are_not_utf8() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "a\n", "first");
    let linked = fx.path("linked");
    let other = fx.path("other");
    fx.git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "plain",
            linked.to_str().unwrap(),
        ],
    );
    git_bytes(&fx, &repo, &[b"checkout", b"-q", b"-b", b"caf\xe9"]);
    git_bytes(
        &fx,
        &repo,
        &[
            b"worktree",
            b"add",
            b"-q",
            b"-b",
            b"na\xefve",
            other.to_str().unwrap().as_bytes(),
        ],
    );
    let mut server = fx.server(&[], &[]);

    let status = server.call("repo.status", json!({ "repoPath": repo }));
    let head = git_bytes(&fx, &repo, &[b"symbolic-ref", b"--short", b"HEAD"]);
    assert_eq!(
        b64(&status["data"]["branchBytesB64"]),
        head.trim_ascii_end()
    );
    assert_eq!(status["data"]["branch"], "caf\u{fffd}");

    let brief = server.call("repo.brief", json!({ "repoPath": repo }));
    assert_eq!(
        b64(&brief["data"]["head"]["branchBytesB64"]),
        head.trim_ascii_end(),
        "{brief}"
    );

    // Every worktree is listed, each branch exactly as git lists it.
    let list = server.call("worktree.list", json!({ "repoPath": repo }));
    let porcelain = git_bytes(&fx, &repo, &[b"worktree", b"list", b"--porcelain", b"-z"]);
    let expected: Vec<Vec<u8>> = porcelain
        .split(|b| *b == 0)
        .filter_map(|r| r.strip_prefix(b"branch refs/heads/"))
        .map(<[u8]>::to_vec)
        .collect();
    let listed: Vec<Vec<u8>> = list["data"]["worktrees"]
        .as_array()
        .unwrap_or_else(|| panic!("{list}"))
        .iter()
        .map(|w| match w.get("branchBytesB64") {
            Some(raw) => b64(raw),
            None => w["branch"].as_str().unwrap().as_bytes().to_vec(),
        })
        .collect();
    assert_eq!(listed, expected);
    assert_eq!(expected.len(), 3);
    assert!(list["data"]["worktrees"][1].get("branchBytesB64").is_none());
}
