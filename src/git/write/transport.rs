//! Transport and credential programs on a push come from the user's own configuration,
//! never from the repository's.
//!
//! A push runs programs named by configuration: `remote.<name>.receivepack` and
//! `uploadpack` (started through a shell, even for a local path), an `ext::` URL's
//! command, `core.sshCommand`, `core.gitProxy`, `core.askPass` and every credential
//! helper, which receive the password. The repository's own files (`local` and `worktree`
//! scope, includes followed) are written by whoever can write the repository — under a
//! separate gateway user, the agent — so none of these may come from there. Git reads the
//! command scope last; each setting the repository defines is set there again to the value
//! the user's own (global or system) configuration gives it, or to git's default:
//!
//! - credential helpers form a list an empty value resets: the reset comes first, then the
//!   user's own helpers again, in their order, under their own (URL-scoped) keys;
//! - git takes the *first* `remote.<name>.receivepack` it reads, which the command scope
//!   cannot override: the push names its receive-pack on the command line instead
//!   (`--receive-pack`), the user's own or git's default ([`receive_pack`]);
//! - `protocol.ext.allow` and `protocol.fd.allow` are always pinned (to the user's value or
//!   `never`), so no repository URL can name a command or a descriptor;
//! - `core.gitProxy` takes the *first* matching value, which the command scope cannot
//!   override, and `remote.<name>.vcs` names a helper program: a repository that sets
//!   either is refused.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;

use crate::process::{CancellationToken, Invocation, Program, RunError};

/// How much configuration one repository may list before a push is refused.
const LIST_CAP: usize = 512 * 1024;

/// What a push runs with: [`overrides`] and the [`receive_pack`] program.
pub(crate) struct Pinned {
    pub config: Vec<(OsString, OsString)>,
    pub receive_pack: String,
}

/// The receive-pack a push to `remote` starts: the first the user's own configuration
/// names (git takes the first), else git's own.
pub(crate) fn receive_pack(entries: &[Entry], remote: &str) -> String {
    let key = format!("remote.{remote}.receivepack");
    entries
        .iter()
        .find(|e| e.is_user() && e.key == key.as_bytes())
        .and_then(|e| e.value.as_deref())
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .unwrap_or_else(|| "git-receive-pack".to_owned())
}

/// Reads the configuration git will use in `dir` and returns what a push to `remote`
/// runs with.
pub(crate) async fn read(
    dir: &Path,
    remote: &str,
    cancel: &CancellationToken,
) -> Result<Pinned, RunError> {
    let entries = list(dir, cancel).await?;
    Ok(Pinned {
        config: overrides(&entries).map_err(RunError::Unsupported)?,
        receive_pack: receive_pack(&entries, remote),
    })
}

/// The configuration git reads in `dir`, every scope, includes followed.
pub(crate) async fn list(dir: &Path, cancel: &CancellationToken) -> Result<Vec<Entry>, RunError> {
    let out = Invocation::new(Program::Git)
        .dir(dir)
        .args(["config", "--list", "--show-scope", "--includes", "-z"])
        .capture(LIST_CAP, cancel)
        .await?;
    if out.sink.truncated {
        return Err(RunError::Unsupported(
            "the repository's configuration is too large to check for transport programs".into(),
        ));
    }
    if !out.success() {
        return Err(RunError::Unsupported(format!(
            "the repository's configuration could not be read: {}",
            out.stderr_text().trim()
        )));
    }
    Ok(parse(&out.sink.bytes))
}

/// One `git config --list --show-scope -z` record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub scope: Vec<u8>,
    /// As git prints it: section and variable lowercased, a subsection as written.
    pub key: Vec<u8>,
    pub value: Option<Vec<u8>>,
}

impl Entry {
    /// Written by the repository itself (its `config`, `config.worktree`, their includes).
    pub fn is_repository(&self) -> bool {
        matches!(self.scope.as_slice(), b"local" | b"worktree")
    }

    /// The user's own: the global or system file (never the command line, which is ours).
    pub fn is_user(&self) -> bool {
        matches!(self.scope.as_slice(), b"global" | b"system")
    }
}

/// Parses `scope NUL key [LF value] NUL` records.
pub(crate) fn parse(bytes: &[u8]) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut fields = bytes.split(|b| *b == 0);
    while let (Some(scope), Some(entry)) = (fields.next(), fields.next()) {
        let (key, value) = match entry.iter().position(|b| *b == b'\n') {
            Some(nl) => (&entry[..nl], Some(entry[nl + 1..].to_vec())),
            None => (entry, None),
        };
        out.push(Entry {
            scope: scope.to_vec(),
            key: key.to_vec(),
            value,
        });
    }
    out
}

