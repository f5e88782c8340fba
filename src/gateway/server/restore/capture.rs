//! Taking a restore point without changing the user's worktree or index.
//!
//! Everything runs through the read door (`Git::cmd`): hooks, fsmonitor and the
//! repository's filter drivers never run here, and file contents are stored raw
//! (`hash-object --no-filters`), so what is captured is the bytes on disk — which is what
//! a restore must put back. The worktree tree is built on a private copy of the index
//! (`GIT_INDEX_FILE`): unchanged tracked files keep their index entries (no re-hashing),
//! and only what `status` reports as changed or untracked is hashed and entered, so a
//! restore point costs about one `status` plus the changed files.

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::files::{MODE_EXEC, MODE_FILE, MODE_LINK};
use super::{Caps, Steps, ref_base};
use crate::git::index_copy::IndexCopy;
use crate::git::update_ref::Transaction;
use crate::git::{Git, ObjectFormat, Oid, Repo};
use crate::git::{objects, on_copy, refs};
use crate::operation::OpError;
use crate::operation::intent::{Found, read_ref};
use crate::operation::pins;

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

/// What a changed path is on disk now.
enum OnDisk {
    Missing,
    Link(Vec<u8>),
    File {
        exec: bool,
    },
    /// A directory (a submodule or nested repository): left as the index has it.
    Dir,
    Skipped(String),
}

fn on_disk(top: &Path, rel: &str, caps: &Caps) -> OnDisk {
    let path = top.join(rel.trim_end_matches('/'));
    let Ok(meta) = std::fs::symlink_metadata(&path) else {
        return OnDisk::Missing;
    };
    if meta.file_type().is_symlink() {
        return match std::fs::read_link(&path) {
            Ok(t) => OnDisk::Link(t.as_os_str().as_bytes().to_vec()),
            Err(e) => OnDisk::Skipped(format!("unreadable link: {e}")),
        };
    }
    if meta.is_dir() {
        return OnDisk::Dir;
    }
    if !meta.is_file() {
        return OnDisk::Skipped("not a regular file".into());
    }
    if meta.len() > caps.max_file_bytes {
        let cap = caps.max_file_bytes;
        return OnDisk::Skipped(if cap >= 1024 * 1024 && cap % (1024 * 1024) == 0 {
            format!("larger than {} MiB", cap / (1024 * 1024))
        } else {
            format!("larger than {cap} bytes")
        });
    }
    OnDisk::File {
        exec: meta.permissions().mode() & 0o111 != 0,
    }
}

/// The worktree's changes against the index, stored as blobs: the `--index-info` input
/// that enters them in an index copy, how many were stored, and the skipped list. Reads
/// only the real index, so it can run beside [`index`].
pub async fn changes(
    git: &Git<'_>,
    repo: &Repo,
    top: &Path,
    caps: &Caps,
    steps: &Steps,
) -> Result<Staged, OpError> {
    let candidates = steps.time("list changes", candidates(git)).await?;
    let (top_owned, caps_owned) = (top.to_owned(), caps.clone());
    let disk = steps
        .time(
            "stat changes",
            crate::safe_file::off_thread(git.cancel(), move || {
                candidates
                    .into_iter()
                    .map(|c| {
                        let d = on_disk(&top_owned, &c.path, &caps_owned);
                        (c, d)
                    })
                    .collect::<Vec<_>>()
            }),
        )
        .await
        .map_err(|e| OpError::Internal(e.to_string()))?;
    let zero = zero(repo.object_format);
    let mut staged = Staged {
        info: Vec::new(),
        stored: 0,
        skipped: Vec::new(),
    };
    let remove = |info: &mut Vec<u8>, p: &str| {
        info.extend_from_slice(format!("0 {zero}\t{p}\0").as_bytes());
    };
    // Files and links to hash, each with its mode on disk, in listing order.
    let mut contents: Vec<(Candidate, u32, Option<Vec<u8>>)> = Vec::new();
    for (c, d) in disk {
        match d {
            OnDisk::Missing => remove(&mut staged.info, &c.path),
            OnDisk::Dir if c.untracked => staged
                .skipped
                .push(json!({"path": c.path, "reason": "nested repository"})),
            OnDisk::Dir => {}
            OnDisk::Skipped(reason) => {
                remove(&mut staged.info, &c.path);
                staged
                    .skipped
                    .push(json!({"path": c.path, "reason": reason}));
            }
            OnDisk::Link(target) => contents.push((c, MODE_LINK, Some(target))),
            OnDisk::File { exec } => {
                contents.push((c, if exec { MODE_EXEC } else { MODE_FILE }, None));
            }
        }
    }
    let oids = steps.time("store files", store(git, &contents)).await?;
    for ((c, mode, _), oid) in contents.iter().zip(oids) {
        // Listed for its stat data only: the index entry already holds these bytes.
        if c.entry.as_ref() == Some(&(*mode, oid.clone())) {
            continue;
        }
        remove(&mut staged.info, &c.path);
        if *mode != MODE_LINK && staged.stored >= caps.max_files {
            let reason = format!("over the {} file cap", caps.max_files);
            staged
                .skipped
                .push(json!({"path": c.path, "reason": reason}));
            continue;
        }
        staged.stored += 1;
        let line = format!("{mode:o} {oid}\t{}\0", c.path);
        staged.info.extend_from_slice(line.as_bytes());
    }
    Ok(staged)
}

