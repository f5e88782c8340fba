//! Reading `HEAD` and branch, tag and remote-tracking refs from the files git keeps them
//! in, without a git process: the loose file when there is one, else `packed-refs`.
//!
//! Git writes a loose ref by renaming a finished lock file over it and rewrites
//! `packed-refs` the same way (packing first, removing the loose file after), so a loose
//! read then a packed read always sees one of the ref's real values — git reads in this
//! order too. Anything this reader does not handle with certainty yields `None` and the
//! caller asks git: the reftable backend, a symbolic ref other than `HEAD`, a symlinked
//! ref, an unreadable or unexpected file, a namespace that lives per worktree.

use std::io::ErrorKind;
use std::path::Path;

use super::{Oid, Repo};

/// What a ref holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefValue {
    /// `HEAD` naming a branch (full name), with the branch's commit when it has one.
    Symbolic { target: String, oid: Option<Oid> },
    /// A detached `HEAD` or any other ref: its object id.
    At(Oid),
    /// No such ref.
    Absent,
}

/// The largest loose ref file read (a ref is one line).
const MAX_LOOSE: u64 = 4096;

/// `HEAD` (symbolic target and commit, or detached commit) or the full ref `name`
/// (`refs/heads/…`, `refs/tags/…`, `refs/remotes/…`, `refs/stash`); `None` when git
/// must be asked.
pub fn read(repo: &Repo, name: &str) -> Option<RefValue> {
    if uses_reftable(repo) {
        return None;
    }
    if name == "HEAD" {
        // An old-style symlinked HEAD would read as its branch's commit: left to git.
        return match loose_file(&repo.git_dir.join("HEAD"))?? {
            Loose::Symbolic(target) => {
                if !shared(&target) {
                    return None;
                }
                let oid = match shared_ref(repo, &target)? {
                    Some(Loose::Oid(oid)) => Some(oid),
                    None => None,
                    Some(Loose::Symbolic(_)) => return None,
                };
                Some(RefValue::Symbolic { target, oid })
            }
            Loose::Oid(oid) => Some(RefValue::At(oid)),
        };
    }
    if !shared(name) {
        return None;
    }
    match shared_ref(repo, name)? {
        Some(Loose::Oid(oid)) => Some(RefValue::At(oid)),
        Some(Loose::Symbolic(_)) => None,
        None => Some(RefValue::Absent),
    }
}

/// The branch a short name such as `feature` means to git (`git help revisions`: the
/// first of `<name>`, `refs/<name>`, `refs/tags/<name>`, `refs/heads/<name>`,
/// `refs/remotes/<name>`, `refs/remotes/<name>/HEAD` that exists) with its commit, when
/// that first ref is a local branch — git keeps only commits there. `None` when git must
/// be asked: the first match is a tag or anything else, the name could be read as an
/// object id, or a candidate cannot be read with certainty.
pub fn branch_named(repo: &Repo, name: &str) -> Option<(String, Oid)> {
    if uses_reftable(repo) || super::args::check_ref_name("name", name).is_err() {
        return None;
    }
    let hex = name.bytes().all(|b| b.is_ascii_hexdigit());
    if hex || name == "HEAD" {
        return None;
    }
    if name.starts_with("refs/") {
        if !name.starts_with("refs/heads/") || !common(name) {
            return None;
        }
        return match shared_ref(repo, name)?? {
            Loose::Oid(oid) => Some((name.to_owned(), oid)),
            Loose::Symbolic(_) => None,
        };
    }
    // A file of that name in the git directory (`ORIG_HEAD`, …) comes first.
    for dir in [&repo.git_dir, &repo.common_dir] {
        if std::fs::symlink_metadata(dir.join(name)).is_ok() {
            return None;
        }
    }
    let candidates = [
        format!("refs/{name}"),
        format!("refs/tags/{name}"),
        format!("refs/heads/{name}"),
        format!("refs/remotes/{name}"),
        format!("refs/remotes/{name}/HEAD"),
    ];
    for candidate in candidates {
        if !common(&candidate) {
            return None;
        }
        match shared_ref(repo, &candidate)? {
            None => continue,
            Some(Loose::Oid(oid)) if candidate.starts_with("refs/heads/") => {
                return Some((candidate, oid));
            }
            Some(_) => return None,
        }
    }
    None
}

