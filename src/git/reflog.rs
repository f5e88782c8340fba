//! Reflogs: which ref a short name means, and where that ref has been.
//!
//! Under the files backend the reflog file is read directly (the only place that keeps
//! the *old* id of each move, exactly as recorded); under reftable, through
//! `git log -g`, with each old id inferred from the next older entry.

use std::path::{Path, PathBuf};

use super::{Git, GitError, Oid, Repo, refs};
use crate::model::lossy;
use crate::parse::reflog_walk::{self, Walk};
use crate::parse::{Records, reflog_file};

/// Bytes of a reflog file's tail read (newest entries are at the end).
const REFLOG_TAIL: u64 = 1024 * 1024;

/// How the repository stores its refs and their logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    Files,
    Reftable,
}

impl Storage {
    pub fn of(repo: &Repo) -> Storage {
        Storage::at(&repo.common_dir)
    }

    /// The storage of the repository whose common directory is `common_dir`.
    pub fn at(common_dir: &Path) -> Storage {
        if common_dir.join("reftable").is_dir() {
            Storage::Reftable
        } else {
            Storage::Files
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Storage::Files => "files",
            Storage::Reftable => "reftable",
        }
    }
}

/// One move of a ref.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// `None` when only `git log -g` was available and no older entry exists.
    pub old: Option<Oid>,
    pub new: Oid,
    /// True when `old` was taken from the next older entry instead of the log line.
    pub old_inferred: bool,
    pub name: String,
    pub email: String,
    /// Seconds since the epoch.
    pub time: i64,
    /// `+hhmm` / `-hhmm` as recorded.
    pub tz: String,
    /// The message as text; invalid UTF-8 shows as U+FFFD, and `message_bytes` keeps it.
    pub message: String,
    /// The raw message, kept only when it is not valid UTF-8.
    pub message_bytes: Option<Vec<u8>>,
}

/// The message text, and its raw bytes when they are not UTF-8.
fn message_of(bytes: Vec<u8>) -> (String, Option<Vec<u8>>) {
    match String::from_utf8(bytes) {
        Ok(text) => (text, None),
        Err(err) => {
            let bytes = err.into_bytes();
            (String::from_utf8_lossy(&bytes).into_owned(), Some(bytes))
        }
    }
}

impl From<reflog_file::Entry> for Entry {
    fn from(e: reflog_file::Entry) -> Self {
        let (message, message_bytes) = message_of(e.message);
        Entry {
            old: Some(e.old),
            new: e.new,
            old_inferred: false,
            name: lossy(e.name.trim_ascii()).0,
            email: lossy(&e.email).0,
            time: e.time,
            tz: e.tz,
            message,
            message_bytes,
        }
    }
}

/// Walk entries (newest first, one ref) with each old id taken from the next older one.
fn inferred(walk: Vec<reflog_walk::Entry>) -> Vec<Entry> {
    let olds: Vec<Option<Oid>> = walk
        .iter()
        .skip(1)
        .map(|e| Some(e.new.clone()))
        .chain(std::iter::once(None))
        .collect();
    walk.into_iter()
        .zip(olds)
        .map(|(e, old)| {
            let (message, message_bytes) = message_of(e.message);
            Entry {
                old,
                new: e.new,
                old_inferred: true,
                name: lossy(&e.name).0,
                email: lossy(&e.email).0,
                time: e.time,
                tz: e.tz,
                message,
                message_bytes,
            }
        })
        .collect()
}

/// The newest entries of one reflog.
#[derive(Debug)]
pub struct Read {
    pub entries: Vec<Entry>,
    /// Older entries exist beyond those read.
    pub more: bool,
    pub storage: Storage,
}

