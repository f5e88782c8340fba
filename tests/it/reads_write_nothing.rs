//! Every read tool, taken from the served tool list, leaves `.git` exactly as it found
//! it: same names, same contents, on a repository where git would love to refresh the
//! index (every tracked file stat-dirty).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use crate::common::{Fixture, registry};

type Entry = (&'static str, Vec<u8>, SystemTime);

/// Every entry under `dir` by relative path: its kind, for files the contents, and its
/// modification time (a directory's moves when anything, a lock file say, was created
/// or removed in it).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Entry> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let rel = path.strip_prefix(dir).unwrap().to_path_buf();
            let mtime = meta.modified().unwrap();
            if meta.is_dir() {
                stack.push(path);
                out.insert(rel, ("dir", Vec::new(), mtime));
            } else if meta.is_file() {
                out.insert(rel, ("file", std::fs::read(&path).unwrap(), mtime));
            } else {
                out.insert(rel, ("other", Vec::new(), mtime));
            }
        }
    }
    out
}

/// The differences between two snapshots, for a readable failure. With `freshen`, a
/// new modification time alone is allowed on existing object files: when `merge-tree`
/// computes an object the repository already has, git "freshens" that object's loose
/// file or pack instead of writing it, and offers no way to avoid it.
fn changes(
    before: &BTreeMap<PathBuf, Entry>,
    after: &BTreeMap<PathBuf, Entry>,
    freshen: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    for (path, entry) in after {
        match before.get(path) {
            None => out.push(format!("added {}", path.display())),
            Some(old) if (old.0, &old.1) != (entry.0, &entry.1) => {
                out.push(format!("changed {}", path.display()))
            }
            Some(old) if old.2 != entry.2 && !(freshen && is_object_file(path, entry.0)) => {
                out.push(format!("touched {}", path.display()))
            }
            _ => {}
        }
    }
    for path in before.keys().filter(|p| !after.contains_key(*p)) {
        out.push(format!("removed {}", path.display()));
    }
    out
}

/// A pack or a loose object file.
fn is_object_file(path: &Path, kind: &str) -> bool {
    let text = path.to_string_lossy();
    kind == "file"
        && text.starts_with("objects/")
        && (text.ends_with(".pack") || !text.starts_with("objects/pack/"))
        && !text.starts_with("objects/info/")
}

/// The tools that run `merge-tree` and so may freshen existing objects.
const MERGES: &[&str] = &["repo.conflictPreflight", "fleet.radar"];

/// Extra calls that reach other code paths of the same tools.
fn variants(repo: &Path) -> Vec<(&'static str, Value)> {
    vec![
        ("diff.text", json!({ "repoPath": repo, "base": "HEAD~1" })),
        ("diff.text", json!({ "repoPath": repo, "staged": true })),
        ("diff.text", json!({ "repoPath": repo, "path": "d1" })),
        (
            "diff.semanticFallbacks",
            json!({ "repoPath": repo, "base": "HEAD~1" }),
        ),
        (
            "repo.conflictPreflight",
            json!({ "repoPath": repo, "targetRef": "feat", "mode": "rebase" }),
        ),
        (
            "repo.conflictPreflight",
            json!({ "repoPath": repo, "targetRef": "same" }),
        ),
        ("fleet.radar", json!({ "repoPaths": [repo] })),
        ("repo.history", json!({ "repoPath": repo, "path": "d1" })),
    ]
}

#[test]
fn every_read_tool_leaves_git_dir_untouched_on_a_stat_dirty_repository() {
    let fx = Fixture::new();
    let origin = fx.init("origin", &[]);
    for i in 0..200 {
        fx.write(
            &origin,
            &format!("d{}/f{i:03}.txt", i % 4),
            &format!("{i}\n"),
        );
    }
    fx.commit(&origin, "c.txt", "base\n", "base");
    let repo = fx.clone(&origin, "repo", false);
    // `feat` conflicts with main; `same` makes main's change again, so merging it writes
    // objects that already exist.
    fx.git(&repo, &["checkout", "-q", "-b", "feat"]);
    fx.commit(&repo, "c.txt", "feat\n", "feat");
    fx.git(&repo, &["checkout", "-q", "-b", "same", "main"]);
    fx.commit(&repo, "d1/f001.txt", "same change\n", "same");
    fx.git(&repo, &["checkout", "-q", "main"]);
    fx.commit(&repo, "d1/f001.txt", "same change\n", "main");
    fx.commit(&repo, "c.txt", "main\n", "main again");
    fx.commit(&origin, "d2/f002.txt", "upstream\n", "upstream moved");
    fx.git(&repo, &["fetch", "-q"]);
    fx.write(&repo, "c.txt", "stashed\n");
    fx.git(&repo, &["stash", "-q"]);
    fx.git(&repo, &["gc", "-q"]);
    // Stat-dirty: every tracked file's time moves, one file really changes.
    let ahead = SystemTime::now() + Duration::from_secs(120);
    for i in 0..200 {
        let path = repo.join(format!("d{}/f{i:03}.txt", i % 4));
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(ahead).unwrap();
    }
    fx.write(&repo, "d3/f003.txt", "changed in the worktree\n");
    fx.write(&repo, "untracked.txt", "new\n");

    let mut before = snapshot(&repo.join(".git"));
    let mut server = fx.server(&[], &[]);
    let mut calls = registry::read_tool_calls(&mut server, &repo);
    assert!(calls.len() >= 15, "{calls:?}");
    calls.extend(variants(&repo).into_iter().map(|(t, a)| (t.to_owned(), a)));
    for (tool, args) in &calls {
        let reply = server.request("tools/call", json!({ "name": tool, "arguments": args }));
        assert!(reply["result"].is_object(), "{tool}: {reply}");
        let after = snapshot(&repo.join(".git"));
        assert_eq!(
            changes(&before, &after, MERGES.contains(&tool.as_str())),
            Vec::<String>::new(),
            "{tool} {args} wrote into .git"
        );
        before = after;
    }

    // Plain git does rewrite the index here: the test can tell.
    fx.git(&repo, &["status", "--short"]);
    assert_ne!(
        changes(&before, &snapshot(&repo.join(".git")), false),
        Vec::<String>::new()
    );
}

#[test]
fn a_symlinked_index_is_refused_not_followed() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "one\n", "first");
    fx.write(&repo, "a.txt", "two\n");
    let elsewhere = fx.path("elsewhere-index");
    std::fs::rename(repo.join(".git/index"), &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, repo.join(".git/index")).unwrap();
    let result = fx.call("diff.text", json!({ "repoPath": repo }));
    let error = &result["error"];
    assert!(
        error["message"].as_str().unwrap().contains("symbolic link"),
        "{result}"
    );
    assert_ne!(error["code"], -32603, "{result}");
}
