//! Putting a restore point back: the worktree (only the paths that differ from the
//! restore point taken just before, found by comparing the two worktree trees), the index
//! file byte for byte, the refs (in one guarded transaction) and git's state files.
//!
//! Files are written raw from their blobs, as captured: no filter or line-ending
//! conversion runs in either direction, so the bytes on disk come back exactly.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use serde_json::{Value, json};

use super::capture::{STATE_DIRS, STATE_FILES, zero};
use super::files;
use crate::git::{Git, Repo};
use crate::operation::OpError;
use crate::parse::cat_file_batch::{Answer, Batch};

/// Bytes of object contents held at once: objects are fetched in runs of about this much.
const BATCH_BYTES: u64 = 256 * 1024 * 1024;
/// Largest blob a restore writes.
const MAX_BLOB: usize = 1 << 30;

/// `oids` in runs whose sizes (from one `cat-file --batch-check`) add up to about
/// [`BATCH_BYTES`], so a restore of many files starts few processes and never holds much.
async fn runs(git: &Git<'_>, oids: &[String]) -> Result<Vec<Vec<String>>, OpError> {
    let input: Vec<u8> = oids
        .iter()
        .flat_map(|o| format!("{o}\n").into_bytes())
        .collect();
    let out = git
        .cmd(["cat-file", "--batch-check=%(objectname) %(objectsize)"])
        .stdin(input)
        .capture(crate::git::DEFAULT_CAP * 4)
        .await?;
    let mut runs: Vec<Vec<String>> = vec![Vec::new()];
    let mut held = 0u64;
    for (oid, line) in oids
        .iter()
        .zip(String::from_utf8_lossy(&out.sink.bytes).lines())
    {
        let size: u64 = line
            .rsplit(' ')
            .next()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        if held + size > BATCH_BYTES && runs.last().is_some_and(|r| !r.is_empty()) {
            runs.push(Vec::new());
            held = 0;
        }
        held += size;
        if let Some(run) = runs.last_mut() {
            run.push(oid.clone());
        }
    }
    Ok(runs)
}

/// The contents of `oids`, by id.
async fn blobs(git: &Git<'_>, oids: &[String]) -> Result<HashMap<String, Vec<u8>>, OpError> {
    let mut out = HashMap::new();
    if oids.is_empty() {
        return Ok(out);
    }
    for chunk in runs(git, oids).await? {
        let input: Vec<u8> = chunk
            .iter()
            .flat_map(|o| format!("{o}\n").into_bytes())
            .collect();
        let done = git
            .cmd(["cat-file", "--batch"])
            .stdin(input)
            .stream(Batch::new(MAX_BLOB, usize::MAX))
            .await?;
        let answers = done
            .sink
            .finish(true)
            .map_err(|e| OpError::Internal(format!("cat-file output: {}", e.reason)))?;
        for answer in answers {
            match answer {
                Answer::Found(obj) if !obj.truncated() => {
                    out.insert(obj.oid.as_str().to_owned(), obj.bytes);
                }
                Answer::Found(obj) => {
                    return Err(OpError::Unsupported(format!(
                        "object {} is too large to restore",
                        obj.oid
                    )));
                }
                Answer::Absent { name, reason } => {
                    return Err(OpError::Internal(format!("object {name} is {reason}")));
                }
            }
        }
    }
    Ok(out)
}

/// One entry of `diff-tree -r -z --raw`: `(target mode, target oid, status, path)`.
fn raw_diff(bytes: &[u8]) -> Vec<(u32, String, u8, String)> {
    let mut out = Vec::new();
    let mut records = bytes.split(|b| *b == 0);
    while let (Some(meta), Some(path)) = (records.next(), records.next()) {
        let meta = String::from_utf8_lossy(meta);
        let fields: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        if let [_, mode_b, _, oid_b, status] = fields.as_slice() {
            let mode = u32::from_str_radix(mode_b, 8).unwrap_or(0);
            let status = status.bytes().next().unwrap_or(b'?');
            out.push((
                mode,
                (*oid_b).to_owned(),
                status,
                String::from_utf8_lossy(path).into_owned(),
            ));
        }
    }
    out
}

/// Makes the worktree at `top` match `target` (a worktree tree), given `current` (the
/// tree just captured). Paths the target's point skipped are never removed.
pub async fn worktree(
    git: &Git<'_>,
    top: &Path,
    current: &str,
    target: &str,
    skipped: &BTreeSet<String>,
) -> Result<Value, OpError> {
    let out = git
        .cmd([
            "diff-tree",
            "-r",
            "-z",
            "--no-renames",
            "--raw",
            current,
            target,
        ])
        .capture(crate::git::DEFAULT_CAP * 4)
        .await?;
    let entries = raw_diff(&out.sink.bytes);
    let wanted: Vec<String> = entries
        .iter()
        .filter(|(mode, _, status, _)| *status != b'D' && *mode != 0o160000)
        .map(|(_, oid, _, _)| oid.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let contents = blobs(git, &wanted).await?;
    let top = top.to_owned();
    let skipped = skipped.clone();
    // A restore must finish once started: no read deadline on the writes.
    let result = tokio::task::spawn_blocking(move || {
        let (mut written, mut removed, mut failed) = (0u64, 0u64, Vec::new());
        for (mode, oid, status, path) in entries {
            let done = match status {
                b'D' if skipped.contains(&path) => continue,
                b'D' => files::remove(&top, &path).map(|_| removed += 1),
                _ if mode == 0o160000 => continue,
                _ => match contents.get(&oid) {
                    Some(bytes) => files::write(&top, &path, mode, bytes).map(|_| written += 1),
                    None => Err(format!("{path}: object {oid} not fetched")),
                },
            };
            if let Err(e) = done {
                failed.push(e);
            }
        }
        (written, removed, failed)
    })
    .await
    .map_err(|e| OpError::Internal(format!("restoring files stopped: {e}")))?;
    let (written, removed, failed) = result;
    if !failed.is_empty() {
        return Err(OpError::git(format!(
            "could not restore every file: {}",
            failed.join("; ")
        )));
    }
    Ok(json!({"written": written, "removed": removed}))
}

/// Puts the index file back byte for byte (or removes it when there was none).
pub async fn index(git: &Git<'_>, repo: &Repo, captured: &Value) -> Result<(), OpError> {
    let dir = repo.git_dir.clone();
    let bytes = match captured["blob"].as_str() {
        Some(oid) => Some(
            blobs(git, &[oid.to_owned()])
                .await?
                .remove(oid)
                .ok_or_else(|| OpError::Internal("index blob not fetched".into()))?,
        ),
        None => None,
    };
    crate::safe_file::off_thread(git.cancel(), move || match bytes {
        Some(bytes) => files::replace_locked(&dir, "index", &bytes),
        None => match std::fs::remove_file(dir.join("index")) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.to_string()),
            _ => Ok(()),
        },
    })
    .await
    .map_err(|e| OpError::Internal(e.to_string()))?
    .map_err(OpError::git)
}

