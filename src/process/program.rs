//! Where the programs we run live, resolved once.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::RunError;

/// A program gitward may start. Nothing else is ever spawned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Program {
    Git,
    OpenSpec,
    /// npm, for `gitward setup openspec` only; always run by the absolute path found.
    Npm,
    /// The desktop's URL opener (`xdg-open`, or the user's `$BROWSER`), for
    /// `gitward gateway --open`; always run by the absolute path [`super::opener`] found.
    Opener,
}

impl Program {
    pub fn name(self) -> &'static str {
        match self {
            Program::Git => "git",
            Program::OpenSpec => "openspec",
            Program::Npm => "npm",
            Program::Opener => "the URL opener",
        }
    }
}

static GIT: OnceLock<Result<PathBuf, String>> = OnceLock::new();

/// The git binary: the configured one (`GITWARD_GIT`), else the first `git` on `PATH`.
pub fn git() -> Result<&'static Path, RunError> {
    GIT.get_or_init(|| match &super::settings::get().git {
        Some(path) => Ok(path.clone()),
        None => find_git(super::settings::get().search_path.as_deref())
            .map_err(|e| format!("git was not found on PATH ({e})")),
    })
    .as_ref()
    .map(PathBuf::as_path)
    .map_err(|why| RunError::NotFound(why.clone()))
}

fn find_git(search_path: Option<&std::ffi::OsStr>) -> which::Result<PathBuf> {
    match search_path {
        Some(list) => which::which_in(
            "git",
            Some(list),
            std::env::current_dir().unwrap_or_default(),
        ),
        None => which::which("git"),
    }
}

/// The oldest git gitward works with: `merge-tree --write-tree` arrived in 2.38.
pub const GIT_MIN: (u32, u32) = (2, 38);

/// The verdict on the git binary's version: its `(major, minor)`, or why it cannot serve.
/// Only a definite answer is kept; a check that could not run is tried again next time.
static GIT_CHECKED: tokio::sync::OnceCell<Result<(u32, u32), String>> =
    tokio::sync::OnceCell::const_new();

/// Checks once, at the first git call, that git is new enough. Done lazily so that
/// answering `initialize` never waits for a process.
pub(super) async fn ensure_git_version(path: &Path) -> Result<(u32, u32), RunError> {
    let verdict = GIT_CHECKED
        .get_or_try_init(|| async {
            let inv = super::Invocation::new(Program::Git)
                .program_path(path)
                .arg("--version")
                .timeout(std::time::Duration::from_secs(10));
            // Its own token: a caller's cancellation must not decide the verdict for all.
            let cancel = tokio_util::sync::CancellationToken::new();
            // Boxed: this runs inside the spawn path it is called from.
            let out = Box::pin(inv.capture(4096, &cancel)).await?;
            let text = String::from_utf8_lossy(&out.sink.bytes);
            Ok::<_, RunError>(git_verdict(text.trim()))
        })
        .await?;
    verdict.clone().map_err(RunError::Unsupported)
}

/// The `(major, minor)` version of the git in use; asked once per process, by the same
/// check that refuses a git too old.
pub async fn git_version() -> Result<(u32, u32), RunError> {
    ensure_git_version(git()?).await
}

/// Judges `git --version` output (`git version 2.43.0`, `git version 2.39.3 (Apple Git-146)`,
/// `git version 2.45.1.windows.1`).
fn git_verdict(text: &str) -> Result<(u32, u32), String> {
    let number = text.strip_prefix("git version ").unwrap_or(text);
    let number = number.split_whitespace().next().unwrap_or("");
    let mut parts = number.split('.').map(|p| p.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) if (major, minor) >= GIT_MIN => Ok((major, minor)),
        (Some(_), Some(_)) => Err(format!(
            "git {number} is too old: gitward needs git {}.{} or newer (for merge-tree --write-tree)",
            GIT_MIN.0, GIT_MIN.1
        )),
        _ => Err(format!(
            "could not read the git version from {text:?}: gitward needs git {}.{} or newer",
            GIT_MIN.0, GIT_MIN.1
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_verdicts() {
        assert_eq!(git_verdict("git version 2.38.0"), Ok((2, 38)));
        assert_eq!(
            git_verdict("git version 2.39.3 (Apple Git-146)"),
            Ok((2, 39))
        );
        assert_eq!(git_verdict("git version 2.45.1.windows.1"), Ok((2, 45)));
        assert_eq!(git_verdict("git version 3.0.0"), Ok((3, 0)));
        assert_eq!(
            git_verdict("git version 2.37.7"),
            Err("git 2.37.7 is too old: gitward needs git 2.38 or newer (for merge-tree --write-tree)".into())
        );
        assert!(git_verdict("hello").unwrap_err().contains("\"hello\""));
        assert!(git_verdict("").is_err());
    }
}
