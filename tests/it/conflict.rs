//! `repo.conflictPreflight` and `conflict.read` against real merges, rebases and picks.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::Fixture;
use crate::tool_snapshot;

/// Every file under `dir`: size, modification time and contents.
fn listing(dir: &Path) -> BTreeMap<PathBuf, (u64, std::time::SystemTime, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let meta = std::fs::symlink_metadata(entry.path()).unwrap();
            if meta.is_dir() {
                stack.push(entry.path());
            }
            let bytes = if meta.is_file() {
                std::fs::read(entry.path()).unwrap()
            } else {
                Vec::new()
            };
            out.insert(
                entry.path().strip_prefix(dir).unwrap().to_path_buf(),
                (meta.len(), meta.modified().unwrap(), bytes),
            );
        }
    }
    out
}

/// `main` and `feat` diverged with a content, an add/add and a modify/delete conflict,
/// plus a change only `feat` made (which must not count as a conflict).
fn diverged(fx: &Fixture, rel: &str, flags: &[&str]) -> PathBuf {
    let repo = fx.init(rel, flags);
    fx.write(&repo, "a.txt", "1\n2\n3\n");
    fx.write(&repo, "del.txt", "keep\n");
    fx.commit(&repo, "same.txt", "same\n", "base");
    fx.git(&repo, &["checkout", "-q", "-b", "feat"]);
    fx.write(&repo, "a.txt", "1\nfeat\n3\n");
    fx.write(&repo, "add.txt", "feat\n");
    fx.write(&repo, "only-feat.txt", "new upstream file\n");
    fx.git(&repo, &["rm", "-q", "del.txt"]);
    fx.commit(&repo, "a.txt", "1\nfeat\n3\n", "feat changes");
    fx.git(&repo, &["checkout", "-q", "main"]);
    fx.write(&repo, "a.txt", "1\nmain\n3\n");
    fx.write(&repo, "add.txt", "main\n");
    fx.commit(&repo, "del.txt", "modified\n", "main changes");
    repo
}

/// Paths plain git leaves unmerged after really merging in a scratch clone.
fn real_merge_conflicts(fx: &Fixture, repo: &Path, current: &str, target: &str) -> Vec<String> {
    let clone = fx.path(&format!("scratch-{}", rand_suffix()));
    fx.git(
        repo.parent().unwrap(),
        &[
            "clone",
            "-q",
            repo.to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    );
    fx.git(
        &clone,
        &["checkout", "-q", "-B", "cur", &format!("origin/{current}")],
    );
    let out = fx.git_output(&clone, &["merge", "--no-edit", &format!("origin/{target}")]);
    let paths = fx.git(&clone, &["diff", "--name-only", "--diff-filter=U"]);
    assert_eq!(out.status.success(), paths.is_empty());
    paths.lines().map(str::to_owned).collect()
}

fn rand_suffix() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::SeqCst).to_string()
}

