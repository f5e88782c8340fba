//! When a filter driver the user named as trusted may really run.
//!
//! Trust is given to a driver *name* (`GITWARD_TRUSTED_DRIVERS`), but the command behind
//! the name comes from the repository's configuration, which the repository controls.
//! So a trusted driver stays armed only when every command it defines is one plain
//! program with literal arguments (nothing a shell would interpret, no argument naming a
//! path, the program not itself a shell or `env`) and that program resolves, the way
//! git's child would find it, to a file outside the repository and outside every allowed
//! root (where the caller can write, and so could plant one). What the program then does
//! with the repository is the trust the user gave it: an interpreter started with
//! `-m module`, say, may load a module from the working tree.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Bytes that would make the command more than one program with literal arguments.
const SHELL_SPECIAL: &[u8] = b"`$;&|<>(){}*?[]~!#\\'\n\r";

/// Programs whose arguments are themselves a command.
const LAUNCHERS: &[&[u8]] = &[
    b"sh", b"bash", b"dash", b"zsh", b"ksh", b"mksh", b"fish", b"csh", b"tcsh", b"env", b"busybox",
    b"xargs", b"nohup", b"exec", b"command", b"eval", b"sudo", b"doas",
];

/// Checks one driver command; `Err` says why it may not run.
pub(crate) fn check(
    command: &[u8],
    forbidden: &[PathBuf],
    search_path: &OsStr,
) -> Result<PathBuf, String> {
    let words = words(command)?;
    let (program, args) = words.split_first().ok_or("the command is empty")?;
    if args.iter().any(|a| a.contains(&b'/')) {
        return Err("an argument names a path".into());
    }
    let base = program.rsplit(|b| *b == b'/').next().unwrap_or(program);
    if LAUNCHERS.contains(&base) {
        return Err(format!(
            "{} runs whatever its arguments say",
            String::from_utf8_lossy(base)
        ));
    }
    let found = resolve(program, search_path)?;
    let real = std::fs::canonicalize(&found)
        .map_err(|e| format!("{} cannot be resolved: {e}", found.display()))?;
    if let Some(root) = forbidden.iter().find(|root| real.starts_with(root)) {
        return Err(format!(
            "{} lies inside {}, which gitward does not trust",
            real.display(),
            root.display()
        ));
    }
    Ok(real)
}

/// Splits on spaces; a word may be wrapped in double quotes (as `git lfs install` and
/// git-crypt write them) but holds no other quoting.
fn words(command: &[u8]) -> Result<Vec<&[u8]>, String> {
    if let Some(b) = command.iter().find(|b| SHELL_SPECIAL.contains(b)) {
        return Err(format!(
            "the command contains {:?}, which a shell would interpret",
            char::from(*b)
        ));
    }
    let mut out = Vec::new();
    for word in command.split(|b| *b == b' ' || *b == b'\t') {
        if word.is_empty() {
            continue;
        }
        let inner = match word.strip_prefix(b"\"").and_then(|w| w.strip_suffix(b"\"")) {
            Some(inner) => inner,
            None => word,
        };
        if inner.contains(&b'"') || inner.is_empty() {
            return Err("the command quotes more than whole words".into());
        }
        out.push(inner);
    }
    Ok(out)
}

/// Finds `program` as git's child would: a path as given (it must be absolute, since a
/// relative one names a file of the repository), or the first match on `PATH`, refusing
/// when a relative `PATH` entry (resolved inside the repository) comes first.
fn resolve(program: &[u8], search_path: &OsStr) -> Result<PathBuf, String> {
    let name = Path::new(OsStr::from_bytes(program));
    if program.contains(&b'/') {
        return if name.is_absolute() {
            Ok(name.to_path_buf())
        } else {
            Err(format!(
                "{} is a relative path, inside the repository",
                name.display()
            ))
        };
    }
    for dir in std::env::split_paths(search_path) {
        if !dir.is_absolute() {
            return Err(format!(
                "PATH holds the relative entry {:?} before {} is found",
                dir,
                name.display()
            ));
        }
        let candidate = dir.join(name);
        if is_executable(&candidate) {
            return Ok(candidate);
        }
    }
    Err(format!("{} is not on PATH", name.display()))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_programs_outside_the_forbidden_roots_pass() {
        let cat = std::fs::canonicalize("/bin/cat").unwrap();
        let none: Vec<PathBuf> = Vec::new();
        assert_eq!(
            check(
                b"\"/bin/cat\" clean -- %f",
                &none,
                OsStr::new("/usr/bin:/bin")
            ),
            Ok(cat.clone())
        );
        assert!(check(b"cat -u", &none, OsStr::new("/usr/bin:/bin")).is_ok());
        for bad in [
            &b"sh -c 'x'"[..],
            b"sh -c x",
            b"/bin/sh x",
            b"env x",
            b"cat ../x",
            b"sh; x",
            b"$(x)",
            b"./evil",
            b"evil/clean",
            b"\"sh clean\"",
            b"",
            b"no-such-program-anywhere",
        ] {
            assert!(
                check(bad, &none, OsStr::new("/usr/bin:/bin")).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        let parent = cat.parent().unwrap().to_path_buf();
        assert!(check(b"/bin/cat", &[parent], OsStr::new("/usr/bin:/bin")).is_err());
    }
}