/// The branches checked out in the repository's worktrees (what `git worktree list`
/// shows as `branch`), read from each worktree's `HEAD`; `None` when git must be asked
/// (a linked worktree opened, whose main one may be bare; an unreadable `HEAD`).
pub fn checked_out(repo: &Repo) -> Option<Vec<String>> {
    if uses_reftable(repo) || repo.git_dir != repo.common_dir {
        return None;
    }
    let mut heads = Vec::new();
    if !repo.bare {
        heads.push(repo.git_dir.join("HEAD"));
    }
    match std::fs::read_dir(repo.common_dir.join("worktrees")) {
        Ok(dir) => {
            for entry in dir {
                let path = entry.ok()?.path();
                // Git lists a linked worktree only when it can read its `gitdir`.
                if path.join("gitdir").is_file() {
                    heads.push(path.join("HEAD"));
                }
            }
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(_) => return None,
    }
    let mut out = Vec::new();
    for head in heads {
        match loose_file(&head)?? {
            Loose::Symbolic(target) => out.push(target),
            Loose::Oid(_) => {}
        }
    }
    Some(out)
}

/// A name under `refs/` kept in the common directory, in a form read the same way as a
/// file name: the per-worktree namespaces are left to git.
fn common(name: &str) -> bool {
    let per_worktree = ["refs/bisect/", "refs/worktree/", "refs/rewritten/"]
        .iter()
        .any(|p| name.starts_with(p));
    name.starts_with("refs/") && !per_worktree && plain(name)
}

fn plain(name: &str) -> bool {
    !name.contains("..")
        && !name.contains("//")
        && !name.ends_with('/')
        && !name.ends_with(".lock")
        && name.bytes().all(|b| b > b' ' && b != 0x7f && b != b'\\')
}

/// Refs every worktree shares, in the common directory; `refs/bisect/`, `refs/worktree/`
/// and the like live per worktree and are left to git.
fn shared(name: &str) -> bool {
    let known = ["refs/heads/", "refs/tags/", "refs/remotes/"]
        .iter()
        .any(|p| name.strip_prefix(p).is_some_and(|rest| !rest.is_empty()));
    (known || name == "refs/stash") && plain(name)
}

/// The repository keeps its refs in a reftable (`extensions.refStorage`), whose files
/// this reader does not parse.
fn uses_reftable(repo: &Repo) -> bool {
    repo.common_dir.join("reftable").exists()
}

enum Loose {
    Symbolic(String),
    Oid(Oid),
}

/// A loose ref file: `Some(None)` when it does not exist, `None` when it cannot be read
/// with certainty.
fn loose_file(path: &Path) -> Option<Option<Loose>> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == ErrorKind::NotFound => return Some(None),
        // `refs/heads/a` when `refs/heads/a/b` exists is a directory, or one of the
        // path's directories is a file: either way no loose ref by that name.
        Err(e) if e.kind() == ErrorKind::NotADirectory => return Some(None),
        Err(_) => return None,
    };
    if meta.is_dir() {
        return Some(None);
    }
    if !meta.is_file() || meta.len() > MAX_LOOSE {
        return None;
    }
    loose(path).map(Some)
}

fn loose(path: &Path) -> Option<Loose> {
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.strip_suffix('\n').unwrap_or(&text);
    if line.contains('\n') {
        return None;
    }
    if let Some(target) = line.strip_prefix("ref: ") {
        return Some(Loose::Symbolic(target.trim_end().to_owned()));
    }
    Oid::parse(line.trim_end()).map(Loose::Oid)
}

/// A shared ref: its loose file, else its line in `packed-refs`; `Some(None)` when it
/// is in neither.
fn shared_ref(repo: &Repo, name: &str) -> Option<Option<Loose>> {
    if let Some(found) = loose_file(&repo.common_dir.join(name))? {
        return Some(Some(found));
    }
    packed(&repo.common_dir.join("packed-refs"), name).map(|oid| oid.map(Loose::Oid))
}

/// `name`'s object id in `packed-refs`; `Some(None)` when absent.
fn packed(path: &Path, name: &str) -> Option<Option<Oid>> {
    let text = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == ErrorKind::NotFound => return Some(None),
        Err(_) => return None,
    };
    for line in text.split(|b| *b == b'\n') {
        if line.first().is_none_or(|b| *b == b'#' || *b == b'^') {
            continue;
        }
        let mut parts = line.splitn(2, |b| *b == b' ');
        let (Some(oid), Some(refname)) = (parts.next(), parts.next()) else {
            return None;
        };
        if refname == name.as_bytes() {
            let oid = Oid::parse(std::str::from_utf8(oid).ok()?)?;
            return Some(Some(oid));
        }
    }
    Some(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_shared_namespaces_are_read_here() {
        for name in [
            "refs/heads/main",
            "refs/tags/v1",
            "refs/remotes/o/x",
            "refs/stash",
        ] {
            assert!(shared(name), "{name}");
        }
        for name in [
            "refs/heads/",
            "refs/bisect/bad",
            "refs/worktree/x",
            "refs/heads/a..b",
            "refs/heads/x.lock",
            "refs/heads/a b",
            "HEAD",
        ] {
            assert!(!shared(name), "{name}");
        }
    }

    #[test]
    fn packed_refs_lines_are_matched_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("packed-refs");
        let a = "a".repeat(40);
        let b = "b".repeat(40);
        std::fs::write(
            &path,
            format!("# pack-refs with: peeled fully-peeled sorted\n{a} refs/heads/main\n{b} refs/tags/v1\n^{a}\n"),
        )
        .unwrap();
        assert_eq!(
            packed(&path, "refs/heads/main"),
            Some(Some(Oid::parse(&a).unwrap()))
        );
        assert_eq!(
            packed(&path, "refs/tags/v1"),
            Some(Some(Oid::parse(&b).unwrap()))
        );
        assert_eq!(packed(&path, "refs/heads/mai"), Some(None));
        assert_eq!(
            packed(&dir.path().join("none"), "refs/heads/main"),
            Some(None)
        );
    }
}
