//! `repo.history` against real repositories.

use serde_json::{Value, json};

use crate::common::{Fixture, Server, assert_refused};
use crate::hostile;
use crate::tool_snapshot;

fn oids(page: &Value) -> Vec<String> {
    page["data"]["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["oid"].as_str().unwrap().to_owned())
        .collect()
}

/// Every page from `args` on, following nextCursor.
fn all_pages(server: &mut Server, args: Value) -> (Vec<String>, usize) {
    let mut seen = Vec::new();
    let mut pages = 0;
    let mut args = args;
    loop {
        let page = server.call("repo.history", args.clone());
        assert!(page.get("error").is_none(), "{page}");
        pages += 1;
        seen.extend(oids(&page));
        match page["data"]["nextCursor"].as_str() {
            Some(cursor) => args["cursor"] = json!(cursor),
            None => return (seen, pages),
        }
    }
}

#[test]
fn pages_match_git_and_end_exactly() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    for i in 0..4 {
        fx.commit(&repo, "a.txt", &format!("{i}\n"), &format!("commit {i}"));
    }
    let expected: Vec<String> = fx
        .git(&repo, &["rev-list", "HEAD"])
        .lines()
        .map(str::to_owned)
        .collect();
    let mut server = fx.server(&[], &[]);
    // A page that is exactly full at the end of history has no next cursor.
    let (seen, pages) = all_pages(&mut server, json!({ "repoPath": repo, "limit": 2 }));
    assert_eq!((seen.clone(), pages), (expected.clone(), 2));
    let (seen, pages) = all_pages(&mut server, json!({ "repoPath": repo, "limit": 3 }));
    assert_eq!((seen, pages), (expected, 2));

    let first = server.call("repo.history", json!({ "repoPath": repo, "limit": 1 }));
    let mut shown = first.clone();
    // The cursor embeds a commit id.
    shown["data"]["nextCursor"] = json!("[CURSOR]");
    tool_snapshot!("repo_history_page", fx, shown);
    let commit = &first["data"]["commits"][0];
    let show = fx.git(
        &repo,
        &["log", "-1", "--format=%H|%P|%an|%ae|%at|%cn|%ce|%ct|%s"],
    );
    let ours = [
        "oid",
        "parents",
        "authorName",
        "authorEmail",
        "authorTime",
        "committerName",
        "committerEmail",
        "committerTime",
        "subject",
    ]
    .map(|k| match &commit[k] {
        Value::String(s) => s.clone(),
        Value::Array(a) => a
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect::<Vec<_>>()
            .join(" "),
        other => other.to_string(),
    })
    .join("|");
    assert_eq!(ours, show);
}

#[test]
fn cursors_stay_stable_when_commits_arrive() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    for i in 0..5 {
        fx.commit(&repo, "a.txt", &format!("{i}\n"), &format!("commit {i}"));
    }
    let mut server = fx.server(&[], &[]);
    let first = server.call("repo.history", json!({ "repoPath": repo, "limit": 2 }));
    let cursor = first["data"]["nextCursor"].as_str().unwrap().to_owned();
    let before = server.call(
        "repo.history",
        json!({ "repoPath": repo, "limit": 2, "cursor": cursor }),
    );
    fx.commit(&repo, "a.txt", "new\n", "arrived later");
    let after = server.call(
        "repo.history",
        json!({ "repoPath": repo, "limit": 2, "cursor": cursor }),
    );
    assert_eq!(oids(&before), oids(&after));
    let expected: Vec<String> = fx
        .git(&repo, &["rev-list", "--skip=3", "--max-count=2", "HEAD"])
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(oids(&after), expected);
}

