//! The worktree side of the state a restore compares with: every changed, unmerged and
//! untracked (non-ignored) path with its status letters and a digest of what the worktree
//! holds there, and the paths the point captured whatever their ignore status (`touched`)
//! with theirs. Paths are keyed byte for byte ([`path_text`]): two names that differ only
//! in bytes that are not UTF-8 are two keys, and each digest reads its own file.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use serde_json::{Map, Value, json};

use crate::git::status::{IgnoreSubmodules, StatusQuery, Untracked};
use crate::git::{Git, path_text};
use crate::operation::{OpError, pins};

/// `{path: {"status": XY, "content": digest}}`; a touched path git did not list has the
/// status `touched`.
pub async fn changes(git: &Git<'_>, top: &Path, touched: &[Vec<u8>]) -> Result<Value, OpError> {
    let parsed = StatusQuery {
        untracked: Some(Untracked::All),
        ignore_submodules: Some(IgnoreSubmodules::None),
        paths: Some(&[]),
        no_renames: true,
        ..StatusQuery::default()
    }
    .read(git, pins::MAX_CHANGES)
    .await?;
    if parsed.truncated() {
        return Err(OpError::Unsupported(format!(
            "more than {} changed paths: too many to compare",
            pins::MAX_CHANGES
        )));
    }
    let mut listed: Vec<(Vec<u8>, String)> = parsed
        .entries
        .into_iter()
        .map(|e| (e.path, String::from_utf8_lossy(&e.xy).into_owned()))
        .collect();
    let seen: std::collections::HashSet<&[u8]> = listed.iter().map(|(p, _)| p.as_slice()).collect();
    let more: Vec<(Vec<u8>, String)> = touched
        .iter()
        .filter(|p| !seen.contains(p.as_slice()))
        .map(|p| (p.clone(), "touched".to_owned()))
        .collect();
    listed.extend(more);
    let top = top.to_owned();
    let states = crate::safe_file::off_thread(git.cancel(), move || {
        listed
            .into_iter()
            .map(|(path, xy)| {
                let content = pins::content(&top, Path::new(OsStr::from_bytes(&path)));
                (
                    path_text::encode(&path),
                    json!({"status": xy, "content": content}),
                )
            })
            .collect::<Map<String, Value>>()
    })
    .await
    .map_err(|e| OpError::Internal(e.to_string()))?;
    Ok(Value::Object(states))
}
