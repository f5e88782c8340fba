//! Reading the preconditions operations pin, and comparing two readings.
//!
//! A pin is plain JSON so it can be stored with the proposal and shown when it moved.
//! Each reading comes from real git through the read door (`Git::cmd`: hooks, fsmonitor
//! and the repository's filter drivers disarmed) or, for file contents, from the file
//! itself opened without following symlinks.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::intent::{Found, read_ref};
use super::{Moved, OpError};
use crate::git::status::{IgnoreSubmodules, StatusQuery, Untracked};
use crate::git::{Git, RepoRelPath};
use crate::parse::status_v2::Kind;

/// Most changed paths one pin records; a larger change is refused as too big to review.
pub const MAX_CHANGES: usize = 50_000;

/// `HEAD` as found: symbolic target and commit, or detached commit, or unborn.
pub async fn head(git: &Git<'_>) -> Result<Found, OpError> {
    read_ref(git, "HEAD").await
}

/// The commit `HEAD` points at, `None` when unborn: [`head`] without the branch.
pub async fn head_commit(git: &Git<'_>) -> Result<Option<crate::git::Oid>, OpError> {
    Ok(match head(git).await? {
        Found::At(oid) | Found::Symbolic { oid: Some(oid), .. } => Some(oid),
        _ => None,
    })
}

/// A digest of the whole index (every entry's mode, object, flags and path), read from
/// the index file; git lists the entries only for an index the reader does not know.
pub async fn index_digest(git: &Git<'_>) -> Result<String, OpError> {
    let path = git.repo.git_dir.join("index");
    let format = git.repo.object_format;
    let read = crate::safe_file::off_thread(git.cancel(), move || {
        crate::git::index_file::digest(&path, format)
    })
    .await
    .map_err(|e| OpError::Internal(e.to_string()))?;
    match read {
        Some(digest) => Ok(digest),
        None => {
            let listed = crate::git::ls_files::stages_raw(git).await?;
            Ok(format!("listed:{}", sha256(&listed)))
        }
    }
}

pub fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{:x}", Sha256::digest(bytes))
}

/// One changed path: its status letters and what the worktree holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub path: String,
    pub xy: String,
    pub kind: Kind,
}

/// The changed, unmerged and untracked (non-ignored) paths under `pathspecs` (all when
/// `None`), from `status --porcelain=v2`.
pub async fn changes(git: &Git<'_>, pathspecs: Option<&[String]>) -> Result<Vec<Change>, OpError> {
    let paths = pathspecs
        .map(|specs| {
            specs
                .iter()
                .map(|p| RepoRelPath::parse("paths", p))
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    let parsed = StatusQuery {
        untracked: Some(Untracked::All),
        ignore_submodules: Some(IgnoreSubmodules::None),
        paths: Some(paths.as_deref().unwrap_or_default()),
        no_renames: true,
        ..StatusQuery::default()
    }
    .read(git, MAX_CHANGES)
    .await?;
    if parsed.truncated() {
        return Err(OpError::Unsupported(format!(
            "more than {MAX_CHANGES} changed paths: too many to review in one proposal"
        )));
    }
    Ok(parsed
        .entries
        .into_iter()
        .map(|e| Change {
            path: String::from_utf8_lossy(&e.path).into_owned(),
            xy: String::from_utf8_lossy(&e.xy).into_owned(),
            kind: e.kind,
        })
        .collect())
}

/// What the worktree holds at `top/rel`: a digest of a file's bytes, of a symlink's
/// target, `dir` for a directory (a submodule), or null when absent.
pub fn content(top: &Path, rel: &Path) -> Value {
    let path = top.join(rel);
    let Ok(meta) = std::fs::symlink_metadata(&path) else {
        return Value::Null;
    };
    if meta.file_type().is_symlink() {
        return match std::fs::read_link(&path) {
            Ok(target) => json!(format!("link:{}", sha256(target.as_os_str().as_bytes()))),
            Err(_) => json!("unreadable"),
        };
    }
    if meta.is_dir() {
        return json!("dir");
    }
    let Ok((mut file, meta)) = crate::safe_file::open_in(top, rel) else {
        return json!("unreadable");
    };
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buf[..n]),
            Err(_) => return json!("unreadable"),
        }
    }
    let exec = std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o111 != 0;
    json!(format!(
        "sha256:{:x}{}",
        hasher.finalize(),
        if exec { "+x" } else { "" }
    ))
}

/// `{path: {"status": XY, "content": digest}}` for every change, file contents read off
/// the async workers.
pub async fn change_states(
    git: &Git<'_>,
    top: &Path,
    changes: Vec<Change>,
) -> Result<Value, OpError> {
    let top: PathBuf = top.to_owned();
    let states = crate::safe_file::off_thread(git.cancel(), move || {
        changes
            .into_iter()
            .map(|c| {
                let content = content(&top, Path::new(&c.path));
                (c.path, json!({"status": c.xy, "content": content}))
            })
            .collect::<Map<String, Value>>()
    })
    .await
    .map_err(|e| OpError::Internal(e.to_string()))?;
    Ok(Value::Object(states))
}

/// How `found` differs from `expected`, key by key (nested objects are walked, their
/// keys joined with a space): one [`Moved`] per leaf that changed, appeared or vanished.
pub fn diff(expected: &Value, found: &Value) -> Vec<Moved> {
    let mut out = Vec::new();
    walk("", expected, found, &mut out);
    out
}

fn walk(prefix: &str, expected: &Value, found: &Value, out: &mut Vec<Moved>) {
    match (expected, found) {
        (Value::Object(e), Value::Object(f)) if !prefix.is_empty() || !e.is_empty() => {
            let keys: BTreeMap<&String, ()> = e.keys().chain(f.keys()).map(|k| (k, ())).collect();
            for key in keys.into_keys() {
                let label = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix} {key}")
                };
                let null = Value::Null;
                let (ev, fv) = (e.get(key).unwrap_or(&null), f.get(key).unwrap_or(&null));
                // A path's own record is reported whole, not field by field.
                if prefix.starts_with("paths") || prefix.starts_with("changes") {
                    if ev != fv {
                        out.push(Moved {
                            what: label,
                            expected: ev.clone(),
                            found: fv.clone(),
                        });
                    }
                } else {
                    walk(&label, ev, fv, out);
                }
            }
        }
        (e, f) if e != f => out.push(Moved {
            what: prefix.to_owned(),
            expected: e.clone(),
            found: f.clone(),
        }),
        _ => {}
    }
}

/// `Ok` when nothing moved, else [`OpError::Stale`] listing what did.
pub fn compare(expected: &Value, found: &Value) -> Result<(), OpError> {
    let moved = diff(expected, found);
    if moved.is_empty() {
        Ok(())
    } else {
        Err(OpError::Stale { moved })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_names_each_moved_leaf() {
        let a = json!({"head": {"symbolic": "refs/heads/main", "oid": "a"}, "index": "x",
                       "changes": {"f": {"status": ".M", "content": "1"}}});
        let b = json!({"head": {"symbolic": "refs/heads/main", "oid": "b"}, "index": "x",
                       "changes": {"f": {"status": ".M", "content": "2"}, "g": {"status": "??"}}});
        let moved = diff(&a, &b);
        let what: Vec<_> = moved.iter().map(|m| m.what.as_str()).collect();
        assert_eq!(what, ["changes f", "changes g", "head oid"]);
        assert!(diff(&a, &a).is_empty());
        assert!(matches!(compare(&a, &b), Err(OpError::Stale { .. })));
    }
}
