//! `repo.brief` and `repo.scope` against real repositories in every state, checked
//! against what plain git reports.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::Fixture;
use crate::tool_snapshot;

fn brief(fx: &Fixture, repo: &Path) -> Value {
    let out = fx.call("repo.brief", json!({ "repoPath": repo, "maxTokens": 8000 }));
    assert!(out.get("error").is_none(), "{out}");
    out
}

fn hint_tools(out: &Value) -> Vec<String> {
    out["data"]["hints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["tool"].as_str().unwrap().to_owned())
        .collect()
}

/// `git rev-list --left-right --count HEAD...@{u}` as (ahead, behind).
fn ahead_behind(fx: &Fixture, repo: &Path) -> (u64, u64) {
    let text = fx.git(
        repo,
        &["rev-list", "--left-right", "--count", "HEAD...@{u}"],
    );
    let mut it = text.split_whitespace().map(|n| n.parse().unwrap());
    (it.next().unwrap(), it.next().unwrap())
}

/// A clone of an origin with conventional commits, naming prefixes, guidance files, a
/// hook, LFS attributes, signing and sparse checkout turned on, one commit ahead and two
/// behind its upstream.
fn conventional_clone(fx: &Fixture) -> std::path::PathBuf {
    let seed = fx.init("seed", &[]);
    fx.commit(&seed, "README.md", "hi\n", "chore: initial layout");
    fx.commit(&seed, "src/lib.rs", "//\n", "feat(core): add the library");
    fx.commit(
        &seed,
        "src/lib.rs",
        "// x\n",
        "fix(core): handle empty input",
    );
    fx.commit(&seed, ".github/CODEOWNERS", "* @team\n", "docs: add owners");
    fx.commit(&seed, "AGENTS.md", "rules\n", "Update agent notes");
    fx.commit(&seed, "CONTRIBUTING.md", "be kind\n", "docs: contributing");
    fx.commit(
        &seed,
        ".gitattributes",
        "*.psd filter=lfs diff=lfs merge=lfs -text\n",
        "build: track design files with LFS",
    );
    let origin = fx.clone(&seed, "origin.git", true);
    let work = fx.clone(&origin, "work", false);
    // Two commits land upstream after the clone; one is made locally.
    fx.git(
        &seed,
        &["remote", "add", "origin", origin.to_str().unwrap()],
    );
    fx.commit(&seed, "src/a.rs", "a\n", "feat: upstream one");
    fx.commit(&seed, "src/b.rs", "b\n", "feat: upstream two");
    fx.git(&seed, &["push", "-q", "origin", "main"]);
    fx.git(&work, &["fetch", "-q"]);
    fx.commit(&work, "src/local.rs", "l\n", "refactor!: local change");
    for b in ["feat/login", "feat/search", "fix/crash", "spike"] {
        fx.git(&work, &["branch", b]);
    }
    let hook = work.join(".git/hooks/pre-commit");
    std::fs::write(&hook, "#!/bin/sh\nexit 1\n").unwrap();
    fx.git(&work, &["config", "commit.gpgsign", "true"]);
    fx.git(&work, &["config", "core.sparseCheckout", "true"]);
    fx.write(&work, "src/lib.rs", "// changed\n");
    fx.write(&work, "notes.txt", "untracked\n");
    work
}

#[test]
fn repo_brief_full_matches_git() {
    let fx = Fixture::new();
    let work = conventional_clone(&fx);
    let out = brief(&fx, &work);
    let d = &out["data"];
    let (ahead, behind) = ahead_behind(&fx, &work);
    assert_eq!((ahead, behind), (1, 2), "fixture shape");
    assert_eq!(d["head"]["ahead"], ahead);
    assert_eq!(d["head"]["behind"], behind);
    assert_eq!(d["head"]["sha"], fx.git(&work, &["rev-parse", "HEAD"]));
    assert_eq!(d["head"]["upstream"], "origin/main");
    let porcelain = fx.git(&work, &["status", "--porcelain=v1"]);
    assert_eq!(d["workingTree"]["changed"], porcelain.lines().count());
    // Recent commits carry git's own unique abbreviations.
    let log = fx.git(&work, &["log", "--format=%h", "-n10"]);
    let shas: Vec<&str> = d["recentCommits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["sha"].as_str().unwrap())
        .collect();
    assert_eq!(shas, log.lines().collect::<Vec<_>>());
    let c = &d["conventions"];
    assert_eq!(c["defaultBranch"], "main");
    // origin/HEAD, the usual source, goes without saying.
    assert_eq!(c.get("defaultBranchSource"), None);
    assert_eq!(c["codeowners"], ".github/CODEOWNERS");
    assert_eq!(c["guidanceFiles"], json!(["AGENTS.md", "CONTRIBUTING.md"]));
    assert_eq!(c["hooks"]["names"], json!(["pre-commit"]));
    assert_eq!(c["lfs"], true);
    assert_eq!(c["commitSigning"], true);
    assert_eq!(c["sparseCheckout"], true);
    assert_eq!(
        c["branchNames"]["prefixes"]
            .as_object()
            .unwrap()
            .iter()
            .next(),
        Some((&"feat/".to_owned(), &json!(2)))
    );
    // 7 of 8 subjects are conventional ("Update agent notes" is not).
    assert_eq!(c["commitMessages"]["conventionalCommitRatio"], 0.88);
    assert_eq!(hint_tools(&out)[0], "repo_conflictPreflight");
    assert!(hint_tools(&out).contains(&"worktree_changes".to_owned()));
    tool_snapshot!("repo_brief_full", fx, out);
}

#[test]
fn unborn_detached_and_bare() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let unborn = brief(&fx, &repo);
    assert_eq!(unborn["data"]["head"]["unborn"], true);
    assert_eq!(unborn["data"]["head"]["branch"], "main");
    assert_eq!(unborn["data"]["head"]["sha"], json!(null));
    assert_eq!(unborn["data"]["recentCommits"], json!([]));
    assert_eq!(hint_tools(&unborn), vec!["repo_status"]);
    tool_snapshot!("repo_brief_unborn", fx, unborn);

    let first = fx.commit(&repo, "a.txt", "1\n", "one");
    fx.commit(&repo, "a.txt", "2\n", "two");
    fx.git(&repo, &["checkout", "-q", "--detach", &first]);
    let detached = brief(&fx, &repo);
    assert_eq!(detached["data"]["head"]["detached"], true);
    assert_eq!(detached["data"]["head"]["branch"], json!(null));
    assert_eq!(detached["data"]["head"]["sha"], json!(first));
    assert_eq!(hint_tools(&detached)[0], "repo_branchStack");

    fx.git(&repo, &["checkout", "-q", "main"]);
    fx.write(&repo, "a.txt", "stash me\n");
    fx.git(&repo, &["stash", "-q"]);
    fx.write(&repo, "a.txt", "and me\n");
    fx.git(&repo, &["stash", "-q"]);
    let stashed = brief(&fx, &repo);
    let listed = fx.git(&repo, &["stash", "list"]);
    assert_eq!(stashed["data"]["stashes"], listed.lines().count());
    assert_eq!(listed.lines().count(), 2);
    let bare = fx.clone(&repo, "bare.git", true);
    let out = brief(&fx, &bare);
    let d = &out["data"];
    assert_eq!(d["bare"], true);
    assert_eq!(d["workingTree"], json!(null));
    assert_eq!(d["head"]["branch"], "main");
    assert_eq!(d["head"]["sha"], fx.git(&bare, &["rev-parse", "HEAD"]));
    assert_eq!(d["recentCommits"].as_array().unwrap().len(), 2);
    tool_snapshot!("repo_brief_bare", fx, out);
}

/// Two branches that change the same line of `f.txt`.
fn diverged(fx: &Fixture) -> std::path::PathBuf {
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "f.txt", "base\n", "base");
    fx.git(&repo, &["checkout", "-q", "-b", "topic"]);
    fx.commit(&repo, "f.txt", "topic\n", "topic change");
    fx.git(&repo, &["checkout", "-q", "main"]);
    fx.commit(&repo, "f.txt", "main\n", "main change");
    repo
}

