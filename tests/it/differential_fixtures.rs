//! The repositories of the differential suite. Each is built twice, once for the gateway
//! and once for plain git, by the same commands at the same date, so both copies hold
//! the same objects and refs and every absolute path differs only in its side.
//!
//! Every fixture has one shape, so every operation of the suite means something in each:
//! `main` (checked out, one commit ahead of `origin/main`), `merged` (behind main),
//! `feature` (one commit ahead of main), `side` (diverged, no conflict), a submodule `lib`
//! whose checkout is one commit past its pointer, a canary hook for every hook git runs,
//! and a worktree with a staged, an unstaged, an untracked and an ignored file. A fixture
//! adds its own twist: line endings, sparse checkout, split index, …

use std::path::{Path, PathBuf};

use crate::common::{Fixture, write_executable};
use crate::differential_support::git;

/// Hooks that write a line to the canary log when git runs them.
const HOOKS: &[&str] = &[
    "pre-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-merge-commit",
    "post-merge",
    "post-checkout",
    "pre-rebase",
    "post-rewrite",
    "pre-push",
    "pre-auto-gc",
];

/// One fixture: a name and its twist.
#[derive(Clone, Copy)]
pub struct Shape {
    pub name: &'static str,
    /// Before the first commit (configuration, attributes).
    pub before: fn(&Fixture, &Path),
    /// After the history is built, before the worktree is dirtied.
    pub after: fn(&Fixture, &Path, &Path) -> Option<PathBuf>,
}

fn nothing(_: &Fixture, _: &Path) {}
fn same(_: &Fixture, _: &Path, _: &Path) -> Option<PathBuf> {
    None
}

/// The fixtures of every operation.
pub const SHAPES: &[Shape] = &[
    Shape {
        name: "plain",
        before: nothing,
        after: same,
    },
    Shape {
        name: "eol",
        before: eol,
        after: same,
    },
    Shape {
        name: "sparse-cone",
        before: nothing,
        after: sparse_cone,
    },
    Shape {
        name: "sparse-nocone",
        before: nothing,
        after: sparse_nocone,
    },
    Shape {
        name: "linked",
        before: nothing,
        after: linked,
    },
    Shape {
        name: "split-index",
        before: nothing,
        after: split_index,
    },
    Shape {
        name: "split-sparse",
        before: nothing,
        after: split_sparse,
    },
    Shape {
        name: "tracked-ignored",
        before: nothing,
        after: tracked_ignored,
    },
    Shape {
        name: "caches",
        before: nothing,
        after: caches,
    },
    Shape {
        name: "filter",
        before: filter,
        after: same,
    },
];

/// `core.autocrlf`, `eol` and `text` attributes: CRLF text, LF text, binary.
fn eol(fx: &Fixture, repo: &Path) {
    git(fx, repo, &["config", "core.autocrlf", "input"]);
    fx.write(
        repo,
        ".gitattributes",
        "*.txt text eol=crlf\n*.bin -text\n*.lf text eol=lf\n",
    );
    std::fs::write(repo.join("w.bin"), b"raw\r\nbytes\n").unwrap();
    std::fs::write(repo.join("x.lf"), b"lf\r\nfile\r\n").unwrap();
}

fn sparse_cone(fx: &Fixture, repo: &Path, _: &Path) -> Option<PathBuf> {
    git(fx, repo, &["sparse-checkout", "set", "--cone", "dir2"]);
    None
}

fn sparse_nocone(fx: &Fixture, repo: &Path, _: &Path) -> Option<PathBuf> {
    git(
        fx,
        repo,
        &["sparse-checkout", "set", "--no-cone", "/*", "!/dir1/"],
    );
    None
}

/// The repository path is a linked worktree on branch `work` (at main).
fn linked(fx: &Fixture, repo: &Path, side: &Path) -> Option<PathBuf> {
    let at = side.join("linked");
    git(
        fx,
        repo,
        &["worktree", "add", "-q", "-b", "work", at.to_str().unwrap()],
    );
    Some(at)
}

