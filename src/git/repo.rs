//! Turning a caller's `repoPath` into a checked repository.
//!
//! The path must be absolute; it is canonicalised (symlinks resolved) and must lie inside
//! an allowed root, compared component by component after canonicalisation. A path inside
//! a working tree means that working tree. What git tells us about the repository is
//! cached per path and revalidated with a few `stat` calls, so a warm server spends no
//! process on it.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use tokio_util::sync::CancellationToken;

use super::drivers;
use super::error::GitError;
use crate::config::Config;
use crate::process::{Invocation, Program};

/// The hash function of a repository's object ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ObjectFormat {
    Sha1,
    Sha256,
}

/// A repository the caller may use, opened and checked.
#[derive(Debug)]
pub struct Repo {
    /// Canonical top level of the working tree; for a bare repository, its git directory.
    pub path: PathBuf,
    /// The working tree, absent for a bare repository.
    pub worktree: Option<PathBuf>,
    /// This worktree's git directory (`.git`, or `.git/worktrees/<name>` for a linked one).
    pub git_dir: PathBuf,
    /// The directory shared by all worktrees (objects, refs, config).
    pub common_dir: PathBuf,
    pub bare: bool,
    pub object_format: ObjectFormat,
    /// Config overrides (key, value) that disarm filter drivers defined by the repository
    /// or its submodules and merge drivers defined by any config ([`super::drivers`]).
    pub(crate) disarm: Vec<(OsString, OsString)>,
    /// The user turned on git's builtin fsmonitor daemon (`core.fsmonitor=true`) for this
    /// repository; `git status` may ask it ([`super::status`]).
    pub(crate) builtin_fsmonitor: bool,
    /// Files outside the working tree whose change may change what `git status` prints:
    /// the configuration read, the user's excludes and attributes files (where they are,
    /// or where git would look for them).
    pub(crate) status_inputs: Vec<PathBuf>,
    /// Some setting makes git judge worktree files by more than stat data and bytes
    /// (`super::drivers`); in-process readers of file states leave them to git.
    pub converts_files: bool,
    /// Further files whose change means the repository must be checked again (the
    /// alternates files read when checking the allowed roots).
    pub(crate) watched: Vec<PathBuf>,
    /// Private, so a `Repo` exists only through [`open`] and [`open_path`]: the path
    /// checks and driver disarming cannot be skipped by building one by hand.
    _sealed: (),
}

/// Where no trusted driver's program may live: the repository's own directories and
/// every allowed root, canonical.
fn untrusted_roots(config: &Config, own: &[Option<&Path>]) -> Vec<PathBuf> {
    own.iter()
        .flatten()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .chain(config.allowed_roots.iter().cloned())
        .collect()
}

impl Repo {
    /// Names of the filter drivers that were disarmed, for results to report.
    pub fn disarmed_filters(&self) -> Vec<String> {
        self.disarm
            .iter()
            .filter_map(|(key, _)| {
                let key = key.as_encoded_bytes();
                let name = key.strip_prefix(b"filter.")?.strip_suffix(b".required")?;
                Some(String::from_utf8_lossy(name).into_owned())
            })
            .collect()
    }

    /// The path shown to callers: the canonical top level as text.
    pub fn display(&self) -> String {
        self.path.to_string_lossy().into_owned()
    }

    /// Errors with a clear reason unless the repository has a working tree.
    pub fn require_worktree(&self) -> Result<&Path, GitError> {
        self.worktree
            .as_deref()
            .ok_or_else(|| GitError::unsupported("bare repository: this tool needs a working tree"))
    }
}

/// What a cached entry was derived from; any change means "ask git again".
#[derive(Debug, Clone, PartialEq, Eq)]
struct Fingerprint(Vec<Option<Stat>>);

/// One file's identity and state: a file or directory put in another's place (a swapped
/// `.git`, a symbolic link pointed elsewhere) has another device or inode; a change of
/// owner or mode (which git's ownership check reads) moves the change time.
type Stat = (SystemTime, i64, i64, u64, u64, u64, u32);

fn stat(path: &Path) -> Option<Stat> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    Some((
        meta.modified().ok()?,
        meta.ctime(),
        meta.ctime_nsec(),
        meta.len(),
        meta.dev(),
        meta.ino(),
        meta.uid(),
    ))
}