#[test]
fn merge_conflict_in_progress() {
    let fx = Fixture::new();
    let repo = diverged(&fx);
    let topic = fx.git(&repo, &["rev-parse", "topic"]);
    let merge = fx.git_output(&repo, &["merge", "topic"]);
    assert!(!merge.status.success());
    let out = brief(&fx, &repo);
    let d = &out["data"];
    assert_eq!(d["operationInProgress"], "merge");
    assert_eq!(d["operationDetails"]["incoming"], json!(topic));
    assert_eq!(d["workingTree"]["conflicted"], 1);
    assert_eq!(
        d["workingTree"]["topPaths"][0],
        json!({"status": "UU", "path": "f.txt"})
    );
    assert_eq!(hint_tools(&out)[0], "conflict_read");
    tool_snapshot!("repo_brief_merge", fx, out);
}

#[test]
fn rebase_in_progress_reports_the_branch_and_step() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "f.txt", "base\n", "base");
    fx.git(&repo, &["checkout", "-q", "-b", "topic"]);
    fx.commit(&repo, "one.txt", "1\n", "topic 1");
    fx.commit(&repo, "f.txt", "topic\n", "topic 2 conflicts");
    fx.commit(&repo, "three.txt", "3\n", "topic 3");
    fx.git(&repo, &["checkout", "-q", "main"]);
    fx.commit(&repo, "f.txt", "main\n", "main change");
    fx.git(&repo, &["checkout", "-q", "topic"]);
    for (flags, kind_dir) in [
        (&["rebase", "main"][..], "rebase-merge"),
        (&["rebase", "--apply", "main"][..], "rebase-apply"),
    ] {
        let rebase = fx.git_output(&repo, flags);
        assert!(
            !rebase.status.success(),
            "{kind_dir}: the second commit conflicts"
        );
        assert!(repo.join(".git").join(kind_dir).is_dir());
        let out = brief(&fx, &repo);
        let d = &out["data"];
        assert_eq!(d["operationInProgress"], "rebase", "{kind_dir}");
        assert_eq!(d["operationDetails"]["branch"], "topic");
        assert_eq!(d["operationDetails"]["step"], 2, "{kind_dir}");
        assert_eq!(d["operationDetails"]["total"], 3, "{kind_dir}");
        assert_eq!(d["head"]["branch"], "topic");
        assert_eq!(d["head"]["rebasing"], true);
        assert_eq!(d["head"]["detached"], true);
        assert_eq!(hint_tools(&out)[0], "conflict_read");
        if kind_dir == "rebase-merge" {
            tool_snapshot!("repo_brief_rebase", fx, out);
        }
        fx.git(&repo, &["rebase", "--abort"]);
    }
}