fn split_index(fx: &Fixture, repo: &Path, _: &Path) -> Option<PathBuf> {
    git(fx, repo, &["config", "core.splitIndex", "true"]);
    git(fx, repo, &["update-index", "--split-index"]);
    None
}

/// A cone sparse checkout whose skip-worktree entries live only in the shared index of
/// a split index: the split file itself lists none of them.
fn split_sparse(fx: &Fixture, repo: &Path, side: &Path) -> Option<PathBuf> {
    sparse_cone(fx, repo, side);
    split_index(fx, repo, side)
}

/// `side` and `feature` track `i.env`, the file `main` ignores and holds on disk: a
/// checkout of either (a switch, a merge, a rebase) overwrites it, as git treats an
/// ignored file as expendable.
fn tracked_ignored(fx: &Fixture, repo: &Path, _: &Path) -> Option<PathBuf> {
    for (branch, text) in [
        ("side", "tracked on side\n"),
        ("feature", "tracked on feature\n"),
    ] {
        git(fx, repo, &["switch", "-q", branch]);
        fx.write(repo, "i.env", text);
        git(fx, repo, &["add", "-f", "i.env"]);
        git(fx, repo, &["commit", "-q", "-m", "track i.env"]);
    }
    git(fx, repo, &["switch", "-q", "main"]);
    None
}

/// The untracked cache and a hook fsmonitor (which says "anything may have changed").
fn caches(fx: &Fixture, repo: &Path, _: &Path) -> Option<PathBuf> {
    write_executable(
        &repo.join(".git/fsmon"),
        "#!/bin/sh\nprintf 'token\\0/\\0'\n",
    );
    git(fx, repo, &["config", "core.untrackedCache", "true"]);
    git(fx, repo, &["config", "core.fsmonitor", ".git/fsmon"]);
    git(fx, repo, &["config", "core.fsmonitorHookVersion", "2"]);
    git(fx, repo, &["update-index", "--untracked-cache"]);
    git(fx, repo, &["status", "--porcelain"]);
    None
}

/// An LFS-style clean/smudge filter (`rev` reverses each line, both ways).
fn filter(fx: &Fixture, repo: &Path) {
    git(fx, repo, &["config", "filter.rev.clean", "rev"]);
    git(fx, repo, &["config", "filter.rev.smudge", "rev"]);
    git(fx, repo, &["config", "filter.rev.required", "true"]);
    fx.write(repo, ".gitattributes", "*.dat filter=rev\n");
    fx.write(repo, "blob.dat", "stored reversed\n");
}

fn canaries(repo: &Path) {
    for hook in HOOKS {
        write_executable(
            &repo.join(".git/hooks").join(hook),
            &format!(
                "#!/bin/sh\necho \"{hook} $*\" >> \"$(git rev-parse --git-common-dir)/canary.log\"\n"
            ),
        );
    }
}