/// The newest `limit` entries of the reflog of `full` (a full ref name that exists, or
/// a HEAD-like name), newest first. No reflog reads as empty.
pub async fn read(git: &Git<'_>, full: &str, limit: usize) -> Result<Read, GitError> {
    let storage = Storage::of(git.repo);
    let (entries, more) = match storage {
        Storage::Reftable => walk(git, full, limit).await?,
        Storage::Files => {
            let file = log_file(git.repo, full);
            match crate::safe_file::off_thread(git.cancel(), move || read_tail(&file)).await? {
                Ok((bytes, complete)) => {
                    let entries = reflog_file::newest_lines(&bytes, complete, limit + 1)?;
                    let more = entries.len() > limit;
                    (
                        entries.into_iter().take(limit).map(Entry::from).collect(),
                        more,
                    )
                }
                Err(_) => (Vec::new(), false),
            }
        }
    };
    Ok(Read {
        entries,
        more,
        storage,
    })
}

/// One entry more than asked, to infer the last one's old id and to know whether more
/// exist.
async fn walk(git: &Git<'_>, full: &str, limit: usize) -> Result<(Vec<Entry>, bool), GitError> {
    let done = git
        .cmd([
            "log",
            "-g",
            "-z",
            "--date=raw",
            &reflog_walk::format(),
            &format!("--max-count={}", limit + 1),
            "--end-of-options",
            full,
            "--",
        ])
        .stream_allowing(Records::new(Walk::new(limit + 1)), &[0, 128])
        .await?;
    if done.code == Some(128) {
        return Ok((Vec::new(), false));
    }
    let walk = done.sink.finish(!done.stopped_early)?;
    let more = walk.entries.len() > limit;
    let mut entries = inferred(walk.entries);
    entries.truncate(limit);
    Ok((entries, more))
}

/// Largest `git reflog list` output read.
const LIST_CAP: usize = 4 * 1024 * 1024;

/// The refs that have a reflog, as `git reflog list` names them (any storage).
pub async fn listed(git: &Git<'_>) -> Result<Vec<String>, GitError> {
    let listed = git.cmd(["reflog", "list"]).capture(LIST_CAP).await?;
    Ok(String::from_utf8_lossy(&listed.sink.bytes)
        .lines()
        .map(str::to_owned)
        .collect())
}

/// The entries of the reflogs of `refs` through `git log -g`, interleaved by time and
/// newest first within each ref; git is stopped after `max` entries (`truncated` says so).
pub async fn walk_all(git: &Git<'_>, refs: &[String], max: usize) -> Result<Walk, GitError> {
    let walked = git
        .cmd([
            "log",
            "-g",
            "-z",
            "--date=raw",
            &reflog_walk::format(),
            "--end-of-options",
        ])
        .args(refs.iter())
        .stream(Records::new(Walk::new(max)))
        .await?;
    Ok(walked.sink.finish(!walked.stopped_early)?)
}

/// The full name of `name` (`main` → `refs/heads/main`), by git's own lookup order
/// (`git help revisions`: `<name>`, `refs/<name>`, `refs/tags/`, `refs/heads/`,
/// `refs/remotes/`, `refs/remotes/<name>/HEAD`), and whether other refs share the name.
/// Like `git reflog <name>` (`dwim_log`), the first ref that has a reflog wins, so a
/// branch is not hidden by a tag of the same name. Symbolic refs are not followed: the
/// reflog of `origin/HEAD` is its own, not its target's. `name` must be a checked ref
/// name (`super::args::check_ref_name`); `arg` names it in errors.
pub async fn full_name(git: &Git<'_>, arg: &str, name: &str) -> Result<(String, bool), GitError> {
    if name == "HEAD" || name.starts_with("worktrees/") || name.starts_with("main-worktree/") {
        // HEAD-like names that for-each-ref does not list.
        return Ok((name.to_owned(), false));
    }
    let rules = [
        name.to_owned(),
        format!("refs/{name}"),
        format!("refs/tags/{name}"),
        format!("refs/heads/{name}"),
        format!("refs/remotes/{name}"),
        format!("refs/remotes/{name}/HEAD"),
    ];
    let patterns: Vec<String> = rules
        .iter()
        .filter(|r| r.starts_with("refs/"))
        .cloned()
        .collect();
    let existing = refs::existing(git, &patterns).await?;
    let found: Vec<&String> = rules.iter().filter(|r| existing.contains(r)).collect();
    let Some(first) = found.first() else {
        return Err(GitError::invalid(
            arg,
            format!("no ref named '{name}' in this repository"),
        ));
    };
    if found.len() == 1 {
        return Ok(((*first).clone(), false));
    }
    for candidate in &found {
        if has_reflog(git, candidate).await? {
            return Ok(((*candidate).clone(), true));
        }
    }
    Ok(((*first).clone(), true))
}