/// `watched` are the configuration files (includes followed) and `.gitmodules` files the
/// driver list was derived from.
fn fingerprint(repo: &Repo, watched: &[PathBuf]) -> Fingerprint {
    // The top level's own identity and owner too (git refuses a repository owned by
    // someone else), not its times: those move with every file added beside `.git`.
    let top = repo.worktree.as_deref().and_then(stat);
    let mut prints = vec![
        top.map(|(_, _, _, _, dev, ino, uid)| (SystemTime::UNIX_EPOCH, 0, 0, 0, dev, ino, uid)),
    ];
    let mut files = vec![
        repo.git_dir.clone(),
        repo.common_dir.join("config"),
        repo.git_dir.join("config.worktree"),
    ];
    if let Some(top) = &repo.worktree {
        files.push(top.join(".git"));
    }
    files.push(repo.git_dir.join("commondir"));
    files.push(repo.common_dir.join("objects/info/alternates"));
    files.extend(repo.watched.iter().cloned());
    files.extend(watched.iter().cloned());
    // Where git would find a new user-level configuration file, which may name other
    // excludes or attributes files for a cached status to watch.
    files.extend(repo.status_inputs.iter().cloned());
    prints.extend(files.iter().map(|p| stat(p)));
    Fingerprint(prints)
}

type Cache = Mutex<HashMap<PathBuf, (Arc<Repo>, Vec<PathBuf>, Fingerprint)>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// Checks `value` and opens the repository it names. `arg` names where the value came
/// from (an argument name, say) so a refusal can say what to fix; it is only text.
pub async fn open(
    config: &Config,
    arg: &str,
    value: &str,
    cancel: &CancellationToken,
) -> Result<Arc<Repo>, GitError> {
    let canonical = canonical_dir(config, arg, value)?;
    open_canonical(config, arg, canonical, cancel).await
}

/// Opens the repository at a directory gitward found itself (a submodule's, say), whose
/// path need not be UTF-8.
pub async fn open_path(
    config: &Config,
    arg: &str,
    dir: &Path,
    cancel: &CancellationToken,
) -> Result<Arc<Repo>, GitError> {
    let canonical = std::fs::canonicalize(dir)
        .map_err(|_| GitError::invalid(arg, "does not exist or cannot be read"))?;
    if !canonical.is_dir() {
        return Err(GitError::invalid(arg, "is not a directory"));
    }
    if !config.allows(&canonical) {
        return Err(GitError::invalid(arg, "is outside the allowed roots"));
    }
    open_canonical(config, arg, canonical, cancel).await
}

async fn open_canonical(
    config: &Config,
    arg: &str,
    canonical: PathBuf,
    cancel: &CancellationToken,
) -> Result<Arc<Repo>, GitError> {
    if let Some(repo) = cached(&canonical).filter(|repo| config.allows(&repo.path)) {
        return Ok(repo);
    }
    let (mut repo, watched) = discover(config, arg, &canonical, cancel).await?;
    if !config.allows(&repo.path) {
        return Err(GitError::invalid(arg, "is outside the allowed roots"));
    }
    if !config.allowed_roots.is_empty() {
        let roots = config.allowed_roots.clone();
        let (git_dir, common_dir) = (repo.git_dir.clone(), repo.common_dir.clone());
        let reach = crate::safe_file::off_thread(cancel, move || {
            super::reach::check(&roots, &git_dir, &common_dir)
        })
        .await?
        .map_err(|outside| GitError::invalid(arg, outside.0))?;
        repo.git_dir = reach.git_dir;
        repo.common_dir = reach.common_dir;
        repo.watched = reach.alternates_files;
    }
    let repo = Arc::new(repo);
    let print = fingerprint(&repo, &watched);
    cache()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(canonical, (Arc::clone(&repo), watched, print));
    Ok(repo)
}

