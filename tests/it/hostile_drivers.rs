//! Drivers a repository configures (filters, merge drivers, external diffs, textconv)
//! never run from a read: whatever their names, wherever they are defined (includes,
//! submodules), and however git would reach them.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use crate::common::{Fixture, Server, write_executable};

/// An executable that appends a line to `marker` and copies stdin to stdout, so it works
/// as a filter, an external diff or a merge driver that "resolves" everything.
fn canary(fx: &Fixture, name: &str, marker: &Path) -> PathBuf {
    let script = fx.path("bin").join(name);
    write_executable(
        &script,
        &format!("#!/bin/sh\necho \"$0 $*\" >> '{}'\ncat\n", marker.display()),
    );
    script
}

/// Moves a file's modification time forward so git must read its content again (through
/// any clean filter) to know it is unchanged.
fn stat_dirty(path: &Path) {
    use std::sync::atomic::{AtomicU64, Ordering};
    // Each call lands on a new second, so no two calls leave the same time behind.
    static AHEAD: AtomicU64 = AtomicU64::new(30);
    let ahead = AHEAD.fetch_add(10, Ordering::SeqCst);
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() + Duration::from_secs(ahead))
        .unwrap();
}

/// Every read tool that looks at the working tree or merges, as (tool, arguments).
fn worktree_reads(repo: &Path, file: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("repo.status", json!({ "repoPath": repo })),
        ("repo.brief", json!({ "repoPath": repo })),
        ("repo.scope", json!({ "repoPath": repo, "path": file })),
        ("worktree.changes", json!({ "repoPath": repo })),
        ("diff.text", json!({ "repoPath": repo })),
        ("diff.text", json!({ "repoPath": repo, "base": "HEAD" })),
        ("fleet.radar", json!({ "repoPaths": [repo] })),
    ]
}

fn assert_quiet(server: &mut Server, calls: &[(&str, Value)], marker: &Path) {
    for (tool, args) in calls {
        let result = server.call(tool, args.clone());
        assert!(result.get("error").is_none(), "{tool} {args}: {result}");
        assert!(
            !marker.exists(),
            "{tool} {args} ran a repository-chosen program: {}",
            std::fs::read_to_string(marker).unwrap_or_default()
        );
    }
}

#[test]
fn drivers_whose_names_contain_equals_signs_never_run() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "c.txt", "base\n", "base");
    fx.git(&repo, &["checkout", "-q", "-b", "feat"]);
    fx.commit(&repo, "c.txt", "feat\n", "feat");
    fx.git(&repo, &["checkout", "-q", "main"]);
    fx.commit(&repo, "c.txt", "main\n", "main");
    let marker = fx.path("ran-something");
    let script = canary(&fx, "evil", &marker);
    let s = script.to_str().unwrap();
    fx.git(&repo, &["config", "filter.a=b.clean", s]);
    fx.git(&repo, &["config", "filter.a=b.smudge", s]);
    fx.git(&repo, &["config", "filter.a=b.required", "true"]);
    fx.git(
        &repo,
        &["config", "merge.m=x.driver", &format!("{s} %O %A %B")],
    );
    fx.write(&repo, ".git/info/attributes", "* filter=a=b merge=m=x\n");
    stat_dirty(&repo.join("c.txt"));

    let mut server = fx.server(&[], &[]);
    assert_quiet(&mut server, &worktree_reads(&repo, "c.txt"), &marker);
    let preflight = server.call(
        "repo.conflictPreflight",
        json!({ "repoPath": repo, "targetRef": "feat" }),
    );
    assert!(!marker.exists(), "the merge driver ran");
    assert_eq!(preflight["data"]["status"], "conflicts", "{preflight}");
    let status = server.call("worktree.changes", json!({ "repoPath": repo }));
    assert_eq!(status["data"]["clean"], true, "{status}");

    // The same git, run plainly, does run both drivers: the test can tell.
    fx.git(&repo, &["status"]);
    assert!(marker.exists(), "the filter is live");
    std::fs::remove_file(&marker).unwrap();
    fx.git(&repo, &["merge-tree", "--write-tree", "main", "feat"]);
    assert!(marker.exists(), "the merge driver is live");
}

