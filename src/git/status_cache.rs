//! Reusing a `git status` answer while nothing git would see has changed.
//!
//! Only where the user turned on git's builtin fsmonitor daemon and the daemon answers
//! ([`super::fsmonitor_ipc`]). The daemon's token is taken before git runs; a later call
//! asks the daemon what changed in the working tree since then. It sees nothing inside
//! the git directory and outside the working tree, so everything else `status` reads is
//! part of the key: the argv, the index (identity, stat data and its content checksum),
//! HEAD and the branch it names, the upstream's ref (found in the stored answer), the
//! stash, packed refs, grafts and replacements, the exclude and attribute files of the
//! repository and of the user, and every configuration file the repository was opened
//! with. A repository with gitlinks (the daemon does not look inside submodules), a
//! sparse checkout, a split index or refs in a reftable is never cached. An answer is
//! stored only when every key read after git finished equals the one read before it
//! started, and it is replayed byte for byte through the same parser.

use std::ffi::OsString;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use super::fsmonitor_ipc::{self, NO_TOKEN};
use super::{Repo, index_file};
use crate::sink::{Flow, Sink};

/// The largest answer kept.
const OUTPUT_CAP: usize = 4 << 20;
/// How many answers are kept, over all repositories and argv.
const ENTRIES: usize = 8;
/// A file this small is keyed by its bytes as well as its stat data.
const SMALL: u64 = 512;
/// File times lag the clock by up to a scheduler tick; a file touched this close to the
/// start of a run may have changed during it.
const CLOCK_SLACK: Duration = Duration::from_millis(50);
/// An index entry's on-disk extended flag for skip-worktree (sparse checkout).
const SKIP_WORKTREE: u16 = 0x4000;
const GITLINK: u32 = 0o160000;

/// One file's state: absent, or identity, times, size and (small files) bytes.
type FileState = Option<(u64, u64, u64, i64, i64, i64, i64, Option<Vec<u8>>)>;

/// Everything the daemon does not report, as read at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Inputs {
    index: FileState,
    files: Vec<(PathBuf, FileState)>,
}

struct Entry {
    git_dir: PathBuf,
    argv: Vec<OsString>,
    token: String,
    /// The upstream's short name in the answer, whose ref files are keyed too.
    upstream: Option<Vec<u8>>,
    inputs: Inputs,
    output: Arc<Vec<u8>>,
}

fn entries() -> &'static Mutex<Vec<Entry>> {
    static ENTRIES: OnceLock<Mutex<Vec<Entry>>> = OnceLock::new();
    ENTRIES.get_or_init(Default::default)
}

/// What a call found.
pub(crate) enum Lookup {
    /// The stored output of the same command, still what git would print.
    Hit(Arc<Vec<u8>>),
    /// Run git; with a plan, its output may be stored afterwards.
    Miss(Option<Plan>),
}

/// What was read before git ran, to be compared after it finished.
pub(crate) struct Plan {
    argv: Vec<OsString>,
    token: String,
    before: Inputs,
    started: SystemTime,
}

/// Finds a stored answer for `argv` in `repo`, or plans to store the one git gives.
pub(crate) async fn lookup(repo: &Repo, argv: &[OsString]) -> Lookup {
    if !eligible(repo) {
        return Lookup::Miss(None);
    }
    let stored = {
        let entries = entries().lock().unwrap_or_else(|p| p.into_inner());
        entries
            .iter()
            .find(|e| e.git_dir == repo.git_dir && e.argv == argv)
            .map(|e| {
                (
                    e.token.clone(),
                    e.upstream.clone(),
                    e.inputs.clone(),
                    Arc::clone(&e.output),
                )
            })
    };
    let since = stored
        .as_ref()
        .map_or(NO_TOKEN, |(token, ..)| token.as_str());
    let Some(answer) = fsmonitor_ipc::changes_since(&repo.git_dir, since).await else {
        return Lookup::Miss(None);
    };
    let started = SystemTime::now();
    if let Some((_, upstream, inputs, output)) = stored
        && !answer.changed
        && read_inputs(repo, upstream.as_deref()).as_ref() == Some(&inputs)
    {
        return Lookup::Hit(output);
    }
    let Some(before) = read_inputs(repo, None) else {
        return Lookup::Miss(None);
    };
    Lookup::Miss(Some(Plan {
        argv: argv.to_vec(),
        token: answer.token,
        before,
        started,
    }))
}

