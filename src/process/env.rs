//! The environment every child process starts with.
//!
//! Inherited variables that would point git at another repository, another index or an
//! injected configuration are removed, so a repository is always the one the caller named.
//! The user's own configuration files stay in force (identity, `safe.directory`, aliases
//! are irrelevant to us), so results match what `git` shows that user.

use std::ffi::{OsStr, OsString};
use std::sync::OnceLock;

/// Variables removed before spawning git: each one redirects git away from the repository
/// we resolved, or injects configuration the caller did not ask for.
pub const STRIPPED: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_EXTERNAL_DIFF",
    "GIT_DIFF_OPTS",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_PROXY_COMMAND",
    "GIT_EXEC_PATH",
    "GIT_TRACE",
    "GIT_TRACE2",
    "GIT_TRACE2_EVENT",
    "GIT_TRACE2_PERF",
    "GIT_REDIRECT_STDERR",
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
    "GIT_REPLACE_REF_BASE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_SHALLOW_FILE",
    "GIT_QUARANTINE_PATH",
    "GIT_ATTR_SOURCE",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
];

/// Prefixes of numbered variables removed for the same reason (`GIT_CONFIG_KEY_0`, …).
pub const STRIPPED_PREFIXES: &[&str] = &["GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"];

/// Variables set on every child.
pub const FORCED: &[(&str, &str)] = &[
    // Never block on a credential or passphrase prompt: there is no terminal to answer it.
    ("GIT_TERMINAL_PROMPT", "0"),
    // Read commands must not take the index lock or refresh the index behind the user's back.
    ("GIT_OPTIONAL_LOCKS", "0"),
    // Messages we match on (exit reasons, "not a git repository") must be in English.
    ("LC_ALL", "C"),
    ("LANGUAGE", ""),
    // No pager may ever run: output goes to a pipe we read.
    ("GIT_PAGER", "cat"),
    ("PAGER", "cat"),
    // An editor would wait for a human; `:` exits at once.
    ("GIT_EDITOR", ":"),
    // A partial clone must not reach the network to fill in a missing object.
    ("GIT_NO_LAZY_FETCH", "1"),
    // Advice lines are noise in captured stderr.
    ("GIT_ADVICE", "0"),
    // Output into a pipe is flushed record by record unless told otherwise: one write and
    // one wake-up of ours per commit of a `git log`. Nothing reads a child interactively
    // (stdin is given whole), so full buffering loses nothing.
    ("GIT_FLUSH", "0"),
];

fn is_stripped(name: &OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    STRIPPED.contains(&name)
        || STRIPPED_PREFIXES.iter().any(|p| name.starts_with(p))
        || FORCED.iter().any(|(k, _)| *k == name)
}

/// True for the variables [`super::Invocation::git_config`] sets.
pub(crate) fn is_config_var(name: &OsStr) -> bool {
    name.to_str().is_some_and(|name| {
        name == "GIT_CONFIG_COUNT" || STRIPPED_PREFIXES.iter().any(|p| name.starts_with(p))
    })
}

/// The full environment for children, computed once from our own environment.
///
/// The one read of the environment outside `config`, and on purpose: children get the
/// user's whole environment (scrubbed), not only the variables gitward itself reads.
pub fn child_env() -> &'static [(OsString, OsString)] {
    static ENV: OnceLock<Vec<(OsString, OsString)>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
            .filter(|(name, _)| !is_stripped(name))
            .collect();
        env.extend(
            FORCED
                .iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v))),
        );
        env
    })
}

/// The environment for a URL opener: the user's own, including locale and display, minus
/// only what would redirect a git it might start. The variables forced on git children
/// (`LC_ALL=C`, …) would change how the person's browser looks, so none is set.
pub fn opener_env() -> Vec<(OsString, OsString)> {
    std::env::vars_os()
        .filter(|(name, _)| {
            name.to_str().is_none_or(|name| {
                !STRIPPED.contains(&name) && !STRIPPED_PREFIXES.iter().any(|p| name.starts_with(p))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirecting_variables_are_stripped() {
        assert!(is_stripped(OsStr::new("GIT_DIR")));
        assert!(is_stripped(OsStr::new("GIT_CONFIG_KEY_3")));
        assert!(is_stripped(OsStr::new("GIT_CONFIG_PARAMETERS")));
        assert!(!is_stripped(OsStr::new("GIT_CONFIG_GLOBAL")));
        assert!(!is_stripped(OsStr::new("HOME")));
    }

    #[test]
    fn forced_values_win() {
        let env = child_env();
        let prompt: Vec<_> = env
            .iter()
            .filter(|(k, _)| k == "GIT_TERMINAL_PROMPT")
            .collect();
        assert_eq!(prompt.len(), 1);
        assert_eq!(prompt[0].1, "0");
    }

    #[test]
    fn children_buffer_their_output_fully() {
        let flush: Vec<_> = child_env()
            .iter()
            .filter(|(k, _)| k == "GIT_FLUSH")
            .collect();
        assert_eq!(flush.len(), 1);
        assert_eq!(flush[0].1, "0");
    }
}
