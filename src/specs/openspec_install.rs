//! The pinned OpenSpec CLI in gitward's own data directory, for installs that bring no
//! Node packages of their own (`cargo install`, `uvx`): `gitward setup openspec` puts it
//! there with npm, and [`super::openspec::locate`] finds it there.
//!
//! The install is staged in a sibling directory and moved into place only once the
//! installed CLI has answered `--version` with the pinned version, so a failed or
//! interrupted install never leaves a half-filled directory where resolution looks.
//! npm runs with `--ignore-scripts`: the CLI and its dependencies need no install scripts,
//! and none of a registry package's code runs before the CLI itself is asked for.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::config::UserDirs;
use crate::process::{CancellationToken, Invocation, Program};

/// The OpenSpec release the spec tools are written against (as in `package.json`).
pub const PINNED_VERSION: &str = "1.13.2";
/// Its npm package.
pub const PACKAGE: &str = "@fission-ai/openspec";
/// The one command that installs it for gitward.
pub const SETUP_COMMAND: &str = "gitward setup openspec";

/// Deadline for the whole `npm install`: a cold cache downloads about 70 packages.
const NPM_TIMEOUT: Duration = Duration::from_secs(600);
/// Deadline for the installed CLI's `--version`.
const VERSION_TIMEOUT: Duration = Duration::from_secs(60);
/// Most output kept from npm or the CLI.
const OUTPUT_CAP: usize = 64 * 1024;

/// gitward's data directory: `$XDG_DATA_HOME/gitward`, else `~/.local/share/gitward`
/// (`~/Library/Application Support/gitward` on macOS).
pub fn data_dir(user: &UserDirs) -> Option<PathBuf> {
    let base = if cfg!(target_os = "macos") {
        user.home
            .as_ref()
            .map(|home| home.join("Library/Application Support"))
    } else {
        user.xdg_data_home
            .clone()
            .or_else(|| user.home.as_ref().map(|home| home.join(".local/share")))
    };
    base.map(|dir| dir.join("gitward"))
}

/// Where the pinned release is installed (an npm prefix of its own).
pub fn prefix(user: &UserDirs) -> Option<PathBuf> {
    data_dir(user).map(|dir| dir.join("openspec").join(PINNED_VERSION))
}

/// The CLI inside an install prefix.
pub fn cli_in(prefix: &Path) -> PathBuf {
    prefix.join("node_modules/.bin/openspec")
}

/// What an install did.
#[derive(Debug)]
pub enum Installed {
    /// Installed now, at this CLI path.
    Fresh(PathBuf),
    /// A working install of the pinned release was already there.
    Present(PathBuf),
}

/// Installs the pinned CLI into [`prefix`] with the first `npm` found in an absolute
/// `PATH` entry of `user`.
pub async fn install(user: &UserDirs, cancel: &CancellationToken) -> Result<Installed, String> {
    let prefix = prefix(user)
        .ok_or("gitward has no data directory: set HOME (or XDG_DATA_HOME) to an absolute path")?;
    let cli = cli_in(&prefix);
    if cli.is_file() && version(&cli, cancel).await.is_ok() {
        return Ok(Installed::Present(cli));
    }
    let npm = find_npm(&user.search_path).ok_or(
        "npm was not found in an absolute PATH directory: install Node.js 20.19 or newer \
         (it brings npm), then run `gitward setup openspec` again",
    )?;
    let parent = prefix
        .parent()
        .ok_or("the install directory has no parent")?;
    std::fs::create_dir_all(parent)
        .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(".staging-")
        .tempdir_in(parent)
        .map_err(|e| {
            format!(
                "cannot create a staging directory in {}: {e}",
                parent.display()
            )
        })?;
    let mut prefix_arg = std::ffi::OsString::from("--prefix=");
    prefix_arg.push(staging.path());
    let done = Invocation::new(Program::Npm)
        .program_path(&npm)
        .dir(staging.path())
        .timeout(NPM_TIMEOUT)
        .arg("install")
        .arg(prefix_arg)
        .args([
            "--no-audit",
            "--no-fund",
            "--no-save",
            "--no-package-lock",
            "--ignore-scripts",
            "--loglevel=error",
        ])
        .arg(format!("{PACKAGE}@{PINNED_VERSION}"))
        .capture(OUTPUT_CAP, cancel)
        .await
        .map_err(|e| format!("npm could not run: {e}"))?;
    if done.code != Some(0) {
        return Err(format!(
            "`npm install {PACKAGE}@{PINNED_VERSION}` failed (exit {}): {}",
            done.code.map_or("by signal".to_owned(), |c| c.to_string()),
            super::openspec::clip(done.stderr_text().trim(), 2000)
        ));
    }
    version(&cli_in(staging.path()), cancel).await?;
    // A broken earlier install is replaced; a working one returned above.
    if prefix.exists() {
        std::fs::remove_dir_all(&prefix)
            .map_err(|e| format!("cannot replace {}: {e}", prefix.display()))?;
    }
    let staged = staging.keep();
    std::fs::rename(&staged, &prefix).map_err(|e| {
        let _ = std::fs::remove_dir_all(&staged);
        format!("cannot move the install into {}: {e}", prefix.display())
    })?;
    Ok(Installed::Fresh(cli))
}

/// Checks that `cli --version` names the pinned release.
async fn version(cli: &Path, cancel: &CancellationToken) -> Result<(), String> {
    let done = Invocation::new(Program::OpenSpec)
        .program_path(cli)
        .timeout(VERSION_TIMEOUT)
        .env("NO_COLOR", "1")
        .env("OPENSPEC_TELEMETRY", "0")
        .arg("--version")
        .capture(OUTPUT_CAP, cancel)
        .await
        .map_err(|e| format!("the installed OpenSpec CLI could not run: {e}"))?;
    let said = String::from_utf8_lossy(&done.sink.bytes).trim().to_owned();
    if done.code == Some(0) && said == PINNED_VERSION {
        Ok(())
    } else {
        Err(format!(
            "the installed OpenSpec CLI says {said:?} (exit {:?}), not {PINNED_VERSION}: {}",
            done.code,
            super::openspec::clip(done.stderr_text().trim(), 800)
        ))
    }
}

/// The first executable `npm` in an absolute entry of `path_list`.
fn find_npm(path_list: &std::ffi::OsStr) -> Option<PathBuf> {
    std::env::split_paths(path_list)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join("npm"))
        .find(|npm| super::openspec::executable(npm))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(home: Option<&str>, xdg: Option<&str>) -> UserDirs {
        UserDirs {
            home: home.map(PathBuf::from),
            xdg_data_home: xdg.map(PathBuf::from),
            ..UserDirs::default()
        }
    }

    #[test]
    fn the_pin_matches_package_json() {
        let manifest: serde_json::Value =
            serde_json::from_str(include_str!("../../package.json")).unwrap();
        assert_eq!(manifest["dependencies"][PACKAGE], PINNED_VERSION);
    }

    #[cfg(not(target_os = "macos"))]
    #[test]
    fn the_data_directory_follows_xdg() {
        let prefix = |u: &UserDirs| prefix(u).map(|p| p.display().to_string());
        assert_eq!(
            prefix(&user(Some("/h"), None)).as_deref(),
            Some("/h/.local/share/gitward/openspec/1.13.2")
        );
        assert_eq!(
            prefix(&user(Some("/h"), Some("/x"))).as_deref(),
            Some("/x/gitward/openspec/1.13.2")
        );
        assert_eq!(prefix(&user(None, None)), None);
    }
}
