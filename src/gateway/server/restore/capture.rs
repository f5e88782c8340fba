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
use super::{Caps, ref_base};
use crate::git::index_copy::IndexCopy;
use crate::git::{Git, ObjectFormat, Oid, Repo};
use crate::operation::OpError;
use crate::operation::intent::{Found, read_ref};
use crate::operation::pins;
use crate::parse::status_v2::Kind;

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

fn oid_of(bytes: &[u8]) -> Result<Oid, OpError> {
    let text = String::from_utf8_lossy(bytes);
    Oid::parse(text.trim())
        .ok_or_else(|| OpError::Internal(format!("expected an object id, got {text:?}")))
}

/// Stores `bytes` as a blob, raw.
async fn blob(git: &Git<'_>, bytes: Vec<u8>) -> Result<Oid, OpError> {
    let out = git
        .cmd(["hash-object", "-w", "--no-filters", "--stdin"])
        .stdin(bytes)
        .capture(256)
        .await?;
    oid_of(&out.sink.bytes)
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
) -> Result<Staged, OpError> {
    let changes = pins::changes(git, None).await?;
    let candidates: Vec<(String, bool)> = changes
        .into_iter()
        .filter(|c| match c.kind {
            Kind::Untracked | Kind::Unmerged => true,
            _ => c.xy.as_bytes().get(1).is_some_and(|y| *y != b'.'),
        })
        .map(|c| (c.path, c.kind == Kind::Untracked))
        .collect();
    let (top_owned, caps_owned) = (top.to_owned(), caps.clone());
    let disk = crate::safe_file::off_thread(git.cancel(), move || {
        candidates
            .into_iter()
            .map(|(p, untracked)| {
                let d = on_disk(&top_owned, &p, &caps_owned);
                (p, untracked, d)
            })
            .collect::<Vec<_>>()
    })
    .await
    .map_err(|e| OpError::Internal(e.to_string()))?;
    let zero = zero(repo.object_format);
    let mut skipped = Vec::new();
    let mut info: Vec<u8> = Vec::new();
    let mut files: Vec<(String, bool)> = Vec::new();
    let mut links: Vec<(String, Vec<u8>)> = Vec::new();
    let remove = |info: &mut Vec<u8>, p: &str| {
        info.extend_from_slice(format!("0 {zero}\t{p}\0").as_bytes());
    };
    for (path, untracked, d) in disk {
        match d {
            OnDisk::Missing => remove(&mut info, &path),
            OnDisk::Dir if untracked => {
                skipped.push(json!({"path": path, "reason": "nested repository"}))
            }
            OnDisk::Dir => {}
            OnDisk::Skipped(reason) => {
                remove(&mut info, &path);
                skipped.push(json!({"path": path, "reason": reason}));
            }
            OnDisk::Link(target) => links.push((path, target)),
            OnDisk::File { .. } if files.len() + links.len() >= caps.max_files => {
                remove(&mut info, &path);
                skipped.push(json!({"path": path, "reason": format!("over the {} file cap", caps.max_files)}));
            }
            OnDisk::File { exec } => files.push((path, exec)),
        }
    }
    let oids = hash_files(git, &files).await?;
    for ((path, exec), oid) in files.iter().zip(oids) {
        let mode = if *exec { MODE_EXEC } else { MODE_FILE };
        remove(&mut info, path);
        info.extend_from_slice(format!("{mode:o} {oid}\t{path}\0").as_bytes());
    }
    for (path, target) in &links {
        let oid = blob(git, target.clone()).await?;
        remove(&mut info, path);
        info.extend_from_slice(format!("{MODE_LINK:o} {oid}\t{path}\0").as_bytes());
    }
    Ok(Staged {
        info,
        stored: files.len() + links.len(),
        skipped,
    })
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
) -> Result<Value, OpError> {
    if !staged.info.is_empty() {
        git.cmd_on_copy(copy, ["update-index", "-z", "--index-info"])
            .stdin(staged.info.clone())
            .capture(64 * 1024)
            .await?;
    }
    let tree = git.cmd_on_copy(copy, ["write-tree"]).capture(256).await?;
    let tree = oid_of(&tree.sink.bytes)?;
    let commit = git
        .cmd([
            "commit-tree",
            "-m",
            &format!("gitward restore point {id}: worktree"),
            tree.as_str(),
        ])
        .env("GIT_AUTHOR_NAME", "gitward")
        .env("GIT_AUTHOR_EMAIL", "gitward@localhost")
        .env("GIT_COMMITTER_NAME", "gitward")
        .env("GIT_COMMITTER_EMAIL", "gitward@localhost")
        .capture(256)
        .await?;
    let commit = oid_of(&commit.sink.bytes)?;
    Ok(json!({"commit": commit.as_str(), "tree": tree.as_str(), "hashed": staged.stored}))
}

