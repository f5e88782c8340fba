//! Why running a program failed.

use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    NotFound(String),
    /// The program is there but cannot serve us (git older than we need).
    #[error("{0}")]
    Unsupported(String),
    #[error("could not start {program}: {source}")]
    Spawn {
        program: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("{program} did not finish within {}s and was stopped", .after.as_secs_f32())]
    Timeout {
        program: &'static str,
        after: Duration,
    },
    #[error("the request was cancelled")]
    Cancelled,
    #[error("reading from {program} failed: {source}")]
    Io {
        program: &'static str,
        #[source]
        source: std::io::Error,
    },
}
