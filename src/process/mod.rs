//! The one door through which gitward starts other programs.
//!
//! Every child is started here, and only here (`clippy.toml` forbids `Command::new`
//! elsewhere): argv only, never a shell; a scrubbed environment ([`mod@env`]); stdin closed,
//! fed from bytes or from a pipe the caller writes; stdout and stderr drained
//! concurrently so neither pipe can fill and deadlock the child; stdout handed to a
//! [`Sink`] that may stop early; stderr capped; a deadline on every call; cancellation
//! that kills the child's whole process group; and a bound on how many children run at
//! once ([`limit`]).

mod capture;
pub mod env;
mod error;
pub mod limit;
pub mod opener;
pub mod priority;
pub mod program;
mod settings;

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

pub use crate::sink::{Capped, Flow, HeadTail, Sink};
pub use capture::Finished;
pub use error::RunError;
pub use program::Program;
pub use settings::{Settings, configure};
pub use tokio_util::sync::CancellationToken;

/// Default deadline for one child process.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// How much stderr is kept; the rest is drained and dropped.
pub const STDERR_CAP: usize = 64 * 1024;

/// One program run: what to start and under which limits.
#[derive(Debug, Clone)]
pub struct Invocation {
    pub(crate) program: Program,
    pub(crate) path: Option<PathBuf>,
    pub(crate) args: Vec<OsString>,
    pub(crate) dir: Option<PathBuf>,
    pub(crate) stdin: Option<Vec<u8>>,
    /// The read end of a pipe the caller writes the child's input into, as it goes.
    pub(crate) stdin_pipe: Option<std::sync::Arc<std::os::fd::OwnedFd>>,
    pub(crate) extra_env: Vec<(OsString, OsString)>,
    pub(crate) timeout: Duration,
    pub(crate) stderr_cap: usize,
    /// The child's niceness; unset, the one [`priority::background`] asks for, if any.
    pub(crate) niceness: Option<i32>,
    /// On cancellation, how long the child may take to exit after `SIGTERM` before it is
    /// killed; unset, it is killed at once.
    pub(crate) term_grace: Option<Duration>,
}

impl Invocation {
    pub fn new(program: Program) -> Self {
        Invocation {
            program,
            path: None,
            args: Vec::new(),
            dir: None,
            stdin: None,
            stdin_pipe: None,
            extra_env: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            stderr_cap: STDERR_CAP,
            niceness: None,
            term_grace: None,
        }
    }

    /// Runs this exact executable (an OpenSpec CLI found by the specs layer, say).
    pub fn program_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = Some(path.into());
        self
    }

    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub fn dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dir = Some(dir.into());
        self
    }

    pub fn stdin(mut self, bytes: Vec<u8>) -> Self {
        self.stdin = Some(bytes);
        self
    }

    /// Feeds the child from the pipe whose read end this is (instead of bytes); the child
    /// sees the end of its input when the caller closes the write end. Our copy of the
    /// read end is closed once the child has started, so a child that dies makes the
    /// caller's writes fail instead of filling the pipe.
    pub fn stdin_pipe(mut self, read_end: std::os::fd::OwnedFd) -> Self {
        self.stdin_pipe = Some(std::sync::Arc::new(read_end));
        self
    }

    pub fn env(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.extra_env.push((name.into(), value.into()));
        self
    }

    /// Configuration for this one git run, as `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/
    /// `GIT_CONFIG_VALUE_n`: key and value stay apart whatever bytes they hold (a `-c`
    /// argument is split at its first `=`), and git hands them on to the gits it starts.
    /// Replaces any earlier call's set.
    pub fn git_config(mut self, pairs: &[(OsString, OsString)]) -> Self {
        self.extra_env.retain(|(name, _)| !env::is_config_var(name));
        if pairs.is_empty() {
            return self;
        }
        self.extra_env
            .push(("GIT_CONFIG_COUNT".into(), pairs.len().to_string().into()));
        for (i, (key, value)) in pairs.iter().enumerate() {
            self.extra_env
                .push((format!("GIT_CONFIG_KEY_{i}").into(), key.clone()));
            self.extra_env
                .push((format!("GIT_CONFIG_VALUE_{i}").into(), value.clone()));
        }
        self
    }

    /// A cancellation first asks the child's process group to stop (`SIGTERM`) and waits
    /// up to `grace` for the child to exit before killing what is left. Git removes its
    /// lock files on `SIGTERM`: a write stopped this way leaves no stale `index.lock`, so
    /// `git rebase --abort` and the like can follow it.
    pub fn terminate_first(mut self, grace: Duration) -> Self {
        self.term_grace = Some(grace);
        self
    }

    /// Runs the child at `niceness` (set before its program starts; never less nice
    /// than gitward itself).
    pub fn niceness(mut self, niceness: i32) -> Self {
        self.niceness = Some(niceness);
        self
    }

    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The argv as text, for error messages and tests.
    pub fn display_args(&self) -> Vec<String> {
        self.args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    /// Runs to completion, keeping at most `cap` bytes of stdout.
    pub async fn capture(
        self,
        cap: usize,
        cancel: &CancellationToken,
    ) -> Result<Finished<Capped>, RunError> {
        capture::run(self, Capped::new(cap), cancel).await
    }

    /// Runs to completion, handing stdout to `sink` as it arrives.
    pub async fn stream<S: Sink>(
        self,
        sink: S,
        cancel: &CancellationToken,
    ) -> Result<Finished<S>, RunError> {
        capture::run(self, sink, cancel).await
    }
}
