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

use crate::config::Config;
use crate::error::ToolError;
use crate::process::{Invocation, Program};

/// The hash function of a repository's object ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ObjectFormat {
    Sha1,
    Sha256,
}

/// A repository the caller may use.
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
    /// `-c` overrides that disarm filter drivers defined by the repository's own config
    /// and merge drivers defined by any config.
    pub(crate) disarm: Vec<OsString>,
}

impl Repo {
    /// The path shown to callers: the canonical top level as text.
    pub fn display(&self) -> String {
        self.path.to_string_lossy().into_owned()
    }

    /// Errors with a clear reason unless the repository has a working tree.
    pub fn require_worktree(&self) -> Result<&Path, ToolError> {
        self.worktree.as_deref().ok_or_else(|| {
            ToolError::unsupported("bare repository: this tool needs a working tree")
        })
    }
}

/// What a cached entry was derived from; any change means "ask git again".
#[derive(Debug, Clone, PartialEq, Eq)]
struct Fingerprint(Vec<Option<(SystemTime, u64, u64)>>);

fn stat(path: &Path) -> Option<(SystemTime, u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len(), meta.ino()))
}

fn fingerprint(repo: &Repo) -> Fingerprint {
    let mut files = vec![
        repo.git_dir.clone(),
        repo.common_dir.join("config"),
        repo.git_dir.join("config.worktree"),
    ];
    if let Some(top) = &repo.worktree {
        files.push(top.join(".git"));
    }
    Fingerprint(files.iter().map(|p| stat(p)).collect())
}

type Cache = Mutex<HashMap<PathBuf, (Arc<Repo>, Fingerprint)>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// Checks `value` (the argument named `field`) and opens the repository it names.
pub async fn open(
    config: &Config,
    field: &str,
    value: &str,
    cancel: &CancellationToken,
) -> Result<Arc<Repo>, ToolError> {
    let canonical = canonical_dir(config, field, value)?;
    open_canonical(config, field, canonical, cancel).await
}

/// Opens the repository at a directory gitward found itself (a submodule's, say), whose
/// path need not be UTF-8.
pub async fn open_path(
    config: &Config,
    field: &str,
    dir: &Path,
    cancel: &CancellationToken,
) -> Result<Arc<Repo>, ToolError> {
    let canonical = std::fs::canonicalize(dir)
        .map_err(|_| ToolError::invalid(field, "does not exist or cannot be read"))?;
    if !canonical.is_dir() {
        return Err(ToolError::invalid(field, "is not a directory"));
    }
    if !config.allows(&canonical) {
        return Err(ToolError::invalid(field, "is outside the allowed roots"));
    }
    open_canonical(config, field, canonical, cancel).await
}

async fn open_canonical(
    config: &Config,
    field: &str,
    canonical: PathBuf,
    cancel: &CancellationToken,
) -> Result<Arc<Repo>, ToolError> {
    if let Some(repo) = cached(&canonical) {
        return Ok(repo);
    }
    let repo = Arc::new(discover(field, &canonical, cancel).await?);
    if !config.allows(&repo.path) {
        return Err(ToolError::invalid(field, "is outside the allowed roots"));
    }
    let print = fingerprint(&repo);
    cache()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(canonical, (Arc::clone(&repo), print));
    Ok(repo)
}

/// Validates and canonicalises a directory argument without asking git.
pub fn canonical_dir(config: &Config, field: &str, value: &str) -> Result<PathBuf, ToolError> {
    if value.is_empty() {
        return Err(ToolError::invalid(field, "must not be empty"));
    }
    if value.chars().any(char::is_control) {
        return Err(ToolError::invalid(
            field,
            "must not contain control characters",
        ));
    }
    let path = Path::new(value);
    if !path.is_absolute() {
        return Err(ToolError::invalid(field, "must be an absolute path"));
    }
    let canonical = std::fs::canonicalize(path)
        .map_err(|_| ToolError::invalid(field, "does not exist or cannot be read"))?;
    if !canonical.is_dir() {
        return Err(ToolError::invalid(field, "is not a directory"));
    }
    if !config.allows(&canonical) {
        return Err(ToolError::invalid(field, "is outside the allowed roots"));
    }
    Ok(canonical)
}

fn cached(canonical: &Path) -> Option<Arc<Repo>> {
    let cache = cache().lock().unwrap_or_else(|p| p.into_inner());
    let (repo, print) = cache.get(canonical)?;
    (fingerprint(repo) == *print).then(|| Arc::clone(repo))
}