fn paths_of(data: &Value) -> Vec<String> {
    data["conflictingPaths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn repo_conflict_preflight_merge_matches_git_and_leaves_the_repository_untouched() {
    let fx = Fixture::new();
    let repo = diverged(&fx, "repo", &[]);
    // `git status` may refresh the index, so it runs before the listing.
    let worktree_before = fx.git(&repo, &["status", "--porcelain=v1"]);
    let before = listing(&repo.join(".git"));
    let tmp = fx.path("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let result = fx.server(&[], &[("TMPDIR", tmp.to_str().unwrap())]).call(
        "repo.conflictPreflight",
        json!({ "repoPath": repo, "targetRef": "feat" }),
    );
    assert_eq!(listing(&repo.join(".git")), before, ".git changed");
    assert_eq!(
        fx.git(&repo, &["status", "--porcelain=v1"]),
        worktree_before
    );
    assert!(
        std::fs::read_dir(&tmp).unwrap().next().is_none(),
        "the scratch object directory is removed"
    );
    // …and it really lives under TMPDIR: without one, the prediction cannot run.
    let missing = fx.path("no-such-tmp");
    let failed = fx
        .server(&[], &[("TMPDIR", missing.to_str().unwrap())])
        .call(
            "repo.conflictPreflight",
            json!({ "repoPath": repo, "targetRef": "feat" }),
        );
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    tool_snapshot!("conflict_preflight_merge", fx, result);
    let data = &result["data"];
    assert_eq!(data["status"], "conflicts");
    assert_eq!(data["targetOid"], fx.git(&repo, &["rev-parse", "feat"]));
    assert_eq!(
        data["mergeBaseOid"],
        fx.git(&repo, &["merge-base", "main", "feat"])
    );
    assert_eq!(
        paths_of(data),
        real_merge_conflicts(&fx, &repo, "main", "feat")
    );
    assert!(!paths_of(data).contains(&"only-feat.txt".to_owned()));
}

#[test]
fn every_outcome_matches_plain_git() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "1\n2\n3\n4\n5\n6\n", "base");
    fx.git(&repo, &["branch", "behind"]);
    fx.git(&repo, &["checkout", "-q", "-b", "side"]);
    fx.commit(&repo, "a.txt", "1\nside\n3\n4\n5\n6\n", "side");
    fx.git(&repo, &["checkout", "-q", "main"]);
    fx.commit(&repo, "a.txt", "1\n2\n3\n4\n5\nmain\n", "main");
    fx.git(&repo, &["checkout", "-q", "--orphan", "orphan"]);
    fx.commit(&repo, "other.txt", "x\n", "unrelated root");
    fx.git(&repo, &["checkout", "-q", "main"]);

    let mut server = fx.server(&[], &[]);
    let mut status = |current: &str, target: &str, mode: &str| {
        let r = server.call(
            "repo.conflictPreflight",
            json!({ "repoPath": repo, "currentRef": current, "targetRef": target, "mode": mode }),
        );
        r["data"]["status"].as_str().unwrap().to_owned()
    };
    assert_eq!(status("main", "side", "merge"), "clean-merge");
    assert!(real_merge_conflicts(&fx, &repo, "main", "side").is_empty());
    assert_eq!(status("behind", "main", "merge"), "fast-forward");
    assert_eq!(status("main", "behind", "merge"), "already-up-to-date");
    assert_eq!(status("main", "main", "merge"), "already-up-to-date");
    assert_eq!(status("main", "orphan", "merge"), "unrelated-histories");
    assert_eq!(status("behind", "main", "rebase"), "fast-forward");
    assert_eq!(status("main", "behind", "rebase"), "already-up-to-date");
    assert_eq!(status("side", "main", "rebase"), "clean-merge");
    let refused = fx.git_output(&repo, &["merge", "--no-edit", "orphan"]);
    assert!(!refused.status.success(), "git refuses unrelated histories");
}

#[test]
fn rebase_reports_the_first_conflicting_commit_as_git_stops_there() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "1\n2\n3\n", "base");
    fx.git(&repo, &["checkout", "-q", "-b", "topic"]);
    fx.commit(&repo, "b.txt", "topic only\n", "topic adds b");
    let second = fx.commit(&repo, "a.txt", "1\ntopic\n3\n", "topic edits a");
    fx.commit(&repo, "a.txt", "1\ntopic again\n3\n", "topic edits a again");
    fx.git(&repo, &["checkout", "-q", "main"]);
    fx.commit(&repo, "a.txt", "1\nmain\n3\n", "main edits a");
    let before = listing(&repo.join(".git"));

    let result = fx.call(
        "repo.conflictPreflight",
        json!({ "repoPath": repo, "currentRef": "topic", "targetRef": "main", "mode": "rebase" }),
    );
    assert_eq!(listing(&repo.join(".git")), before, ".git changed");
    tool_snapshot!("conflict_preflight_rebase", fx, result);
    let data = &result["data"];
    assert_eq!(data["status"], "conflicts");
    assert_eq!(data["rebase"]["firstConflict"]["oid"], second);
    assert_eq!(data["rebase"]["firstConflict"]["position"], 2);
    assert_eq!(data["rebase"]["commitsTotal"], 3);

    // Plain git stops at the same commit with the same paths.
    fx.git(&repo, &["checkout", "-q", "topic"]);
    let out = fx.git_output(&repo, &["rebase", "main"]);
    assert!(!out.status.success());
    assert_eq!(fx.git(&repo, &["rev-parse", "REBASE_HEAD"]), second);
    assert_eq!(
        paths_of(data),
        vec![fx.git(&repo, &["diff", "--name-only", "--diff-filter=U"])]
    );
    fx.git(&repo, &["rebase", "--abort"]);
}

