//! Taking a restore point without changing the user's worktree or index: the index as a
//! file and its tree, HEAD and the refs a write may move, git's state files, and the refs
//! that keep all of it (and the worktree commit) reachable.
//!
//! Everything runs through the read door (`Git::cmd`): hooks, fsmonitor and the
//! repository's filter drivers never run here, and file contents are stored raw (given
//! to fast-import as they are, as `hash-object --no-filters` would store them), so what is
//! captured is the bytes on disk — which is what a restore must put back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::files::MODE_FILE;
use super::{Steps, ref_base};
use crate::git::fast_import::{Change, Content, Import, Mark, NewCommit, Written};
use crate::git::index_copy::{IndexCopy, IndexRead};
use crate::git::ref_file::{self, RefValue};
use crate::git::update_ref::Transaction;
use crate::git::{Git, ObjectFormat, Oid, Repo};
use crate::git::{index_lookup, ls_files, objects, on_copy, refs};
use crate::operation::OpError;
use crate::operation::intent::{Found, read_ref};

/// Git's mode of a tree entry that is a directory.
const MODE_TREE: u32 = 0o040000;

/// Git's state files of an operation in progress (and `ORIG_HEAD`, the tip before the last
/// merge, reset or rebase, which git keeps beside them), and the directories that hold one.
pub const STATE_FILES: &[&str] = &[
    "ORIG_HEAD",
    "MERGE_HEAD",
    "MERGE_MSG",
    "MERGE_MODE",
    "MERGE_RR",
    "AUTO_MERGE",
    "SQUASH_MSG",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    // The commit a stopped rebase stopped on; `git status` and `--show-current-patch`
    // read it, and git keeps it beside `rebase-merge/`, not inside.
    "REBASE_HEAD",
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

/// The index as read once: its blob (handed to fast-import as soon as it was read), its
/// tree, and the private copy made when git had to write that tree (`None` when the
/// cache tree served).
pub struct Index {
    pub blob: Option<Mark>,
    pub tree: Option<Oid>,
    pub copy: Option<IndexCopy>,
    /// The entries git keeps out of the worktree on purpose (skip-worktree).
    pub skip_worktree: Vec<index_lookup::Skipped>,
    /// The index tracks a `.gitattributes` file.
    pub attributes: bool,
}

/// The index file (conflict stages and flags included) and, when it has no conflicts,
/// its tree. The tree is the cache tree's root when that is valid and git still has the
/// tree (the condition on which `git write-tree` itself trusts it); otherwise git writes
/// it from a private copy of the bytes read.
pub async fn index(
    git: &Git<'_>,
    import: &mut Import<'_>,
    steps: &Steps,
) -> Result<Index, OpError> {
    let repo = git.repo;
    let read = steps.time("index read", IndexRead::new(repo)).await?;
    let Some(bytes) = read.bytes.as_deref() else {
        return Ok(Index {
            blob: None,
            tree: None,
            copy: None,
            skip_worktree: Vec::new(),
            attributes: false,
        });
    };
    let found = index_lookup::tree_and_skipped(bytes, repo.object_format);
    let (cached, mut skip_worktree, mut attributes) = (found.tree, found.skipped, found.attributes);
    if !found.whole {
        // Entries this file does not hold (a split index's shared part) or that this
        // reader cannot parse: git lists them all.
        (skip_worktree, attributes) = steps.time("index entries", ls_files::skipped(git)).await?;
    }
    // Handed over at once, fast-import compresses the blob while the rest is found out;
    // the bytes stay here for a copy, should git have to write the tree.
    let blob = Some(import.blob(bytes.to_vec()));
    if let Some(tree) = cached {
        let asked = [tree.as_str().to_owned()];
        let found = steps
            .time("index tree", objects::sizes(git, &asked))
            .await?;
        if found.first().is_some_and(Option::is_some) {
            return Ok(Index {
                blob,
                tree: Some(tree),
                copy: None,
                skip_worktree,
                attributes,
            });
        }
    }
    let copy = IndexCopy::of(&read).await?;
    let tree = steps
        .time("index tree", on_copy::write_tree(git, &copy))
        .await?;
    Ok(Index {
        blob,
        tree,
        copy: Some(copy),
        skip_worktree,
        attributes,
    })
}

/// The state files present in the git directory, each with its bytes.
pub async fn state(git: &Git<'_>, git_dir: &Path) -> Result<Vec<(String, Vec<u8>)>, OpError> {
    let dir = git_dir.to_owned();
    crate::safe_file::off_thread(git.cancel(), move || state_files(&dir))
        .await
        .map_err(|e| OpError::Internal(e.to_string()))
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

/// The values of each configuration key in the repository's own file: `{key: [value…]}`.
pub async fn config(git: &Git<'_>, keys: &[String]) -> Result<Value, OpError> {
    let mut out = Map::new();
    for key in keys {
        let values = crate::git::gitconfig::local_values(git, key).await?;
        out.insert(key.clone(), json!(values));
    }
    Ok(Value::Object(out))
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

/// What [`keep`] gave fast-import, to be read back from what it wrote: the index blob
/// and its tree, each state file's blob, and the refs fast-import does not create.
pub struct Kept {
    index: Option<(Option<Mark>, Option<Oid>)>,
    state: Vec<(String, Mark)>,
    pub others: Transaction,
}

/// Hands `import` what keeps the point's objects reachable under
/// `refs/gitward/restore/<id>/`: HEAD and each branch as refs to their commits, and one
/// commit (`objects`) whose tree holds the index file (`index`), its tree (`index-tree`)
/// and git's state files (`state/…`). A ref straight at the index blob would make git
/// read and hash the whole blob again to check it; a ref at a commit only parses the
/// commit. Refs other than branches may name any object: they are left in
/// [`Kept::others`], for one transaction of their own once fast-import is done.
pub fn keep(
    import: &mut Import<'_>,
    id: &str,
    captured: &Value,
    index: Option<Index>,
    state: Vec<(String, Vec<u8>)>,
) -> Result<Kept, OpError> {
    let base = ref_base(id);
    let oid = |v: &Value| {
        v.as_str()
            .map(|s| {
                Oid::parse(s).ok_or_else(|| OpError::Internal(format!("not an object id: {s}")))
            })
            .transpose()
    };
    let mut others = Transaction::new();
    if let Some(head) = oid(&captured["head"]["oid"])? {
        import.reset(&format!("{base}HEAD"), &head);
    }
    for (name, value) in captured["refs"].as_object().into_iter().flatten() {
        match oid(value)? {
            Some(at) if name.starts_with("refs/heads/") => {
                import.reset(&format!("{base}{name}"), &at);
            }
            Some(at) => {
                others.create(&format!("{base}{name}"), at.as_str());
            }
            None => {}
        }
    }
    let mut changes: Vec<(Vec<u8>, Change)> = Vec::new();
    let blob = |bytes| Change::Put {
        mode: MODE_FILE,
        content: Content::Bytes(bytes),
    };
    let (index_blob, index_tree) = match index {
        Some(Index { blob, tree, .. }) => {
            if let Some(mark) = blob {
                let content = Content::Mark(mark);
                let entry = Change::Put {
                    mode: MODE_FILE,
                    content,
                };
                changes.push((b"index".to_vec(), entry));
            }
            if let Some(tree) = &tree {
                let content = Content::Object(tree.clone());
                let entry = Change::Put {
                    mode: MODE_TREE,
                    content,
                };
                changes.push((b"index-tree".to_vec(), entry));
            }
            (Some(blob), tree)
        }
        None => (None, None),
    };
    let names: Vec<String> = state.iter().map(|(rel, _)| rel.clone()).collect();
    changes.extend(
        state
            .into_iter()
            .map(|(rel, bytes)| (format!("state/{rel}").into_bytes(), blob(bytes))),
    );
    let mut blobs = Vec::new();
    if !changes.is_empty() {
        let marks = import.commit(NewCommit {
            ref_name: format!("{base}objects"),
            message: format!("gitward restore point {id}: index and state files\n"),
            root: None,
            changes,
        });
        blobs = marks.blobs;
    }
    let index = index_blob.map(|mark| (mark, index_tree));
    Ok(Kept {
        index,
        state: names.into_iter().zip(blobs).collect(),
        others,
    })
}

/// Fills `captured` with what fast-import wrote for `kept`: the index blob and its tree,
/// and each state file's blob.
pub fn fill(captured: &mut Value, kept: &Kept, written: &Written) -> Result<(), OpError> {
    if let Some((blob, tree)) = &kept.index {
        let blob = blob.map(|m| written.object(m)).transpose()?;
        captured["index"] = json!({
            "blob": blob.as_ref().map(Oid::as_str),
            "tree": tree.as_ref().map(Oid::as_str),
        });
    }
    let mut map = Map::new();
    for (rel, mark) in &kept.state {
        map.insert(rel.clone(), json!(written.object(*mark)?.as_str()));
    }
    captured["state"] = Value::Object(map);
    Ok(())
}