/// Stores each file's bytes (one process for all) and each link's target, in order.
async fn store(
    git: &Git<'_>,
    contents: &[(Candidate, u32, Option<Vec<u8>>)],
) -> Result<Vec<Oid>, OpError> {
    let names: Vec<&str> = contents
        .iter()
        .filter(|(_, _, link)| link.is_none())
        .map(|(c, _, _)| c.path.as_str())
        .collect();
    let mut files = objects::store_files(git, &names).await?.into_iter();
    let mut out = Vec::with_capacity(contents.len());
    for (_, _, link) in contents {
        let oid = match link {
            Some(target) => objects::store_bytes(git, target.clone()).await?,
            None => files
                .next()
                .ok_or_else(|| OpError::Internal("a stored file has no object".into()))?,
        };
        out.push(oid);
    }
    Ok(out)
}

/// A path that may differ between the worktree and the index.
struct Candidate {
    path: String,
    untracked: bool,
    /// Its index entry (mode, object), when it has one.
    entry: Option<(u32, Oid)>,
}

/// The paths to store: what may differ between the worktree and the index. Only that side
/// matters (the index is kept whole), so `diff-files` serves instead of a `status`, which
/// would also compare HEAD with the index.
async fn candidates(git: &Git<'_>) -> Result<Vec<Candidate>, OpError> {
    let listed = crate::git::ls_files::worktree_changes(git, pins::MAX_CHANGES)
        .await?
        .filter(|l| l.len() <= pins::MAX_CHANGES)
        .ok_or_else(|| {
            OpError::Unsupported(format!(
                "more than {} changed paths: too many for a restore point",
                pins::MAX_CHANGES
            ))
        })?;
    Ok(listed
        .into_iter()
        .map(|c| Candidate {
            path: String::from_utf8_lossy(&c.path).into_owned(),
            untracked: c.untracked,
            entry: c.entry,
        })
        .collect())
}

/// What [`changes`] found.
pub struct Staged {
    info: Vec<u8>,
    stored: usize,
    pub skipped: Vec<Value>,
}

/// The worktree as a commit (`{commit, tree, hashed}`): `staged` entered in the index copy.
pub async fn build(
    git: &Git<'_>,
    copy: &IndexCopy,
    id: &str,
    staged: &Staged,
    index_tree: Option<&str>,
    steps: &Steps,
) -> Result<Value, OpError> {
    // A worktree that matches the index has the index's tree: no second write.
    let unchanged = index_tree
        .filter(|_| staged.info.is_empty())
        .and_then(Oid::parse);
    let tree = match unchanged {
        Some(tree) => tree,
        None => {
            steps
                .time(
                    "enter changes",
                    on_copy::enter(git, copy, staged.info.clone()),
                )
                .await?;
            steps
                .time("worktree tree", on_copy::write_tree(git, copy))
                .await?
                .ok_or_else(|| OpError::Internal("the worktree tree could not be written".into()))?
        }
    };
    let message = format!("gitward restore point {id}: worktree");
    let commit = steps
        .time(
            "worktree commit",
            objects::commit_tree(git, &tree, &message),
        )
        .await?;
    Ok(json!({"commit": commit.as_str(), "tree": tree.as_str(), "hashed": staged.stored}))
}

/// The index file as a blob (conflict stages and flags included) and, when it has no
/// conflicts, its tree.
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
    // HEAD and the named refs side by side; the branch HEAD names is at HEAD's commit.
    let (head, found) = tokio::join!(read_ref(git, "HEAD"), refs::resolve(git, &wanted));
    let (head, found) = (head?, found?);
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

/// Keeps every object the point needs reachable, under `refs/gitward/restore/<id>/`, in
/// one ref transaction.
pub async fn pin_objects(git: &Git<'_>, id: &str, captured: &Value) -> Result<(), OpError> {
    let base = ref_base(id);
    let mut lines: Vec<(String, String)> = Vec::new();
    if let Some(oid) = captured["head"]["oid"].as_str() {
        lines.push((format!("{base}HEAD"), oid.to_owned()));
    }
    if let Some(refs) = captured["refs"].as_object() {
        for (name, oid) in refs {
            if let Some(oid) = oid.as_str() {
                lines.push((format!("{base}{name}"), oid.to_owned()));
            }
        }
    }
    for (key, name) in [("blob", "index"), ("tree", "index-tree")] {
        if let Some(oid) = captured["index"][key].as_str() {
            lines.push((format!("{base}{name}"), oid.to_owned()));
        }
    }
    if let Some(oid) = captured["worktree"]["commit"].as_str() {
        lines.push((format!("{base}worktree"), oid.to_owned()));
    }
    if let Some(state) = captured["state"].as_object() {
        for (i, oid) in state.values().enumerate() {
            if let Some(oid) = oid.as_str() {
                lines.push((format!("{base}state/{i}"), oid.to_owned()));
            }
        }
    }
    let mut tx = Transaction::new();
    for (name, oid) in lines {
        tx.create(&name, &oid);
    }
    tx.commit(git, None).await?;
    Ok(())
}