#[test]
fn a_filter_added_through_an_include_after_the_first_call_never_runs() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.write(&repo, ".gitattributes", "*.txt filter=evil\n");
    fx.commit(&repo, "a.txt", "one\n", "first");
    let marker = fx.path("ran-something");
    let script = canary(&fx, "evil", &marker);
    // Both include files exist, empty, outside the repository: changing them touches
    // nothing git itself would notice in `.git`.
    let included = fx.path("included.cfg");
    let conditional = fx.path("conditional.cfg");
    std::fs::write(&included, "").unwrap();
    std::fs::write(&conditional, "").unwrap();
    fx.git(
        &repo,
        &["config", "include.path", included.to_str().unwrap()],
    );
    fx.git(
        &repo,
        &[
            "config",
            &format!("includeIf.gitdir:{}/.path", repo.display()),
            conditional.to_str().unwrap(),
        ],
    );
    let armed = format!("[filter \"evil\"]\n\tclean = {}\n", script.display());
    let mut server = fx.server(&[], &[]);
    assert_quiet(&mut server, &worktree_reads(&repo, "a.txt"), &marker);

    for file in [&included, &conditional] {
        std::fs::write(file, &armed).unwrap();
        stat_dirty(&repo.join("a.txt"));
        assert_quiet(&mut server, &worktree_reads(&repo, "a.txt"), &marker);
        std::fs::write(file, "").unwrap();
    }

    // The same git, run plainly, does run an included filter: the test can tell.
    for file in [&included, &conditional] {
        std::fs::write(file, &armed).unwrap();
        stat_dirty(&repo.join("a.txt"));
        fx.git(&repo, &["status"]);
        assert!(marker.exists(), "{} is live", file.display());
        std::fs::remove_file(&marker).unwrap();
        std::fs::write(file, "").unwrap();
    }
}

/// `parent` with a checked-out submodule `sub` whose own configuration arms `script` as
/// a clean filter, an external diff and a textconv driver for every path.
fn parent_with_armed_submodule(fx: &Fixture, script: &Path) -> (PathBuf, PathBuf) {
    let sub_src = fx.init("sub-src", &[]);
    fx.commit(&sub_src, "f.txt", "one\n", "sub first");
    let parent = fx.init("parent", &[]);
    fx.commit(&parent, "p.txt", "p\n", "parent first");
    fx.git(
        &parent,
        &["submodule", "add", "-q", sub_src.to_str().unwrap(), "sub"],
    );
    fx.git(&parent, &["commit", "-q", "-m", "add sub"]);
    let sub = parent.join("sub");
    let s = script.to_str().unwrap();
    for (key, value) in [
        ("filter.evil.clean", s),
        ("filter.evil.required", "true"),
        ("diff.external", s),
        ("diff.evil.textconv", s),
    ] {
        fx.git(&sub, &["config", key, value]);
    }
    let sub_gitdir = PathBuf::from(fx.git(&sub, &["rev-parse", "--absolute-git-dir"]));
    std::fs::create_dir_all(sub_gitdir.join("info")).unwrap();
    std::fs::write(
        sub_gitdir.join("info/attributes"),
        "* filter=evil diff=evil\n",
    )
    .unwrap();
    (parent, sub)
}

#[test]
fn a_submodules_own_filters_never_run_when_the_parent_recurses() {
    let fx = Fixture::new();
    let marker = fx.path("ran-something");
    let script = canary(&fx, "evil", &marker);
    let (parent, sub) = parent_with_armed_submodule(&fx, &script);
    // Stat-dirty but unchanged, so the submodule's status must read it through the filter.
    stat_dirty(&sub.join("f.txt"));
    let mut server = fx.server(&[], &[]);
    assert_quiet(&mut server, &worktree_reads(&parent, "sub"), &marker);
    let changes = server.call("worktree.changes", json!({ "repoPath": parent }));
    assert_eq!(changes["data"]["clean"], true, "{changes}");

    // A real change inside the submodule is still reported, as git reports it.
    fx.write(&sub, "f.txt", "one\ntwo\n");
    assert_quiet(&mut server, &worktree_reads(&parent, "sub"), &marker);
    let status = server.call("repo.status", json!({ "repoPath": parent }));
    let plain = fx.git(
        &parent,
        &["-c", "filter.evil.clean=cat", "status", "--short"],
    );
    assert_eq!(plain, " m sub");
    assert_eq!(
        server.call("worktree.changes", json!({ "repoPath": parent }))["data"]["unstaged"][0]["path"],
        "sub",
        "{status}"
    );
    assert!(!marker.exists());

    // The same git, run plainly, does run the submodule's filter: the test can tell.
    std::fs::write(sub.join("f.txt"), "one\n").unwrap();
    stat_dirty(&sub.join("f.txt"));
    fx.git(&parent, &["status"]);
    assert!(marker.exists(), "the submodule's filter is live");
}