/// What kind of transport or credential program a key names, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A credential helper (`credential.helper`, `credential.<url>.helper`).
    Helper,
    /// A single-valued program setting, with git's default when nobody sets it.
    Program(&'static [u8]),
    /// A protocol permission (`protocol.allow`, `protocol.<name>.allow`).
    Protocol,
    /// A setting the command scope cannot take back: the push is refused.
    Refused,
}

fn kind(key: &[u8]) -> Option<Kind> {
    let (section, rest) = split_first_dot(key)?;
    let var = &key[key.iter().rposition(|b| *b == b'.')? + 1..];
    let has_sub = rest.contains(&b'.');
    match (section, var, has_sub) {
        (b"credential", b"helper", _) => Some(Kind::Helper),
        (b"remote", b"receivepack", true) => Some(Kind::Program(b"git-receive-pack")),
        (b"remote", b"vcs", true) => Some(Kind::Refused),
        (b"core", b"sshcommand", false) => Some(Kind::Program(b"ssh")),
        (b"core", b"askpass", false) => Some(Kind::Program(b"")),
        (b"core", b"gitproxy", false) => Some(Kind::Refused),
        (b"protocol", b"allow", _) => Some(Kind::Protocol),
        _ => None,
    }
}

fn split_first_dot(key: &[u8]) -> Option<(&[u8], &[u8])> {
    let dot = key.iter().position(|b| *b == b'.')?;
    Some((&key[..dot], &key[dot + 1..]))
}

/// The programs git knows by default and allows (`always`) when nothing is configured.
const ALWAYS: &[&str] = &["http", "https", "git", "ssh", "file"];