#[test]
fn sha256_bare_and_linked_worktree() {
    let fx = Fixture::new();
    let repo = diverged(&fx, "repo", &["--object-format=sha256"]);
    let result = fx.call(
        "repo.conflictPreflight",
        json!({ "repoPath": repo, "targetRef": "feat" }),
    );
    assert_eq!(result["data"]["status"], "conflicts");
    assert_eq!(result["data"]["currentOid"].as_str().unwrap().len(), 64);
    assert_eq!(paths_of(&result["data"]).len(), 3);

    let bare = fx.clone(&repo, "bare.git", true);
    let before = listing(&bare);
    let result = fx.call(
        "repo.conflictPreflight",
        json!({ "repoPath": bare, "currentRef": "main", "targetRef": "feat", "mode": "rebase" }),
    );
    assert_eq!(result["data"]["status"], "conflicts", "{result}");
    assert_eq!(listing(&bare), before, "bare repository changed");

    let linked = fx.path("linked");
    fx.git(
        &repo,
        &["worktree", "add", "-q", linked.to_str().unwrap(), "feat"],
    );
    let before = listing(&repo.join(".git"));
    let result = fx.call(
        "repo.conflictPreflight",
        json!({ "repoPath": linked, "targetRef": "main" }),
    );
    assert_eq!(result["data"]["status"], "conflicts");
    assert_eq!(listing(&repo.join(".git")), before);

    // The same conflict, started for real in the SHA-256 repository, read back.
    assert!(
        !fx.git_output(&repo, &["merge", "--no-edit", "feat"])
            .status
            .success()
    );
    let read = fx.call("conflict.read", json!({ "repoPath": repo }));
    let data = &read["data"];
    assert_eq!(data["conflictedFileCount"], 3, "{read}");
    assert_eq!(
        data["theirs"]["sha"],
        fx.git(&repo, &["rev-parse", "MERGE_HEAD"])
    );
    assert_eq!(
        data["files"][0]["sides"]["base"]["sha"]
            .as_str()
            .unwrap()
            .len(),
        64
    );
    assert_eq!(
        data["files"][0]["sides"]["theirs"]["content"],
        "1\nfeat\n3\n"
    );
}

#[test]
fn repository_merge_drivers_never_run() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.write(&repo, ".gitattributes", "* merge=evil\n");
    fx.commit(&repo, "a.txt", "1\n2\n3\n", "base");
    fx.git(&repo, &["checkout", "-q", "-b", "feat"]);
    fx.commit(&repo, "a.txt", "1\nfeat\n3\n", "feat");
    fx.git(&repo, &["checkout", "-q", "main"]);
    fx.commit(&repo, "a.txt", "1\n2\n3\n4\n", "main");
    let marker = fx.path("PWNED");
    fx.git(
        &repo,
        &[
            "config",
            "merge.evil.driver",
            &format!("touch {} && cp %B %A", marker.display()),
        ],
    );
    let result = fx.call(
        "repo.conflictPreflight",
        json!({ "repoPath": repo, "targetRef": "feat" }),
    );
    assert!(!marker.exists(), "the merge driver ran");
    assert_eq!(result["data"]["status"], "conflicts", "{result}");
}