/// Validates and canonicalises a directory argument without asking git.
pub fn canonical_dir(config: &Config, arg: &str, value: &str) -> Result<PathBuf, GitError> {
    if value.is_empty() {
        return Err(GitError::invalid(arg, "must not be empty"));
    }
    if value.chars().any(char::is_control) {
        return Err(GitError::invalid(
            arg,
            "must not contain control characters",
        ));
    }
    let path = Path::new(value);
    if !path.is_absolute() {
        return Err(GitError::invalid(arg, "must be an absolute path"));
    }
    let canonical = std::fs::canonicalize(path)
        .map_err(|_| GitError::invalid(arg, "does not exist or cannot be read"))?;
    if !canonical.is_dir() {
        return Err(GitError::invalid(arg, "is not a directory"));
    }
    if !config.allows(&canonical) {
        return Err(GitError::invalid(arg, "is outside the allowed roots"));
    }
    Ok(canonical)
}

fn cached(canonical: &Path) -> Option<Arc<Repo>> {
    let cache = cache().lock().unwrap_or_else(|p| p.into_inner());
    let (repo, watched, print) = cache.get(canonical)?;
    (fingerprint(repo, watched) == *print).then(|| Arc::clone(repo))
}

async fn discover(
    config: &Config,
    arg: &str,
    dir: &Path,
    cancel: &CancellationToken,
) -> Result<(Repo, Vec<PathBuf>), GitError> {
    // `--show-toplevel` comes last: in a bare repository it fails after the rest printed.
    let layout = Invocation::new(Program::Git)
        .dir(dir)
        .args([
            "--no-optional-locks",
            "rev-parse",
            "--path-format=absolute",
            "--is-bare-repository",
            "--absolute-git-dir",
            "--git-common-dir",
            "--show-object-format",
            "--show-toplevel",
        ])
        .capture(64 * 1024, cancel);
    // Filter drivers the repository itself defines could run a program during `status`
    // or `diff`; merge drivers of any scope during `merge-tree`. Each gets disarmed.
    let drivers = drivers::own(dir, config.user.home.as_deref(), cancel);
    let (layout, drivers) = tokio::join!(layout, drivers);
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let layout = layout.map_err(|e| GitError::run(&args(&["git", "rev-parse"]), e))?;
    let text = String::from_utf8_lossy(&layout.sink.bytes);
    let lines: Vec<&str> = text.lines().collect();
    let bare = lines.first() == Some(&"true");
    if !(layout.success() || (bare && lines.len() >= 4)) {
        return Err(layout_error(
            arg,
            &lines,
            &layout.stderr_text(),
            layout.code,
        ));
    }
    let [_, git_dir, common_dir, format, ..] = lines.as_slice() else {
        return Err(GitError::internal(format!(
            "unexpected rev-parse output: {text:?}"
        )));
    };
    let object_format = match *format {
        "sha256" => ObjectFormat::Sha256,
        _ => ObjectFormat::Sha1,
    };
    // Paths are bytes (a submodule's directory need not be UTF-8): take them from the
    // raw output, not the lossy text.
    let raw_path = |i: usize| {
        use std::os::unix::ffi::OsStrExt;
        layout
            .sink
            .bytes
            .split(|b| *b == b'\n')
            .nth(i)
            .map(|line| PathBuf::from(std::ffi::OsStr::from_bytes(line)))
    };
    let worktree = (!bare).then(|| raw_path(4)).flatten();
    let git_dir = raw_path(1).unwrap_or_else(|| PathBuf::from(git_dir));
    let common_dir = raw_path(2).unwrap_or_else(|| PathBuf::from(common_dir));
    let path = worktree.clone().unwrap_or_else(|| git_dir.clone());
    let mut drivers = drivers?;
    if let Some(top) = &worktree {
        drivers::submodules(top, &git_dir, &mut drivers, cancel).await?;
    }
    let disarm = drivers.overrides(
        &config.trusted_drivers,
        &untrusted_roots(
            config,
            &[
                worktree.as_deref(),
                Some(git_dir.as_path()),
                Some(common_dir.as_path()),
            ],
        ),
        &config.user.search_path,
    );
    let status_inputs = status_inputs(config, &path, &drivers);
    let repo = Repo {
        path,
        worktree,
        common_dir,
        git_dir,
        bare,
        object_format,
        disarm,
        builtin_fsmonitor: drivers.builtin_fsmonitor,
        status_inputs,
        converts_files: drivers.converts_files,
        watched: Vec::new(),
        _sealed: (),
    };
    Ok((repo, drivers.watched))
}