impl Plan {
    /// Stores `output` when nothing moved while git ran.
    pub(crate) fn store(self, repo: &Repo, output: Vec<u8>) {
        if !plain_index(repo) {
            return;
        }
        let upstream = upstream_of(&output);
        let Some(after) = read_inputs(repo, upstream.as_deref()) else {
            return;
        };
        let fixed = self.before.files.len();
        if after.index != self.before.index || after.files[..fixed] != self.before.files[..] {
            return;
        }
        // The upstream's refs were not read before the run (its name comes from the
        // answer): they must be older than the run, and so must their directories, which
        // move when a ref in them is added or removed.
        let settled = self.started.checked_sub(CLOCK_SLACK);
        let old = after.files[fixed..].iter().all(|(path, _)| {
            [Some(path.as_path()), path.parent()]
                .into_iter()
                .flatten()
                .all(|p| changed_at(p).is_none_or(|t| settled.is_some_and(|s| t < s)))
        });
        if !old {
            return;
        }
        let mut entries = entries().lock().unwrap_or_else(|p| p.into_inner());
        entries.retain(|e| !(e.git_dir == repo.git_dir && e.argv == self.argv));
        if entries.len() >= ENTRIES {
            entries.remove(0);
        }
        entries.push(Entry {
            git_dir: repo.git_dir.clone(),
            argv: self.argv,
            token: self.token,
            upstream,
            inputs: after,
            output: Arc::new(output),
        });
    }
}

/// The user chose the builtin daemon for a repository whose state it can vouch for.
fn eligible(repo: &Repo) -> bool {
    repo.builtin_fsmonitor
        && repo.worktree.is_some()
        && !repo.common_dir.join("reftable").exists()
        && !repo.git_dir.join("info/sparse-checkout").exists()
        && !repo.common_dir.join("info/sparse-checkout").exists()
}

/// The index holds no gitlink and no skip-worktree entry, and is neither split nor
/// sparse.
fn plain_index(repo: &Repo) -> bool {
    let Ok((bytes, _)) = index_file::read_with_mtime(&repo.git_dir.join("index")) else {
        return false;
    };
    let mut plain = true;
    let walked = index_file::walk(&bytes, repo.object_format, false, &mut |e| {
        if e.mode == GITLINK || e.extended & SKIP_WORKTREE != 0 {
            plain = false;
        }
    });
    plain && walked.is_some_and(|w| !w.split && !w.sparse)
}

/// Reads every key; `None` when something cannot be keyed (HEAD naming a ref outside
/// `refs/heads/`, an unreadable index).
fn read_inputs(repo: &Repo, upstream: Option<&[u8]>) -> Option<Inputs> {
    let (git_dir, common) = (&repo.git_dir, &repo.common_dir);
    let head = git_dir.join("HEAD");
    let mut paths = vec![head.clone()];
    let head_state = state(&head);
    if let Some((.., Some(bytes))) = &head_state
        && let Some(name) = bytes.strip_prefix(b"ref: ")
    {
        paths.push(ref_path(common, name.trim_ascii_end())?);
    }
    for rel in [
        "packed-refs",
        "refs/stash",
        "logs/refs/stash",
        "refs/replace",
        "info/exclude",
        "info/attributes",
        "info/grafts",
        "shallow",
    ] {
        paths.push(common.join(rel));
    }
    paths.push(git_dir.join("info/exclude"));
    paths.extend(repo.status_inputs.iter().cloned());
    if let Some(short) = upstream {
        paths.extend(upstream_refs(common, short));
    }
    Some(Inputs {
        index: index_state(&git_dir.join("index"), repo.object_format)?,
        files: paths
            .into_iter()
            .map(|p| {
                let s = state(&p);
                (p, s)
            })
            .collect(),
    })
}

/// The file of a branch HEAD names; only plain names under `refs/heads/`.
fn ref_path(common: &Path, name: &[u8]) -> Option<PathBuf> {
    let text = std::str::from_utf8(name).ok()?;
    let branch = text.strip_prefix("refs/heads/")?;
    let plain = !branch.is_empty()
        && branch
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != ".." && !c.contains('\0'));
    plain.then(|| common.join(text))
}

/// Every ref a short upstream name may stand for, by git's own lookup rules.
fn upstream_refs(common: &Path, short: &[u8]) -> Vec<PathBuf> {
    let Some(text) = std::str::from_utf8(short)
        .ok()
        .filter(|t| !t.is_empty() && t.split('/').all(|c| !c.is_empty() && c != "." && c != ".."))
    else {
        return vec![common.join("refs/remotes")];
    };
    ["", "refs/", "refs/tags/", "refs/heads/", "refs/remotes/"]
        .iter()
        .map(|prefix| common.join(format!("{prefix}{text}")))
        .chain([common.join(format!("refs/remotes/{text}/HEAD"))])
        .collect()
}