#[test]
fn preflight_bad_and_hostile_input() {
    let fx = Fixture::new();
    let repo = diverged(&fx, "repo", &[]);
    let target = fx.path("clobbered");
    let mut server = fx.server(&[], &[]);
    let errors: Vec<Value> = [
        json!({ "repoPath": repo }),
        json!({ "repoPath": repo, "targetRef": format!("--output={}", target.display()) }),
        json!({ "repoPath": repo, "targetRef": "-n" }),
        json!({ "repoPath": repo, "targetRef": "feat", "currentRef": "--all" }),
        json!({ "repoPath": repo, "targetRef": "feat\nmain" }),
        json!({ "repoPath": repo, "targetRef": "feat\u{0}" }),
        json!({ "repoPath": repo, "targetRef": "../../etc" }),
        json!({ "repoPath": repo, "targetRef": "nope" }),
        json!({ "repoPath": repo, "targetRef": "feat", "mode": "octopus" }),
        json!({ "repoPath": repo, "targetRef": "feat", "maxPaths": 0 }),
        json!({ "repoPath": "relative", "targetRef": "feat" }),
    ]
    .into_iter()
    .map(|args| {
        let r = server.call("repo.conflictPreflight", args);
        assert_eq!(r["error"]["code"], -32602, "{r}");
        r["error"]["data"].clone()
    })
    .collect();
    assert!(!target.exists());
    tool_snapshot!("conflict_preflight_bad_input", fx, json!(errors));
    let capped = server.call(
        "repo.conflictPreflight",
        json!({ "repoPath": repo, "target": "feat", "maxPaths": 1 }),
    );
    assert_eq!(capped["data"]["conflictCount"], 3);
    assert_eq!(capped["data"]["conflictingPathsTruncated"], true);
    assert_eq!(paths_of(&capped["data"]).len(), 1);
}

// ------------------------------------------------------------------ conflict.read

/// Starts a merge of `feat` into `main` that conflicts in every way we classify.
fn merge_in_progress(fx: &Fixture) -> PathBuf {
    let repo = diverged(fx, "repo", &[]);
    fx.git(&repo, &["config", "merge.conflictStyle", "diff3"]);
    fx.git(&repo, &["checkout", "-q", "feat"]);
    std::fs::write(repo.join("logo.bin"), b"PNG\0feat\x01\x02").unwrap();
    std::fs::write(repo.join("latin1.txt"), b"caf\xe9 feat\n").unwrap();
    fx.git(&repo, &["add", "-A"]);
    fx.git(&repo, &["commit", "-q", "-m", "feat binary and latin-1"]);
    fx.git(&repo, &["checkout", "-q", "main"]);
    std::fs::write(repo.join("logo.bin"), b"PNG\0main\x03").unwrap();
    std::fs::write(repo.join("latin1.txt"), b"caf\xe9 main\n").unwrap();
    fx.git(&repo, &["add", "-A"]);
    fx.git(&repo, &["commit", "-q", "-m", "main binary and latin-1"]);
    let out = fx.git_output(&repo, &["merge", "--no-edit", "feat"]);
    assert!(!out.status.success());
    repo
}