/// Builds `shape` under `side`; the repository path the operations name.
pub fn build(fx: &Fixture, side: &Path, shape: Shape) -> PathBuf {
    std::fs::create_dir_all(side).unwrap();
    let lib = side.join("libsrc");
    std::fs::create_dir_all(&lib).unwrap();
    git(fx, &lib, &["init", "-q"]);
    commit(fx, &lib, "l.txt", "lib one\n", "lib one");
    let repo = side.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(fx, &repo, &["init", "-q"]);
    canaries(&repo);
    (shape.before)(fx, &repo);
    fx.write(&repo, "a.txt", "one\ntwo\n");
    fx.write(&repo, "p.txt", "patch me\n");
    fx.write(&repo, "dir1/d.txt", "dee\n");
    fx.write(&repo, "dir2/e.txt", "eee\n");
    fx.write(&repo, ".gitignore", "*.env\n");
    write_executable(&repo.join("run.sh"), "#!/bin/sh\n");
    std::os::unix::fs::symlink("a.txt", repo.join("link")).unwrap();
    git(fx, &repo, &["add", "-A"]);
    git(fx, &repo, &["commit", "-q", "-m", "base"]);
    // Relative, so `.gitmodules` (a tracked file) is the same on both sides.
    git(fx, &repo, &["submodule", "add", "-q", "../libsrc", "lib"]);
    git(fx, &repo, &["commit", "-q", "-m", "add lib"]);
    git(fx, &repo, &["branch", "merged"]);
    git(fx, &repo, &["switch", "-q", "-c", "side"]);
    commit(fx, &repo, "dir2/s2.txt", "side\n", "side work");
    git(fx, &repo, &["switch", "-q", "main"]);
    commit(fx, &repo, "dir1/m.txt", "main\n", "main two");
    let origin = side.join("origin.git");
    git(
        fx,
        side,
        &["clone", "-q", "--bare", "repo", origin.to_str().unwrap()],
    );
    git(
        fx,
        &repo,
        &["remote", "add", "origin", origin.to_str().unwrap()],
    );
    git(fx, &repo, &["fetch", "-q", "origin"]);
    git(fx, &repo, &["branch", "-q", "-u", "origin/main"]);
    commit(fx, &repo, "dir2/n.txt", "not pushed\n", "main three");
    git(fx, &repo, &["switch", "-q", "-c", "feature"]);
    commit(fx, &repo, "f.txt", "feature\n", "feature work");
    git(fx, &repo, &["switch", "-q", "main"]);
    commit(fx, &repo.join("lib"), "l.txt", "lib two\n", "lib two");
    let at = (shape.after)(fx, &repo, side).unwrap_or(repo);
    fx.write(&at, "i.env", "ignored, kept\n");
    fx.write(&at, "u.txt", "untracked\n");
    at
}

/// Adds a staged and an unstaged change to the worktree at `at`.
pub fn dirty(fx: &Fixture, at: &Path) {
    fx.write(at, "a.txt", "one\ntwo\nunstaged\n");
    fx.write(at, "s.txt", "staged\n");
    git(fx, at, &["add", "s.txt"]);
}

/// Writes `rel` and commits everything at the fixed date.
pub fn commit(fx: &Fixture, repo: &Path, rel: &str, content: &str, message: &str) {
    fx.write(repo, rel, content);
    git(fx, repo, &["add", "-A"]);
    git(fx, repo, &["commit", "-q", "-m", message]);
}

/// A copy of the fixture built under `template` at `side` (`cp -a`), with the absolute
/// paths git wrote into its own files (remotes, submodules, linked worktrees) moved to
/// `side`: the same repositories as if built there, at the cost of a copy.
pub fn copy(template: &Path, side: &Path) {
    let ok = std::process::Command::new("cp")
        .arg("-a")
        .arg(template)
        .arg(side)
        .status()
        .unwrap();
    assert!(ok.success(), "cp -a {}", template.display());
    let (from, to) = (
        template.as_os_str().as_encoded_bytes(),
        side.as_os_str().as_encoded_bytes(),
    );
    let mut stack = vec![side.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let kind = entry.file_type().unwrap();
            let name = entry.file_name();
            if kind.is_dir() && name != "objects" && name != "hooks" {
                stack.push(path);
            } else if kind.is_file()
                && ["config", "gitdir", ".git"].contains(&name.to_str().unwrap_or_default())
            {
                let bytes = std::fs::read(&path).unwrap();
                if let Some(moved) = replace(&bytes, from, to) {
                    std::fs::write(&path, moved).unwrap();
                }
            }
        }
    }
}

fn replace(bytes: &[u8], from: &[u8], to: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let mut any = false;
    while i < bytes.len() {
        if bytes[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
            any = true;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    any.then_some(out)
}