#[test]
fn cherry_pick_sequencer_and_bisect() {
    let fx = Fixture::new();
    let repo = diverged(&fx);
    fx.git(&repo, &["checkout", "-q", "topic"]);
    let extra = fx.commit(&repo, "g.txt", "g\n", "topic extra");
    fx.git(&repo, &["checkout", "-q", "main"]);
    let picked = fx.git(&repo, &["rev-parse", "topic~1"]);
    let pick = fx.git_output(&repo, &["cherry-pick", &picked, &extra]);
    assert!(!pick.status.success());
    let out = brief(&fx, &repo);
    assert_eq!(out["data"]["operationInProgress"], "cherry-pick");
    assert_eq!(out["data"]["operationDetails"]["incoming"], json!(picked));

    // Resolving and committing by hand leaves only the sequencer behind.
    fx.write(&repo, "f.txt", "resolved\n");
    fx.git(&repo, &["add", "f.txt"]);
    fx.git(&repo, &["commit", "-q", "--no-edit"]);
    assert!(!repo.join(".git/CHERRY_PICK_HEAD").exists());
    assert!(repo.join(".git/sequencer").is_dir());
    let out = brief(&fx, &repo);
    assert_eq!(out["data"]["operationInProgress"], "cherry-pick");
    assert_eq!(out["data"]["operationDetails"]["sequencerOnly"], true);
    fx.git(&repo, &["cherry-pick", "--quit"]);

    // Reverting "main change" conflicts with the resolved f.txt on top of it.
    let revert = fx.git_output(&repo, &["revert", "--no-edit", "HEAD~1"]);
    assert!(!revert.status.success(), "the revert conflicts");
    let out = brief(&fx, &repo);
    assert_eq!(out["data"]["operationInProgress"], "revert");
    fx.git(&repo, &["revert", "--abort"]);

    fx.git(&repo, &["bisect", "start", "HEAD", "HEAD~2"]);
    let out = brief(&fx, &repo);
    assert_eq!(out["data"]["operationInProgress"], "bisect");
}