#[test]
fn merge_conflict_as_data() {
    let fx = Fixture::new();
    let repo = merge_in_progress(&fx);
    let before = listing(&repo.join(".git"));
    let result = fx.call(
        "conflict.read",
        json!({ "repoPath": repo, "maxFiles": 200 }),
    );
    assert_eq!(listing(&repo.join(".git")), before, ".git changed");
    tool_snapshot!("conflict_read_merge", fx, result);
    let data = &result["data"];
    assert_eq!(data["inConflict"], true);
    assert_eq!(data["operation"], "merge");
    assert_eq!(data["ours"]["sha"], fx.git(&repo, &["rev-parse", "HEAD"]));
    assert_eq!(
        data["theirs"]["sha"],
        fx.git(&repo, &["rev-parse", "MERGE_HEAD"])
    );
    assert_eq!(data["theirs"]["subject"], "feat binary and latin-1");
    // Kinds agree with the status letters git prints.
    let porcelain = fx.git(&repo, &["status", "--porcelain=v1"]);
    for file in data["files"].as_array().unwrap() {
        let path = file["path"].as_str().unwrap();
        let xy = porcelain
            .lines()
            .find(|l| &l[3..] == path)
            .map(|l| &l[..2])
            .unwrap();
        let expected = match xy {
            "UU" => "both-modified",
            "AA" => "both-added",
            "UD" => "deleted-by-them",
            "DU" => "deleted-by-us",
            other => panic!("unexpected {other}"),
        };
        assert_eq!(file["kind"], expected, "{path}");
    }
    assert_eq!(
        data["conflictedFileCount"],
        porcelain
            .lines()
            .filter(|l| l.starts_with("UU")
                || l.starts_with("AA")
                || l.starts_with("UD")
                || l.starts_with("DU"))
            .count()
    );
    let file = |name: &str| {
        data["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == name)
            .unwrap()
            .clone()
    };
    let a = file("a.txt");
    assert_eq!(a["sides"]["base"]["content"], "1\n2\n3\n");
    assert_eq!(a["sides"]["ours"]["content"], "1\nmain\n3\n");
    assert_eq!(a["sides"]["theirs"]["content"], "1\nfeat\n3\n");
    let region = &a["regions"][0];
    let lines: Vec<String> = std::fs::read_to_string(repo.join("a.txt"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let at = |n: &Value| lines[n.as_u64().unwrap() as usize - 1].clone();
    assert!(at(&region["startLine"]).starts_with("<<<<<<<"));
    assert!(at(&region["baseLine"]).starts_with("|||||||"));
    assert_eq!(at(&region["sepLine"]), "=======");
    assert!(at(&region["endLine"]).starts_with(">>>>>>>"));
    assert_eq!(file("logo.bin")["sides"]["ours"]["binary"], true);
    assert!(file("logo.bin")["sides"]["ours"].get("content").is_none());
    let latin = &file("latin1.txt")["sides"]["theirs"];
    assert_eq!(latin["encoding"], "non-utf8");
    assert_eq!(latin["contentBase64"], "Y2Fm6SBmZWF0Cg==");
    assert!(file("del.txt")["sides"].get("theirs").is_none());
}

#[test]
fn caps_on_files_and_bytes() {
    let fx = Fixture::new();
    let repo = merge_in_progress(&fx);
    let result = fx.call(
        "conflict.read",
        json!({ "repoPath": repo, "maxFiles": 1, "maxBytesPerSide": 3 }),
    );
    let data = &result["data"];
    assert_eq!(data["files"].as_array().unwrap().len(), 1);
    assert_eq!(data["fileListTruncated"], true);
    assert_eq!(data["conflictedFileCount"], 5);
    let ours = &data["files"][0]["sides"]["ours"];
    assert_eq!(ours["content"], "1\nm");
    assert_eq!(ours["truncated"], true);
    assert_eq!(ours["size"], 9);
}

#[test]
fn rebase_cherry_pick_and_none() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "1\n2\n3\n", "base");
    fx.git(&repo, &["checkout", "-q", "-b", "topic"]);
    let pick = fx.commit(&repo, "a.txt", "1\ntopic\n3\n", "topic edits a");
    fx.git(&repo, &["checkout", "-q", "main"]);
    fx.commit(&repo, "a.txt", "1\nmain\n3\n", "main edits a");

    let none = fx.call("conflict.read", json!({ "repoPath": repo }));
    assert_eq!(none["data"]["inConflict"], false);
    assert_eq!(none["data"]["operation"], json!(null));
    assert!(none["data"]["hint"].is_string());

    assert!(
        !fx.git_output(&repo, &["cherry-pick", &pick])
            .status
            .success()
    );
    let picked = fx.call("conflict.read", json!({ "repoPath": repo }));
    assert_eq!(picked["data"]["operation"], "cherry-pick");
    assert_eq!(picked["data"]["theirs"]["sha"], pick);
    assert_eq!(picked["data"]["theirs"]["subject"], "topic edits a");
    fx.git(&repo, &["cherry-pick", "--abort"]);

    fx.git(&repo, &["checkout", "-q", "topic"]);
    assert!(!fx.git_output(&repo, &["rebase", "main"]).status.success());
    let rebasing = tool_snapshot!(
        "conflict_read_rebase",
        fx,
        "conflict.read",
        json!({ "repoPath": repo })
    );
    assert_eq!(rebasing["data"]["operation"], "rebase");
    assert_eq!(rebasing["data"]["theirs"]["sha"], pick);
    assert_eq!(
        rebasing["data"]["ours"]["sha"],
        fx.git(&repo, &["rev-parse", "main"])
    );
    // Resolved but not continued: still a rebase, no longer a conflict.
    fx.write(&repo, "a.txt", "resolved\n");
    fx.git(&repo, &["add", "a.txt"]);
    let resolved = fx.call("conflict.read", json!({ "repoPath": repo }));
    assert_eq!(resolved["data"]["inConflict"], false);
    assert_eq!(resolved["data"]["operation"], "rebase");
}

#[test]
fn read_bad_input_and_bare() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "x\n", "base");
    let bare = fx.clone(&repo, "bare.git", true);
    let mut server = fx.server(&[], &[]);
    let errors: Vec<Value> = [
        json!({ "repoPath": repo, "maxFiles": 0 }),
        json!({ "repoPath": repo, "maxFiles": 201 }),
        json!({ "repoPath": repo, "maxBytesPerSide": 1048577 }),
        json!({ "repoPath": repo, "maxBytesPerSide": "-n" }),
        json!({ "repoPath": bare }),
    ]
    .into_iter()
    .map(|args| server.call("conflict.read", args)["error"].clone())
    .collect();
    tool_snapshot!("conflict_read_bad_input", fx, json!(errors));
}

