//! Opening a URL in the person's browser (`gitward gateway --open`): the third program the
//! door starts, found and run with more care than a child whose output we read.
//!
//! The opener is `$BROWSER` when set (a program name or an absolute path; no arguments,
//! since there is no shell to split them), else `xdg-open` (`open` on macOS). A name is
//! looked up in the absolute entries of `PATH` only — a relative entry would resolve
//! against whatever directory the gateway was started in — and a program inside a git
//! repository is never run, whatever `PATH` says: a repository's content is an agent's to
//! write.
//!
//! An opener hands the URL to a browser that outlives it and may keep every descriptor it
//! inherited. So it gets no pipes (its output goes nowhere), a process group of its own
//! (a Ctrl-C to the gateway does not close the person's browser), and a bounded wait for
//! its own exit; past the bound the gateway stops waiting but kills nothing, since what
//! it started may now be the window the person uses.

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use super::{Program, RunError};

/// How long the gateway waits for the opener to hand over.
pub const TIMEOUT: Duration = Duration::from_secs(10);

#[cfg(target_os = "macos")]
const DEFAULT: &str = "open";
#[cfg(not(target_os = "macos"))]
const DEFAULT: &str = "xdg-open";

/// The opener to run: an absolute, canonical path outside any repository.
pub fn resolve(browser: Option<&OsStr>, search_path: Option<&OsStr>) -> Result<PathBuf, String> {
    let wanted: Vec<OsString> = match browser.filter(|b| !b.is_empty()) {
        // `$BROWSER` may list several programs, separated like PATH; the first one found wins.
        Some(list) => std::env::split_paths(list)
            .map(PathBuf::into_os_string)
            .filter(|p| !p.is_empty())
            .collect(),
        None => vec![OsString::from(DEFAULT)],
    };
    let mut why = Vec::new();
    for name in &wanted {
        match find(Path::new(name), search_path) {
            Ok(path) => return Ok(path),
            Err(e) => why.push(e),
        }
    }
    Err(why.join("; "))
}

fn find(name: &Path, search_path: Option<&OsStr>) -> Result<PathBuf, String> {
    let shown = name.display();
    if name.to_string_lossy().chars().any(char::is_whitespace) {
        return Err(format!(
            "{shown:?} holds arguments; name one program (no shell splits it)"
        ));
    }
    if name.is_absolute() {
        return usable(name).ok_or_else(|| {
            format!("{shown} is not an executable file outside every git repository")
        });
    }
    if name.components().count() != 1 {
        return Err(format!(
            "{shown} is a relative path; name a program or an absolute path"
        ));
    }
    let dirs = search_path.map(std::env::split_paths);
    for dir in dirs.into_iter().flatten().filter(|d| d.is_absolute()) {
        if let Some(found) = usable(&dir.join(name)) {
            return Ok(found);
        }
    }
    Err(format!(
        "{shown} was not found in the absolute PATH entries outside git repositories"
    ))
}

/// `path` resolved, when it is an executable file and neither it nor what it links to
/// lies inside a git repository.
fn usable(path: &Path) -> Option<PathBuf> {
    let real = std::fs::canonicalize(path).ok()?;
    let meta = std::fs::metadata(&real).ok()?;
    let executable = meta.is_file() && meta.permissions().mode() & 0o111 != 0;
    (executable && !in_repository(path) && !in_repository(&real)).then_some(real)
}

/// True when a directory above `path` holds a `.git` entry.
fn in_repository(path: &Path) -> bool {
    path.ancestors()
        .skip(1)
        .any(|dir| dir.join(".git").symlink_metadata().is_ok())
}

/// Hands `target` (a file) to the opener at `program` and waits at most `timeout` for it
/// to exit. `Ok(Some(code))` when it exited, `Ok(None)` when it was still running at the
/// bound (left running, reaped later).
///
/// Only a file is handed over, never a URL: an argv is readable by every local user in the
/// process table, so a secret (a login link) goes into a private file and the argument
/// names only that file.
pub async fn open(
    program: &Path,
    target: &Path,
    timeout: Duration,
) -> Result<Option<i32>, RunError> {
    let name = Program::Opener.name();
    // The one argument is an absolute path we built, so it cannot read as an option.
    if !target.is_absolute() {
        return Err(RunError::Unsupported(format!(
            "not an absolute path: {}",
            target.display()
        )));
    }
    let url = target;
    // A sanctioned spawn site: the door's own, for a program whose output nobody reads.
    #[allow(clippy::disallowed_methods)]
    let mut command = tokio::process::Command::new(program);
    command
        .arg(url)
        .env_clear()
        .envs(super::env::opener_env())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    let mut child = command.spawn().map_err(|source| RunError::Spawn {
        program: name,
        source,
    })?;
    match tokio::time::timeout(timeout, child.wait()).await {
        Ok(Ok(status)) => Ok(status.code()),
        Ok(Err(source)) => Err(RunError::Io {
            program: name,
            source,
        }),
        // Dropped without a kill: tokio reaps it once it exits.
        Err(_) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn executable(path: &Path) {
        std::fs::write(path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn names_are_found_in_absolute_path_entries_outside_repositories() {
        let dir = tempfile::tempdir().unwrap();
        let (repo_bin, bin, plain) = (
            dir.path().join("repo/bin"),
            dir.path().join("bin"),
            dir.path().join("plain"),
        );
        for d in [&repo_bin, &bin, &plain] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::create_dir(dir.path().join("repo/.git")).unwrap();
        executable(&repo_bin.join("xdg-open"));
        executable(&bin.join("xdg-open"));
        std::fs::write(plain.join("xdg-open"), "not executable").unwrap();
        let path = std::env::join_paths([
            PathBuf::from("relative"),
            repo_bin.clone(),
            plain.clone(),
            bin.clone(),
        ])
        .unwrap();
        let found = resolve(None, Some(&path)).unwrap();
        assert_eq!(found, bin.join("xdg-open").canonicalize().unwrap());

        let only_repo = std::env::join_paths([repo_bin.clone()]).unwrap();
        assert!(resolve(None, Some(&only_repo)).is_err());
        // A link outside a repository to a program inside one is refused too.
        std::os::unix::fs::symlink(repo_bin.join("xdg-open"), plain.join("other")).unwrap();
        assert!(resolve(Some(OsStr::new("other")), Some(&path)).is_err());
    }

    #[test]
    fn browser_names_a_program_or_an_absolute_path_never_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let firefox = dir.path().join("firefox");
        executable(&firefox);
        let path = std::env::join_paths([dir.path()]).unwrap();
        let real = firefox.canonicalize().unwrap();
        assert_eq!(
            resolve(Some(OsStr::new("firefox")), Some(&path)),
            Ok(real.clone())
        );
        assert_eq!(resolve(Some(firefox.as_os_str()), None), Ok(real.clone()));
        let list = std::env::join_paths(["missing", "firefox"]).unwrap();
        assert_eq!(resolve(Some(&list), Some(&path)), Ok(real));
        for bad in ["firefox --new-window", "./firefox", "bin/firefox"] {
            assert!(
                resolve(Some(OsStr::new(bad)), Some(&path)).is_err(),
                "{bad}"
            );
        }
    }
}