#[test]
fn submodule_drift_is_counted_like_git() {
    let fx = Fixture::new();
    let lib = fx.init("lib", &[]);
    fx.commit(&lib, "lib.txt", "1\n", "lib one");
    let app = fx.init("app", &[]);
    fx.commit(&app, "app.txt", "a\n", "app");
    for name in ["drifted", "clean", "dirty"] {
        fx.git(
            &app,
            &["submodule", "add", "-q", lib.to_str().unwrap(), name],
        );
    }
    fx.git(&app, &["commit", "-q", "-m", "add submodules"]);
    fx.commit(&app.join("drifted"), "lib.txt", "2\n", "moved on");
    fx.write(&app.join("dirty"), "lib.txt", "edited\n");
    // A fresh clone without --recurse-submodules leaves them uninitialized.
    let clone = fx.clone(&app, "clone", false);

    let out = brief(&fx, &app);
    let s = &out["data"]["submodules"];
    let status = fx.git(&app, &["submodule", "status"]);
    let plus = status.lines().filter(|l| l.starts_with('+')).count();
    assert_eq!(s["total"], status.lines().count());
    assert_eq!(s["drifted"], plus);
    assert_eq!(s["modified"], 1);
    // A count of zero is omitted, as every default is.
    assert_eq!(s.get("uninitialized"), None);
    assert!(hint_tools(&out).contains(&"submodule_status".to_owned()));
    tool_snapshot!("repo_brief_submodules", fx, s);

    let out = brief(&fx, &clone);
    let s = &out["data"]["submodules"];
    let status = fx.git(&clone, &["submodule", "status"]);
    let minus = status.lines().filter(|l| l.starts_with('-')).count();
    assert_eq!(s["uninitialized"], minus);
    assert_eq!(minus, 3);
}

#[test]
fn linked_worktree_sha256_and_non_utf8_paths() {
    let fx = Fixture::new();
    let repo = diverged(&fx);
    let linked = fx.path("linked");
    fx.git(
        &repo,
        &["worktree", "add", "-q", linked.to_str().unwrap(), "topic"],
    );
    // A merge stopped in the main worktree is not the linked worktree's business.
    let _ = fx.git_output(&repo, &["merge", "topic"]);
    let out = brief(&fx, &linked);
    assert_eq!(out["data"]["linkedWorktree"], true);
    assert_eq!(out["data"]["head"]["branch"], "topic");
    assert_eq!(out["data"]["operationInProgress"], json!(null));
    assert_eq!(out["repoPath"], json!(linked));

    let sha = fx.init("sha", &["--object-format=sha256"]);
    let oid = fx.commit(&sha, "a.txt", "a\n", "feat: first");
    use std::os::unix::ffi::OsStrExt;
    std::fs::write(sha.join(std::ffi::OsStr::from_bytes(b"caf\xe9.txt")), "x").unwrap();
    let out = brief(&fx, &sha);
    let d = &out["data"];
    assert_eq!(d["objectFormat"], "sha256");
    assert_eq!(d["head"]["sha"], json!(oid));
    assert_eq!(oid.len(), 64);
    let short = fx.git(&sha, &["log", "-1", "--format=%h"]);
    assert_eq!(d["recentCommits"][0]["sha"], json!(short.trim()));
    assert!(oid.starts_with(short.trim()));
    let top = &d["workingTree"]["topPaths"][0];
    assert_eq!(top["pathEncoding"], "non-utf8");
    assert_eq!(top["pathBytesB64"], "Y2Fm6S50eHQ=");
}