#[test]
fn rebase_prediction_is_bounded_to_a_hundred_commits() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let base = fx.commit(&repo, "a.txt", "base\n", "base");
    fx.commit(&repo, "a.txt", "main moved\n", "main");
    // 101 topic commits, each adding its own file, written in one fast-import run.
    let mut stream = String::new();
    for i in 0..101 {
        stream.push_str(&format!(
            "commit refs/heads/topic\ncommitter T <t@example.com> {} +0000\ndata 4\nc{i:03}\n",
            1_767_300_000 + i
        ));
        if i == 0 {
            stream.push_str(&format!("from {base}\n"));
        }
        stream.push_str(&format!("M 100644 inline f{i:03}.txt\ndata 2\nx\n\n"));
    }
    let mut child = std::process::Command::new("git")
        .current_dir(&repo)
        .args(["fast-import", "--quiet"])
        .envs(fx.env())
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stream.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    let result = fx.call(
        "repo.conflictPreflight",
        json!({ "repoPath": repo, "currentRef": "topic", "targetRef": "main", "mode": "rebase" }),
    );
    let data = &result["data"];
    assert_eq!(data["status"], "undetermined", "{result}");
    assert_eq!(data["rebase"]["commitsTotal"], 101);
    assert_eq!(data["rebase"]["commitsReplayed"], 100);
    assert_eq!(data["rebase"]["commitsTruncated"], true);
}

#[test]
fn awkward_paths_symlinks_and_submodule_sides() {
    use std::os::unix::ffi::OsStrExt;
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let odd = std::ffi::OsStr::from_bytes(b"caf\xe9 new\nline.txt");
    std::fs::write(repo.join(odd), "base\n").unwrap();
    fx.commit(&repo, "link", "base\n", "base");
    fx.git(&repo, &["checkout", "-q", "-b", "feat"]);
    std::fs::write(repo.join(odd), "feat\n").unwrap();
    fx.commit(&repo, "link", "feat\n", "feat");
    fx.git(&repo, &["checkout", "-q", "main"]);
    std::fs::write(repo.join(odd), "main\n").unwrap();
    fx.commit(&repo, "link", "main\n", "main");

    let predicted = fx.call(
        "repo.conflictPreflight",
        json!({ "repoPath": repo, "targetRef": "feat" }),
    );
    let paths = &predicted["data"]["conflictingPaths"];
    let odd_entry = paths
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p.get("pathEncoding").is_some())
        .expect("the non-UTF-8 path is listed");
    assert_eq!(odd_entry["pathBytesB64"], "Y2Fm6SBuZXcKbGluZS50eHQ=");

    assert!(
        !fx.git_output(&repo, &["merge", "--no-edit", "feat"])
            .status
            .success()
    );
    // The working file is swapped for a symlink leading out of the repository: its
    // target must not be read.
    let secret = fx.path("secret.txt");
    std::fs::write(&secret, "<<<<<<< secret\n=======\n>>>>>>> secret\n").unwrap();
    std::fs::remove_file(repo.join("link")).unwrap();
    std::os::unix::fs::symlink(&secret, repo.join("link")).unwrap();
    let result = fx.call("conflict.read", json!({ "repoPath": repo }));
    let files = result["data"]["files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    let link = files.iter().find(|f| f["path"] == "link").unwrap();
    assert_eq!(link["workingFile"], "not a regular file");
    assert_eq!(link["regions"], json!([]));
    let odd = files.iter().find(|f| f["path"] != "link").unwrap();
    assert_eq!(odd["pathEncoding"], "non-utf8");
    assert_eq!(odd["regions"][0]["startLine"], 1);
}

