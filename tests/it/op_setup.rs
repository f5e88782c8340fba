//! The repositories the rebase, patch, push, branchDelete and submodulePointer end-to-end
//! tests start from, and the plain-git side they are compared with. Shared by the tests
//! that drive the human API and the ones that click in the page; every setup takes the
//! name it lives under, so several fit in one fixture.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::Fixture;

/// A copy of `repo` as it is now (`cp -a`), for plain git to act on.
pub fn twin(fx: &Fixture, repo: &Path, name: &str) -> PathBuf {
    let dest = fx.path(name);
    let ok = Command::new("cp")
        .arg("-a")
        .arg(repo)
        .arg(&dest)
        .status()
        .unwrap();
    assert!(ok.success(), "cp -a {}", repo.display());
    dest
}

/// `main` with one commit of its own, `topic` (checked out) with two, and an untracked
/// file a rebase keeps.
pub fn diverged(fx: &Fixture, rel: &str) -> PathBuf {
    let repo = fx.init(rel, &[]);
    fx.commit(&repo, "a.txt", "one\n", "base");
    fx.git(&repo, &["switch", "-q", "-c", "topic"]);
    fx.commit(&repo, "t1.txt", "t1\n", "topic one");
    fx.commit(&repo, "t2.txt", "t2\n", "topic two");
    fx.git(&repo, &["switch", "-q", "main"]);
    fx.commit(&repo, "m.txt", "m\n", "main moves");
    fx.git(&repo, &["switch", "-q", "topic"]);
    fx.write(&repo, "loose.txt", "untracked, kept\n");
    repo
}

/// A patch that changes `a.txt` (`one\n` → `one\ntwo\n`) and adds `dir/new.txt`.
pub const PATCH: &str = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,2 @@\n one\n+two\n\
diff --git a/dir/new.txt b/dir/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/dir/new.txt\n@@ -0,0 +1 @@\n+fresh\n";

/// Plain `git apply [--index]` of `patch` in `repo`.
pub fn plain_apply(repo: &Path, fx: &Fixture, patch: &str, index: bool) {
    let mut cmd = Command::new("git");
    cmd.current_dir(repo).arg("apply");
    if index {
        cmd.arg("--index");
    }
    cmd.arg("-").stdin(Stdio::piped()).env_clear();
    cmd.env("PATH", std::env::var_os("PATH").unwrap_or_default());
    for (k, v) in fx.env() {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(patch.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
}

/// A bare clone of `repo` as its `origin`, fetched; returns the bare repository.
pub fn with_origin(fx: &Fixture, repo: &Path, name: &str) -> PathBuf {
    let bare = fx.clone(repo, name, true);
    fx.git(repo, &["remote", "add", "origin", bare.to_str().unwrap()]);
    fx.git(repo, &["fetch", "-q", "origin"]);
    bare
}

/// Every ref of a (bare) remote with its object.
pub fn remote_refs(fx: &Fixture, bare: &Path) -> String {
    fx.git(bare, &["for-each-ref", "--format=%(refname) %(objectname)"])
}

/// main with three commits; `merged` inside it; `up` ahead of main but contained in its
/// upstream `origin/up`; `unmerged` with a commit nowhere else; `wt` merged but checked
/// out in the linked worktree `<rel>-linked`; a local edit on main.
pub fn branches_to_tidy(fx: &Fixture, rel: &str) -> PathBuf {
    let repo = fx.init(rel, &[]);
    fx.commit(&repo, "a.txt", "one\n", "first");
    fx.git(&repo, &["branch", "merged"]);
    fx.git(&repo, &["branch", "wt"]);
    fx.commit(&repo, "a.txt", "one\ntwo\n", "second");
    fx.git(&repo, &["checkout", "-q", "-b", "up"]);
    fx.commit(&repo, "up.txt", "up\n", "pushed work");
    fx.git(&repo, &["update-ref", "refs/remotes/origin/up", "HEAD"]);
    fx.git(&repo, &["checkout", "-q", "-b", "unmerged", "main"]);
    fx.commit(&repo, "u.txt", "u\n", "local only");
    fx.git(&repo, &["checkout", "-q", "main"]);
    for (k, v) in [
        ("remote.origin.url", "https://example.invalid/none.git"),
        ("remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"),
        ("branch.up.remote", "origin"),
        ("branch.up.merge", "refs/heads/up"),
    ] {
        fx.git(&repo, &["config", k, v]);
    }
    let linked = fx.path(&format!("{rel}-linked"));
    fx.git(
        &repo,
        &["worktree", "add", "-q", linked.to_str().unwrap(), "wt"],
    );
    fx.write(&repo, "a.txt", "one\ntwo\nlocal edit\n");
    repo
}

/// The local branches and remote-tracking refs of `repo` with their tips.
pub fn branch_refs(fx: &Fixture, repo: &Path) -> String {
    fx.git(
        repo,
        &[
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            "refs/heads",
            "refs/remotes",
        ],
    )
}

/// A library with two commits under `rel`; returns (path, first, second).
pub fn library(fx: &Fixture, rel: &str) -> (PathBuf, String, String) {
    let repo = fx.init(rel, &[]);
    let first = fx.commit(&repo, "lib.txt", "v1\n", "lib v1");
    let second = fx.commit(&repo, "lib.txt", "v2\n", "lib v2");
    (repo, first, second)
}

/// `top` records `libs/lib` (cloned from the library at `lib_rel`) at the library's first
/// commit; the submodule has its second checked out (drifted, clean). Returns (first,
/// second).
pub fn drifted(fx: &Fixture, top: &Path, lib_rel: &str) -> (String, String) {
    let (lib, first, second) = library(fx, lib_rel);
    let url = lib.to_str().unwrap();
    fx.git(top, &["submodule", "add", "-q", url, "libs/lib"]);
    let sub = top.join("libs/lib");
    fx.git(&sub, &["checkout", "-q", "--detach", &first]);
    fx.git(top, &["add", "libs/lib"]);
    fx.git(top, &["commit", "-q", "-m", "add lib at v1"]);
    fx.git(&sub, &["checkout", "-q", "--detach", &second]);
    (first, second)
}
