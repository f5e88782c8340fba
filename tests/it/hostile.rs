//! Hostile input and hostile repositories: no read tool may write a file, run a program
//! the repository names, or touch the index.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::common::{Fixture, write_executable};

/// Revision values that would act as options, or smuggle a second line or argument.
pub fn hostile_revs(marker: &Path) -> Vec<String> {
    vec![
        format!("--output={}", marker.display()),
        "-n".to_owned(),
        "--all".to_owned(),
        "HEAD\0--output=x".to_owned(),
        "HEAD\n--output=x".to_owned(),
        String::new(),
    ]
}

/// Path values that escape the repository or cannot be a file name. (Pathspec magic such
/// as `:(glob)**` is a literal name to us, so it is not refused but matches no file.)
pub fn hostile_paths() -> Vec<String> {
    vec![
        "../outside".to_owned(),
        "a/../../b".to_owned(),
        "/etc/passwd".to_owned(),
        "a/..".to_owned(),
        "a\0b".to_owned(),
    ]
}

/// Writes an executable script that leaves `marker` behind when anything runs it.
fn marker_script(dir: &Path, name: &str, marker: &Path) -> PathBuf {
    let script = dir.join(name);
    write_executable(
        &script,
        &format!("#!/bin/sh\necho \"$0 $*\" >> '{}'\ncat\n", marker.display()),
    );
    script
}

fn index_state(repo: &Path) -> (Vec<u8>, std::time::SystemTime) {
    let index = repo.join(".git/index");
    (
        std::fs::read(&index).unwrap(),
        std::fs::metadata(&index).unwrap().modified().unwrap(),
    )
}

#[test]
fn a_hostile_repository_runs_nothing_and_changes_nothing() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.write(&repo, ".gitattributes", "* filter=evil diff=evil\n");
    let first = fx.commit(&repo, "a.txt", "one\n", "first");
    fx.commit(&repo, "a.txt", "one\ntwo\n", "second");
    fx.git(&repo, &["worktree", "add", "-q", "../linked"]);

    let marker = fx.path("ran-something");
    let bin = fx.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = marker_script(&bin, "evil", &marker);
    let s = script.display().to_string();
    for (key, value) in [
        ("core.fsmonitor", s.as_str()),
        ("diff.external", s.as_str()),
        ("core.pager", s.as_str()),
        ("filter.evil.clean", s.as_str()),
        ("filter.evil.smudge", s.as_str()),
        ("filter.evil.required", "true"),
        ("diff.evil.textconv", s.as_str()),
        ("diff.evil.command", s.as_str()),
        ("core.hooksPath", bin.to_str().unwrap()),
    ] {
        fx.git(&repo, &["config", key, value]);
    }
    // Worktree changes for status and diff to look at, written without running git.
    std::fs::write(repo.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(repo.join("new.txt"), "untracked\n").unwrap();
    // Make sure the index is older than the files, so a refresh would have work to do.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    std::fs::write(repo.join("a.txt"), "one\ntwo\nthree\nfour\n").unwrap();
    let before = index_state(&repo);

    let mut server = fx.server(&[], &[]);
    let r = json!(repo);
    let calls = [
        ("repo.status", json!({ "repoPath": r })),
        ("repo.refs", json!({ "repoPath": r })),
        ("repo.history", json!({ "repoPath": r })),
        ("repo.history", json!({ "repoPath": r, "path": "a.txt" })),
        ("commit.details", json!({ "repoPath": r, "commit": "HEAD" })),
        ("commit.details", json!({ "repoPath": r, "commit": first })),
        ("worktree.changes", json!({ "repoPath": r })),
        ("worktree.list", json!({ "repoPath": r })),
        ("diff.text", json!({ "repoPath": r })),
        ("diff.text", json!({ "repoPath": r, "staged": true })),
        ("diff.text", json!({ "repoPath": r, "base": "HEAD~1" })),
        (
            "diff.text",
            json!({ "repoPath": r, "base": "HEAD~1", "head": "HEAD" }),
        ),
    ];
    for (tool, args) in calls {
        let result = server.call(tool, args.clone());
        assert!(result.get("error").is_none(), "{tool} {args}: {result}");
        assert!(
            !marker.exists(),
            "{tool} ran a repository-chosen program: {}",
            std::fs::read_to_string(&marker).unwrap_or_default()
        );
        if tool == "diff.text" && args.get("staged").is_none() {
            assert!(
                !result["data"]["diff"].as_str().unwrap().is_empty(),
                "{result}"
            );
        }
    }
    let changes = server.call("worktree.changes", json!({ "repoPath": r }));
    assert_eq!(changes["data"]["unstaged"][0]["path"], "a.txt");
    assert_eq!(index_state(&repo), before, "the index was rewritten");

    // The same git, run plainly, does run the script: the test can tell.
    fx.git(&repo, &["diff", "--ext-diff"]);
    assert!(marker.exists(), "the hostile configuration is live");
}

#[test]
fn a_filter_defined_in_worktree_config_never_runs() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.write(&repo, ".gitattributes", "* filter=evil\n");
    fx.commit(&repo, "a.txt", "one\n", "first");
    let marker = fx.path("ran-something");
    let bin = fx.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = marker_script(&bin, "evil", &marker);
    fx.git(&repo, &["config", "extensions.worktreeConfig", "true"]);
    fx.git(
        &repo,
        &[
            "config",
            "--worktree",
            "filter.evil.clean",
            script.to_str().unwrap(),
        ],
    );
    std::fs::write(repo.join("a.txt"), "one\ntwo\n").unwrap();

    let result = fx.call("diff.text", json!({ "repoPath": repo }));
    assert!(result.get("error").is_none(), "{result}");
    assert!(
        result["data"]["diff"].as_str().unwrap().contains("+two"),
        "{result}"
    );
    assert!(!marker.exists(), "a worktree-scoped filter ran");

    // The same git, run plainly, does run the filter: the test can tell.
    fx.git(&repo, &["diff"]);
    assert!(marker.exists(), "the worktree filter is live");
}

#[test]
fn too_many_drivers_to_disarm_is_an_error_not_a_run() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.write(&repo, ".gitattributes", "* filter=evil\n");
    fx.commit(&repo, "a.txt", "one\n", "first");
    let marker = fx.path("ran-something");
    let bin = fx.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = marker_script(&bin, "evil", &marker);
    // Enough decoy drivers that their names overflow the list read to disarm them, with
    // the real one last.
    let mut config = std::fs::read_to_string(repo.join(".git/config")).unwrap();
    for i in 0..12_000 {
        config.push_str(&format!("[filter \"decoy{i:05}\"]\n\tclean = cat\n"));
    }
    config.push_str(&format!(
        "[filter \"evil\"]\n\tclean = {}\n",
        script.display()
    ));
    std::fs::write(repo.join(".git/config"), config).unwrap();
    std::fs::write(repo.join("a.txt"), "one\ntwo\n").unwrap();

    let result = fx.call("diff.text", json!({ "repoPath": repo }));
    assert!(result.get("error").is_some(), "{result}");
    assert!(!marker.exists(), "a filter ran");

    // The same git, run plainly, does run the filter: the test can tell.
    fx.git(&repo, &["diff"]);
    assert!(marker.exists(), "the filter is live");
}