#[test]
fn am_in_progress() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "1\n2\n3\n", "base");
    fx.git(&repo, &["checkout", "-q", "-b", "topic"]);
    fx.commit(&repo, "a.txt", "1\ntopic\n3\n", "topic edits a");
    let patch = fx.git(
        &repo,
        &["format-patch", "-1", "-o", fx.root().to_str().unwrap()],
    );
    fx.git(&repo, &["checkout", "-q", "main"]);
    fx.commit(&repo, "a.txt", "1\nmain\n3\n", "main edits a");
    assert!(
        !fx.git_output(&repo, &["am", "-3", patch.trim()])
            .status
            .success()
    );
    let result = fx.call("conflict.read", json!({ "repoPath": repo }));
    let data = &result["data"];
    assert_eq!(data["inConflict"], true, "{result}");
    assert_eq!(data["operation"], "am");
    assert!(data.get("theirs").is_none());
    assert_eq!(data["files"][0]["kind"], "both-modified");
}

#[test]
fn rename_and_directory_conflicts_match_git() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.write(&repo, "orig.txt", "a\nb\nc\nd\ne\n");
    fx.commit(&repo, "dir/f", "x\n", "base");
    fx.git(&repo, &["checkout", "-q", "-b", "feat"]);
    fx.git(&repo, &["mv", "orig.txt", "feat-name.txt"]);
    fx.git(&repo, &["rm", "-rq", "dir"]);
    fx.commit(&repo, "dir", "now a file\n", "feat");
    fx.git(&repo, &["checkout", "-q", "main"]);
    fx.git(&repo, &["mv", "orig.txt", "main-name.txt"]);
    fx.commit(&repo, "dir/g", "y\n", "main");
    let result = fx.call(
        "repo.conflictPreflight",
        json!({ "repoPath": repo, "targetRef": "feat" }),
    );
    let data = &result["data"];
    assert_eq!(data["status"], "conflicts");
    let ours: Vec<String> = paths_of(data)
        .into_iter()
        .filter(|p| !p.starts_with("dir~"))
        .collect();
    let git: Vec<String> = real_merge_conflicts(&fx, &repo, "main", "feat");
    assert_eq!(data["conflictCount"].as_u64().unwrap() as usize, git.len());
    assert_eq!(
        ours,
        git.into_iter()
            .filter(|p| !p.starts_with("dir~"))
            .collect::<Vec<_>>()
    );
    let kinds: Vec<_> = data["conflictingPaths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["kind"].clone(), p["conflictTypes"].clone()))
        .collect();
    assert!(kinds.contains(&(json!("both-deleted"), json!(["rename/rename"]))));
    assert_eq!(data["relatedPaths"][0]["path"], "dir");
    assert_eq!(
        data["relatedPaths"][0]["conflictTypes"],
        json!(["file/directory"])
    );
}

