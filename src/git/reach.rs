//! Everything a repository reads from must be inside the allowed roots, not only its
//! working tree.
//!
//! A `.git` file (`gitdir:`), a `.git` symlink, a linked worktree's `commondir` and
//! `objects/info/alternates` can each point at another repository, whose history and
//! blobs git would then serve. So the git directory, the common directory and every
//! alternate object directory (through alternates' own alternates, as deep as git goes)
//! are resolved and checked against the roots; the first one outside is named in the
//! refusal. With no roots configured every path is allowed and nothing is read.

use std::path::{Path, PathBuf};

use crate::safe_file::{self, Refusal};

/// Git stops following alternates of alternates past this depth.
const MAX_DEPTH: usize = 5;
/// An alternates file longer than this is not something we can vouch for.
const ALTERNATES_CAP: u64 = 64 * 1024;
/// At most this many alternate directories are checked before the repository is refused.
const MAX_ALTERNATES: usize = 64;

/// What was checked, canonical.
#[derive(Debug)]
pub struct Reach {
    pub git_dir: PathBuf,
    pub common_dir: PathBuf,
    /// The alternates files read, so a change to one can be noticed.
    pub alternates_files: Vec<PathBuf>,
}

/// Why a repository reaches outside the roots, in words that say how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outside(pub String);

fn inside(roots: &[PathBuf], path: &Path) -> bool {
    roots.is_empty() || roots.iter().any(|r| path.starts_with(r))
}

fn outside(roots: &[PathBuf], what: &str, path: &Path) -> Outside {
    let list: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
    Outside(format!(
        "its {what} {} is outside the allowed roots ({}); add an allowed root that contains it (--allowed-root or FLUXGIT_MCP_ALLOWED_ROOTS) to use this repository",
        path.display(),
        list.join(", ")
    ))
}

/// Checks the git directory, the common directory and every alternate against `roots`.
pub fn check(roots: &[PathBuf], git_dir: &Path, common_dir: &Path) -> Result<Reach, Outside> {
    if roots.is_empty() {
        return Ok(Reach {
            git_dir: git_dir.to_path_buf(),
            common_dir: common_dir.to_path_buf(),
            alternates_files: Vec::new(),
        });
    }
    let resolve = |what: &str, path: &Path| {
        let canonical = std::fs::canonicalize(path)
            .map_err(|_| Outside(format!("its {what} {} cannot be resolved", path.display())))?;
        if inside(roots, &canonical) {
            Ok(canonical)
        } else {
            Err(outside(roots, what, &canonical))
        }
    };
    let git_dir = resolve("git directory", git_dir)?;
    let common_dir = resolve("common git directory", common_dir)?;
    let mut reach = Reach {
        alternates_files: Vec::new(),
        git_dir,
        common_dir,
    };
    // Refs, packed refs, logs or config symlinked elsewhere would show another
    // repository's names, ids and settings. A shared hooks directory is common and
    // harmless here: reads never run hooks.
    for dir in [&reach.git_dir, &reach.common_dir] {
        symlinks_inside(roots, dir, "git directory entry", &["hooks"])?;
    }
    let objects = resolve("object directory", &reach.common_dir.join("objects"))?;
    let mut seen = vec![objects.clone()];
    let mut queue = vec![(objects, 0usize)];
    while let Some((objects, depth)) = queue.pop() {
        if depth > MAX_DEPTH {
            continue;
        }
        linked_objects(roots, &objects)?;
        let listed = match safe_file::read_in(&objects, "info/alternates", ALTERNATES_CAP) {
            Ok(bytes) => bytes,
            Err(Refusal::Missing) => continue,
            // Git would read it anyway (through a symlink, say): what it names is unknown.
            Err(why) => {
                return Err(Outside(format!(
                    "its alternates file {} cannot be checked ({why})",
                    objects.join("info/alternates").display()
                )));
            }
        };
        reach.alternates_files.push(objects.join("info/alternates"));
        for line in listed.split(|b| *b == b'\n') {
            let Some(entry) = alternate_entry(line) else {
                continue;
            };
            let path = objects.join(entry);
            // Git skips an alternate that does not exist; so can we.
            let Ok(canonical) = std::fs::canonicalize(&path) else {
                continue;
            };
            if !inside(roots, &canonical) {
                return Err(outside(roots, "alternate object directory", &canonical));
            }
            if seen.contains(&canonical) {
                continue;
            }
            if seen.len() > MAX_ALTERNATES {
                return Err(Outside(format!(
                    "it names more than {MAX_ALTERNATES} alternate object directories"
                )));
            }
            seen.push(canonical.clone());
            queue.push((canonical, depth + 1));
        }
    }
    Ok(reach)
}

/// Symlinks among an object directory's fan-out directories and packs lead git to
/// objects elsewhere: each must lead inside the roots too.
fn linked_objects(roots: &[PathBuf], objects: &Path) -> Result<(), Outside> {
    symlinks_inside(roots, objects, "object store entry", &[])?;
    symlinks_inside(roots, &objects.join("pack"), "object store entry", &[])
}

