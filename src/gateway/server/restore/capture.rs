//! Taking a restore point without changing the user's worktree or index: the index as a
//! file and its tree, HEAD and the refs a write may move, git's state files, and the refs
//! that keep all of it (and the worktree commit) reachable.
//!
//! Everything runs through the read door (`Git::cmd`): hooks, fsmonitor and the
//! repository's filter drivers never run here, and file contents are stored raw
//! (`hash-object --no-filters`), so what is captured is the bytes on disk — which is what
//! a restore must put back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::files::MODE_FILE;
use super::{Steps, ref_base};
use crate::git::fast_import::{self, Change, Content, NewCommit};
use crate::git::index_copy::IndexCopy;
use crate::git::ref_file::{self, RefValue};
use crate::git::update_ref::Transaction;
use crate::git::{Git, ObjectFormat, Oid, Repo};
use crate::git::{objects, on_copy, refs};
use crate::operation::OpError;
use crate::operation::intent::{Found, read_ref};

/// Git's mode of a tree entry that is a directory.
const MODE_TREE: u32 = 0o040000;

/// Git's state files of an operation in progress, and the directories that hold one.
pub const STATE_FILES: &[&str] = &[
    "MERGE_HEAD",
    "MERGE_MSG",
    "MERGE_MODE",
    "MERGE_RR",
    "AUTO_MERGE",
    "SQUASH_MSG",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "BISECT_LOG",
    "BISECT_START",
    "BISECT_TERMS",
    "BISECT_EXPECTED_REV",
    "BISECT_ANCESTORS_OK",
    "BISECT_NAMES",
];
pub const STATE_DIRS: &[&str] = &["rebase-merge", "rebase-apply", "sequencer"];
/// At most this many state files, each at most this large, are kept.
const MAX_STATE_FILES: usize = 1000;
const MAX_STATE_BYTES: u64 = 4 * 1024 * 1024;

pub fn zero(format: ObjectFormat) -> String {
    match format {
        ObjectFormat::Sha1 => "0".repeat(40),
        ObjectFormat::Sha256 => "0".repeat(64),
    }
}

/// The index file's modification time in nanoseconds since the epoch (`None` without one).
/// Git trusts an entry's stat data only when the entry is older than the index file
/// ("racy git"); a restored index keeps this time so that trust is never widened.
pub fn index_mtime(repo: &Repo) -> Option<u64> {
    let modified = std::fs::symlink_metadata(repo.git_dir.join("index"))
        .and_then(|m| m.modified())
        .ok()?;
    let since = modified.duration_since(std::time::UNIX_EPOCH).ok()?;
    u64::try_from(since.as_nanos()).ok()
}

/// The index file as a blob (conflict stages and flags included) and, when it has no
/// conflicts, its tree.
pub async fn index(
    git: &Git<'_>,
    repo: &Repo,
    copy: &IndexCopy,
    steps: &Steps,
) -> Result<Value, OpError> {
    if std::fs::symlink_metadata(repo.git_dir.join("index")).is_err() {
        return Ok(json!({"blob": null, "tree": null}));
    }
    // In this order: `write-tree` rewrites the copy with its cached trees.
    let blob = steps
        .time(
            "index blob",
            objects::store_file(git, copy.path().as_os_str()),
        )
        .await?;
    let tree = steps
        .time("index tree", on_copy::write_tree(git, copy))
        .await?;
    Ok(json!({"blob": blob.as_str(), "tree": tree.as_ref().map(Oid::as_str)}))
}

/// The state files present in the git directory, each stored as a blob: `{relpath: oid}`.
pub async fn state(git: &Git<'_>, git_dir: &Path) -> Result<Value, OpError> {
    let dir = git_dir.to_owned();
    let found = crate::safe_file::off_thread(git.cancel(), move || state_files(&dir))
        .await
        .map_err(|e| OpError::Internal(e.to_string()))?;
    let mut map = Map::new();
    for (rel, bytes) in found {
        let oid = objects::store_bytes(git, bytes).await?;
        map.insert(rel, json!(oid.as_str()));
    }
    Ok(Value::Object(map))
}

fn state_files(git_dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut pending: Vec<PathBuf> = STATE_FILES.iter().map(PathBuf::from).collect();
    pending.extend(STATE_DIRS.iter().map(PathBuf::from));
    while let Some(rel) = pending.pop() {
        if out.len() >= MAX_STATE_FILES {
            break;
        }
        let path = git_dir.join(&rel);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&path) {
                pending.extend(entries.flatten().map(|e| rel.join(e.file_name())));
            }
        } else if let Ok(bytes) = crate::safe_file::read_in(git_dir, &rel, MAX_STATE_BYTES) {
            out.push((rel.to_string_lossy().into_owned(), bytes));
        }
    }
    out
}