/// Really rebases `current` onto `target` in a scratch clone: the commit git stopped at,
/// or `None` when the rebase completed.
fn real_rebase_stop(fx: &Fixture, repo: &Path, current: &str, target: &str) -> Option<String> {
    let clone = fx.path(&format!("scratch-{}", rand_suffix()));
    fx.git(
        repo.parent().unwrap(),
        &[
            "clone",
            "-q",
            repo.to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    );
    fx.git(
        &clone,
        &["checkout", "-q", "-B", "cur", &format!("origin/{current}")],
    );
    let out = fx.git_output(&clone, &["rebase", &format!("origin/{target}")]);
    (!out.status.success()).then(|| fx.git(&clone, &["rev-parse", "REBASE_HEAD"]))
}

#[test]
fn rebase_after_merging_the_target_replays_the_branch_like_git() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "1\n2\n3\n", "base");
    fx.git(&repo, &["checkout", "-q", "-b", "topic"]);
    let own = fx.commit(&repo, "a.txt", "1\ntopic\n3\n", "topic edits a");
    fx.git(&repo, &["checkout", "-q", "-b", "tidy", "main"]);
    fx.commit(&repo, "b.txt", "tidy\n", "tidy adds b");
    fx.git(&repo, &["checkout", "-q", "main"]);
    fx.commit(&repo, "a.txt", "1\nmain\n3\n", "main edits a");
    // Both branches took main in with a merge; main is now reachable only through it.
    for branch in ["topic", "tidy"] {
        fx.git(&repo, &["checkout", "-q", branch]);
        fx.git(&repo, &["merge", "-q", "--no-edit", "-X", "ours", "main"]);
    }
    fx.git(&repo, &["checkout", "-q", "main"]);

    let predict = |current: &str| {
        fx.call(
            "repo.conflictPreflight",
            json!({ "repoPath": repo, "currentRef": current, "targetRef": "main", "mode": "rebase" }),
        )["data"]
            .clone()
    };
    let topic = predict("topic");
    assert_eq!(
        real_rebase_stop(&fx, &repo, "topic", "main"),
        Some(own.clone())
    );
    assert_eq!(topic["status"], "conflicts", "{topic:#}");
    assert_eq!(topic["rebase"]["firstConflict"]["oid"], own);
    assert_eq!(topic["rebase"]["commitsTotal"], 1);

    let tidy = predict("tidy");
    assert_eq!(real_rebase_stop(&fx, &repo, "tidy", "main"), None);
    assert_eq!(tidy["status"], "clean-merge", "{tidy:#}");
    assert_eq!(tidy["rebase"]["commitsTotal"], 1);

    // A linear branch that already holds main is up to date, for git and for us.
    fx.git(&repo, &["checkout", "-q", "-b", "ahead", "main"]);
    fx.commit(&repo, "c.txt", "c\n", "ahead adds c");
    assert_eq!(predict("ahead")["status"], "already-up-to-date");
    let out = fx.git_output(&repo, &["rebase", "main"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("up to date"));
}

#[test]
fn am_stopped_without_conflicts_is_not_called_resolved() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "1\n2\n3\n", "base");
    fx.git(&repo, &["checkout", "-q", "-b", "topic"]);
    fx.commit(&repo, "a.txt", "1\ntopic\n3\n", "topic edits a");
    let patch = fx.git(
        &repo,
        &["format-patch", "-1", "-o", fx.root().to_str().unwrap()],
    );
    fx.git(&repo, &["checkout", "-q", "main"]);
    fx.commit(&repo, "a.txt", "1\nmain\n3\n", "main edits a");
    // Without -3 the patch simply does not apply: git stops with nothing unmerged.
    let out = fx.git_output(&repo, &["am", patch.trim()]);
    assert!(!out.status.success());
    assert_eq!(fx.git(&repo, &["ls-files", "-u"]), "");
    assert!(String::from_utf8_lossy(&out.stderr).contains("patch does not apply"));

    let data = fx.call("conflict.read", json!({ "repoPath": repo }))["data"].clone();
    assert_eq!(data["inConflict"], false);
    assert_eq!(data["operation"], "am");
    let hint = data["hint"].as_str().unwrap();
    assert!(!hint.contains("resolved"), "{hint}");
    assert!(hint.contains("did not apply"), "{hint}");

    // Once the user applied it by hand and staged it, continuing is the next step.
    fx.write(&repo, "a.txt", "1\ntopic\n3\n");
    fx.git(&repo, &["add", "a.txt"]);
    let data = fx.call("conflict.read", json!({ "repoPath": repo }))["data"].clone();
    assert!(
        data["hint"].as_str().unwrap().contains("git am --continue"),
        "{data}"
    );
}
