//! What can go wrong below the tools when asking git, in git's terms.
//!
//! Nothing here knows the MCP contract: `crate::error` turns a [`GitError`] into the
//! caller-facing error exactly once. An invalid argument keeps the argument's name as
//! data so the message can say which one to fix.

use crate::parse::ParseError;
use crate::process::RunError;
use crate::safe_file::Stalled;

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// A value the caller gave (named `arg`) cannot be used.
    #[error("invalid argument `{arg}`: {reason}")]
    Invalid { arg: String, reason: String },
    /// Git ran and refused (or was refused before running, then `code` is `None`).
    #[error("git failed: {stderr}")]
    Failed {
        command: Vec<String>,
        code: Option<i32>,
        stderr: String,
    },
    /// A known limitation: a bare repository, an index gitward does not read, …
    #[error("{0}")]
    Unsupported(String),
    /// Git could not be run to the end (not found, timeout, cancelled, …).
    #[error("{source}")]
    Run {
        command: Vec<String>,
        #[source]
        source: RunError,
    },
    /// Git printed something its parser does not accept: our bug or a git we do not know.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// Off-thread file work did not finish.
    #[error(transparent)]
    Stalled(#[from] Stalled),
    /// Never expected: a bug or an environment we cannot work in.
    #[error("{0}")]
    Internal(String),
}

impl GitError {
    pub fn invalid(arg: &str, reason: impl Into<String>) -> Self {
        GitError::Invalid {
            arg: arg.to_owned(),
            reason: reason.into(),
        }
    }

    pub fn failed(command: &[String], code: Option<i32>, stderr: &str) -> Self {
        GitError::Failed {
            command: command.to_vec(),
            code,
            stderr: stderr.to_owned(),
        }
    }

    pub fn unsupported(reason: impl Into<String>) -> Self {
        GitError::Unsupported(reason.into())
    }

    pub fn internal(details: impl Into<String>) -> Self {
        GitError::Internal(details.into())
    }

    pub fn run(command: &[String], source: RunError) -> Self {
        GitError::Run {
            command: command.to_vec(),
            source,
        }
    }
}
