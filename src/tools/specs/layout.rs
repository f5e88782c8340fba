//! The files a proposal prepares in its project: the OpenSpec layout and the exclusion of
//! `.worktrees/` from git.

use std::path::Path;

use crate::specs::{SpecError, metadata};

/// The default `openspec/config.yaml`, written only when the project has none. One literal
/// line per YAML line: a `\` continuation would strip the indentation that nests `tasks`
/// under `rules`.
const DEFAULT_CONFIG: &str = concat!(
    "schema: spec-driven\n",
    "\n",
    "# Project context and per-artifact rules for OpenSpec. This file belongs to the project:\n",
    "# edit it freely; gitward never rewrites an existing config.\n",
    "# context: |\n",
    "#   Tech stack, conventions, domain notes.\n",
    "rules:\n",
    "  tasks:\n",
    "    - While writing tasks.md, decide whether the project's guidelines (README, contributor or style documents) need a concrete update task; add one only when the change alters what they say, and never add a placeholder task to evaluate or confirm it.\n",
);

/// Adds `.worktrees/` to the repository's `info/exclude`, so proposals never dirty the
/// main worktree's tracked `.gitignore`.
pub(super) fn exclude_worktrees(common_dir: &Path) -> std::io::Result<()> {
    let info = common_dir.join("info");
    let file = info.join("exclude");
    let current = match crate::safe_file::read(&file, 1024 * 1024) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(crate::safe_file::Refusal::Missing) => String::new(),
        // Rewriting it would replace what we could not read.
        Err(why) => return Err(std::io::Error::other(format!("{}: {why}", file.display()))),
    };
    let Some(text) = with_worktrees_excluded(current) else {
        return Ok(());
    };
    std::fs::create_dir_all(&info)?;
    metadata::write_atomic(&file, text.as_bytes()).map_err(|e| std::io::Error::other(e.to_string()))
}

/// The exclude file with a `.worktrees/` line added, or `None` when one already covers it.
fn with_worktrees_excluded(mut text: String) -> Option<String> {
    let covered = text.lines().any(|l| {
        matches!(
            l.trim(),
            ".worktrees/" | "/.worktrees/" | ".worktrees" | "/.worktrees"
        )
    });
    if covered {
        return None;
    }
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(".worktrees/\n");
    Some(text)
}

/// The minimum OpenSpec layout in `dir`; an existing `config.yaml` is never touched.
pub(super) fn bootstrap(dir: &Path) -> Result<(), SpecError> {
    let fail = |e: std::io::Error| {
        SpecError::new(
            "WorkspaceError",
            "OPENSPEC_BOOTSTRAP_FAILED",
            format!("cannot prepare openspec/ in {}: {e}", dir.display()),
        )
    };
    std::fs::create_dir_all(dir.join("openspec/specs")).map_err(fail)?;
    std::fs::create_dir_all(dir.join("openspec/changes/archive")).map_err(fail)?;
    let config = dir.join("openspec/config.yaml");
    if !config.exists() && !dir.join("openspec/config.yml").exists() {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&config)
            .map_err(fail)?;
        std::io::Write::write_all(&mut f, DEFAULT_CONFIG.as_bytes()).map_err(fail)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exclusion_is_added_once_on_its_own_line() {
        assert_eq!(
            with_worktrees_excluded(String::new()).as_deref(),
            Some(".worktrees/\n")
        );
        assert_eq!(
            with_worktrees_excluded("*.log".into()).as_deref(),
            Some("*.log\n.worktrees/\n")
        );
        for present in [".worktrees/", " /.worktrees ", "a\n.worktrees\n"] {
            assert_eq!(with_worktrees_excluded(present.into()), None, "{present:?}");
        }
        assert!(with_worktrees_excluded(".worktrees-old\n".into()).is_some());
    }

    #[test]
    fn bootstrap_keeps_an_existing_config() {
        let dir = tempfile::tempdir().expect("temp dir");
        bootstrap(dir.path()).expect("bootstrapped");
        let config = dir.path().join("openspec/config.yaml");
        let written = std::fs::read_to_string(&config).expect("config");
        assert!(written.contains("\n  tasks:\n    - While writing tasks.md"));
        assert!(dir.path().join("openspec/changes/archive").is_dir());
        std::fs::write(&config, "schema: mine\n").expect("rewrite");
        bootstrap(dir.path()).expect("again");
        assert_eq!(
            std::fs::read_to_string(&config).expect("config"),
            "schema: mine\n"
        );
    }

    #[test]
    fn a_yml_config_counts_as_present() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(dir.path().join("openspec")).expect("dir");
        std::fs::write(dir.path().join("openspec/config.yml"), "x: 1\n").expect("yml");
        bootstrap(dir.path()).expect("bootstrapped");
        assert!(!dir.path().join("openspec/config.yaml").exists());
    }
}