#[test]
fn five_thousand_changes_stay_within_every_budget() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    for i in 0..20 {
        fx.commit(
            &repo,
            "log.txt",
            &format!("{i}\n"),
            &format!("feat(area-{i}): a deliberately long subject line that goes on and on about change number {i}"),
        );
    }
    let name = |i| format!("generated/some/deep/directory/file-{i:05}.txt");
    for i in 0..5000 {
        fx.write(&repo, &name(i), "x");
    }
    fx.git(&repo, &["add", "-A"]);
    fx.git(&repo, &["commit", "-q", "-m", "chore: generate"]);
    for i in 0..5000 {
        fx.write(&repo, &name(i), "changed");
    }
    let mut server = fx.server(&[], &[]);
    for max in [200, 400, 800, 1500, 8000] {
        let out = server.call(
            "repo.brief",
            json!({ "repoPath": repo, "maxTokens": max, "recentCommits": 20 }),
        );
        let text = serde_json::to_string(&out).unwrap();
        assert!(
            text.len() <= max * 4,
            "maxTokens {max}: {} chars\n{text}",
            text.len()
        );
        let d = &out["data"];
        assert_eq!(d["workingTree"]["changed"], 5000, "counts stay true totals");
        // The default budget is not echoed back.
        let echoed = d["budget"].get("maxTokens").and_then(Value::as_u64);
        assert_eq!(echoed, (max != 1500).then_some(max as u64));
        match d.get("budget") {
            Some(b) => assert!(b["approxTokens"].as_u64().unwrap() <= max as u64),
            // Only the default budget, fitted whole, goes without a note.
            None => assert_eq!(max, 1500, "{text}"),
        }
        if max <= 400 {
            assert!(!d["budget"]["trimmed"].as_array().unwrap().is_empty());
        }
        if max == 8000 {
            // Nothing trimmed: the list is omitted, as every empty default is.
            assert_eq!(d["budget"].get("trimmed"), None);
            assert_eq!(d["recentCommits"].as_array().unwrap().len(), 20);
        }
    }
}

#[test]
fn bad_and_hostile_input() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "a\n", "one");
    let mut server = fx.server(&[], &[]);
    let errors: Vec<Value> = [
        ("repo.brief", json!({ "repoPath": repo, "maxTokens": 100 })),
        (
            "repo.brief",
            json!({ "repoPath": repo, "recentCommits": 21 }),
        ),
        ("repo.brief", json!({ "repoPath": "--output=/tmp/x" })),
        ("repo.scope", json!({ "repoPath": repo })),
        ("repo.scope", json!({ "repoPath": repo, "path": "../etc" })),
        (
            "repo.scope",
            json!({ "repoPath": repo, "path": "/etc/passwd" }),
        ),
        ("repo.scope", json!({ "repoPath": repo, "path": "a\u{0}b" })),
        (
            "repo.scope",
            json!({ "repoPath": repo, "path": "src", "churnDays": 0 }),
        ),
    ]
    .into_iter()
    .map(|(tool, args)| {
        let out = server.call(tool, args);
        assert_eq!(out["error"]["code"], -32602, "{out}");
        out["error"]["data"].clone()
    })
    .collect();
    tool_snapshot!("repo_brief_scope_bad_input", fx, json!(errors));

    // Option-shaped paths are plain paths: nothing is written, nothing matches.
    let out = server.call(
        "repo.scope",
        json!({ "repoPath": repo, "path": "--output=x" }),
    );
    assert_eq!(out["data"]["kind"], "missing");
    assert!(!repo.join("x").exists());
    std::os::unix::fs::symlink(fx.path("outside"), repo.join("link")).unwrap();
    std::fs::create_dir_all(fx.path("outside")).unwrap();
    std::fs::write(fx.path("outside/secret"), "s").unwrap();
    let out = server.call(
        "repo.scope",
        json!({ "repoPath": repo, "path": "link/secret" }),
    );
    assert_eq!(out["error"]["data"]["field"], "path", "{out}");
    let out = server.call("repo.scope", json!({ "repoPath": repo, "path": "*" }));
    assert_eq!(
        out["data"]["recentCommits"],
        json!([]),
        "pathspecs are literal"
    );
}

