//! What every presence source shares: the repository's worktrees and limits it looks
//! within ([`Scope`]), and what it reports ([`Finding`], [`Outcome`]). The sources and
//! the detector that merges their findings both build on this; neither imports the other
//! through it.

use std::path::{Component, Path, PathBuf};
use std::time::Instant;

use schemars::JsonSchema;
use serde::Serialize;

use super::fsread::{self, Meter};

/// Activity within this window means `working`.
pub const WORKING_MS: u64 = 120_000;
/// Store activity within this window (and no live process) means `recent`.
pub const RECENT_MS: u64 = 6 * 60 * 60 * 1000;
/// Repository-relative paths kept per agent, and their longest allowed length.
pub const MAX_FILES: usize = 20;
const MAX_PATH_BYTES: usize = 512;

/// Where a finding came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Source {
    Process,
    Session,
    RepoFiles,
    Editor,
    McpPresence,
    GitCommits,
}

/// How active an agent is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum State {
    /// Activity within the last 120 s (a store written, a tool child running, CPU use).
    Working,
    /// A live process in the repository with no activity within 120 s.
    Open,
    /// No live process; its store was touched within the last 6 hours.
    Recent,
}

/// One observation by one source.
#[derive(Debug, Clone, Default)]
pub struct Finding {
    pub agent: String,
    pub source: Option<Source>,
    /// The agent's own process, when known.
    pub pid: Option<u32>,
    /// Identifies the session across sources (a store file, a session id).
    pub session: Option<String>,
    /// Index into [`Scope::worktrees`] of the worktree the agent works in.
    pub worktree: Option<usize>,
    pub branch: Option<String>,
    pub last_tool: Option<String>,
    pub files: Vec<String>,
    pub last_activity_ms: Option<u64>,
    /// A live process (or a live writer of a record) backs this finding.
    pub live: bool,
    /// A direct sign of work right now (running tool part, busy child).
    pub busy: bool,
    pub mcp_client: Option<String>,
    pub likely_caller: bool,
}

/// A worktree of the repository asked about.
#[derive(Debug, Clone)]
pub struct Worktree {
    pub path: PathBuf,
    pub git_dir: PathBuf,
    /// Its checked-out branch (`None` when detached or unreadable).
    pub branch: Option<String>,
}

/// What the sources look for, and the limits they work under.
pub struct Scope {
    pub worktrees: Vec<Worktree>,
    pub common_dir: PathBuf,
    pub home: Option<PathBuf>,
    /// Where agents keep their stores when they are told elsewhere than under `home`.
    pub dirs: crate::config::UserDirs,
    pub run_dir: Option<PathBuf>,
    pub now_ms: u64,
    pub meter: Meter,
    /// The caller's declared client name.
    pub caller_client: Option<String>,
    pub own_session: Option<String>,
}

impl Scope {
    /// The repository's worktrees: the one asked about, the main one and every linked one.
    pub fn for_repo(
        repo: &crate::git::Repo,
        config: &crate::config::Config,
        deadline: Instant,
    ) -> Scope {
        let mut worktrees: Vec<Worktree> = Vec::new();
        let mut add = |path: PathBuf, git_dir: PathBuf| {
            let path = std::fs::canonicalize(&path).unwrap_or(path);
            if worktrees.iter().all(|w| w.path != path) && worktrees.len() < 64 {
                let branch = head_branch(&git_dir);
                worktrees.push(Worktree {
                    path,
                    git_dir,
                    branch,
                });
            }
        };
        if let Some(top) = &repo.worktree {
            add(top.clone(), repo.git_dir.clone());
        }
        let common = &repo.common_dir;
        if !repo.bare
            && common.file_name().is_some_and(|n| n == ".git")
            && let Some(main) = common.parent()
        {
            add(main.to_path_buf(), common.clone());
        }
        if let Ok(entries) = std::fs::read_dir(common.join("worktrees")) {
            for entry in entries.flatten().take(256) {
                let git_dir = entry.path();
                let Some(bytes) = fsread::read_small(&git_dir.join("gitdir"), 4096) else {
                    continue;
                };
                let text = String::from_utf8_lossy(&bytes);
                let dot_git = PathBuf::from(text.trim_end_matches(['\n', '\r']));
                if let Some(top) = dot_git.parent().filter(|p| p.is_absolute() && p.is_dir()) {
                    add(top.to_path_buf(), git_dir);
                }
            }
        }
        Scope {
            worktrees,
            common_dir: common.clone(),
            home: config.user.home.clone(),
            dirs: config.user.clone(),
            run_dir: config.run_dir.clone(),
            now_ms: super::now_ms(),
            meter: Meter::new(deadline),
            caller_client: None,
            own_session: None,
        }
    }

