//! The programs an approved write may start from the repository's side — hooks, filter
//! and merge drivers, the signing program — listed for the card and the audit, and
//! judged: they run as the gateway's own OS user, so each must be something only that
//! user (or root) can change, or something the gateway's own configuration trusts.
//!
//! The list errs on the side of more: every executable hook in the effective hooks
//! directory (`core.hooksPath` applied), every filter and merge driver configured, the
//! signing program when `commit.gpgSign` or `push.gpgSign` is on. A hook whose file or
//! any directory above it another user can write is refused; so is a filter, merge driver
//! or signing program the repository's own configuration defines while another user can
//! write that configuration — unless it is a filter or merge driver named in
//! `GITWARD_TRUSTED_DRIVERS` whose command passes the same check reads use.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::transport::Entry;
use crate::process::{CancellationToken, Invocation, Program, RunError};

/// Hooks listed at most; past it the write is refused (a person cannot judge more).
const MAX_HOOKS: usize = 100;

/// One program the write may start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Listed {
    /// `hook`, `filter`, `mergeDriver` or `signing`.
    pub kind: &'static str,
    /// The hook's or driver's name, or the signing format.
    pub name: String,
    /// The file (hooks) or the command as configured.
    pub program: String,
    /// Where it is defined: `repository` (its own files) or `user` (global or system).
    pub from: &'static str,
}

/// Everything listed, and the refusals.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Programs {
    pub programs: Vec<Listed>,
    /// Why each refused program may not run; empty when the write may go ahead.
    pub refused: Vec<String>,
}

impl Programs {
    /// The refusal as one message, if any.
    pub fn refusal(&self) -> Option<String> {
        (!self.refused.is_empty()).then(|| {
            format!(
                "the write would run programs another user can change, as the gateway's \
                 user: {}",
                self.refused.join("; ")
            )
        })
    }
}

/// Reads what a write in `dir` (whose shared git directory is `common_dir`) may start.
/// `trusted` names the drivers the gateway's configuration trusts; their commands must
/// pass [`crate::git::trust`] against `forbidden` (the repository and the allowed roots)
/// and `search_path`.
pub async fn read(
    dir: &Path,
    common_dir: &Path,
    trusted: &[String],
    forbidden: &[PathBuf],
    search_path: &OsStr,
    cancel: &CancellationToken,
) -> Result<Programs, RunError> {
    let entries = super::transport::list(dir, cancel).await?;
    let hooks = Invocation::new(Program::Git)
        .dir(dir)
        .args(["rev-parse", "--path-format=absolute", "--git-path", "hooks"])
        .capture(64 * 1024, cancel)
        .await?;
    let hooks_dir = PathBuf::from(OsStr::from_bytes(
        hooks
            .sink
            .bytes
            .strip_suffix(b"\n")
            .unwrap_or(&hooks.sink.bytes),
    ));
    let config_open = others_can_write(&common_dir.join("config"));
    let mut out = Programs::default();
    list_hooks(&hooks_dir, &mut out);
    for (kind, name, program, scope_repo) in drivers(&entries) {
        let from = if scope_repo { "repository" } else { "user" };
        if scope_repo && let Some(open) = &config_open {
            let driver = match kind {
                "filter" => name.rsplit_once('.').map_or(name.as_str(), |(n, _)| n),
                _ => name.as_str(),
            };
            let trusted_ok = kind != "signing"
                && trusted.iter().any(|t| t == driver)
                && super::super::trust::check(program.as_bytes(), forbidden, search_path).is_ok();
            if !trusted_ok {
                out.refused.push(format!(
                    "{kind} `{name}` ({program}) is defined by the repository's configuration, \
                     which {} can write",
                    describe(open)
                ));
            }
        }
        out.programs.push(Listed {
            kind,
            name,
            program,
            from,
        });
    }
    Ok(out)
}

fn describe(path: &Path) -> String {
    format!("another user (through {})", path.display())
}

fn list_hooks(dir: &Path, out: &mut Programs) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    let mut found: Vec<(String, PathBuf)> = read
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let path = e.path();
            let meta = std::fs::metadata(&path).ok()?;
            let runs = meta.is_file() && meta.permissions().mode() & 0o111 != 0;
            (runs && !name.ends_with(".sample")).then_some((name, path))
        })
        .collect();
    found.sort();
    if found.len() > MAX_HOOKS {
        out.refused.push(format!(
            "{} holds more than {MAX_HOOKS} hooks",
            dir.display()
        ));
        found.truncate(MAX_HOOKS);
    }
    for (name, path) in found {
        let real = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if let Some(open) = others_can_write(&real) {
            out.refused.push(format!(
                "hook `{name}` ({}) can be changed by {}",
                real.display(),
                describe(&open)
            ));
        }
        out.programs.push(Listed {
            kind: "hook",
            name,
            program: real.display().to_string(),
            from: "repository",
        });
    }
}

