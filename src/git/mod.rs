//! Typed git invocations for one repository.
//!
//! [`Git`] puts the read-only safety options in front of every command and turns a
//! non-zero exit into a [`GitError`] carrying git's message. Each git fact has one query
//! module here that builds its argv beside the parser it feeds and returns typed values
//! (`status`, `refs`, `head`, `log`, `reflog`, `stash`, `remote`, `diff_tree`, …); tools
//! compose these queries and never build argv. The process door (`crate::process`) is
//! the only thing that spawns.

pub mod apply;
pub mod args;
pub mod bisect;
pub mod cat_file;
pub mod check_ignore;
pub mod diff;
pub mod diff_tree;
mod drivers;
pub mod error;
pub mod fast_import;
mod fsmonitor_ipc;
pub mod gitconfig;
mod gitlinks;
pub mod gitmodules;
pub mod head;
pub mod head_tree;
pub mod index_copy;
pub mod index_file;
pub mod index_lookup;
pub mod index_named;
pub mod layout;
pub mod log;
pub mod ls_files;
pub mod merge;
pub mod merge_base;
pub mod objects;
pub mod on_copy;
pub mod operation;
pub mod path_text;
pub mod reach;
pub mod reachable;
pub mod ref_file;
pub mod reflog;
pub mod refs;
pub mod remote;
pub mod repo;
pub mod rev_batch;
pub mod safety_stash;
pub mod stash;
pub mod status;
mod status_cache;
pub mod tree_paths;
mod trust;
pub mod update_ref;
pub mod worktree;
pub mod worktree_state;
pub mod write;
pub mod write_history;

use std::ffi::OsString;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::process::{Capped, Finished, Invocation, Program, Sink};
pub use args::{Oid, RepoRelPath, Rev};
pub use error::GitError;
pub use repo::{ObjectFormat, Repo};

/// Settings placed before every read command. Each one removes a way for a repository's
/// own configuration to start a program or to change what we parse. These are fixed
/// literals, so `-c` is safe for them and keeps them visible in a process listing;
/// anything derived from the repository (driver names) travels in the environment
/// instead (`Invocation::git_config`).
const READ_OVERRIDES: &[&str] = &[
    // Never take optional locks or refresh the index while reading.
    "--no-optional-locks",
    // core.fsmonitor may name a hook script the repository chose.
    "-c",
    "core.fsmonitor=false",
    // Hooks never belong in a read, wherever the repository points them.
    "-c",
    "core.hooksPath=/dev/null",
    // Output goes to a pipe we read, never through a pager or with colour codes.
    "-c",
    "core.pager=cat",
    "-c",
    "color.ui=false",
    // Signature checks would start gpg/ssh-keygen.
    "-c",
    "log.showSignature=false",
    // Background maintenance must never start from a read.
    "-c",
    "gc.auto=0",
    "-c",
    "maintenance.auto=false",
    // No transport may run: nothing we do needs the network.
    "-c",
    "protocol.allow=never",
    // An empty value resets the helper list, so no credential helper can run.
    "-c",
    "credential.helper=",
];

/// Placed after [`READ_OVERRIDES`] on every command except those whose text is returned
/// as git prints it: `-z` output is never quoted, and this keeps the few human-readable
/// lines we parse unquoted too.
const RAW_PATHS: &[&str] = &["-c", "core.quotePath=false"];

/// Default cap on captured stdout for metadata commands.
pub const DEFAULT_CAP: usize = 16 * 1024 * 1024;

/// Runs git in one repository on behalf of one request.
#[derive(Clone, Copy)]
pub struct Git<'a> {
    pub repo: &'a Repo,
    cancel: &'a CancellationToken,
    timeout: Duration,
}

impl<'a> Git<'a> {
    pub fn new(repo: &'a Repo, cancel: &'a CancellationToken) -> Self {
        Git {
            repo,
            cancel,
            timeout: crate::process::DEFAULT_TIMEOUT,
        }
    }

    /// The same runner with another per-command deadline.
    pub fn with_timeout(self, timeout: Duration) -> Self {
        Git { timeout, ..self }
    }

