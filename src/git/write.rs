//! The git runner for the few writes the spec tools make on the user's behalf.
//!
//! `create-proposal` adds a linked worktree; `archive-change` stages and commits the
//! archive, fast-forwards the proposal branch into main, rebases it when main moved on,
//! removes the worktree and deletes the branch. These are the commands the user would run
//! by hand after confirming, so they keep git's normal behaviour where it matters:
//!
//! - hooks run (no `core.hooksPath=/dev/null`): a commit must pass the project's own
//!   `pre-commit`/`commit-msg` gate exactly as a manual commit would, and `post-checkout`
//!   is how tools such as Git LFS populate a new worktree;
//! - filter drivers stay armed: `git add` has to clean files the way the project
//!   configured, or the commit would hold the wrong blobs.
//!
//! Everything else of the read policy stays: the scrubbed environment of the process door,
//! argv only with `--` before paths, no pager or colour, no credential helper, no network
//! transport, no background maintenance, no fsmonitor daemon (it only speeds up reads),
//! and a deadline. Output is kept in part (its beginning and end) but always read to the
//! end: git is never killed for printing much. Every command is reported back verbatim so the caller
//! can record it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::process::{CancellationToken, HeadTail, Invocation, Program, RunError};

pub mod programs;
mod steps;
pub(crate) mod transport;
pub use steps::PushStep;

/// Settings placed before every write command; each one is explained in the module doc.
const WRITE_OVERRIDES: &[&str] = &[
    "-c",
    "core.pager=cat",
    "-c",
    "color.ui=false",
    "-c",
    "core.quotePath=false",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "credential.helper=",
    "-c",
    "protocol.allow=never",
    // A repository's own per-protocol permission would win over `protocol.allow`.
    "-c",
    "protocol.ext.allow=never",
    "-c",
    "protocol.fd.allow=never",
    "-c",
    "gc.auto=0",
    "-c",
    "maintenance.auto=false",
];

/// How long a cancelled write may take to exit after `SIGTERM`: git then removes its lock
/// files, so the operation it was in can be aborted cleanly.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(5);

/// Stdout kept per command: its first and last halves; the middle is counted and dropped.
/// Git is never stopped for what it prints — the write has happened by then, and its
/// outcome is what git did.
const OUTPUT_CAP: usize = 256 * 1024;

/// One write command's outcome, as recorded in a result.
#[derive(Debug, Clone)]
pub struct Ran {
    /// `git` and the caller's arguments (our overrides omitted).
    pub command: Vec<String>,
    pub cwd: PathBuf,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Ran {
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }

    /// Both streams together, for matching git's messages.
    pub fn combined(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }
}

/// Runs write commands in one directory.
#[derive(Clone)]
pub struct GitWrite<'a> {
    dir: &'a Path,
    cancel: &'a CancellationToken,
    timeout: Duration,
}

impl<'a> GitWrite<'a> {
    pub fn new(dir: &'a Path, cancel: &'a CancellationToken) -> Self {
        GitWrite {
            dir,
            cancel,
            timeout: Duration::from_secs(60),
        }
    }

    /// Runs `git <args>`; a non-zero exit is an outcome, not an error. Only a failure to
    /// run at all (missing git, deadline, cancellation) is an `Err`.
    pub(in crate::git) async fn run<I, S>(&self, args: I) -> Result<Ran, RunError>
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        let command = std::iter::once("git".to_owned())
            .chain(args.iter().map(|a| a.to_string_lossy().into_owned()))
            .collect();
        let done = Invocation::new(Program::Git)
            .dir(self.dir)
            .timeout(self.timeout)
            .terminate_first(STOP_GRACE)
            .args(WRITE_OVERRIDES.iter().copied())
            .args(args)
            .stream(HeadTail::new(OUTPUT_CAP), self.cancel)
            .await?;
        Ok(Ran {
            command,
            cwd: self.dir.to_owned(),
            code: done.code,
            stdout: String::from_utf8_lossy(&done.sink.text())
                .trim_end()
                .to_owned(),
            stderr: done.stderr_text(),
        })
    }
}