#[test]
fn repo_scope_changes_history_churn_and_owners() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(
        &repo,
        ".github/CODEOWNERS",
        "* @everyone\n/src/ @src-team\n/src/gen/ \ndocs/* @writers\n",
        "owners",
    );
    fx.commit(&repo, "src/a.rs", "1\n", "feat: a");
    fx.git(&repo, &["config", "user.email", "Other@Example.com"]);
    fx.commit(&repo, "src/b.rs", "1\n", "feat: b");
    fx.git(&repo, &["config", "user.email", "other@example.com"]);
    fx.commit(&repo, "src/a.rs", "2\n", "fix: a");
    fx.commit(&repo, "README", "r\n", "docs: readme");
    for i in 0..25 {
        fx.write(&repo, &format!("src/new{i:02}.rs"), "n\n");
    }
    fx.write(&repo, "src/a.rs", "3\n");
    fx.write(&repo, "README", "changed outside\n");

    let out = fx.call(
        "repo.scope",
        json!({ "repoPath": repo, "path": "src/", "recentCommits": 2, "churnDays": 365 }),
    );
    let d = &out["data"];
    assert_eq!(d["scope"], "src");
    assert_eq!(d["kind"], "directory");
    let porcelain = fx.git(
        &repo,
        &[
            "status",
            "--porcelain=v1",
            "--untracked-files=all",
            "--",
            "src",
        ],
    );
    assert_eq!(d["workingTree"]["changed"], porcelain.lines().count());
    assert_eq!(d["workingTree"]["entries"].as_array().unwrap().len(), 20);
    assert_eq!(d["workingTree"]["truncated"], true);
    let log = fx.git(&repo, &["log", "--format=%H", "-n2", "--", "src"]);
    let shas: Vec<&str> = d["recentCommits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["sha"].as_str().unwrap())
        .collect();
    assert_eq!(shas, log.lines().collect::<Vec<_>>());
    assert_eq!(d["recentCommitsTruncated"], true);
    let churn = fx.git(
        &repo,
        &["log", "--since=365.days.ago", "--format=%ae", "--", "src"],
    );
    assert_eq!(d["churn"]["commits"], churn.lines().count());
    let mut emails: Vec<String> = churn.lines().map(|l| l.to_lowercase()).collect();
    emails.sort();
    emails.dedup();
    assert_eq!(d["churn"]["authors"], emails.len());
    assert_eq!(emails.len(), 2, "emails compare case-insensitively");
    assert_eq!(d["owners"]["owners"], json!(["@src-team"]));
    assert_eq!(d["owners"]["matching"], "codeowners-glob");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let since = d["churn"]["since"].as_i64().unwrap();
    assert!(
        (since - (now - 365 * 86_400)).abs() < 3600,
        "window starts 365 days ago"
    );
    let mut out = out.clone();
    out["data"]["churn"]["since"] = json!("[TIME]");
    tool_snapshot!("repo_scope_src", fx, out);

    let owners = |path: &str| {
        let out = fx.call("repo.scope", json!({ "repoPath": repo, "path": path }));
        (
            out["data"]["owners"]["matchedPattern"].clone(),
            out["data"]["owners"]["owners"].clone(),
        )
    };
    assert_eq!(owners("src/gen/x.rs"), (json!("/src/gen/"), json!([])));
    assert_eq!(owners("README"), (json!("*"), json!(["@everyone"])));
    assert_eq!(owners("docs/a.md"), (json!("docs/*"), json!(["@writers"])));
    assert_eq!(owners("docs/deep/a.md"), (json!("*"), json!(["@everyone"])));

    // Non-UTF-8 names under the scope travel losslessly.
    use std::os::unix::ffi::OsStrExt;
    // A tracked file beside it, so the untracked one is listed by itself (a wholly
    // untracked directory is one `bin/` entry, as `git status` shows it).
    fx.commit(&repo, "bin/keep", "k\n", "bin");
    std::fs::write(
        repo.join("bin")
            .join(std::ffi::OsStr::from_bytes(b"caf\xe9.txt")),
        "x",
    )
    .unwrap();
    let out = fx.call("repo.scope", json!({ "repoPath": repo, "path": "bin" }));
    let entry = &out["data"]["workingTree"]["entries"][0];
    assert_eq!(entry["pathBytesB64"], "YmluL2NhZukudHh0");
    assert_eq!(entry["pathEncoding"], "non-utf8");

    // A bare repository reads CODEOWNERS from HEAD and has no working tree.
    let bare = fx.clone(&repo, "bare.git", true);
    let out = fx.call("repo.scope", json!({ "repoPath": bare, "path": "src" }));
    assert_eq!(out["data"]["workingTree"], json!(null));
    assert_eq!(out["data"]["kind"], "directory");
    assert_eq!(out["data"]["owners"]["owners"], json!(["@src-team"]));

    // No CODEOWNERS at all: owners is null; an unborn repository has no history.
    let empty = fx.init("empty", &[]);
    fx.write(&empty, "src/x.rs", "x\n");
    let out = fx.call("repo.scope", json!({ "repoPath": empty, "path": "src" }));
    assert_eq!(out["data"]["owners"], json!(null));
    assert_eq!(out["data"]["recentCommits"], json!([]));
    assert_eq!(out["data"]["workingTree"]["changed"], 1);
}

