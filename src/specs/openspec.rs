//! Running the OpenSpec CLI: where it is, how it is started, and what its JSON means.
//!
//! Every call goes through the process door with argv only, stdin null (OpenSpec 1.13.2
//! waits for a line on a piped stdin when it wants confirmation), a deadline, capped
//! output and an environment that switches off colour, telemetry and the update check.
//! OpenSpec walks up from its working directory to the nearest `openspec/` root, so a
//! linked worktree without its own `openspec/` would silently act on the main checkout;
//! every JSON reply's `root.path` is therefore checked against the directory we meant.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use super::openspec_install;
use crate::config::{Config, vars};
use crate::process::{CancellationToken, Invocation, Program, RunError};

/// Deadline for one OpenSpec call.
pub const TIMEOUT: Duration = Duration::from_secs(60);
/// Most stdout kept from one call.
const STDOUT_CAP: usize = 8 * 1024 * 1024;

/// Variables set on every OpenSpec child: plain output, no telemetry, no network check.
const ENV: &[(&str, &str)] = &[
    ("CI", "1"),
    ("NO_COLOR", "1"),
    ("DO_NOT_TRACK", "1"),
    ("OPENSPEC_TELEMETRY", "0"),
    ("OPENSPEC_NO_UPDATE_CHECK", "1"),
];

/// Where the CLI may come from, fixed at start.
#[derive(Debug, Default)]
struct Locator {
    /// `FYLLO_OPENSPEC_CLI_PATH`.
    explicit: Option<PathBuf>,
    /// `PATH` as read at start.
    search_path: std::ffi::OsString,
    /// Where `gitward setup openspec` installs the pinned CLI, when there is a data
    /// directory.
    installed: Option<PathBuf>,
    /// Directories whose contents a project controls: every workspace folder and allowed
    /// root. An `openspec` found under one of them is the project's own program, not ours.
    projects: Vec<PathBuf>,
}

static LOCATOR: OnceLock<Locator> = OnceLock::new();

/// Records, once at start, where the CLI may be taken from and the directories it never
/// may.
pub fn configure(config: &Config) {
    let mut dirs: Vec<PathBuf> = config.allowed_roots.clone();
    if let Some(ws) = &config.workspace {
        dirs.extend(ws.folders.iter().map(|f| f.folder_path.clone()));
    }
    let projects = dirs
        .into_iter()
        .map(|d| std::fs::canonicalize(&d).unwrap_or(d))
        .collect();
    let _ = LOCATOR.set(Locator {
        explicit: config.openspec_cli.clone(),
        search_path: config.user.search_path.clone(),
        installed: openspec_install::prefix(&config.user).map(|p| openspec_install::cli_in(&p)),
        projects,
    });
}

/// Finds the CLI: `FYLLO_OPENSPEC_CLI_PATH`, then the pinned install next to the
/// executable (`<checkout>/node_modules/.bin/openspec` for `target/<profile>/gitward`),
/// then the one `gitward setup openspec` put in gitward's data directory, then `openspec`
/// in an absolute `PATH` entry outside every project directory.
///
/// Never the current directory's `node_modules/.bin` nor a relative `PATH` entry: a host
/// that starts gitward inside a project would otherwise run that project's own script.
pub fn locate() -> Result<PathBuf, String> {
    let locator = LOCATOR.get_or_init(Locator::default);
    if let Some(path) = &locator.explicit {
        return if path.is_file() {
            Ok(path.clone())
        } else {
            Err(format!(
                "{} names {}, which is not a file",
                vars::OPENSPEC_CLI_PATH,
                path.display()
            ))
        };
    }
    let local = Path::new("node_modules/.bin/openspec");
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
        && let Some(found) = [dir.join(local), dir.join("../..").join(local)]
            .into_iter()
            .find(|c| c.is_file())
    {
        return Ok(found);
    }
    if let Some(installed) = locator.installed.as_ref().filter(|cli| cli.is_file()) {
        return Ok(installed.clone());
    }
    on_trusted_path(&locator.search_path, &locator.projects).ok_or_else(|| {
        format!(
            "the OpenSpec CLI was not found; run `{}` to install OpenSpec {} (needs npm, \
                 from Node.js 20.19 or newer){}. Or set {} to an `openspec` executable, or put \
                 one in an absolute PATH directory outside the workspace folders and allowed \
                 roots",
            openspec_install::SETUP_COMMAND,
            openspec_install::PINNED_VERSION,
            locator
                .installed
                .as_ref()
                .map(|cli| format!(" as {}", cli.display()))
                .unwrap_or_default(),
            vars::OPENSPEC_CLI_PATH
        )
    })
}