async fn discover(field: &str, dir: &Path, cancel: &CancellationToken) -> Result<Repo, ToolError> {
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
    // Filter drivers the repository itself defines (local and worktree scope) are the
    // ones that could run a program during `status` or `diff`; merge drivers of any scope
    // could run one during `merge-tree`. Each gets disarmed.
    let drivers = Invocation::new(Program::Git)
        .dir(dir)
        .args([
            "--no-optional-locks",
            "config",
            "--show-scope",
            "--includes",
            "--null",
            "--name-only",
            "--get-regexp",
            r"^filter\.|^merge\..+\.driver$",
        ])
        .capture(256 * 1024, cancel);
    let (layout, drivers) = tokio::join!(layout, drivers);
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let layout = layout.map_err(|e| ToolError::from_run(&args(&["git", "rev-parse"]), e))?;
    let text = String::from_utf8_lossy(&layout.sink.bytes);
    let lines: Vec<&str> = text.lines().collect();
    let bare = lines.first() == Some(&"true");
    if !(layout.success() || (bare && lines.len() >= 4)) {
        let stderr = layout.stderr_text();
        if stderr.contains("not a git repository") {
            return Err(ToolError::invalid(field, "is not inside a git repository"));
        }
        if stderr.contains("dubious ownership") {
            return Err(ToolError::git(
                &args(&["git", "rev-parse"]),
                layout.code,
                &stderr,
            ));
        }
        if lines.first() == Some(&"false") && stderr.contains("work tree") {
            return Err(ToolError::invalid(
                field,
                "points inside a .git directory; give the working tree or a bare repository",
            ));
        }
        return Err(ToolError::git(
            &args(&["git", "rev-parse"]),
            layout.code,
            &stderr,
        ));
    }
    let [_, git_dir, common_dir, format, ..] = lines.as_slice() else {
        return Err(ToolError::internal(format!(
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
    let disarm = match drivers {
        Ok(found) if found.success() => disarm_drivers(&found.sink.bytes),
        // A cut list would leave the rest armed: refuse rather than run them.
        Ok(found) if found.sink.truncated => {
            return Err(ToolError::git(
                &args(&["git", "config"]),
                found.code,
                "the configuration defines more filter and merge drivers than can be disarmed",
            ));
        }
        // Exit 1 means no driver is defined; anything else we treat the same way, since
        // config problems surface in the real command that follows.
        _ => Vec::new(),
    };
    Ok(Repo {
        path,
        worktree,
        common_dir,
        git_dir,
        bare,
        object_format,
        disarm,
    })
}

/// `-c` overrides for the drivers named in `found`: NUL-separated pairs of scope and
/// config key, such as `local` and `filter.lfs.clean`. A filter counts only when the
/// repository defines it (the user's own filters, LFS say, keep shaping what git shows);
/// a merge driver counts wherever it is defined.
fn disarm_drivers(found: &[u8]) -> Vec<OsString> {
    let items: Vec<&str> = found
        .split(|b| *b == 0)
        .map(|k| std::str::from_utf8(k).unwrap_or(""))
        .collect();
    let mut filters: Vec<&str> = Vec::new();
    let mut merges: Vec<&str> = Vec::new();
    for pair in items.chunks_exact(2) {
        let [scope, key] = [pair[0], pair[1]];
        if let Some(rest) = key.strip_prefix("filter.") {
            if matches!(scope, "local" | "worktree") {
                filters.extend(rest.rsplit_once('.').map(|(driver, _)| driver));
            }
        } else if key.starts_with("merge.") && key.ends_with(".driver") {
            merges.push(key);
        }
    }
    filters.sort_unstable();
    filters.dedup();
    merges.sort_unstable();
    merges.dedup();
    let filters = filters.into_iter().flat_map(|d| {
        // An empty command makes git skip the filter; `required=false` keeps it from
        // then refusing to continue.
        ["clean", "smudge", "process"]
            .into_iter()
            .map(move |key| format!("filter.{d}.{key}="))
            .chain(std::iter::once(format!("filter.{d}.required=false")))
    });
    // Without a command the driver cannot run; git reports the path as conflicted.
    let merges = merges.into_iter().map(|key| format!("{key}="));
    filters
        .chain(merges)
        .flat_map(|kv| [OsString::from("-c"), OsString::from(kv)])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_repository_defined_filter_is_disarmed() {
        let args = disarm_drivers(
            b"local\0filter.evil.clean\0worktree\0filter.evil.smudge\0local\0filter.a.b.process\0\
global\0filter.lfs.clean\0global\0merge.theirs.driver\0local\0merge.evil.driver\0",
        );
        let text: Vec<_> = args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert!(text.contains(&"filter.evil.clean=".to_owned()));
        assert!(text.contains(&"filter.evil.required=false".to_owned()));
        assert!(text.contains(&"filter.a.b.process=".to_owned()));
        assert!(!text.iter().any(|a| a.starts_with("filter.lfs.")));
        assert!(text.contains(&"merge.evil.driver=".to_owned()));
        assert!(text.contains(&"merge.theirs.driver=".to_owned()));
        assert_eq!(text.iter().filter(|a| *a == "-c").count(), 10);
    }
}
