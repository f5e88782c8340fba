//! A private copy of the index for porcelain commands that refresh it.
//!
//! `git diff` against the working tree re-reads stat-dirty files and then rewrites
//! `.git/index` (taking `index.lock`) to remember what it learnt; `GIT_OPTIONAL_LOCKS=0`
//! does not stop it. Pointed at a throw-away copy through `GIT_INDEX_FILE`, it refreshes
//! the copy instead and prints exactly what it would have printed. The copy is opened
//! without following symlinks, must be a regular file, and is size-capped.
//!
//! A copy lives in a directory named after the process that made it, removed when the
//! copy is dropped. A process killed outright cannot remove it; the first copy a later
//! process makes removes those whose process is gone.

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use super::error::GitError;
use super::{Command, Git, Repo};

/// The largest index copied; a bigger one is refused rather than read unbounded.
const MAX_INDEX: u64 = 1 << 30;

/// A copy of one repository's index in a private temporary directory, removed on drop.
pub struct IndexCopy {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl IndexCopy {
    /// Copies the index of `repo`'s worktree (none yet is fine: git reads a missing index
    /// as empty). Blocking file work runs off the async workers.
    pub async fn new(repo: &Repo) -> Result<IndexCopy, GitError> {
        let source = repo.git_dir.join("index");
        tokio::task::spawn_blocking(move || copy(source))
            .await
            .map_err(|e| GitError::internal(format!("index copy stopped: {e}")))?
    }

    /// Where the copy is (for `hash-object` of the index as it was copied).
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }
}

/// Every copy's directory starts with this, then the owning process id and a dash.
const PREFIX: &str = "gitward-index-";
/// A directory of the older naming (no process id) this old is surely abandoned.
const ABANDONED_AFTER: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

fn failed(e: std::io::Error) -> GitError {
    GitError::internal(format!("cannot copy the index: {e}"))
}

/// The index file opened without following a symlink, checked to be a regular file;
/// `None` when there is none.
fn open(source: &std::path::Path) -> Result<Option<(File, std::fs::Metadata)>, GitError> {
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(source)
    {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
            return Err(GitError::unsupported(
                "the repository's index is a symbolic link, which gitward does not follow",
            ));
        }
        Err(e) => return Err(failed(e)),
    };
    let meta = file.metadata().map_err(failed)?;
    if !meta.is_file() {
        return Err(GitError::unsupported(
            "the repository's index is not a regular file",
        ));
    }
    Ok(Some((file, meta)))
}

fn too_large() -> GitError {
    GitError::unsupported("the repository's index is larger than gitward reads")
}

/// A new private directory for one copy.
fn private_dir() -> Result<tempfile::TempDir, GitError> {
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(|| sweep(&std::env::temp_dir()));
    tempfile::Builder::new()
        .prefix(&format!("{PREFIX}{}-", std::process::id()))
        .tempdir()
        .map_err(failed)
}

fn copy(source: PathBuf) -> Result<IndexCopy, GitError> {
    let dir = private_dir()?;
    let path = dir.path().join("index");
    let Some((file, meta)) = open(&source)? else {
        return Ok(IndexCopy { _dir: dir, path });
    };
    let mut reader = file.take(MAX_INDEX + 1);
    let mut out = File::create_new(&path).map_err(failed)?;
    let copied = std::io::copy(&mut reader, &mut out).map_err(failed)?;
    if copied > MAX_INDEX {
        return Err(too_large());
    }
    finish(out, meta.modified().ok())?;
    Ok(IndexCopy { _dir: dir, path })
}

/// Flushes a copy and gives it the index's modification time.
fn finish(mut out: File, modified: Option<std::time::SystemTime>) -> Result<(), GitError> {
    out.flush().map_err(failed)?;
    // git trusts a cached stat only for entries older than the index file itself (racy
    // git); a copy stamped now would make a file changed within the index's last tick
    // look unchanged.
    if let Some(modified) = modified {
        out.set_modified(modified).map_err(failed)?;
    }
    Ok(())
}