/// The `# branch.upstream` header of a status answer.
fn upstream_of(output: &[u8]) -> Option<Vec<u8>> {
    output
        .split(|b| *b == 0)
        .take_while(|r| r.starts_with(b"# "))
        .find_map(|r| r.strip_prefix(b"# branch.upstream "))
        .map(<[u8]>::to_vec)
}

/// A file's state without following a symbolic link at its end.
fn state(path: &Path) -> FileState {
    let meta = std::fs::symlink_metadata(path).ok()?;
    let bytes = (meta.is_file() && meta.len() <= SMALL)
        .then(|| std::fs::read(path).ok())
        .flatten();
    Some(stat_of(&meta, bytes))
}

fn stat_of(
    meta: &std::fs::Metadata,
    bytes: Option<Vec<u8>>,
) -> (u64, u64, u64, i64, i64, i64, i64, Option<Vec<u8>>) {
    (
        meta.dev(),
        meta.ino(),
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec(),
        bytes,
    )
}

/// The index's stat data and content checksum (its trailer, which git writes over all
/// the rest; our own digest of the whole file where `index.skipHash` left it zero).
/// `None` when the index cannot be read; an absent index is a state too.
fn index_state(path: &Path, format: super::ObjectFormat) -> Option<FileState> {
    use std::io::{Read, Seek, SeekFrom};
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let mut file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(None),
        Err(_) => return None,
    };
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() < 32 {
        return None;
    }
    file.seek(SeekFrom::End(-32)).ok()?;
    let mut trailer = vec![0u8; 32];
    file.read_exact(&mut trailer).ok()?;
    let hash_len = match format {
        super::ObjectFormat::Sha1 => 20,
        super::ObjectFormat::Sha256 => 32,
    };
    if trailer[32 - hash_len..].iter().all(|b| *b == 0) {
        use sha2::{Digest, Sha256};
        let (bytes, _) = index_file::read_with_mtime(path).ok()?;
        trailer = Sha256::digest(&bytes).to_vec();
    }
    Some(Some(stat_of(&meta, Some(trailer))))
}

/// When a file's inode last changed.
fn changed_at(path: &Path) -> Option<SystemTime> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    let secs = u64::try_from(meta.ctime()).ok()?;
    let nanos = u32::try_from(meta.ctime_nsec()).ok()?;
    SystemTime::UNIX_EPOCH.checked_add(Duration::new(secs, nanos))
}

/// A sink that hands everything on and keeps a copy, up to [`OUTPUT_CAP`].
pub(crate) struct Tee<S> {
    pub inner: S,
    pub kept: Option<Vec<u8>>,
}

impl<S: Sink> Sink for Tee<S> {
    fn accept(&mut self, chunk: &[u8]) -> Flow {
        if let Some(kept) = &mut self.kept {
            if kept.len() + chunk.len() > OUTPUT_CAP {
                self.kept = None;
            } else {
                kept.extend_from_slice(chunk);
            }
        }
        self.inner.accept(chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_upstream_comes_from_the_headers_only() {
        let out = b"# branch.oid abc\0# branch.head main\0# branch.upstream origin/main\0# branch.ab +0 -0\0\x31 .M N... x\0";
        assert_eq!(upstream_of(out).as_deref(), Some(&b"origin/main"[..]));
        assert_eq!(upstream_of(b"? # branch.upstream x\0"), None);
    }

    #[test]
    fn only_plain_branch_names_are_keyed() {
        let common = Path::new("/r/.git");
        assert_eq!(
            ref_path(common, b"refs/heads/topic/a"),
            Some(PathBuf::from("/r/.git/refs/heads/topic/a"))
        );
        for bad in [
            &b"refs/heads/../../x"[..],
            b"refs/tags/v1",
            b"refs/heads/",
            b"refs/heads/a//b",
        ] {
            assert_eq!(ref_path(common, bad), None, "{bad:?}");
        }
        assert_eq!(
            upstream_refs(common, b"../x"),
            vec![PathBuf::from("/r/.git/refs/remotes")]
        );
        assert!(
            upstream_refs(common, b"origin/main")
                .contains(&PathBuf::from("/r/.git/refs/remotes/origin/main"))
        );
    }
}