#[test]
fn ref_and_path_filters() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "dir with space/a.txt", "a\n", "touch a");
    fx.commit(&repo, "b.txt", "b\n", "touch b");
    fx.git(&repo, &["checkout", "-q", "-b", "side", "HEAD~1"]);
    fx.commit(&repo, "dir with space/a.txt", "a2\n", "side a");
    fx.git(&repo, &["checkout", "-q", "main"]);
    fx.commit(&repo, "*", "star\n", "literal star");

    let mut server = fx.server(&[], &[]);
    let by_path = server.call(
        "repo.history",
        json!({ "repoPath": repo, "path": "dir with space" }),
    );
    let expected: Vec<String> = fx
        .git(&repo, &["log", "--format=%H", "--", "dir with space"])
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(oids(&by_path), expected);
    let side = server.call("repo.history", json!({ "repoPath": repo, "ref": "side" }));
    let expected: Vec<String> = fx
        .git(&repo, &["rev-list", "side"])
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(oids(&side), expected);
    // `*` is a file name here, not a glob.
    let star = server.call("repo.history", json!({ "repoPath": repo, "path": "*" }));
    assert_eq!(oids(&star).len(), 1);
}

#[test]
fn unborn_bare_and_sha256() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let unborn = fx.call("repo.history", json!({ "repoPath": repo }));
    assert_eq!(unborn["data"]["commits"], json!([]));
    assert_eq!(unborn["data"]["nextCursor"], json!(null));
    assert_eq!(unborn["data"]["unborn"], true);

    let first = fx.commit(&repo, "a.txt", "a\n", "first");
    fx.commit(&repo, "a.txt", "b\n", "second");
    fx.git(&repo, &["checkout", "-q", "--detach", &first]);
    let detached = fx.call("repo.history", json!({ "repoPath": repo }));
    assert_eq!(detached["data"]["startOid"], json!(first));
    assert_eq!(oids(&detached), [first]);
    fx.git(&repo, &["checkout", "-q", "main"]);
    let root = fx.root();
    fx.git(
        &root,
        &["clone", "-q", "--bare", repo.to_str().unwrap(), "bare.git"],
    );
    let bare = fx.call(
        "repo.history",
        json!({ "repoPath": fx.path("bare.git"), "limit": 1 }),
    );
    assert_eq!(bare["data"]["commits"].as_array().unwrap().len(), 1);
    assert!(bare["data"]["nextCursor"].is_string());

    let sha = fx.init("sha256", &["--object-format=sha256"]);
    let oid = fx.commit(&sha, "a.txt", "a\n", "first");
    let result = fx.call("repo.history", json!({ "repoPath": sha }));
    assert_eq!(oids(&result), [oid]);
    assert_eq!(
        result["data"]["commits"][0]["shortOid"]
            .as_str()
            .unwrap()
            .len(),
        7
    );
}

#[test]
fn bad_and_hostile_input() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "a\n", "first");
    let marker = repo.join("created-by-option");
    let mut server = fx.server(&[], &[]);
    let base = json!({ "repoPath": repo });
    assert_refused(
        &mut server,
        "repo.history",
        &base,
        "ref",
        &hostile::hostile_revs(&marker),
    );
    assert!(!marker.exists(), "a refused value created a file");
    assert_refused(
        &mut server,
        "repo.history",
        &base,
        "path",
        &hostile::hostile_paths(),
    );
    assert!(!marker.exists(), "a refused value created a file");
    let cursors: Vec<String> = [
        "50",
        "not base64!",
        "djE6YWJjOjU",
        // A well-formed cursor for a commit this repository does not have.
        "djE6MTExMTExMTExMTExMTExMTExMTExMTExMTExMTExMTExMTExMTExMTo1",
    ]
    .map(str::to_owned)
    .to_vec();
    assert_refused(&mut server, "repo.history", &base, "cursor", &cursors);
    assert!(!marker.exists(), "a refused value created a file");
    assert_refused(&mut server, "repo.history", &base, "limit", &[0, 201]);
    assert_refused(
        &mut server,
        "repo.history",
        &base,
        "ref",
        &["no-such-branch"],
    );
}