/// The first executable `openspec` in an absolute entry of `path_list` that, with
/// symlinks resolved (the entry and the program both), lies outside every `projects` dir.
fn on_trusted_path(path_list: &std::ffi::OsStr, projects: &[PathBuf]) -> Option<PathBuf> {
    let inside = |p: &Path| projects.iter().any(|d| p.starts_with(d));
    std::env::split_paths(path_list)
        .filter(|dir| dir.is_absolute())
        .filter_map(|dir| std::fs::canonicalize(dir).ok())
        .filter(|dir| !inside(dir))
        .map(|dir| dir.join("openspec"))
        .find(|cli| {
            std::fs::canonicalize(cli).is_ok_and(|real| !inside(&real) && executable(&real))
        })
}

pub(super) fn executable(file: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(file).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// What one call produced.
#[derive(Debug, Clone)]
pub struct Output {
    pub args: Vec<String>,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Why a call gave no usable answer.
#[derive(Debug, Clone)]
pub struct CliError {
    /// `OPENSPEC_NOT_FOUND`, `OPENSPEC_RUN_FAILED`, `OPENSPEC_ROOT_MISMATCH`,
    /// `OPENSPEC_OUTPUT_INVALID`, or OpenSpec's own snake_case code.
    pub code: String,
    pub message: String,
    pub output: Option<Box<Output>>,
}

impl CliError {
    fn new(code: &str, message: impl Into<String>, output: Option<Output>) -> Self {
        CliError {
            code: code.into(),
            message: message.into(),
            output: output.map(Box::new),
        }
    }

    /// Details for a state error entry.
    pub fn details(&self) -> Value {
        match &self.output {
            Some(o) => serde_json::json!({
                "command": std::iter::once("openspec".to_owned()).chain(o.args.iter().cloned()).collect::<Vec<_>>(),
                "exitCode": o.code,
                "stderr": clip(&o.stderr, 800),
            }),
            None => Value::Null,
        }
    }
}

/// Keeps the first `max` bytes of a message.
pub fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// Runs `openspec <args>` in `cwd`.
async fn run(cwd: &Path, args: &[&str], cancel: &CancellationToken) -> Result<Output, CliError> {
    let cli = locate().map_err(|why| CliError::new("OPENSPEC_NOT_FOUND", why, None))?;
    let mut inv = Invocation::new(Program::OpenSpec)
        .program_path(cli)
        .dir(cwd)
        .timeout(TIMEOUT)
        .args(args.iter().copied());
    for (k, v) in ENV {
        inv = inv.env(*k, *v);
    }
    let shown: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let done = inv.capture(STDOUT_CAP, cancel).await.map_err(|e| {
        let why = match &e {
            RunError::Timeout { .. } => format!("{e}; treated as a failure"),
            _ => e.to_string(),
        };
        CliError::new("OPENSPEC_RUN_FAILED", why, None)
    })?;
    Ok(Output {
        args: shown,
        code: done.code,
        stdout: String::from_utf8_lossy(&done.sink.bytes).into_owned(),
        stderr: done.stderr_text(),
    })
}

/// Runs a `--json` command in `cwd` and returns its payload, checked to be about `cwd`.
async fn json(cwd: &Path, args: &[&str], cancel: &CancellationToken) -> Result<Value, CliError> {
    let out = run(cwd, args, cancel).await?;
    payload(cwd, out)
}

/// `openspec status --change <change> --json`: the change's artifacts and their state.
pub async fn status(
    cwd: &Path,
    change: &str,
    cancel: &CancellationToken,
) -> Result<Value, CliError> {
    json(cwd, &["status", "--change", change, "--json"], cancel).await
}

/// `openspec instructions <artifact> --change <change> --json`.
pub async fn instructions(
    cwd: &Path,
    artifact: &str,
    change: &str,
    cancel: &CancellationToken,
) -> Result<Value, CliError> {
    json(
        cwd,
        &["instructions", artifact, "--change", change, "--json"],
        cancel,
    )
    .await
}

/// `openspec new change <change> --json`.
pub async fn new_change(
    cwd: &Path,
    change: &str,
    cancel: &CancellationToken,
) -> Result<Value, CliError> {
    json(cwd, &["new", "change", change, "--json"], cancel).await
}

/// `openspec archive <change> --yes --json`; the raw output, for the caller to confirm
/// with [`payload`] (the archive path is taken from the reply, never predicted).
pub async fn archive(
    cwd: &Path,
    change: &str,
    cancel: &CancellationToken,
) -> Result<Output, CliError> {
    run(cwd, &["archive", change, "--yes", "--json"], cancel).await
}

/// Interprets a `--json` reply: the payload on exit 0, OpenSpec's error envelope otherwise.
pub fn payload(cwd: &Path, out: Output) -> Result<Value, CliError> {
    let parsed: Option<Value> = serde_json::from_str(out.stdout.trim()).ok();
    if out.code != Some(0) {
        let first = parsed
            .as_ref()
            .and_then(|v| v.get("status"))
            .and_then(|s| s.as_array())
            .and_then(|s| s.iter().find(|e| e["severity"] == "error").or(s.first()))
            .cloned();
        return Err(match first {
            Some(e) => CliError::new(
                e["code"].as_str().unwrap_or("openspec_error"),
                e["message"]
                    .as_str()
                    .unwrap_or("OpenSpec reported an error")
                    .to_owned(),
                Some(out),
            ),
            None => {
                let msg = if out.stderr.is_empty() {
                    clip(&out.stdout, 400)
                } else {
                    clip(&out.stderr, 400)
                };
                CliError::new(
                    "OPENSPEC_RUN_FAILED",
                    format!("openspec exited with {:?}: {msg}", out.code),
                    Some(out),
                )
            }
        });
    }
    let Some(value) = parsed else {
        return Err(CliError::new(
            "OPENSPEC_OUTPUT_INVALID",
            "openspec printed no JSON object",
            Some(out),
        ));
    };
    check_root(cwd, &value)
        .map_err(|why| CliError::new("OPENSPEC_ROOT_MISMATCH", why, Some(out)))?;
    Ok(value)
}

/// Requires `root.path` to be `cwd` itself, after resolving symlinks on both sides.
pub fn check_root(cwd: &Path, value: &Value) -> Result<(), String> {
    let Some(root) = value
        .get("root")
        .and_then(|r| r.get("path"))
        .and_then(Value::as_str)
    else {
        return Err("the reply names no OpenSpec root".into());
    };
    let want = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_owned());
    let got = std::fs::canonicalize(root).unwrap_or_else(|_| PathBuf::from(root));
    if want == got {
        Ok(())
    } else {
        Err(format!(
            "OpenSpec acted on the root {} instead of {}",
            got.display(),
            want.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(code: i32, stdout: &str) -> Output {
        Output {
            args: vec!["list".into(), "--json".into()],
            code: Some(code),
            stdout: stdout.into(),
            stderr: String::new(),
        }
    }

    #[test]
    fn replies_must_name_the_intended_root() {
        let dir = tempfile::tempdir().unwrap();
        let here = dir.path().display().to_string();
        let ok = format!(r#"{{"changes":[],"root":{{"path":"{here}","source":"nearest"}}}}"#);
        assert!(payload(dir.path(), output(0, &ok)).is_ok());
        let elsewhere = r#"{"changes":[],"root":{"path":"/","source":"nearest"}}"#;
        assert_eq!(
            payload(dir.path(), output(0, elsewhere)).unwrap_err().code,
            "OPENSPEC_ROOT_MISMATCH"
        );
        assert_eq!(
            payload(dir.path(), output(0, r#"{"changes":[]}"#))
                .unwrap_err()
                .code,
            "OPENSPEC_ROOT_MISMATCH"
        );
        assert_eq!(
            payload(dir.path(), output(0, "Created change"))
                .unwrap_err()
                .code,
            "OPENSPEC_OUTPUT_INVALID"
        );
    }

    #[test]
    fn error_envelopes_keep_openspec_codes() {
        // Captured from `openspec archive foo --yes --json` after foo was archived.
        let envelope = r#"{"archive":null,"root":{"path":"/tmp/osp/r","source":"nearest"},"status":[{"severity":"error","code":"archive_change_not_found","message":"Change 'foo' not found. No active changes exist in this root."}]}"#;
        let err = payload(Path::new("/tmp"), output(1, envelope)).unwrap_err();
        assert_eq!(err.code, "archive_change_not_found");
        assert!(err.message.starts_with("Change 'foo' not found"));
        let err = payload(Path::new("/tmp"), output(1, "")).unwrap_err();
        assert_eq!(err.code, "OPENSPEC_RUN_FAILED");
    }
}