#[test]
fn an_embedded_repository_never_registered_as_a_submodule_runs_nothing_either() {
    let fx = Fixture::new();
    let marker = fx.path("ran-something");
    let script = canary(&fx, "evil", &marker);
    let parent = fx.init("parent", &[]);
    fx.commit(&parent, "p.txt", "p\n", "parent first");
    let inner = fx.init("parent/inner", &[]);
    fx.commit(&inner, "f.txt", "one\n", "inner first");
    fx.git(
        &inner,
        &["config", "filter.evil.clean", script.to_str().unwrap()],
    );
    fx.write(&inner, ".git/info/attributes", "* filter=evil\n");
    // A gitlink with no .gitmodules entry, as `git add` of a nested clone leaves it.
    fx.git(&parent, &["add", "inner"]);
    fx.git(&parent, &["commit", "-q", "-m", "embed"]);
    assert!(!parent.join(".gitmodules").exists());
    stat_dirty(&inner.join("f.txt"));
    let mut server = fx.server(&[], &[]);
    assert_quiet(&mut server, &worktree_reads(&parent, "inner"), &marker);
    let changes = server.call("worktree.changes", json!({ "repoPath": parent }));
    assert_eq!(changes["data"]["clean"], true, "{changes}");

    // The same git, run plainly, does run the embedded repository's filter.
    stat_dirty(&inner.join("f.txt"));
    fx.git(&parent, &["status"]);
    assert!(marker.exists(), "the embedded repository's filter is live");
}

#[test]
fn submodule_diffs_never_run_the_submodules_external_diff_or_textconv() {
    let fx = Fixture::new();
    let marker = fx.path("ran-something");
    let script = canary(&fx, "evil", &marker);
    let (parent, sub) = parent_with_armed_submodule(&fx, &script);
    // A new commit and an uncommitted change in the submodule.
    fx.write(&sub, "g.txt", "two\n");
    fx.git(&sub, &["add", "g.txt"]);
    fx.git(&sub, &["commit", "-q", "-m", "sub second"]);
    fx.write(&sub, "f.txt", "one\nchanged\n");
    let _ = std::fs::remove_file(&marker);

    for scope in ["--local", "--global"] {
        fx.git(&parent, &["config", scope, "diff.submodule", "diff"]);
        let mut server = fx.server(&[], &[]);
        for args in [
            json!({ "repoPath": parent }),
            json!({ "repoPath": parent, "base": "HEAD" }),
        ] {
            let result = server.call("diff.text", args.clone());
            assert!(result.get("error").is_none(), "{args}: {result}");
            assert!(
                !marker.exists(),
                "diff.text {scope} {args} ran the submodule's program: {}",
                std::fs::read_to_string(&marker).unwrap_or_default()
            );
            let diff = result["data"]["diff"].as_str().unwrap();
            assert!(diff.contains("Subproject commit"), "{diff}");
            assert!(diff.contains("-dirty"), "{diff}");
        }
        // The same git, run plainly, does run the submodule's external diff.
        fx.git(&parent, &["diff", "--no-ext-diff", "--no-textconv"]);
        assert!(marker.exists(), "the submodule's external diff is live");
        std::fs::remove_file(&marker).unwrap();
        fx.git(&parent, &["config", scope, "--unset", "diff.submodule"]);
    }
}

/// Git's own view: `git status --porcelain=v2` paths, filters running.
fn plain_status_paths(fx: &Fixture, repo: &Path) -> Vec<String> {
    let out = fx.git(
        repo,
        &["status", "--porcelain=v2", "-z", "--untracked-files=all"],
    );
    out.split('\0')
        .filter(|r| !r.is_empty())
        .map(|r| r.rsplit(' ').next().unwrap().to_owned())
        .collect()
}

fn changed_paths(result: &Value) -> Vec<String> {
    let data = &result["data"];
    let mut paths: Vec<String> = ["staged", "unstaged", "untracked", "conflicted"]
        .iter()
        .flat_map(|list| data[list].as_array().unwrap().iter())
        .map(|e| e["path"].as_str().unwrap().to_owned())
        .collect();
    paths.sort();
    paths
}