/// [`Repo::status_inputs`]: the configuration files git read, where git would find new
/// user-level ones, and the configured or default excludes and attributes files.
fn status_inputs(config: &Config, top: &Path, drivers: &drivers::Found) -> Vec<PathBuf> {
    let home = config.user.home.as_deref();
    let xdg = config
        .user
        .xdg_config_home
        .clone()
        .or_else(|| home.map(|h| h.join(".config")));
    let mut files = drivers.watched.clone();
    files.extend(home.map(|h| h.join(".gitconfig")));
    for name in ["config", "ignore", "attributes"] {
        files.extend(xdg.as_ref().map(|x| x.join("git").join(name)));
    }
    for value in [&drivers.excludes_file, &drivers.attributes_file]
        .into_iter()
        .flatten()
    {
        use std::os::unix::ffi::OsStrExt;
        let path = match (value.strip_prefix(b"~/"), home) {
            (Some(rest), Some(home)) => home.join(std::ffi::OsStr::from_bytes(rest)),
            _ => top.join(std::ffi::OsStr::from_bytes(value)),
        };
        files.push(path);
    }
    files
}

/// Why `rev-parse` could not lay out the repository, in the words the caller can act on.
fn layout_error(arg: &str, lines: &[&str], stderr: &str, code: Option<i32>) -> GitError {
    let command = ["git".to_owned(), "rev-parse".to_owned()];
    if stderr.contains("not a git repository") {
        GitError::invalid(arg, "is not inside a git repository")
    } else if !stderr.contains("dubious ownership")
        && lines.first() == Some(&"false")
        && stderr.contains("work tree")
    {
        GitError::invalid(
            arg,
            "points inside a .git directory; give the working tree or a bare repository",
        )
    } else {
        // Dubious ownership and everything else: git's own words say what to fix.
        GitError::failed(&command, code, stderr)
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn init(dir: &Path, extra: &[&str]) {
        #[allow(clippy::disallowed_methods)]
        let status = std::process::Command::new("git")
            .args(["init", "-q"])
            .args(extra)
            .arg(dir)
            .status()
            .unwrap();
        assert!(status.success());
    }

    async fn open_at(config: &Config, dir: &Path) -> Arc<Repo> {
        let cancel = CancellationToken::new();
        open(config, "repoPath", dir.to_str().unwrap(), &cancel)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn a_cached_repository_is_asked_again_once_it_was_swapped_or_changed_hands() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let (a, b) = (root.join("a"), root.join("b"));
        init(&a, &[]);
        init(&b, &["--object-format=sha256"]);
        let config = Config {
            allowed_roots: vec![root.clone()],
            ..Config::default()
        };
        let first = open_at(&config, &a).await;
        assert!(Arc::ptr_eq(&first, &open_at(&config, &a).await), "cached");

        // Another repository's `.git` moved into place.
        std::fs::rename(a.join(".git"), root.join("a.git.old")).unwrap();
        std::fs::rename(b.join(".git"), a.join(".git")).unwrap();
        let swapped = open_at(&config, &a).await;
        assert_eq!(swapped.object_format, ObjectFormat::Sha256);
        assert!(Arc::ptr_eq(&swapped, &open_at(&config, &a).await));

        // A mode change moves no modification time, only the change time.
        let git_dir = a.join(".git");
        std::fs::set_permissions(&git_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let again = open_at(&config, &a).await;
        assert!(!Arc::ptr_eq(&swapped, &again), "a mode change is seen");

        // A new owner of the working tree is seen even though nothing in `.git` moved.
        if rustix::process::geteuid().is_root() {
            let other = rustix::fs::Uid::from_raw(54_321);
            rustix::fs::chown(&a, Some(other), None).unwrap();
            let cancel = CancellationToken::new();
            let after = open(&config, "repoPath", a.to_str().unwrap(), &cancel).await;
            assert!(
                after.as_ref().map_or(true, |r| !Arc::ptr_eq(r, &again)),
                "the cached entry of another owner's tree was reused"
            );
        }
    }
}