/// The branches checked out in the repository's other worktrees (not `own`).
async fn checked_out_elsewhere(
    git: &Git<'_>,
    own: Option<&Path>,
) -> Result<BTreeSet<String>, OpError> {
    let out = git
        .cmd(["worktree", "list", "--porcelain", "-z"])
        .capture(crate::git::DEFAULT_CAP)
        .await?;
    let own = own.and_then(|p| std::fs::canonicalize(p).ok());
    let mut busy = BTreeSet::new();
    let mut this = false;
    for field in out.sink.bytes.split(|b| *b == 0) {
        if let Some(path) = field.strip_prefix(b"worktree ") {
            use std::os::unix::ffi::OsStrExt;
            let path = Path::new(std::ffi::OsStr::from_bytes(path));
            this = own.is_some() && std::fs::canonicalize(path).ok() == own;
        } else if let Some(branch) = field.strip_prefix(b"branch ") {
            if !this {
                busy.insert(String::from_utf8_lossy(branch).into_owned());
            }
        }
    }
    Ok(busy)
}

/// Moves every captured ref back in one transaction guarded on the values just read
/// (`now`), then HEAD. A ref that did not exist at capture is deleted — unless a
/// worktree (one an operation added, say) has it checked out: that one is kept and
/// returned, since deleting it would leave the worktree on a missing branch.
pub async fn refs(
    git: &Git<'_>,
    repo: &Repo,
    captured: &Value,
    now: &BTreeMap<String, Value>,
) -> Result<Vec<String>, OpError> {
    let zero = zero(repo.object_format);
    let busy = checked_out_elsewhere(git, repo.worktree.as_deref()).await?;
    let mut kept = Vec::new();
    let mut input = Vec::new();
    if let Some(refs) = captured["refs"].as_object() {
        for (name, want) in refs {
            if !name.starts_with("refs/") || name.starts_with(super::REF_PREFIX) {
                continue;
            }
            let cur = now.get(name).and_then(Value::as_str);
            match (want.as_str(), cur) {
                (Some(w), Some(c)) if w == c => {}
                (Some(w), c) => input.extend_from_slice(
                    format!("update {name}\0{w}\0{}\0", c.unwrap_or(&zero)).as_bytes(),
                ),
                (None, Some(_)) if busy.contains(name) => {
                    kept.push(name.clone());
                }
                (None, Some(c)) => {
                    input.extend_from_slice(format!("delete {name}\0{c}\0").as_bytes())
                }
                (None, None) => {}
            }
        }
    }
    if !input.is_empty() {
        git.cmd(["update-ref", "-m", "gitward: restore", "--stdin", "-z"])
            .stdin(input)
            .capture(64 * 1024)
            .await?;
    }
    let head = &captured["head"];
    match (head["symbolic"].as_str(), head["oid"].as_str()) {
        (Some(target), _) => {
            git.cmd(["symbolic-ref", "-m", "gitward: restore", "HEAD", target])
                .capture(4096)
                .await?;
        }
        (None, Some(oid)) => {
            git.cmd([
                "update-ref",
                "-m",
                "gitward: restore",
                "--no-deref",
                "HEAD",
                oid,
            ])
            .capture(4096)
            .await?;
        }
        (None, None) => {}
    }
    Ok(kept)
}

/// Puts git's state files back: those captured are written, any other present is removed.
pub async fn state(git: &Git<'_>, git_dir: &Path, captured: &Value) -> Result<(), OpError> {
    let wanted: BTreeMap<String, String> = captured
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                .collect()
        })
        .unwrap_or_default();
    let oids: Vec<String> = wanted.values().cloned().collect();
    let contents = blobs(git, &oids).await?;
    let dir = git_dir.to_owned();
    crate::safe_file::off_thread(git.cancel(), move || {
        for name in STATE_FILES.iter().chain(STATE_DIRS) {
            if !wanted
                .keys()
                .any(|k| k == name || k.starts_with(&format!("{name}/")))
            {
                let path = dir.join(name);
                let _ = std::fs::remove_file(&path);
                let _ = std::fs::remove_dir_all(&path);
            }
        }
        for (rel, oid) in &wanted {
            let Some(bytes) = contents.get(oid) else {
                continue;
            };
            let path = dir.join(rel);
            if rel.split('/').any(|c| c == ".." || c.is_empty()) {
                continue;
            }
            if let Some(parent) = path.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let _ = std::fs::write(&path, bytes);
        }
    })
    .await
    .map_err(|e| OpError::Internal(e.to_string()))
}