/// The configuration (command scope) that leaves every transport and credential program
/// of a push to the user's own files; `Err` names the repository settings that cannot be
/// taken back.
pub(crate) fn overrides(entries: &[Entry]) -> Result<Vec<(OsString, OsString)>, String> {
    let refused: Vec<String> = entries
        .iter()
        .filter(|e| e.is_repository() && kind(&e.key) == Some(Kind::Refused))
        .map(|e| String::from_utf8_lossy(&e.key).into_owned())
        .collect();
    if !refused.is_empty() {
        return Err(format!(
            "the repository's own configuration names a transport program gitward cannot \
             override ({}); remove it or set it in your global configuration",
            refused.join(", ")
        ));
    }
    let mut out: Vec<(OsString, OsString)> = Vec::new();
    let pair = |k: &[u8], v: &[u8]| {
        (
            OsString::from_vec(k.to_vec()),
            OsString::from_vec(v.to_vec()),
        )
    };
    let user_last = |key: &[u8]| -> Option<Vec<u8>> {
        entries
            .iter()
            .rev()
            .find(|e| e.is_user() && e.key == key)
            .map(|e| e.value.clone().unwrap_or_default())
    };
    let repo_sets =
        |pred: &dyn Fn(&[u8]) -> bool| entries.iter().any(|e| e.is_repository() && pred(&e.key));

    if repo_sets(&|k| kind(k) == Some(Kind::Helper)) {
        out.push(pair(b"credential.helper", b""));
        for e in entries
            .iter()
            .filter(|e| e.is_user() && kind(&e.key) == Some(Kind::Helper))
        {
            out.push(pair(&e.key, e.value.as_deref().unwrap_or_default()));
        }
    }

    let mut done: Vec<Vec<u8>> = Vec::new();
    for e in entries.iter().filter(|e| e.is_repository()) {
        if let Some(Kind::Program(default)) = kind(&e.key)
            && !done.contains(&e.key)
        {
            done.push(e.key.clone());
            let value = user_last(&e.key).unwrap_or_else(|| default.to_vec());
            out.push(pair(&e.key, &value));
        }
    }

    // Protocol permissions: the repository's are replaced by the user's, and `ext` and
    // `fd` are pinned whatever anyone set.
    let general = b"protocol.allow".as_slice();
    if repo_sets(&|k| k == general) {
        let value = user_last(general).unwrap_or_else(|| b"user".to_vec());
        out.push(pair(general, &value));
        if user_last(general).is_none() {
            // Unset, git applies each protocol's own default; `user` alone would not.
            for p in ALWAYS {
                let key = format!("protocol.{p}.allow");
                if user_last(key.as_bytes()).is_none() {
                    out.push(pair(key.as_bytes(), b"always"));
                }
            }
        }
    }
    for e in entries.iter().filter(|e| e.is_repository()) {
        if kind(&e.key) == Some(Kind::Protocol)
            && e.key.as_slice() != general
            && !done.contains(&e.key)
        {
            done.push(e.key.clone());
            let name = &e.key[b"protocol.".len()..e.key.len() - b".allow".len()];
            let default: &[u8] = if ALWAYS.iter().any(|p| p.as_bytes() == name) {
                b"always"
            } else {
                b"user"
            };
            let value = user_last(&e.key).unwrap_or_else(|| default.to_vec());
            out.push(pair(&e.key, &value));
        }
    }
    for key in [&b"protocol.ext.allow"[..], b"protocol.fd.allow"] {
        out.retain(|(k, _)| k.as_encoded_bytes() != key);
        let value = user_last(key).unwrap_or_else(|| b"never".to_vec());
        out.push(pair(key, &value));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(text: &[(&str, &str, Option<&str>)]) -> Vec<Entry> {
        text.iter()
            .map(|(scope, key, value)| Entry {
                scope: scope.as_bytes().to_vec(),
                key: key.as_bytes().to_vec(),
                value: value.map(|v| v.as_bytes().to_vec()),
            })
            .collect()
    }

    fn shown(pairs: &[(OsString, OsString)]) -> Vec<String> {
        pairs
            .iter()
            .map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy()))
            .collect()
    }

    #[test]
    fn parses_scoped_records() {
        let got = parse(b"global\0user.name\nA\0local\0core.bare\0");
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].value.as_deref(), Some(&b"A"[..]));
        assert_eq!(got[1].value, None);
        assert!(got[1].is_repository() && got[0].is_user());
    }

    #[test]
    fn repository_programs_are_replaced_by_the_users_or_gits_defaults() {
        let e = entries(&[
            ("global", "credential.helper", Some("store")),
            (
                "global",
                "credential.https://h.example.helper",
                Some("cache"),
            ),
            ("global", "core.sshcommand", Some("ssh -4")),
            ("local", "credential.helper", Some("!steal")),
            ("local", "credential.https://x.helper", Some("/x")),
            ("local", "remote.origin.receivepack", Some("/tmp/evil")),
            ("worktree", "remote.o.b.receivepack", Some("/tmp/evil")),
            ("local", "core.sshcommand", Some("/tmp/evil")),
            ("local", "core.askpass", Some("/tmp/evil")),
            ("local", "protocol.ext.allow", Some("always")),
            ("local", "protocol.foo.allow", Some("always")),
            ("command", "core.askpass", Some("ours")),
        ]);
        assert_eq!(
            shown(&overrides(&e).unwrap()),
            [
                "credential.helper=",
                "credential.helper=store",
                "credential.https://h.example.helper=cache",
                "remote.origin.receivepack=git-receive-pack",
                "remote.o.b.receivepack=git-receive-pack",
                "core.sshcommand=ssh -4",
                "core.askpass=",
                "protocol.foo.allow=user",
                "protocol.ext.allow=never",
                "protocol.fd.allow=never",
            ]
        );
    }

    #[test]
    fn nothing_but_the_pinned_protocols_when_the_repository_names_no_program() {
        let e = entries(&[
            ("global", "credential.helper", Some("store")),
            ("global", "protocol.ext.allow", Some("user")),
            ("local", "remote.origin.url", Some("/r")),
        ]);
        assert_eq!(
            shown(&overrides(&e).unwrap()),
            ["protocol.ext.allow=user", "protocol.fd.allow=never"]
        );
        let e = entries(&[("local", "protocol.allow", Some("always"))]);
        assert_eq!(
            shown(&overrides(&e).unwrap()),
            [
                "protocol.allow=user",
                "protocol.http.allow=always",
                "protocol.https.allow=always",
                "protocol.git.allow=always",
                "protocol.ssh.allow=always",
                "protocol.file.allow=always",
                "protocol.ext.allow=never",
                "protocol.fd.allow=never",
            ]
        );
    }

    #[test]
    fn the_receive_pack_is_the_users_first_or_gits_own() {
        let e = entries(&[
            ("local", "remote.origin.receivepack", Some("/tmp/evil")),
            ("global", "remote.origin.receivepack", Some("mine")),
            ("global", "remote.origin.receivepack", Some("second")),
        ]);
        assert_eq!(receive_pack(&e, "origin"), "mine");
        assert_eq!(receive_pack(&e[..1], "origin"), "git-receive-pack");
        assert_eq!(receive_pack(&e, "other"), "git-receive-pack");
    }

    #[test]
    fn settings_the_command_cannot_take_back_are_refused() {
        for key in ["core.gitproxy", "remote.origin.vcs"] {
            let e = entries(&[("local", key, Some("evil"))]);
            let err = overrides(&e).unwrap_err();
            assert!(err.contains(key), "{err}");
            let e = entries(&[("global", key, Some("mine"))]);
            assert!(overrides(&e).is_ok());
        }
    }
}