/// Every symlink directly in `dir`, except those named in `spared`, must lead inside the
/// roots (a dangling one leads nowhere git can read).
fn symlinks_inside(
    roots: &[PathBuf],
    dir: &Path,
    what: &str,
    spared: &[&str],
) -> Result<(), Outside> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        if !entry.file_type().is_ok_and(|t| t.is_symlink())
            || spared.iter().any(|name| entry.file_name() == **name)
        {
            continue;
        }
        let Ok(target) = std::fs::canonicalize(entry.path()) else {
            continue;
        };
        if !inside(roots, &target) {
            return Err(outside(roots, what, &target));
        }
    }
    Ok(())
}

/// One line of an alternates file as a path: blank lines and `#` comments are skipped,
/// and a line starting with `"` is C-quoted, as git writes it.
fn alternate_entry(line: &[u8]) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.is_empty() || line.first() == Some(&b'#') {
        return None;
    }
    let bytes = match line.strip_prefix(b"\"") {
        Some(quoted) => unquote(quoted)?,
        None => line.to_vec(),
    };
    Some(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
}

/// Git's C-style quoting, without the opening quote; `None` when it is malformed.
fn unquote(mut rest: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let (&b, tail) = rest.split_first()?;
        rest = tail;
        match b {
            b'"' => return Some(out),
            b'\\' => {
                let (&e, tail) = rest.split_first()?;
                rest = tail;
                out.push(match e {
                    b'a' => 7,
                    b'b' => 8,
                    b't' => b'\t',
                    b'n' => b'\n',
                    b'v' => 11,
                    b'f' => 12,
                    b'r' => b'\r',
                    b'0'..=b'3' => {
                        let digits = rest.get(..2)?;
                        rest = rest.get(2..)?;
                        let mut value = u32::from(e - b'0');
                        for d in digits {
                            if !(b'0'..=b'7').contains(d) {
                                return None;
                            }
                            value = value * 8 + u32::from(d - b'0');
                        }
                        u8::try_from(value).ok()?
                    }
                    other => other,
                });
            }
            other => out.push(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternates_lines_as_git_reads_them() {
        assert_eq!(alternate_entry(b""), None);
        assert_eq!(alternate_entry(b"# note"), None);
        assert_eq!(alternate_entry(b"/a/objects"), Some("/a/objects".into()));
        assert_eq!(
            alternate_entry(b"../../b/objects\r"),
            Some("../../b/objects".into())
        );
        assert_eq!(
            alternate_entry(br#""/a b/\"q\"/\303\251\tx""#),
            Some(PathBuf::from("/a b/\"q\"/é\tx"))
        );
        assert_eq!(alternate_entry(br#""/unterminated"#), None);
    }

    #[test]
    fn every_alternate_is_checked_through_nesting() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let inner = root.join("inner");
        let outer = root.join("outer");
        for repo in [&inner, &outer] {
            std::fs::create_dir_all(repo.join(".git/objects/info")).unwrap();
        }
        std::fs::create_dir_all(root.join("inner2/objects/info")).unwrap();
        let roots = vec![inner.clone(), root.join("inner2")];
        let git = inner.join(".git");
        assert!(check(&roots, &git, &git).is_ok());
        // A shared hooks directory elsewhere is fine; shared refs are not.
        std::os::unix::fs::symlink(&outer, git.join("hooks")).unwrap();
        assert!(check(&roots, &git, &git).is_ok());
        std::os::unix::fs::symlink(outer.join(".git"), git.join("refs")).unwrap();
        let err = check(&roots, &git, &git).unwrap_err();
        assert!(err.0.contains("git directory entry"), "{err:?}");
        std::fs::remove_file(git.join("refs")).unwrap();

        // A relative alternate inside, whose own alternate points outside.
        std::fs::write(
            git.join("objects/info/alternates"),
            "# shared\n../../../inner2/objects\n",
        )
        .unwrap();
        assert!(check(&roots, &git, &git).is_ok());
        std::fs::write(
            root.join("inner2/objects/info/alternates"),
            format!("{}\n", outer.join(".git/objects").display()),
        )
        .unwrap();
        let err = check(&roots, &git, &git).unwrap_err();
        assert!(err.0.contains("alternate object directory"), "{err:?}");
        assert!(err.0.contains(&outer.display().to_string()), "{err:?}");

        // The common directory is judged by where it leads.
        let err = check(&roots, &git, &outer.join(".git")).unwrap_err();
        assert!(err.0.contains("common git directory"), "{err:?}");

        // An alternates file that is a symlink cannot be vouched for.
        std::fs::remove_file(root.join("inner2/objects/info/alternates")).unwrap();
        std::fs::remove_file(git.join("objects/info/alternates")).unwrap();
        std::os::unix::fs::symlink(outer.join("list"), git.join("objects/info/alternates"))
            .unwrap();
        assert!(check(&roots, &git, &git).is_err());
    }
}
