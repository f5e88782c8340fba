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
//! a deadline and capped output. Every command is reported back verbatim so the caller
//! can record it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::process::{CancellationToken, Invocation, Program, RunError};

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
    "-c",
    "gc.auto=0",
    "-c",
    "maintenance.auto=false",
];

/// Stdout and stderr kept per command; the rest is dropped.
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
    pub async fn run<I, S>(&self, args: I) -> Result<Ran, RunError>
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
            .args(WRITE_OVERRIDES.iter().copied())
            .args(args)
            .capture(OUTPUT_CAP, self.cancel)
            .await?;
        Ok(Ran {
            command,
            cwd: self.dir.to_owned(),
            code: done.code,
            stdout: String::from_utf8_lossy(&done.sink.bytes)
                .trim_end()
                .to_owned(),
            stderr: done.stderr_text(),
        })
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

    /// `git switch -c name start`: a new branch at the commit `start`, checked out.
    pub async fn switch_new(&self, name: &str, start: &str) -> Result<Ran, RunError> {
        self.run(["switch", "--no-guess", "--no-track", "-c", name, start])
            .await
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