/// HEAD and each named ref as found: `(head, {name: oid|null})`.
pub async fn refs(
    git: &Git<'_>,
    names: &[String],
) -> Result<(Value, BTreeMap<String, Value>), OpError> {
    let wanted: Vec<String> = names
        .iter()
        .filter(|n| n.starts_with("refs/"))
        .cloned()
        .collect();
    // The ref files answer without a process in the common case; git is asked for the
    // rest, beside HEAD. The branch HEAD names is at HEAD's commit.
    let mut found = Vec::new();
    let mut ask = Vec::new();
    for name in &wanted {
        match ref_file::read(git.repo, name) {
            Some(RefValue::At(oid)) => found.push((name.clone(), oid)),
            Some(RefValue::Absent) => {}
            _ => ask.push(name.clone()),
        }
    }
    let (head, asked) = tokio::join!(read_ref(git, "HEAD"), refs::resolve(git, &ask));
    let head = head?;
    found.extend(asked?);
    let head_json = match &head {
        Found::Symbolic { target, oid } => {
            json!({"symbolic": target, "oid": oid.as_ref().map(Oid::as_str)})
        }
        Found::At(oid) => json!({"symbolic": null, "oid": oid.as_str()}),
        Found::Absent => json!({"symbolic": null, "oid": null}),
    };
    let mut map: BTreeMap<String, Value> =
        wanted.iter().map(|n| (n.clone(), Value::Null)).collect();
    for (name, oid) in found {
        if let Some(slot) = map.get_mut(&name) {
            *slot = json!(oid.as_str());
        }
    }
    if let Found::Symbolic { target, oid } = &head {
        map.insert(
            target.clone(),
            oid.as_ref().map_or(Value::Null, |o| json!(o.as_str())),
        );
    }
    Ok((head_json, map))
}

/// The worktree commit and its tree, and the objects of its inline blobs, as
/// [`pin`] wrote them.
pub struct Pinned {
    pub worktree: Option<(Oid, Oid)>,
    pub blobs: Vec<Oid>,
}

/// Writes the worktree commit and keeps every object the point needs reachable, under
/// `refs/gitward/restore/<id>/`: HEAD and each branch as refs to their commits, the
/// worktree commit, and one commit whose tree holds the index file (`index`), its tree
/// (`index-tree`) and git's state files (`state/…`). A ref straight at the index blob
/// would make git read and hash the whole blob again to check it; a ref at a commit only
/// parses the commit. Refs other than branches may name any object and are created in
/// one transaction of their own.
pub async fn pin(
    git: &Git<'_>,
    id: &str,
    captured: &Value,
    worktree: Option<NewCommit>,
    when: i64,
) -> Result<Pinned, OpError> {
    let base = ref_base(id);
    let oid = |v: &Value| {
        v.as_str()
            .map(|s| {
                Oid::parse(s).ok_or_else(|| OpError::Internal(format!("not an object id: {s}")))
            })
            .transpose()
    };
    let mut commits_at: Vec<(String, Oid)> = Vec::new();
    let mut others = Transaction::new();
    if let Some(head) = oid(&captured["head"]["oid"])? {
        commits_at.push((format!("{base}HEAD"), head));
    }
    for (name, value) in captured["refs"].as_object().into_iter().flatten() {
        match oid(value)? {
            Some(at) if name.starts_with("refs/heads/") => {
                commits_at.push((format!("{base}{name}"), at));
            }
            Some(at) => {
                others.create(&format!("{base}{name}"), at.as_str());
            }
            None => {}
        }
    }
    let mut kept: Vec<(String, Change)> = Vec::new();
    let mut keep = |path: String, mode: u32, value: &Value| -> Result<(), OpError> {
        if let Some(at) = oid(value)? {
            let content = Content::Object(at);
            kept.push((path, Change::Put { mode, content }));
        }
        Ok(())
    };
    keep("index".into(), MODE_FILE, &captured["index"]["blob"])?;
    keep("index-tree".into(), MODE_TREE, &captured["index"]["tree"])?;
    for (rel, value) in captured["state"].as_object().into_iter().flatten() {
        keep(format!("state/{rel}"), MODE_FILE, value)?;
    }
    let has_worktree = worktree.is_some();
    let mut commits: Vec<NewCommit> = worktree.into_iter().collect();
    if !kept.is_empty() {
        commits.push(NewCommit {
            ref_name: format!("{base}objects"),
            message: format!("gitward restore point {id}: index and state files\n"),
            root: None,
            changes: kept,
        });
    }
    let mut pinned = Pinned {
        worktree: None,
        blobs: Vec::new(),
    };
    if !commits.is_empty() || !commits_at.is_empty() {
        let written = fast_import::run(git, &commits, &commits_at, when).await?;
        pinned.worktree = written.commits.first().filter(|_| has_worktree).cloned();
        pinned.blobs = written.blobs;
    }
    others.commit(git, None).await?;
    Ok(pinned)
}