/// The index file read whole, once: its bytes (`None` when there is none) and its
/// modification time.
pub struct IndexRead {
    pub bytes: Option<Vec<u8>>,
    pub modified: Option<std::time::SystemTime>,
}

impl IndexRead {
    /// No index.
    pub fn none() -> IndexRead {
        IndexRead {
            bytes: None,
            modified: None,
        }
    }

    /// Reads `repo`'s index with the checks a copy makes. Blocking file work runs off the
    /// async workers.
    pub async fn new(repo: &Repo) -> Result<IndexRead, GitError> {
        let source = repo.git_dir.join("index");
        tokio::task::spawn_blocking(move || read(&source))
            .await
            .map_err(|e| GitError::internal(format!("index read stopped: {e}")))?
    }
}

fn read(source: &std::path::Path) -> Result<IndexRead, GitError> {
    let Some((file, meta)) = open(source)? else {
        return Ok(IndexRead::none());
    };
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(MAX_INDEX + 1)
        .read_to_end(&mut bytes)
        .map_err(failed)?;
    if bytes.len() as u64 > MAX_INDEX {
        return Err(too_large());
    }
    Ok(IndexRead {
        bytes: Some(bytes),
        modified: meta.modified().ok(),
    })
}

impl IndexCopy {
    /// A copy of the index as `read` found it (no file when there was none).
    pub async fn of(read: &IndexRead) -> Result<IndexCopy, GitError> {
        let (bytes, modified) = (read.bytes.clone(), read.modified);
        tokio::task::spawn_blocking(move || {
            let dir = private_dir()?;
            let path = dir.path().join("index");
            if let Some(bytes) = bytes {
                let mut out = File::create_new(&path).map_err(failed)?;
                out.write_all(&bytes).map_err(failed)?;
                finish(out, modified)?;
            }
            Ok(IndexCopy { _dir: dir, path })
        })
        .await
        .map_err(|e| GitError::internal(format!("index copy stopped: {e}")))?
    }
}

/// Removes the copies in `tmp` that a process of this user left behind when it was killed
/// before dropping them: those named after a process that no longer exists, and those of
/// the older unnamed form that are a day old. Another user's directories are left alone.
pub fn sweep(tmp: &std::path::Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    let uid = rustix::process::getuid().as_raw();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
            continue;
        };
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != uid {
            continue;
        }
        let abandoned = match rest.split_once('-').map(|(pid, _)| pid.parse::<u32>()) {
            Some(Ok(pid)) => !crate::presence::pid_alive(pid),
            _ => meta
                .modified()
                .ok()
                .and_then(|m| m.elapsed().ok())
                .is_some_and(|age| age > ABANDONED_AFTER),
        };
        if abandoned {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

impl Git<'_> {
    /// A read-only git command that uses `index` instead of the repository's index.
    pub(in crate::git) fn cmd_on_copy<I, S>(&self, index: &IndexCopy, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.on_copy(super::RAW_PATHS, index, args)
    }

    /// [`Git::cmd_on_copy`] for output handed back as the user's own git would print it.
    pub(in crate::git) fn cmd_on_copy_as_user<I, S>(&self, index: &IndexCopy, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.on_copy(&[], index, args)
    }

    fn on_copy<I, S>(&self, extra: &[&str], index: &IndexCopy, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        // A split index would write its shared part next to the real index. A copy is
        // thrown away, so its writes skip the trailing checksum over the whole file.
        let argv: Vec<OsString> = [
            "-c".into(),
            "core.splitIndex=false".into(),
            "-c".into(),
            "index.skipHash=true".into(),
        ]
        .into_iter()
        .chain(args.into_iter().map(Into::into))
        .collect();
        self.build(extra, argv).env("GIT_INDEX_FILE", &index.path)
    }
}