/// One reader of the operation in progress: the brief and the radar name the same one,
/// including a sequencer stopped between commits and a bisect.
#[test]
fn brief_and_radar_agree_on_the_operation_in_progress() {
    let fx = Fixture::new();
    let repo = diverged(&fx);
    fx.git(&repo, &["checkout", "-q", "topic"]);
    let extra = fx.commit(&repo, "g.txt", "g\n", "topic extra");
    fx.git(&repo, &["checkout", "-q", "main"]);
    let picked = fx.git(&repo, &["rev-parse", "topic~1"]);
    let pick = fx.git_output(&repo, &["cherry-pick", &picked, &extra]);
    assert!(!pick.status.success());
    fx.write(&repo, "f.txt", "resolved\n");
    fx.git(&repo, &["add", "f.txt"]);
    fx.git(&repo, &["commit", "-q", "--no-edit"]);
    assert!(repo.join(".git/sequencer").is_dir());
    let both = |fx: &Fixture| {
        let brief = brief(fx, &repo);
        let radar = fx.call("fleet.radar", json!({ "repoPaths": [&repo] }));
        (
            brief["data"]["operationInProgress"].clone(),
            radar["data"]["entries"][0]["operation"].clone(),
        )
    };
    let (brief_says, radar_says) = both(&fx);
    assert_eq!(brief_says, "cherry-pick");
    assert_eq!(radar_says, brief_says);
    fx.git(&repo, &["cherry-pick", "--quit"]);

    fx.git(&repo, &["bisect", "start", "HEAD", "HEAD~2"]);
    let (brief_says, radar_says) = both(&fx);
    assert_eq!(brief_says, "bisect");
    assert_eq!(radar_says, brief_says);
}