    /// The worktree containing `path` (the innermost one when worktrees nest).
    pub fn locate(&self, path: &Path) -> Option<usize> {
        let lexical = normalize(path)?;
        self.locate_exact(&lexical).or_else(|| {
            // Recorded through a symlink (`/tmp` → `/private/tmp`): compare real paths.
            let real = std::fs::canonicalize(&lexical).ok()?;
            (real != lexical)
                .then(|| self.locate_exact(&real))
                .flatten()
        })
    }

    fn locate_exact(&self, path: &Path) -> Option<usize> {
        self.worktrees
            .iter()
            .enumerate()
            .filter(|(_, w)| path.starts_with(&w.path))
            .max_by_key(|(_, w)| w.path.as_os_str().len())
            .map(|(i, _)| i)
    }

    /// A recorded file path made repository-relative: resolved against `cwd` when
    /// relative, normalised, and kept only when it lies inside a worktree.
    pub fn relative(&self, cwd: Option<&Path>, recorded: &str) -> Option<String> {
        if recorded.is_empty() || recorded.chars().any(char::is_control) {
            return None;
        }
        let recorded = Path::new(recorded);
        let joined = if recorded.is_absolute() {
            recorded.to_path_buf()
        } else {
            cwd?.join(recorded)
        };
        let path = normalize(&joined)?;
        let index = self.locate(&path)?;
        let top = &self.worktrees[index].path;
        let real;
        let rel = match path.strip_prefix(top) {
            Ok(rel) => rel,
            Err(_) => {
                real = std::fs::canonicalize(&path).ok()?;
                real.strip_prefix(top).ok()?
            }
        };
        let text = rel.to_str()?.to_owned();
        (!text.is_empty() && text.len() <= MAX_PATH_BYTES).then_some(text)
    }

    pub fn recent(&self, ms: u64) -> bool {
        self.now_ms.saturating_sub(ms) <= RECENT_MS
    }

    pub fn fresh(&self, ms: u64) -> bool {
        self.now_ms.saturating_sub(ms) <= WORKING_MS
    }
}

/// Lexical normalisation of an absolute path; `None` when `..` would climb above `/`.
pub fn normalize(path: &Path) -> Option<PathBuf> {
    if !path.is_absolute() {
        return None;
    }
    let mut out = PathBuf::from("/");
    for part in path.components() {
        match part {
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(name) => out.push(name),
        }
    }
    Some(out)
}

/// The branch checked out in a worktree, from its `HEAD` file.
pub fn head_branch(git_dir: &Path) -> Option<String> {
    let bytes = fsread::read_small(&git_dir.join("HEAD"), 4096)?;
    let text = std::str::from_utf8(&bytes).ok()?.trim();
    text.strip_prefix("ref: refs/heads/").map(str::to_owned)
}

/// A tool name as it may be shown: `[A-Za-z0-9_.:-]{1,64}`, else nothing.
pub fn sanitize_tool(name: &str) -> Option<String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-'));
    ok.then(|| name.to_owned())
}

/// A branch name as shown: printable, at most 255 bytes, and not a detached `HEAD`.
pub fn sanitize_branch(name: &str) -> Option<String> {
    let ok = !name.is_empty()
        && name != "HEAD"
        && name.len() <= 255
        && !name.chars().any(|c| c.is_control());
    ok.then(|| name.to_owned())
}

/// A declared client name as shown: printable, at most 64 characters.
pub fn sanitize_client(name: &str) -> Option<String> {
    let clean: String = name.chars().filter(|c| !c.is_control()).take(64).collect();
    (!clean.trim().is_empty()).then_some(clean)
}

/// What one source returns.
#[derive(Default)]
pub struct Outcome {
    pub findings: Vec<Finding>,
    pub unavailable: Option<&'static str>,
}