/// The write commands the spec workflow makes, each a fixed argv around checked values:
/// paths always after `--`, and a branch name only where the workflow built it itself
/// (`proposal/<kebab-case name>`, which cannot start with `-`) or read it from git.
#[derive(Debug, Clone, Copy)]
pub enum Write<'a> {
    /// `git worktree add -b <branch> -- <path>`.
    WorktreeAdd { branch: &'a str, path: &'a Path },
    /// `git worktree add -- <path> <branch>`: a worktree on a branch that already exists.
    WorktreeAddExisting { branch: &'a str, path: &'a Path },
    /// `git add -A -- <paths>`: stages exactly these paths, removals included.
    AddAll(&'a [String]),
    /// `git commit -m <message>`, hooks included as a manual commit would run them.
    Commit(&'a str),
    /// `git merge --ff-only <branch>`.
    MergeFfOnly(&'a str),
    /// `git rebase <onto>`.
    Rebase(&'a str),
    /// `git worktree remove -- <path>` (never `--force`: uncommitted work stops it).
    WorktreeRemove(&'a Path),
    /// `git branch -d <branch>` (never `-D`: an unmerged branch stays).
    BranchDelete(&'a str),
}

impl Write<'_> {
    pub fn argv(&self) -> Vec<OsString> {
        let words = |w: &[&str]| w.iter().map(OsString::from).collect::<Vec<_>>();
        match *self {
            Write::WorktreeAdd { branch, path } => {
                let mut v = words(&["worktree", "add", "-b", branch, "--"]);
                v.push(path.into());
                v
            }
            Write::WorktreeAddExisting { branch, path } => {
                let mut v = words(&["worktree", "add", "--"]);
                v.push(path.into());
                v.push(branch.into());
                v
            }
            Write::AddAll(paths) => {
                let mut v = words(&["add", "-A", "--"]);
                v.extend(paths.iter().map(OsString::from));
                v
            }
            Write::Commit(message) => words(&["commit", "-m", message]),
            Write::MergeFfOnly(branch) => words(&["merge", "--ff-only", branch]),
            Write::Rebase(onto) => words(&["rebase", onto]),
            Write::WorktreeRemove(path) => {
                let mut v = words(&["worktree", "remove", "--"]);
                v.push(path.into());
                v
            }
            Write::BranchDelete(branch) => words(&["branch", "-d", branch]),
        }
    }

    /// `git` and the arguments, as a result records the command.
    pub fn shown(&self) -> Vec<String> {
        std::iter::once("git".to_owned())
            .chain(self.argv().iter().map(|a| a.to_string_lossy().into_owned()))
            .collect()
    }
}

impl GitWrite<'_> {
    /// Runs one of the workflow's write commands.
    pub async fn exec(&self, write: Write<'_>) -> Result<Ran, RunError> {
        self.run(write.argv()).await
    }
}

/// The writes of the operation vocabulary, one per git step. Paths and names are always
/// placed where git cannot read them as options (after `--`, or validated beforehand).
impl GitWrite<'_> {
    /// `git add -A` of exactly `paths` (literal pathspecs), or of everything when `None`.
    pub async fn add(&self, paths: Option<&[String]>) -> Result<Ran, RunError> {
        match paths {
            Some(paths) => {
                let argv = ["--literal-pathspecs", "add", "-A", "--"]
                    .into_iter()
                    .map(str::to_owned)
                    .chain(paths.iter().cloned());
                self.run(argv).await
            }
            None => self.run(["add", "-A"]).await,
        }
    }

    /// `git commit -m message`, of the index, or with `only` just those paths
    /// (`--only`, literal). Hooks and signing run as configured; never `--amend`.
    pub async fn commit(&self, message: &str, only: Option<&[String]>) -> Result<Ran, RunError> {
        let mut argv: Vec<String> = Vec::new();
        if only.is_some() {
            argv.push("--literal-pathspecs".into());
        }
        argv.extend(["commit".into(), "-m".into(), message.to_owned()]);
        if let Some(paths) = only {
            argv.extend(["--only".into(), "--".into()]);
            argv.extend(paths.iter().cloned());
        }
        self.run(argv).await
    }

    /// `git switch -c name start`: a new branch at `start` (a commit id or a validated
    /// revision, never an option), checked out.
    pub async fn switch_new(&self, name: &str, start: &str) -> Result<Ran, RunError> {
        self.run(["switch", "--no-guess", "--no-track", "-c", name, start])
            .await
    }

    /// `git switch --detach <oid>`: the commit `oid` (a full id, never an option) checked
    /// out detached; local changes carried over or refused as git does.
    pub async fn switch_detach(&self, oid: &str) -> Result<Ran, RunError> {
        self.run(["switch", "--detach", "--no-guess", oid]).await
    }

    /// Creates the ref `refname` at `oid`; the empty old value makes git refuse if it
    /// appeared meanwhile.
    pub async fn create_ref(
        &self,
        refname: &str,
        oid: &str,
        message: &str,
    ) -> Result<Ran, RunError> {
        self.run(["update-ref", "-m", message, refname, oid, ""])
            .await
    }

    /// Deletes the ref `refname` only while it still points at `old` (`update-ref -d`);
    /// the reference-transaction hook runs as it would for `git branch -d`.
    pub async fn delete_ref(
        &self,
        refname: &str,
        old: &str,
        message: &str,
    ) -> Result<Ran, RunError> {
        self.run(["update-ref", "-m", message, "-d", refname, old])
            .await
    }

    /// Makes `values` the values of `key` in the repository's own configuration file:
    /// every value there is unset (none is fine), then each is added in order.
    pub async fn config_replace(&self, key: &str, values: &[String]) -> Result<Ran, RunError> {
        let unset = self
            .run(["config", "--local", "--unset-all", "--end-of-options", key])
            .await?;
        // 5: the key had no value.
        if !unset.ok() && unset.code != Some(5) {
            return Ok(unset);
        }
        let mut last = unset;
        for value in values {
            last = self
                .run(["config", "--local", "--add", "--end-of-options", key, value])
                .await?;
            if !last.ok() {
                break;
            }
        }
        if last.code == Some(5) {
            last.code = Some(0);
        }
        Ok(last)
    }

    /// `git worktree add` at `path`: of the existing branch `branch`, or with `new_at` a
    /// new branch of that name starting at that commit.
    pub async fn worktree_add(
        &self,
        path: &str,
        branch: &str,
        new_at: Option<&str>,
    ) -> Result<Ran, RunError> {
        match new_at {
            Some(start) => {
                self.run([
                    "worktree",
                    "add",
                    "--no-track",
                    "-b",
                    branch,
                    "--",
                    path,
                    start,
                ])
                .await
            }
            None => self.run(["worktree", "add", "--", path, branch]).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_always_follow_a_double_dash() {
        let path = Path::new("-x/wt");
        assert_eq!(
            Write::WorktreeAdd {
                branch: "proposal/a",
                path
            }
            .shown(),
            ["git", "worktree", "add", "-b", "proposal/a", "--", "-x/wt"]
        );
        assert_eq!(
            Write::WorktreeRemove(path).shown(),
            ["git", "worktree", "remove", "--", "-x/wt"]
        );
        let paths = ["-a".to_owned(), "b c".to_owned()];
        assert_eq!(
            Write::AddAll(&paths).shown(),
            ["git", "add", "-A", "--", "-a", "b c"]
        );
        assert_eq!(
            Write::Commit("-m x").shown(),
            ["git", "commit", "-m", "-m x"]
        );
    }
}
