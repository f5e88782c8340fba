//! The process door's settings, handed in once at start from the configuration.
//!
//! Until then (library tests, tools that never configure) the defaults apply: git from
//! `PATH`, and the default bound on concurrent children.

use std::path::PathBuf;
use std::sync::OnceLock;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    /// An explicit git binary instead of the first `git` on `PATH`.
    pub git: Option<PathBuf>,
    /// How many children run at once instead of the default.
    pub max_children: Option<usize>,
    /// `PATH` as read at start, where git is looked up (the process's own when unset).
    pub search_path: Option<std::ffi::OsString>,
}

static SETTINGS: OnceLock<Settings> = OnceLock::new();

/// Sets the settings; the first call wins, as the git binary and the child bound are
/// fixed for the life of the process once used.
pub fn configure(settings: Settings) {
    let _ = SETTINGS.set(settings);
}

pub(super) fn get() -> &'static Settings {
    SETTINGS.get_or_init(Settings::default)
}