    pub fn cancel(&self) -> &'a CancellationToken {
        self.cancel
    }

    /// A read-only git command in this repository. Only the query modules here build
    /// argv; everything else asks them.
    pub(in crate::git) fn cmd<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.build(RAW_PATHS, args)
    }

    /// A read-only command whose output is handed back as the user's own git would print
    /// it, path quoting (`core.quotePath`) included.
    pub(in crate::git) fn cmd_as_user<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.build(&[], args)
    }

    fn build<I, S>(&self, extra: &[&str], args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        Command {
            cancel: self.cancel.clone(),
            shown: args
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            inv: Invocation::new(Program::Git)
                .dir(&self.repo.path)
                .timeout(self.timeout)
                .args(READ_OVERRIDES.iter().copied())
                .args(extra.iter().copied())
                .git_config(&self.repo.disarm)
                .args(args),
        }
    }

    /// Resolves a revision to the commit it names, or says which argument was wrong.
    pub async fn resolve_commit(&self, arg: &str, rev: &Rev) -> Result<Oid, GitError> {
        let spec = format!("{}^{{commit}}", rev.as_str());
        let out = self
            .cmd([
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                &spec,
            ])
            .capture_allowing(4096, &[0, 1, 128])
            .await?;
        let text = String::from_utf8_lossy(&out.sink.bytes);
        match (out.code, Oid::parse(text.trim())) {
            (Some(0), Some(oid)) => Ok(oid),
            _ => Err(GitError::invalid(
                arg,
                format!("no commit named '{}' in this repository", rev.as_str()),
            )),
        }
    }

    /// [`Git::resolve_commit`] for a ref name given as its exact bytes (a name need not be
    /// UTF-8): checked as a revision is, then resolved the same way.
    pub async fn resolve_commit_bytes(&self, arg: &str, name: &[u8]) -> Result<Oid, GitError> {
        use std::os::unix::ffi::OsStrExt;
        if name.is_empty() || name.len() > args::MAX_REV_LEN {
            return Err(GitError::invalid(arg, "must name a ref of 1 to 1024 bytes"));
        }
        if name[0] == b'-' || name.iter().any(|b| b.is_ascii_control()) {
            return Err(GitError::invalid(
                arg,
                "must not start with '-' or contain control characters",
            ));
        }
        let spec = [name, b"^{commit}"].concat();
        let out = self
            .cmd(["rev-parse", "--verify", "--quiet", "--end-of-options"])
            .arg(std::ffi::OsStr::from_bytes(&spec))
            .capture_allowing(4096, &[0, 1, 128])
            .await?;
        let text = String::from_utf8_lossy(&out.sink.bytes);
        match (out.code, Oid::parse(text.trim())) {
            (Some(0), Some(oid)) => Ok(oid),
            _ => Err(GitError::invalid(
                arg,
                format!(
                    "no commit named '{}' in this repository",
                    String::from_utf8_lossy(name)
                ),
            )),
        }
    }

    /// [`Git::resolve_commit`] answered from the ref files, without a process, when
    /// `rev` names a local branch by git's own lookup order.
    pub async fn resolve_named_commit(&self, arg: &str, rev: &Rev) -> Result<Oid, GitError> {
        match ref_file::branch_named(self.repo, rev.as_str()) {
            Some((_, oid)) => Ok(oid),
            None => self.resolve_commit(arg, rev).await,
        }
    }

    /// The commit HEAD points at, or `None` on an unborn branch.
    pub async fn head(&self) -> Result<Option<Oid>, GitError> {
        let out = self
            .cmd(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])
            .capture_allowing(4096, &[0, 1, 128])
            .await?;
        Ok(out
            .success()
            .then(|| Oid::parse(String::from_utf8_lossy(&out.sink.bytes).trim()))
            .flatten())
    }
}

/// The `(major, minor)` version of the git in use, asked once per process.
pub async fn version() -> Result<(u32, u32), GitError> {
    crate::process::program::git_version()
        .await
        .map_err(|e| GitError::run(&["git".to_owned(), "--version".to_owned()], e))
}

/// One git command line, ready to run.
pub struct Command {
    inv: Invocation,
    cancel: CancellationToken,
    /// The caller-visible argv, without our safety overrides, for error messages.
    shown: Vec<String>,
}

impl Command {
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        let arg = arg.into();
        self.shown.push(arg.to_string_lossy().into_owned());
        self.inv = self.inv.arg(arg);
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        for arg in args {
            self = self.arg(arg);
        }
        self
    }

    pub fn stdin(mut self, bytes: Vec<u8>) -> Self {
        self.inv = self.inv.stdin(bytes);
        self
    }

    /// Feeds stdin from the pipe whose read end this is, written as the caller goes.
    pub(in crate::git) fn stdin_pipe(mut self, read_end: std::os::fd::OwnedFd) -> Self {
        self.inv = self.inv.stdin_pipe(read_end);
        self
    }

    pub fn env(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.inv = self.inv.env(name, value);
        self
    }

    pub fn shown(&self) -> Vec<String> {
        std::iter::once("git".to_owned())
            .chain(self.shown.iter().cloned())
            .collect()
    }

    /// Runs and requires exit 0, keeping at most `cap` bytes of stdout.
    pub async fn capture(self, cap: usize) -> Result<Finished<Capped>, GitError> {
        self.capture_allowing(cap, &[0]).await
    }

    /// Runs and accepts any of `ok` as an exit code (a stopped child is always accepted).
    pub async fn capture_allowing(
        self,
        cap: usize,
        ok: &[i32],
    ) -> Result<Finished<Capped>, GitError> {
        self.stream_allowing(Capped::new(cap), ok).await
    }

    /// Runs, handing stdout to `sink`, and requires exit 0.
    pub async fn stream<S: Sink>(self, sink: S) -> Result<Finished<S>, GitError> {
        self.stream_allowing(sink, &[0]).await
    }

    pub async fn stream_allowing<S: Sink>(
        self,
        sink: S,
        ok: &[i32],
    ) -> Result<Finished<S>, GitError> {
        let shown = self.shown();
        let done = self
            .inv
            .stream(sink, &self.cancel)
            .await
            .map_err(|e| GitError::run(&shown, e))?;
        if done.stopped_early || done.code.is_some_and(|c| ok.contains(&c)) {
            Ok(done)
        } else {
            Err(GitError::failed(&shown, done.code, &done.stderr_text()))
        }
    }
}
