//! Where the programs we run live, resolved once.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::RunError;

/// A program gitward may start. Nothing else is ever spawned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Program {
    Git,
    OpenSpec,
}

impl Program {
    pub fn name(self) -> &'static str {
        match self {
            Program::Git => "git",
            Program::OpenSpec => "openspec",
        }
    }
}

/// Environment variable naming an explicit git binary (tests pin one; packagers may too).
pub const GIT_PATH_VAR: &str = "GITWARD_GIT";

static GIT: OnceLock<Result<PathBuf, String>> = OnceLock::new();

/// The git binary: `GITWARD_GIT` when set, else the first `git` on `PATH`.
pub fn git() -> Result<&'static Path, RunError> {
    GIT.get_or_init(|| match std::env::var_os(GIT_PATH_VAR) {
        Some(path) if !path.is_empty() => Ok(PathBuf::from(path)),
        _ => which::which("git").map_err(|e| format!("git was not found on PATH ({e})")),
    })
    .as_ref()
    .map(PathBuf::as_path)
    .map_err(|why| RunError::NotFound(why.clone()))
}

/// Locates a program by name on `PATH`, the way a user's shell would.
pub fn on_path(name: &str) -> Option<PathBuf> {
    which::which(name).ok()
}