/// Filter and merge drivers and the signing program, each with whether the repository's
/// own configuration defines it; the last value git reads wins.
fn drivers(entries: &[Entry]) -> Vec<(&'static str, String, String, bool)> {
    let mut out: Vec<(&'static str, String, String, bool)> = Vec::new();
    let mut put = |kind, name: String, program: String, repo: bool| {
        out.retain(|(k, n, _, _)| !(*k == kind && *n == name));
        out.push((kind, name, program, repo));
    };
    let text = |v: &Option<Vec<u8>>| {
        String::from_utf8_lossy(v.as_deref().unwrap_or_default()).into_owned()
    };
    let mut sign = false;
    let mut format = "openpgp".to_owned();
    let mut signer: Vec<(String, String, bool)> = Vec::new();
    for e in entries.iter().filter(|e| e.scope != b"command") {
        let key = String::from_utf8_lossy(&e.key).into_owned();
        let repo = e.is_repository();
        if let Some(rest) = key.strip_prefix("filter.")
            && let Some((name, var)) = rest.rsplit_once('.')
            && matches!(var, "clean" | "smudge" | "process")
            && !text(&e.value).is_empty()
        {
            put("filter", format!("{name}.{var}"), text(&e.value), repo);
        } else if let Some(rest) = key.strip_prefix("merge.")
            && let Some(name) = rest.strip_suffix(".driver")
            && !text(&e.value).is_empty()
        {
            put("mergeDriver", name.to_owned(), text(&e.value), repo);
        } else if key == "commit.gpgsign" || key == "push.gpgsign" {
            sign = matches!(
                text(&e.value).to_ascii_lowercase().as_str(),
                "true" | "yes" | "on" | "1" | "if-asked"
            ) || e.value.is_none();
        } else if key == "gpg.format" {
            format = text(&e.value);
        } else if key == "gpg.program" || (key.starts_with("gpg.") && key.ends_with(".program")) {
            signer.retain(|(k, _, _)| *k != key);
            signer.push((key, text(&e.value), repo));
        }
    }
    if sign {
        let wanted = match format.as_str() {
            "ssh" => ("gpg.ssh.program", "ssh-keygen"),
            "x509" => ("gpg.x509.program", "gpgsm"),
            _ => ("gpg.openpgp.program", "gpg"),
        };
        let found = signer.iter().find(|(k, _, _)| k == wanted.0).or_else(|| {
            signer
                .iter()
                .find(|(k, _, _)| k == "gpg.program" && format != "ssh" && format != "x509")
        });
        let (program, repo) = match found {
            Some((_, p, r)) => (p.clone(), *r),
            None => (wanted.1.to_owned(), false),
        };
        put("signing", format, program, repo);
    }
    out
}

/// The first of `path` and the directories above it that a user other than this
/// process's (and root) may change, if any. A sticky directory (`/tmp`) protects the
/// entries it holds, so it counts only as the path itself.
pub fn others_can_write(path: &Path) -> Option<PathBuf> {
    let me = rustix::process::geteuid().as_raw();
    for (i, p) in path.ancestors().enumerate() {
        let Ok(meta) = std::fs::metadata(p) else {
            return Some(p.to_path_buf());
        };
        if meta.uid() != me && meta.uid() != 0 {
            return Some(p.to_path_buf());
        }
        let mode = meta.mode();
        if mode & 0o022 != 0 {
            let sticky = meta.is_dir() && mode & 0o1000 != 0;
            if !(sticky && i > 0) {
                return Some(p.to_path_buf());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(scope: &str, key: &str, value: &str) -> Entry {
        Entry {
            scope: scope.as_bytes().to_vec(),
            key: key.as_bytes().to_vec(),
            value: Some(value.as_bytes().to_vec()),
        }
    }

    #[test]
    fn drivers_and_the_signing_program_are_listed_with_their_origin() {
        let got = drivers(&[
            e("global", "filter.lfs.clean", "git-lfs clean -- %f"),
            e("local", "filter.x.smudge", "/evil"),
            e("local", "merge.m.driver", "/evil %A"),
            e("local", "commit.gpgsign", "true"),
            e("local", "gpg.program", "/evil-gpg"),
            e("command", "filter.y.clean", "ours"),
        ]);
        assert_eq!(
            got,
            [
                (
                    "filter",
                    "lfs.clean".into(),
                    "git-lfs clean -- %f".into(),
                    false
                ),
                ("filter", "x.smudge".into(), "/evil".into(), true),
                ("mergeDriver", "m".into(), "/evil %A".into(), true),
                ("signing", "openpgp".into(), "/evil-gpg".into(), true),
            ]
        );
        let ssh = drivers(&[
            e("global", "gpg.format", "ssh"),
            e("local", "commit.gpgsign", "1"),
        ]);
        assert_eq!(ssh, [("signing", "ssh".into(), "ssh-keygen".into(), false)]);
        assert!(drivers(&[e("local", "commit.gpgsign", "false")]).is_empty());
    }

    #[test]
    fn a_file_others_may_write_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hook");
        std::fs::write(&file, "x").unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(others_can_write(&file), None);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert_eq!(others_can_write(&file), Some(file.clone()));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        assert_eq!(others_can_write(&file), Some(dir.path().to_path_buf()));
    }
}