/// Stores each file raw; one `hash-object` for all names without a newline, one each
/// for the rest (`--stdin-paths` is line-based).
async fn hash_files(git: &Git<'_>, files: &[(String, bool)]) -> Result<Vec<Oid>, OpError> {
    let mut out: Vec<Option<Oid>> = vec![None; files.len()];
    let plain: Vec<usize> = (0..files.len())
        .filter(|i| !files[*i].0.contains('\n'))
        .collect();
    if !plain.is_empty() {
        let mut input = Vec::new();
        for i in &plain {
            input.extend_from_slice(files[*i].0.as_bytes());
            input.push(b'\n');
        }
        let done = git
            .cmd(["hash-object", "-w", "--no-filters", "--stdin-paths"])
            .stdin(input)
            .capture(crate::git::DEFAULT_CAP * 4)
            .await?;
        let lines: Vec<&[u8]> = done
            .sink
            .bytes
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        if lines.len() != plain.len() {
            return Err(OpError::Internal(
                "hash-object answered a different number of objects".into(),
            ));
        }
        for (i, line) in plain.iter().zip(lines) {
            out[*i] = Some(oid_of(line)?);
        }
    }
    for (i, (path, _)) in files.iter().enumerate() {
        if out[i].is_none() {
            let done = git
                .cmd(["hash-object", "-w", "--no-filters", "--", path])
                .capture(256)
                .await?;
            out[i] = Some(oid_of(&done.sink.bytes)?);
        }
    }
    Ok(out.into_iter().flatten().collect())
}

/// The index file as a blob (conflict stages and flags included) and, when it has no
/// conflicts, its tree.
pub async fn index(git: &Git<'_>, repo: &Repo, copy: &IndexCopy) -> Result<Value, OpError> {
    if std::fs::symlink_metadata(repo.git_dir.join("index")).is_err() {
        return Ok(json!({"blob": null, "tree": null}));
    }
    let path = copy.path().as_os_str().to_owned();
    let out = git
        .cmd(["hash-object", "-w", "--no-filters", "--"])
        .arg(path)
        .capture(256)
        .await?;
    let blob = oid_of(&out.sink.bytes)?;
    let tree = git
        .cmd_on_copy(copy, ["write-tree"])
        .capture_allowing(256, &[0, 128])
        .await?;
    let tree = tree
        .success()
        .then(|| oid_of(&tree.sink.bytes))
        .transpose()?;
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
        let oid = blob(git, bytes).await?;
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
    let head = read_ref(git, "HEAD").await?;
    let head_json = match &head {
        Found::Symbolic { target, oid } => {
            json!({"symbolic": target, "oid": oid.as_ref().map(Oid::as_str)})
        }
        Found::At(oid) => json!({"symbolic": null, "oid": oid.as_str()}),
        Found::Absent => json!({"symbolic": null, "oid": null}),
    };
    let mut all: Vec<String> = names
        .iter()
        .filter(|n| n.starts_with("refs/"))
        .cloned()
        .collect();
    if let Found::Symbolic { target, .. } = &head {
        all.push(target.clone());
    }
    all.sort();
    all.dedup();
    let mut map = BTreeMap::new();
    for name in all {
        let value = match read_ref(git, &name).await? {
            Found::At(oid) => json!(oid.as_str()),
            _ => Value::Null,
        };
        map.insert(name, value);
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
    let mut input = Vec::new();
    for (name, oid) in lines {
        input.extend_from_slice(format!("create {name}\0{oid}\0").as_bytes());
    }
    git.cmd(["update-ref", "--stdin", "-z"])
        .stdin(input)
        .capture(64 * 1024)
        .await?;
    Ok(())
}
