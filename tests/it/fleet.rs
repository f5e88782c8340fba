//! `fleet.digest` and `fleet.radar` against sets of real repositories.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::Fixture;
use crate::tool_snapshot;

/// 2026-01-01T00:00:00Z, the fixture clock's start, in milliseconds.
const START_MS: i64 = 1_767_225_600_000;

fn events(result: &Value) -> &Vec<Value> {
    result["data"]["events"].as_array().expect("events")
}

/// `(newOid, message)` of a ref's reflog as git shows it, newest first.
fn git_reflog(fx: &Fixture, repo: &Path, refname: &str) -> Vec<(String, String)> {
    let out = fx.git(repo, &["log", "-g", "--format=%H%x09%gs", refname, "--"]);
    out.lines()
        .map(|l| {
            // An update without a message ends in a tab, which `git` output trimming drops.
            let (oid, msg) = l.split_once('\t').unwrap_or((l, ""));
            (oid.to_owned(), msg.to_owned())
        })
        .collect()
}

fn digest_of(result: &Value, repo: &Path, refname: &str) -> Vec<(String, String)> {
    events(result)
        .iter()
        .filter(|e| e["repoPath"] == json!(repo) && e["ref"] == refname)
        .map(|e| {
            (
                e["newOid"].as_str().unwrap().to_owned(),
                e["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn is_ancestor(fx: &Fixture, repo: &Path, old: &str, new: &str) -> bool {
    fx.git_output(repo, &["merge-base", "--is-ancestor", old, new])
        .status
        .success()
}

/// A repository with commits, an amend, resets back and forth, a checkout, a merge and
/// a rebase.
fn busy_repo(fx: &Fixture, rel: &str, flags: &[&str]) -> PathBuf {
    let repo = fx.init(rel, flags);
    fx.commit(&repo, "a.txt", "1\n", "first");
    fx.commit(&repo, "a.txt", "2\n", "second");
    fx.git(&repo, &["commit", "-q", "--amend", "-m", "second, amended"]);
    fx.commit(&repo, "a.txt", "3\n", "third");
    fx.git(&repo, &["reset", "-q", "--hard", "HEAD~1"]);
    fx.git(&repo, &["reset", "-q", "--hard", "HEAD@{1}"]);
    fx.git(&repo, &["checkout", "-q", "-b", "topic", "HEAD~1"]);
    fx.commit(&repo, "b.txt", "topic\n", "topic work");
    fx.git(&repo, &["rebase", "-q", "main"]);
    fx.git(&repo, &["checkout", "-q", "main"]);
    fx.git(&repo, &["merge", "-q", "--no-edit", "--no-ff", "topic"]);
    repo
}

#[test]
fn digest_matches_git_reflog() {
    let fx = Fixture::new();
    let repo = busy_repo(&fx, "busy", &[]);
    let result = fx.call(
        "fleet.digest",
        json!({ "since": "2026-01-01T00:00:00Z", "repoPaths": [repo] }),
    );
    for refname in ["HEAD", "refs/heads/main", "refs/heads/topic"] {
        assert_eq!(
            digest_of(&result, &repo, refname),
            git_reflog(&fx, &repo, refname),
            "{refname}"
        );
    }
    let data = &result["data"];
    assert_eq!(data["eventCount"], data["eventsTotal"]);
    assert_eq!(data["truncated"], false);
    assert_eq!(data["repos"][0]["events"], data["eventCount"]);

    // Newest first, and `rewrote` agrees with git's ancestry wherever a move is not a
    // checkout (which only moves HEAD between refs).
    let times: Vec<i64> = events(&result)
        .iter()
        .map(|e| e["atMs"].as_i64().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");
    for e in events(&result) {
        let (Some(old), Some(new)) = (e["oldOid"].as_str(), e["newOid"].as_str()) else {
            assert_eq!(e["rewrote"], false, "{e}");
            continue;
        };
        if e["action"] == "checkout" || old == new {
            assert_eq!(e["rewrote"], false, "{e}");
        } else {
            assert_eq!(
                e["rewrote"],
                !is_ancestor(&fx, &repo, old, new),
                "rewrote disagrees with git: {e}"
            );
        }
    }
    let shown: Vec<Value> = events(&result)
        .iter()
        .map(|e| {
            json!([
                e["ref"],
                e["action"],
                e["rewrote"],
                e["message"],
                e["atMs"].as_i64().unwrap() - START_MS,
                e["identity"]
            ])
        })
        .collect();
    tool_snapshot!("fleet_digest_busy", fx, json!(shown));
}

#[test]
fn window_and_truncation() {
    let fx = Fixture::new();
    let repo = busy_repo(&fx, "busy", &[]);
    let other = fx.init("other", &[]);
    fx.commit(&other, "x", "x\n", "other repo");
    let mut server = fx.server(&[], &[]);
    let all = server.call(
        "fleet.digest",
        json!({ "since": 0, "repoPaths": [&repo, &other] }),
    );
    let total = all["data"]["eventsTotal"].as_u64().unwrap();
    let times: Vec<i64> = events(&all)
        .iter()
        .map(|e| e["atMs"].as_i64().unwrap())
        .collect();
    assert_eq!(times.len() as u64, total);

    // A window by epoch milliseconds and by RFC 3339 text with an offset.
    let since = times[times.len() / 2];
    let until = times[2];
    // The same instant written in another zone.
    let until_text = jiff::Timestamp::from_millisecond(until + 3_600_000)
        .unwrap()
        .to_string()
        .replace('Z', "+01:00");
    let window = server.call(
        "fleet.digest",
        json!({ "since": since, "until": until_text, "repoPaths": [&repo, &other] }),
    );
    let expected = times
        .iter()
        .filter(|t| **t >= since && **t <= until)
        .count();
    assert_eq!(events(&window).len(), expected);
    assert!(events(&window).iter().all(|e| {
        let t = e["atMs"].as_i64().unwrap();
        t >= since && t <= until
    }));
    assert_eq!(window["data"]["untilMs"], json!(until));

    let capped = server.call(
        "fleet.digest",
        json!({ "since": 0, "repoPaths": [&repo, &other], "maxEvents": 3 }),
    );
    assert_eq!(events(&capped).len(), 3);
    assert_eq!(capped["data"]["truncated"], true);
    assert_eq!(capped["data"]["eventsTotal"], json!(total));
    assert_eq!(
        events(&capped)
            .iter()
            .map(|e| e["atMs"].clone())
            .collect::<Vec<_>>(),
        events(&all)[..3]
            .iter()
            .map(|e| e["atMs"].clone())
            .collect::<Vec<_>>(),
        "the newest events are the ones kept"
    );

    let heads = server.call(
        "fleet.digest",
        json!({ "since": 0, "repoPaths": [&repo], "refs": "head" }),
    );
    assert!(events(&heads).iter().all(|e| e["ref"] == "HEAD"));
    assert_eq!(events(&heads).len(), git_reflog(&fx, &repo, "HEAD").len());
    let branches = server.call(
        "fleet.digest",
        json!({ "since": 0, "repoPaths": [&repo], "refs": "branches" }),
    );
    assert!(events(&branches).iter().all(|e| e["ref"] != "HEAD"));
    assert_eq!(
        events(&branches).len(),
        git_reflog(&fx, &repo, "main").len() + git_reflog(&fx, &repo, "topic").len()
    );
}

#[test]
fn reftable_sha256_worktree_and_unreadable_repositories() {
    let fx = Fixture::new();
    let reftable = busy_repo(&fx, "reftable", &["--ref-format=reftable"]);
    let sha256 = busy_repo(&fx, "sha256", &["--object-format=sha256"]);
    let linked = fx.path("linked");
    fx.git(
        &sha256,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "side",
            linked.to_str().unwrap(),
        ],
    );
    fx.commit(&linked, "side.txt", "side\n", "side work");
    let plain = fx.path("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let unborn = fx.init("unborn", &[]);
    let result = fx.call(
        "fleet.digest",
        json!({
            "since": 0,
            "repoPaths": [&reftable, &sha256, &linked, plain, fx.path("missing"), unborn],
        }),
    );
    for refname in ["HEAD", "refs/heads/main", "refs/heads/topic"] {
        assert_eq!(
            digest_of(&result, &reftable, refname),
            git_reflog(&fx, &reftable, refname),
            "reftable {refname}"
        );
        assert_eq!(
            digest_of(&result, &sha256, refname),
            git_reflog(&fx, &sha256, refname),
            "sha256 {refname}"
        );
    }
    // A linked worktree has its own HEAD and shares the branches.
    assert_eq!(
        digest_of(&result, &linked, "HEAD"),
        git_reflog(&fx, &linked, "HEAD")
    );
    assert_eq!(
        digest_of(&result, &linked, "refs/heads/side"),
        git_reflog(&fx, &linked, "side")
    );
    let sha = events(&result)
        .iter()
        .find(|e| e["repoPath"] == json!(sha256))
        .unwrap();
    assert_eq!(sha["newOid"].as_str().unwrap().len(), 64);
    // Reftable entries carry the previous value too (from the next older entry).
    let amend = events(&result)
        .iter()
        .find(|e| e["repoPath"] == json!(reftable) && e["action"] == "amend" && e["ref"] == "HEAD")
        .unwrap();
    assert_eq!(amend["rewrote"], true);
    assert!(amend["oldOid"].is_string());
    let repos: Vec<Value> = result["data"]["repos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| json!([r["repoPath"], r["error"]]))
        .collect();
    tool_snapshot!("fleet_digest_repos", fx, json!(repos));
}

#[test]
fn registered_repositories_inside_the_allowed_roots() {
    let fx = Fixture::new();
    let inside = fx.init("allowed/inside", &[]);
    fx.commit(&inside, "a", "a\n", "inside");
    let outside = fx.init("elsewhere/outside", &[]);
    fx.commit(&outside, "a", "a\n", "outside");
    let repos = fx.run_dir().join("repos");
    std::fs::create_dir_all(&repos).unwrap();
    std::fs::write(repos.join("1.path"), format!("{}\n", inside.display())).unwrap();
    std::fs::write(repos.join("2.path"), outside.display().to_string()).unwrap();
    std::fs::write(repos.join("notes.txt"), inside.display().to_string()).unwrap();
    std::fs::write(repos.join("3.path"), "relative/path").unwrap();

    let root = fx.path("allowed").display().to_string();
    let mut server = fx.server(&[], &[("FLUXGIT_MCP_ALLOWED_ROOTS", &root)]);
    let result = server.call("fleet.digest", json!({ "since": "2026-01-01" }));
    assert_eq!(result["data"]["repoSource"], "registered");
    assert_eq!(
        result["data"]["repos"],
        json!([{ "repoPath": inside, "events": 2 }])
    );
    assert!(
        events(&result)
            .iter()
            .all(|e| e["repoPath"] == json!(inside)),
        "{result}"
    );
    // Without roots every registered repository is read.
    let open = fx.call("fleet.digest", json!({ "since": "2026-01-01" }));
    assert_eq!(open["data"]["repos"].as_array().unwrap().len(), 2);
    // Named explicitly, a repository outside the roots is refused beside the others.
    let named = server.call(
        "fleet.digest",
        json!({ "since": 0, "repoPaths": [&inside, &outside] }),
    );
    assert_eq!(
        named["data"]["repos"][1]["error"],
        "is outside the allowed roots"
    );
}

#[test]
fn symlinked_reflogs_are_not_followed() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a", "a\n", "first");
    let secret = fx.path("secret-log");
    std::fs::write(
        &secret,
        format!(
            "{} {} Secret <s@example.com> 1767225600 +0000\tcommit: secret\n",
            "0".repeat(40),
            "1".repeat(40)
        ),
    )
    .unwrap();
    std::os::unix::fs::symlink(&secret, repo.join(".git/logs/refs/heads/linked")).unwrap();
    let result = fx.call("fleet.digest", json!({ "since": 0, "repoPaths": [repo] }));
    assert!(!result.to_string().contains("secret"), "{result}");
    assert_eq!(result["data"]["eventCount"], 2);

    // A damaged reflog is reported beside the repository, never guessed around.
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .open(repo.join(".git/logs/HEAD"))
        .unwrap();
    std::io::Write::write_all(&mut log, b"not a reflog line\n").unwrap();
    let damaged = fx.call("fleet.digest", json!({ "since": 0, "repoPaths": [repo] }));
    let error = damaged["data"]["repos"][0]["error"].as_str().unwrap();
    assert!(
        error.starts_with("HEAD reflog: unexpected git output at byte "),
        "{error}"
    );
    assert_eq!(damaged["data"]["eventCount"], 0);
}

#[test]
fn digest_bad_input() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let many: Vec<String> = (0..201).map(|i| format!("/tmp/r{i}")).collect();
    let mut server = fx.server(&[], &[]);
    let errors: Vec<_> = [
        json!({}),
        json!({ "since": "yesterday" }),
        json!({ "since": "2026-01-01T00:00:00" }),
        json!({ "since": -5 }),
        json!({ "since": "2026-01-01", "until": "2025-01-01", "repoPaths": [&repo] }),
        json!({ "since": 0, "repoPaths": [&repo, "relative/repo"] }),
        json!({ "since": 0, "repoPaths": ["/ok", "--output=/tmp/x"] }),
        json!({ "since": 0, "repoPaths": ["/a\nb"] }),
        json!({ "since": 0, "repoPaths": many }),
        json!({ "since": 0, "repoPaths": [] }),
        json!({ "since": 0, "maxEvents": 1001 }),
        json!({ "since": 0, "refs": "tags" }),
    ]
    .into_iter()
    .map(|args| {
        let result = server.call("fleet.digest", args);
        assert_eq!(result["error"]["code"], -32602, "{result}");
        result["error"]["data"].clone()
    })
    .collect();
    tool_snapshot!("fleet_digest_bad_input", fx, json!(errors));
}

/// A set of clones of one origin, one per radar state.
struct Fleet {
    fx: Fixture,
    origin: PathBuf,
    seed: PathBuf,
}

impl Fleet {
    fn new() -> Fleet {
        let fx = Fixture::new();
        let origin = fx.path("origin.git");
        std::fs::create_dir_all(&origin).unwrap();
        fx.git(&origin, &["init", "-q", "--bare"]);
        let seed = fx.init("seed", &[]);
        fx.commit(&seed, "shared.txt", "base\n", "base");
        fx.git(
            &seed,
            &["remote", "add", "origin", origin.to_str().unwrap()],
        );
        fx.git(&seed, &["push", "-q", "-u", "origin", "main"]);
        Fleet { fx, origin, seed }
    }

    fn clone(&self, name: &str) -> PathBuf {
        let dest = self.fx.path(name);
        self.fx.git(
            &self.fx.root(),
            &[
                "clone",
                "-q",
                self.origin.to_str().unwrap(),
                dest.to_str().unwrap(),
            ],
        );
        dest
    }

    /// Publishes a new commit on origin's main from the seed.
    fn advance_origin(&self, content: &str) {
        self.fx
            .commit(&self.seed, "shared.txt", content, "upstream change");
        self.fx.git(&self.seed, &["push", "-q", "origin", "main"]);
    }
}

/// Every file of a repository's git directory with its size and modification time: a
/// read must leave all of them as they were.
fn git_files(dir: &Path) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.join(".git")];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(d).unwrap().flatten() {
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                out.push((entry.path(), meta.len(), meta.modified().unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn radar_ranks_every_state() {
    let fleet = Fleet::new();
    let fx = &fleet.fx;
    let clean = fleet.clone("clean");
    let dirty = fleet.clone("dirty");
    fx.write(&dirty, "new.txt", "new\n");
    let ahead = fleet.clone("ahead");
    fx.commit(&ahead, "mine.txt", "mine\n", "local work");
    let behind = fleet.clone("behind");
    let diverged = fleet.clone("diverged");
    fx.commit(&diverged, "other.txt", "other\n", "local, no overlap");
    let clash = fleet.clone("clash");
    fx.commit(&clash, "shared.txt", "mine\n", "local, overlapping");
    fleet.advance_origin("theirs\n");
    for repo in [&behind, &diverged, &clash] {
        fx.git(repo, &["fetch", "-q"]);
    }
    let conflicted = fleet.clone("conflicted");
    fx.git(&conflicted, &["checkout", "-q", "-b", "feature", "HEAD~1"]);
    fx.commit(&conflicted, "shared.txt", "feature\n", "feature change");
    let merge = fx.git_output(&conflicted, &["merge", "-q", "main"]);
    assert!(!merge.status.success(), "the merge must stop on a conflict");
    let lonely = fx.init("lonely", &[]);
    fx.commit(&lonely, "a", "a\n", "no upstream");
    let reftable = fx.init("reftable", &["--ref-format=reftable"]);
    fx.commit(&reftable, "a", "a\n", "reftable");
    let sha256 = fx.init("sha256", &["--object-format=sha256"]);
    fx.commit(&sha256, "a", "a\n", "sha256");
    let plain = fx.path("plain");
    std::fs::create_dir_all(&plain).unwrap();

    let clash_files = git_files(&clash);
    let diverged_files = git_files(&diverged);
    let dirty_files = git_files(&dirty);
    let all = [
        &clean,
        &dirty,
        &ahead,
        &behind,
        &diverged,
        &clash,
        &conflicted,
        &lonely,
        &reftable,
        &sha256,
        &plain,
        &fleet.origin,
    ];
    let result = fx.call(
        "fleet.radar",
        json!({
            "repositories": [{ "repoPath": clean, "repoId": "r-1", "label": "Clean one" }],
            "repoPaths": all[1..],
        }),
    );
    let data = &result["data"];
    let status: Vec<(String, String)> = data["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                Path::new(e["repoPath"].as_str().unwrap())
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
                e["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected = [
        ("clean", "clean"),
        ("dirty", "local_changes"),
        ("ahead", "ahead"),
        ("behind", "behind"),
        ("diverged", "divergent"),
        ("clash", "potential_conflict"),
        ("conflicted", "conflict"),
        ("lonely", "no_upstream"),
        ("reftable", "no_upstream"),
        ("sha256", "no_upstream"),
        ("plain", "unknown"),
        ("origin.git", "unknown"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(status, expected);

    // Ahead and behind are git's own counts against the cached upstream.
    for (i, repo) in [&ahead, &behind, &diverged, &clash].into_iter().enumerate() {
        let counts = fx.git(
            repo,
            &["rev-list", "--left-right", "--count", "HEAD...@{u}"],
        );
        let entry = &data["entries"][i + 2];
        assert_eq!(
            format!("{}\t{}", entry["ahead"], entry["behind"]),
            counts,
            "{}",
            repo.display()
        );
    }
    // The merge prediction names the conflicting path and leaves no object behind.
    assert_eq!(
        data["entries"][5]["potentialConflictPaths"],
        json!(["shared.txt"])
    );
    assert_eq!(data["entries"][5]["potentialConflictTarget"], "origin/main");
    assert_eq!(data["entries"][4]["potentialConflictActive"], false);
    assert_eq!(git_files(&clash), clash_files);
    assert_eq!(git_files(&diverged), diverged_files);
    assert_eq!(git_files(&dirty), dirty_files);
    assert_eq!(data["entries"][6]["conflictOperation"], "merge");
    assert_eq!(data["network"]["fetchPerformed"], false);

    let ranked: Vec<&str> = data["attentionStack"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        ranked,
        [
            "conflict",
            "potential_conflict",
            "divergent",
            "local_changes",
            "behind",
            "ahead",
            "no_upstream",
            "no_upstream",
            "no_upstream",
            "unknown",
            "unknown"
        ]
    );
    tool_snapshot!("fleet_radar_states", fx, strip_times(result.clone()));
}

/// Removes what changes from run to run besides paths and ids.
fn strip_times(mut value: Value) -> Value {
    let data = &mut value["data"];
    data["elapsedMs"] = json!("[MS]");
    for entry in data["entries"].as_array_mut().unwrap() {
        entry["elapsedMs"] = json!("[MS]");
        if entry["lastCommitTimestamp"].is_i64() {
            entry["lastCommitTimestamp"] = json!("[TIME]");
        }
    }
    value
}

#[test]
fn radar_bounds_roots_and_in_progress_operations() {
    let fleet = Fleet::new();
    let fx = &fleet.fx;
    let a = fleet.clone("allowed/a");
    let b = fleet.clone("allowed/b");
    let outside = fleet.clone("outside");
    // A rebase stopped for editing: nothing conflicts, but the work is not finished.
    fx.commit(&b, "x", "x\n", "to edit");
    fx.git(
        &b,
        &[
            "-c",
            "sequence.editor=sed -i s/^pick/edit/",
            "rebase",
            "-q",
            "-i",
            "HEAD~1",
        ],
    );
    let linked = fx.path("allowed/linked");
    fx.git(
        &a,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "wt",
            linked.to_str().unwrap(),
        ],
    );
    let unborn = fx.init("allowed/unborn", &[]);
    let root = fx.path("allowed").display().to_string();
    let mut server = fx.server(&[], &[("FLUXGIT_MCP_ALLOWED_ROOTS", &root)]);
    let result = server.call(
        "fleet.radar",
        json!({ "repoPaths": [&a, &b, &outside, &linked, &unborn], "repoPath": &a }),
    );
    let entries = result["data"]["entries"].as_array().unwrap();
    assert_eq!(result["data"]["requestedCount"], 5, "duplicates count once");
    assert_eq!(entries[3]["branch"], "wt");
    assert_eq!(entries[3]["status"], "no_upstream");
    assert_eq!(entries[3]["repoPath"], json!(linked));
    assert_eq!(entries[4]["summary"], "main has no upstream");
    assert_eq!(entries[4]["head"], json!(null));
    assert_eq!(entries[4]["lastCommitTimestamp"], json!(null));
    assert_eq!(entries[0]["status"], "clean");
    assert_eq!(entries[1]["operation"], "rebase");
    assert_eq!(entries[1]["status"], "local_changes");
    assert_eq!(entries[2]["status"], "unknown");
    assert_eq!(entries[2]["error"], "is outside the allowed roots");

    let capped = server.call(
        "fleet.radar",
        json!({ "repoPaths": [&a, &b], "maxRepos": 1 }),
    );
    assert_eq!(capped["data"]["entries"].as_array().unwrap().len(), 1);
    assert_eq!(capped["data"]["truncatedCount"], 1);
}

#[test]
fn radar_bad_input() {
    let fx = Fixture::new();
    let many: Vec<String> = (0..1001).map(|i| format!("/tmp/r{i}")).collect();
    let mut server = fx.server(&[], &[]);
    let errors: Vec<_> = [
        json!({}),
        json!({ "repoPaths": [] }),
        json!({ "repoPaths": ["relative"] }),
        json!({ "repoPaths": ["/ok", "-n"] }),
        json!({ "repositories": [{ "repoPath": "/ok" }, { "repoPath": "x/../y" }] }),
        json!({ "repositories": [{ "repoPath": "/ok", "label": "a\nb" }] }),
        json!({ "repositories": [{ "repoPath": "/ok", "extra": 1 }] }),
        json!({ "repoPath": "rel" }),
        json!({ "repoPaths": many }),
        json!({ "repoPaths": ["/ok"], "maxRepos": 0 }),
        json!({ "repoPaths": ["/ok"], "maxRepos": 501 }),
    ]
    .into_iter()
    .map(|args| {
        let result = server.call("fleet.radar", args);
        assert_eq!(result["error"]["code"], -32602, "{result}");
        result["error"]["data"].clone()
    })
    .collect();
    tool_snapshot!("fleet_radar_bad_input", fx, json!(errors));
}

#[test]
fn radar_never_runs_a_repository_merge_driver() {
    let fleet = Fleet::new();
    let fx = &fleet.fx;
    let repo = fleet.clone("driven");
    let marker = fx.path("driver-ran");
    fx.write(&repo, ".gitattributes", "* merge=evil\n");
    fx.commit(&repo, "shared.txt", "mine\n", "local, overlapping");
    fx.git(
        &repo,
        &[
            "config",
            "merge.evil.driver",
            &format!("touch {} && false", marker.display()),
        ],
    );
    fleet.advance_origin("theirs\n");
    fx.git(&repo, &["fetch", "-q"]);
    let result = fx.call("fleet.radar", json!({ "repoPath": repo }));
    let entry = &result["data"]["entries"][0];
    // Without the disarming, merge-tree runs the driver (checked by hand with git 2.47).
    assert!(!marker.exists(), "a repository-defined merge driver ran");
    // The disarmed driver cannot merge, so the path is predicted to conflict.
    assert_eq!(entry["status"], "potential_conflict", "{entry}");
    assert_eq!(
        entry["potentialConflictPaths"],
        json!(["shared.txt"]),
        "{entry}"
    );
    assert!(entry["potentialConflictSkipped"].is_null(), "{entry}");
}