/// Whether `full` (an existing, validated ref name) has a reflog.
async fn has_reflog(git: &Git<'_>, full: &str) -> Result<bool, GitError> {
    if Storage::of(git.repo) == Storage::Files {
        return Ok(log_file(git.repo, full).is_file());
    }
    let out = git
        .cmd(["reflog", "exists", full])
        .capture_allowing(4096, &[0, 1])
        .await?;
    Ok(out.success())
}

/// Refs whose reflog lives in the worktree's own git directory rather than the common one.
fn per_worktree(full: &str) -> bool {
    full == "HEAD"
        || !full.starts_with("refs/")
        || full.starts_with("refs/bisect/")
        || full.starts_with("refs/worktree/")
        || full.starts_with("refs/rewritten/")
}

/// Where the files backend keeps the reflog of `full`, including the
/// `main-worktree/<ref>` and `worktrees/<name>/<ref>` names for other worktrees' refs.
fn log_file(repo: &Repo, full: &str) -> PathBuf {
    if let Some(rest) = full.strip_prefix("main-worktree/") {
        return repo.common_dir.join("logs").join(rest);
    }
    if let Some((name, rest)) = full
        .strip_prefix("worktrees/")
        .and_then(|r| r.split_once('/'))
    {
        return repo
            .common_dir
            .join("worktrees")
            .join(name)
            .join("logs")
            .join(rest);
    }
    let dir = if per_worktree(full) {
        &repo.git_dir
    } else {
        &repo.common_dir
    };
    dir.join("logs").join(full)
}

/// The last [`REFLOG_TAIL`] bytes of a reflog file, and whether that is all of it. A
/// symlink, FIFO or device in its place counts as no reflog.
fn read_tail(path: &Path) -> std::io::Result<(Vec<u8>, bool)> {
    use std::io::{Read, Seek, SeekFrom};
    let (mut file, meta) = crate::safe_file::open_regular(path)
        .map_err(|why| std::io::Error::other(why.to_string()))?;
    let len = meta.len();
    let start = len.saturating_sub(REFLOG_TAIL);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::with_capacity((len - start) as usize);
    file.take(REFLOG_TAIL).read_to_end(&mut bytes)?;
    Ok((bytes, start == 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captured from `git log -g -z --date=raw` (git 2.47), newest first.
    const WALK: &[u8] = b"5ce3d0130b768a35612b525329786c651c13fbfb\0HEAD@{1795988177 +0000}\0A\0a@x\0commit: four\0\0\
6a4e5328780da6f0da64e1caa079505a3f2069c4\0HEAD@{1795988176 -0230}\0\0b@y\0reset: moving to HEAD~2\0\0\
30909cd2be90deaa1baa9c71cc686454be73b256\0HEAD@{1795988175 +0100}\0A\0a@x\0commit: three\0\0";

    #[test]
    fn walk_entries_take_the_old_id_of_the_next_older_one() {
        let walk = Records::parse_all(Walk::new(3), WALK).unwrap();
        let shown: Vec<String> = inferred(walk.entries)
            .iter()
            .map(|e| {
                format!(
                    "{} <- {:?} {} {:?}",
                    e.new.short(),
                    e.old.as_ref().map(Oid::short),
                    e.old_inferred,
                    e.message
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                "5ce3d01 <- Some(\"6a4e532\") true \"commit: four\"",
                "6a4e532 <- Some(\"30909cd\") true \"reset: moving to HEAD~2\"",
                "30909cd <- None true \"commit: three\"",
            ]
        );
    }

    #[test]
    fn per_worktree_logs_stay_in_the_worktree() {
        assert!(per_worktree("HEAD"));
        assert!(per_worktree("refs/bisect/bad"));
        assert!(!per_worktree("refs/heads/main"));
    }
}