#[test]
fn disarmed_filters_are_reported_and_trusted_ones_outside_the_roots_run_like_git() {
    let fx = Fixture::new();
    // The repository lives under the allowed root; the trusted program outside it.
    let work = fx.path("work");
    std::fs::create_dir_all(&work).unwrap();
    let repo = fx.init("work/repo", &[]);
    let tools = fx.path("tools");
    std::fs::create_dir_all(&tools).unwrap();
    let upper = tools.join("upper");
    write_executable(&upper, "#!/bin/sh\nexec tr a-z A-Z\n");
    // A clean filter, as git-crypt or nbstripout install one: the committed form differs
    // from the working file, so only running the filter shows the file unchanged.
    fx.git(
        &repo,
        &[
            "config",
            "filter.upper.clean",
            &format!("\"{}\"", upper.display()),
        ],
    );
    fx.write(&repo, ".gitattributes", "*.txt filter=upper\n");
    fx.commit(&repo, "a.txt", "hello\n", "first");
    fx.write(&repo, "b.txt", "really changed\n");
    fx.git(&repo, &["add", "b.txt"]);
    fx.commit(&repo, "b.txt", "really changed\n", "second");
    fx.write(&repo, "b.txt", "changed again\n");
    stat_dirty(&repo.join("a.txt"));
    let plain = plain_status_paths(&fx, &repo);
    assert_eq!(plain, ["b.txt"]);

    let roots = work.to_str().unwrap();
    let args = json!({ "repoPath": repo });
    // Default: not run, and said so.
    stat_dirty(&repo.join("a.txt"));
    let mut server = fx.server(&["--allowed-root", roots], &[]);
    let result = server.call("worktree.changes", args.clone());
    assert_eq!(result["disarmedFilters"], json!(["upper"]), "{result}");
    assert_eq!(changed_paths(&result), ["a.txt", "b.txt"]);
    let status = server.call("repo.status", args.clone());
    assert_eq!(status["disarmedFilters"], json!(["upper"]), "{status}");
    let radar = server.call("fleet.radar", json!({ "repoPaths": [&repo] }));
    let entry = &radar["data"]["entries"][0];
    assert_eq!(entry["disarmedFilters"], json!(["upper"]), "{radar}");

    // Trusted: runs, and the answer is git's.
    let trusted = [("GITWARD_TRUSTED_DRIVERS", "lfs, upper")];
    let mut server = fx.server(&["--allowed-root", roots], &trusted);
    stat_dirty(&repo.join("a.txt"));
    let result = server.call("worktree.changes", args.clone());
    assert!(result.get("disarmedFilters").is_none(), "{result}");
    assert_eq!(changed_paths(&result), plain);
    let diff = server.call("diff.text", args.clone());
    assert!(
        !diff["data"]["diff"].as_str().unwrap().contains("a.txt"),
        "{diff}"
    );
    let radar = server.call("fleet.radar", json!({ "repoPaths": [&repo] }));
    let entry = &radar["data"]["entries"][0];
    assert!(entry.get("disarmedFilters").is_none(), "{radar}");
    assert_eq!(entry["changedFiles"], 1, "{radar}");

    // Trusted by name, but the program lives inside an allowed root: not run.
    let marker = fx.path("ran-something");
    let inside = canary(&fx, "evil", &marker);
    let planted = work.join("evil");
    std::fs::rename(&inside, &planted).unwrap();
    fx.git(
        &repo,
        &["config", "filter.upper.clean", planted.to_str().unwrap()],
    );
    let mut server = fx.server(&["--allowed-root", roots], &trusted);
    stat_dirty(&repo.join("a.txt"));
    let result = server.call("worktree.changes", args.clone());
    assert_eq!(result["disarmedFilters"], json!(["upper"]), "{result}");
    assert!(!marker.exists(), "a program inside an allowed root ran");
    // …and inside the repository, or through a shell, neither.
    for command in ["./evil", "sh -c ../evil"] {
        std::fs::copy(&planted, repo.join("evil")).unwrap();
        fx.git(&repo, &["config", "filter.upper.clean", command]);
        let mut server = fx.server(&[], &trusted);
        stat_dirty(&repo.join("a.txt"));
        let result = server.call("worktree.changes", args.clone());
        assert_eq!(
            result["disarmedFilters"],
            json!(["upper"]),
            "{command}: {result}"
        );
        assert!(!marker.exists(), "{command} ran");
    }
}
