//! Settings read once at start: command-line flags and the environment variables the
//! product contract names. Nothing else reads the environment for behaviour.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use crate::model::tool_name::Style;

/// Every environment variable gitward reads, in one place. [`Env::read`] reads each of
/// [`vars::ALL`] once at start and nothing else reads the environment; the only other
/// look at it is `process::env`, which copies it (scrubbed) for the children it starts.
pub mod vars {
    /// OS path list of directories repositories must live under.
    pub const ALLOWED_ROOTS: &str = "FLUXGIT_MCP_ALLOWED_ROOTS";
    /// Canonical approval-gateway address (`127.0.0.1:PORT`).
    pub const HANDSHAKE_ADDR: &str = "FLUXGIT_MCP_HANDSHAKE_ADDR";
    /// Compatibility fallbacks for the gateway address, in this order.
    pub const GATEWAY_ADDR: &str = "FLUXGIT_GATEWAY_ADDR";
    pub const GATEWAY_URL: &str = "FLUXGIT_GATEWAY_URL";
    /// Audit ledger path override.
    pub const AUDIT_LOG: &str = "FLUXGIT_MCP_AUDIT_LOG";
    /// Any value turns the audit ledger off.
    pub const AUDIT_DISABLED: &str = "FLUXGIT_MCP_AUDIT_DISABLED";
    /// PEM PKCS#8 Ed25519 private key that signs audit entries.
    pub const AUDIT_SIGN_KEY: &str = "FLUXGIT_MCP_AUDIT_SIGN_KEY";
    /// Any value turns the presence file off.
    pub const PRESENCE_DISABLED: &str = "FLUXGIT_MCP_PRESENCE_DISABLED";
    /// Any value turns other-agent detection off.
    pub const AGENT_DETECTION_DISABLED: &str = "FLUXGIT_MCP_AGENT_DETECTION_DISABLED";
    /// Gateway agent policy file.
    pub const AGENT_POLICY: &str = "FLUXGIT_MCP_AGENT_POLICY";
    /// Run directory (audit, presence, registered repositories).
    pub const RUN_DIR: &str = "FLUXGIT_RUN_DIR";
    /// Frozen workspace descriptor for the spec tools.
    pub const WORKSPACE_JSON: &str = "FYLLO_WORKSPACE_JSON";
    /// A true value (`1`, `true`, `yes`, `on`, any case) disables the spec tools.
    pub const DISABLE_BUNDLED_MCP: &str = "FYLLO_DISABLE_BUNDLED_MCP";
    /// Explicit OpenSpec CLI path.
    pub const OPENSPEC_CLI_PATH: &str = "FYLLO_OPENSPEC_CLI_PATH";
    /// Comma-separated filter driver names a repository may run during reads, when the
    /// program behind each resolves outside the repository and every allowed root.
    pub const TRUSTED_DRIVERS: &str = "GITWARD_TRUSTED_DRIVERS";
    /// `safe` (the default) or `seed`: which names `tools/list` shows.
    pub const TOOL_NAMES: &str = "GITWARD_TOOL_NAMES";
    /// An explicit git binary (tests pin one; packagers may too).
    pub const GIT: &str = "GITWARD_GIT";
    /// How many child processes run at once (a positive integer).
    pub const MAX_CHILDREN: &str = "GITWARD_MAX_CHILDREN";
    /// Test knob, not product contract: rotate the audit segment at this many bytes.
    pub const AUDIT_ROTATE_BYTES: &str = "GITWARD_AUDIT_ROTATE_BYTES";
    /// Test knob, not product contract: the audit refusal-folding window in milliseconds
    /// (`0` records every refusal).
    pub const AUDIT_REFUSAL_WINDOW_MS: &str = "GITWARD_AUDIT_REFUSAL_WINDOW_MS";
    /// Reads of one tool written as entries of their own per read window (default 60);
    /// the rest are counted into one `read_calls` entry.
    pub const AUDIT_READ_BUDGET: &str = "GITWARD_AUDIT_READ_BUDGET";
    /// The read budget's window in milliseconds (default 60000).
    pub const AUDIT_READ_WINDOW_MS: &str = "GITWARD_AUDIT_READ_WINDOW_MS";
    /// Development builds only: the tool named here panics when called.
    pub const DEBUG_PANIC_TOOL: &str = "GITWARD_DEBUG_PANIC_TOOL";
    /// Development builds only: the process aborts at this named execution point.
    pub const DEBUG_CRASH_AT: &str = "GITWARD_DEBUG_CRASH_AT";
    /// Development builds only: the gateway's event follower holds each round this many
    /// milliseconds between reading transitions and publishing them.
    pub const DEBUG_FOLLOW_DELAY_MS: &str = "GITWARD_DEBUG_FOLLOW_DELAY_MS";
    /// Development builds only: while the file named here exists, a card's preview waits
    /// before it starts.
    pub const DEBUG_PREVIEW_HOLD: &str = "GITWARD_DEBUG_PREVIEW_HOLD";
    /// The user's home: the default run directory, `~` in git include paths, and where
    /// agents keep their session stores.
    pub const HOME: &str = "HOME";
    /// Where a trusted filter driver's program and the OpenSpec CLI are looked up.
    pub const PATH: &str = "PATH";
    /// The browser `gitward gateway --open` hands the login link to (else `xdg-open`).
    pub const BROWSER: &str = "BROWSER";
    /// The user's data directory (workspace data, agents' stores).
    pub const XDG_DATA_HOME: &str = "XDG_DATA_HOME";
    /// The user's configuration directory (git's default global excludes and attributes).
    pub const XDG_CONFIG_HOME: &str = "XDG_CONFIG_HOME";
    /// Agents' own overrides of where they keep their session stores.
    pub const CLAUDE_CONFIG_DIR: &str = "CLAUDE_CONFIG_DIR";
    pub const CODEX_HOME: &str = "CODEX_HOME";
    pub const CODEX_SQLITE_HOME: &str = "CODEX_SQLITE_HOME";
    pub const COPILOT_HOME: &str = "COPILOT_HOME";
    pub const OPENCODE_DB: &str = "OPENCODE_DB";
    pub const CONTINUE_GLOBAL_DIR: &str = "CONTINUE_GLOBAL_DIR";

    /// Every variable above.
    pub const ALL: &[&str] = &[
        ALLOWED_ROOTS,
        HANDSHAKE_ADDR,
        GATEWAY_ADDR,
        GATEWAY_URL,
        AUDIT_LOG,
        AUDIT_DISABLED,
        AUDIT_SIGN_KEY,
        PRESENCE_DISABLED,
        AGENT_DETECTION_DISABLED,
        AGENT_POLICY,
        RUN_DIR,
        WORKSPACE_JSON,
        DISABLE_BUNDLED_MCP,
        OPENSPEC_CLI_PATH,
        TRUSTED_DRIVERS,
        TOOL_NAMES,
        GIT,
        MAX_CHILDREN,
        AUDIT_ROTATE_BYTES,
        AUDIT_REFUSAL_WINDOW_MS,
        AUDIT_READ_BUDGET,
        AUDIT_READ_WINDOW_MS,
        DEBUG_PANIC_TOOL,
        DEBUG_CRASH_AT,
        DEBUG_FOLLOW_DELAY_MS,
        DEBUG_PREVIEW_HOLD,
        HOME,
        PATH,
        BROWSER,
        XDG_DATA_HOME,
        XDG_CONFIG_HOME,
        CLAUDE_CONFIG_DIR,
        CODEX_HOME,
        CODEX_SQLITE_HOME,
        COPILOT_HOME,
        OPENCODE_DB,
        CONTINUE_GLOBAL_DIR,
    ];
}

/// The values of [`vars::ALL`], read once.
#[derive(Debug, Clone, Default)]
pub struct Env(BTreeMap<&'static str, OsString>);

impl Env {
    /// Reads every variable of [`vars::ALL`] from the process environment.
    pub fn read() -> Env {
        Env(vars::ALL
            .iter()
            .filter_map(|name| std::env::var_os(name).map(|v| (*name, v)))
            .collect())
    }

    /// An environment holding exactly these values (tests).
    pub fn of(pairs: &[(&'static str, &str)]) -> Env {
        Env(pairs.iter().map(|(k, v)| (*k, OsString::from(v))).collect())
    }

    pub fn os(&self, name: &str) -> Option<&OsStr> {
        self.0.get(name).map(OsString::as_os_str)
    }

    /// A non-empty value.
    fn non_empty(&self, name: &str) -> Option<&OsStr> {
        self.os(name).filter(|v| !v.is_empty())
    }

    /// Set at all, to any value: the "any value" switches.
    pub fn is_set(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    fn text(&self, name: &str) -> Option<String> {
        self.os(name).and_then(|v| v.to_str()).map(str::to_owned)
    }

    fn path(&self, name: &str) -> Option<PathBuf> {
        self.non_empty(name).map(PathBuf::from)
    }

    /// An absolute directory; a relative one would move with the working directory.
    fn abs_dir(&self, name: &str) -> Option<PathBuf> {
        self.os(name).map(PathBuf::from).filter(|p| p.is_absolute())
    }

    fn positive<T: std::str::FromStr + PartialOrd + Default>(&self, name: &str) -> Option<T> {
        self.text(name)?
            .parse::<T>()
            .ok()
            .filter(|n| *n > T::default())
    }
}

/// The usual spellings of an on switch: `1`, `true`, `yes`, `on`, in any case.
fn truthy(value: &str) -> bool {
    ["1", "true", "yes", "on"]
        .iter()
        .any(|t| value.trim().eq_ignore_ascii_case(t))
}

/// Where the user's own programs keep things, from the environment.
#[derive(Debug, Clone, Default)]
pub struct UserDirs {
    /// `HOME`, when absolute.
    pub home: Option<PathBuf>,
    /// `PATH` as given.
    pub search_path: OsString,
    /// `XDG_DATA_HOME`, when absolute.
    pub xdg_data_home: Option<PathBuf>,
    /// `XDG_CONFIG_HOME`, when absolute.
    pub xdg_config_home: Option<PathBuf>,
    /// Agents' store overrides, each when absolute.
    pub claude_config_dir: Option<PathBuf>,
    pub codex_home: Option<PathBuf>,
    pub codex_sqlite_home: Option<PathBuf>,
    pub copilot_home: Option<PathBuf>,
    pub opencode_db: Option<PathBuf>,
    pub continue_global_dir: Option<PathBuf>,
}

impl UserDirs {
    fn from_env(env: &Env) -> UserDirs {
        UserDirs {
            home: env.abs_dir(vars::HOME),
            search_path: env.os(vars::PATH).map(OsStr::to_owned).unwrap_or_default(),
            xdg_data_home: env.abs_dir(vars::XDG_DATA_HOME),
            xdg_config_home: env.abs_dir(vars::XDG_CONFIG_HOME),
            claude_config_dir: env.abs_dir(vars::CLAUDE_CONFIG_DIR),
            codex_home: env.abs_dir(vars::CODEX_HOME),
            codex_sqlite_home: env.abs_dir(vars::CODEX_SQLITE_HOME),
            copilot_home: env.abs_dir(vars::COPILOT_HOME),
            opencode_db: env.abs_dir(vars::OPENCODE_DB),
            continue_global_dir: env.abs_dir(vars::CONTINUE_GLOBAL_DIR),
        }
    }
}

/// The audit ledger's settings from the environment.
#[derive(Debug, Clone, Default)]
pub struct AuditEnv {
    pub disabled: bool,
    pub log: Option<PathBuf>,
    /// Set (even if empty): the server must sign or refuse to start.
    pub sign_key: Option<PathBuf>,
    pub rotate_bytes: Option<u64>,
    pub refusal_window_ms: Option<u64>,
    pub read_budget: Option<u64>,
    pub read_window_ms: Option<u64>,
}

/// Groups of tools that can be switched on at start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Toolset {
    /// Read-only git tools.
    Git,
    /// Human-gated operation proposals and their status.
    Ops,
    /// Spec-driven change tools.
    Specs,
}

impl Toolset {
    pub const ALL: [Toolset; 3] = [Toolset::Git, Toolset::Ops, Toolset::Specs];

    pub fn parse(name: &str) -> Option<Toolset> {
        match name.trim() {
            "git" => Some(Toolset::Git),
            "ops" => Some(Toolset::Ops),
            "specs" => Some(Toolset::Specs),
            _ => None,
        }
    }
}

/// The server's settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// Canonical directories a repository must be inside; empty means any absolute path.
    pub allowed_roots: Vec<PathBuf>,
    /// Hide every tool that proposes a change.
    pub read_only: bool,
    pub toolsets: Vec<Toolset>,
    /// The gateway address as configured (first set of the three variables), unchecked.
    pub gateway_addr: Option<String>,
    /// The run directory, as [`run_dir`] works it out.
    pub run_dir: Option<PathBuf>,
    /// The frozen workspace of the spec tools; `None` hides them.
    pub workspace: Option<std::sync::Arc<crate::model::workspace::Workspace>>,
    /// Filter drivers the user trusts to run during reads (see `git::trust`).
    pub trusted_drivers: Vec<String>,
    /// The workspace descriptor from the environment, unparsed.
    pub workspace_json: Option<OsString>,
    /// `FYLLO_DISABLE_BUNDLED_MCP` set to a true value: no spec tools.
    pub specs_disabled: bool,
    /// An explicit OpenSpec CLI.
    pub openspec_cli: Option<PathBuf>,
    pub presence_disabled: bool,
    pub agent_detection_disabled: bool,
    /// Which names `tools/list` shows (a call may use either).
    pub tool_names: crate::model::tool_name::Style,
    /// The gateway's agent policy file; `None` allows every agent everything.
    pub agent_policy: Option<PathBuf>,
    pub audit: AuditEnv,
    /// The process door's settings (git binary, concurrent children).
    pub process: crate::process::Settings,
    pub user: UserDirs,
    /// Development builds: the tool that panics when called.
    pub debug_panic_tool: Option<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            allowed_roots: Vec::new(),
            read_only: false,
            toolsets: Toolset::ALL.to_vec(),
            gateway_addr: None,
            run_dir: None,
            workspace: None,
            trusted_drivers: Vec::new(),
            workspace_json: None,
            specs_disabled: false,
            openspec_cli: None,
            presence_disabled: false,
            agent_detection_disabled: false,
            agent_policy: None,
            tool_names: Style::default(),
            audit: AuditEnv::default(),
            process: crate::process::Settings::default(),
            user: UserDirs::default(),
            debug_panic_tool: None,
        }
    }
}

impl Config {
    /// Builds the configuration from the process environment plus `--allowed-root` flags.
    pub fn from_env(extra_roots: &[PathBuf]) -> Result<Config, String> {
        Config::from(&Env::read(), extra_roots)
    }

    /// Builds the configuration from `env` plus `--allowed-root` flags.
    ///
    /// Roots that do not exist are an error: a typo must not silently widen or empty the
    /// set of reachable repositories.
    pub fn from(env: &Env, extra_roots: &[PathBuf]) -> Result<Config, String> {
        let mut roots: Vec<PathBuf> = env
            .os(vars::ALLOWED_ROOTS)
            .map(|list| std::env::split_paths(list).collect())
            .unwrap_or_default();
        roots.extend(extra_roots.iter().cloned());
        let mut allowed_roots = Vec::new();
        for root in roots.into_iter().filter(|r| !r.as_os_str().is_empty()) {
            if !root.is_absolute() {
                return Err(format!(
                    "allowed root {} must be an absolute path",
                    root.display()
                ));
            }
            let canonical = std::fs::canonicalize(&root)
                .map_err(|e| format!("allowed root {} cannot be resolved: {e}", root.display()))?;
            allowed_roots.push(canonical);
        }
        let gateway_addr = [vars::HANDSHAKE_ADDR, vars::GATEWAY_ADDR, vars::GATEWAY_URL]
            .iter()
            .filter_map(|name| env.text(name))
            .find(|v| !v.trim().is_empty());
        let trusted_drivers = env
            .text(vars::TRUSTED_DRIVERS)
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(str::to_owned)
            .collect();
        let tool_names = match env.text(vars::TOOL_NAMES) {
            None => Style::default(),
            Some(text) => Style::parse(&text).ok_or_else(|| {
                format!("{} must be safe or seed, not {text:?}", vars::TOOL_NAMES)
            })?,
        };
        Ok(Config {
            allowed_roots,
            tool_names,
            gateway_addr,
            trusted_drivers,
            run_dir: run_dir(env),
            workspace_json: env.os(vars::WORKSPACE_JSON).map(OsStr::to_owned),
            specs_disabled: env
                .text(vars::DISABLE_BUNDLED_MCP)
                .is_some_and(|v| truthy(&v)),
            openspec_cli: env.path(vars::OPENSPEC_CLI_PATH),
            presence_disabled: env.is_set(vars::PRESENCE_DISABLED),
            agent_detection_disabled: env.is_set(vars::AGENT_DETECTION_DISABLED),
            agent_policy: env.path(vars::AGENT_POLICY),
            audit: AuditEnv {
                disabled: env.is_set(vars::AUDIT_DISABLED),
                log: env.path(vars::AUDIT_LOG),
                sign_key: env.os(vars::AUDIT_SIGN_KEY).map(PathBuf::from),
                rotate_bytes: env.positive(vars::AUDIT_ROTATE_BYTES),
                refusal_window_ms: env
                    .text(vars::AUDIT_REFUSAL_WINDOW_MS)
                    .and_then(|v| v.parse().ok()),
                read_budget: env.positive(vars::AUDIT_READ_BUDGET),
                read_window_ms: env.positive(vars::AUDIT_READ_WINDOW_MS),
            },
            process: crate::process::Settings {
                git: env.path(vars::GIT),
                max_children: env.positive(vars::MAX_CHILDREN),
                search_path: env.os(vars::PATH).map(OsStr::to_owned),
            },
            user: UserDirs::from_env(env),
            debug_panic_tool: env.text(vars::DEBUG_PANIC_TOOL),
            ..Config::default()
        })
    }

    pub fn has(&self, toolset: Toolset) -> bool {
        self.toolsets.contains(&toolset)
    }

    /// True when `canonical` lies inside an allowed root (component-wise), or no roots are set.
    pub fn allows(&self, canonical: &std::path::Path) -> bool {
        self.allowed_roots.is_empty() || self.allowed_roots.iter().any(|r| canonical.starts_with(r))
    }
}

/// Development-build knobs for tests, read once per process at first use: the points
/// they act at (a crash deep inside an execution, the gateway's event follower) have no
/// configuration at hand. Release builds never consult them.
#[derive(Debug, Clone, Default)]
pub struct DebugKnobs {
    /// The execution point to abort at.
    pub crash_at: Option<OsString>,
    /// The event follower's pause per round, in milliseconds.
    pub follow_delay_ms: Option<u64>,
    /// The file whose existence holds every card preview back.
    pub preview_hold: Option<PathBuf>,
}

impl DebugKnobs {
    fn from_env(env: &Env) -> DebugKnobs {
        DebugKnobs {
            crash_at: env.os(vars::DEBUG_CRASH_AT).map(OsStr::to_owned),
            follow_delay_ms: env
                .text(vars::DEBUG_FOLLOW_DELAY_MS)
                .and_then(|v| v.parse().ok()),
            preview_hold: env.os(vars::DEBUG_PREVIEW_HOLD).map(PathBuf::from),
        }
    }
}

/// The [`DebugKnobs`] of this process.
pub fn debug_knobs() -> &'static DebugKnobs {
    static KNOBS: std::sync::OnceLock<DebugKnobs> = std::sync::OnceLock::new();
    KNOBS.get_or_init(|| DebugKnobs::from_env(&Env::read()))
}

/// FluxGit's run directory: `FLUXGIT_RUN_DIR`, else the per-user default of the platform
/// under an absolute `HOME` (a relative one would move with the working directory).
pub fn run_dir(env: &Env) -> Option<PathBuf> {
    if let Some(dir) = env.path(vars::RUN_DIR) {
        return Some(dir);
    }
    let home = env.abs_dir(vars::HOME)?;
    Some(if cfg!(target_os = "macos") {
        home.join("Library/Application Support/FluxGit/run")
    } else {
        home.join(".local/share/FluxGit/run")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containment_is_component_wise() {
        let config = Config {
            allowed_roots: vec![PathBuf::from("/a/b")],
            ..Config::default()
        };
        assert!(config.allows(std::path::Path::new("/a/b")));
        assert!(config.allows(std::path::Path::new("/a/b/c")));
        assert!(!config.allows(std::path::Path::new("/a/bc")));
        assert!(!config.allows(std::path::Path::new("/a")));
    }

    #[test]
    fn the_spec_kill_switch_takes_the_usual_true_values() {
        let disabled = |v: &str| {
            Config::from(&Env::of(&[(vars::DISABLE_BUNDLED_MCP, v)]), &[])
                .expect("config")
                .specs_disabled
        };
        for on in ["1", "true", "TRUE", "yes", "Yes", "on", "ON", " on "] {
            assert!(disabled(on), "{on:?}");
        }
        for off in ["", "0", "false", "no", "off", "2", "enabled"] {
            assert!(!disabled(off), "{off:?}");
        }
        assert!(
            !Config::from(&Env::of(&[]), &[])
                .expect("config")
                .specs_disabled
        );
    }

    #[test]
    fn every_variable_comes_from_the_one_reading() {
        let env = Env::of(&[
            (vars::RUN_DIR, ""),
            (vars::HOME, "/home/u"),
            (vars::GATEWAY_ADDR, " "),
            (vars::GATEWAY_URL, "http://127.0.0.1:1"),
            (vars::AUDIT_DISABLED, ""),
            (vars::AUDIT_SIGN_KEY, ""),
            (vars::AUDIT_ROTATE_BYTES, "0"),
            (vars::AUDIT_REFUSAL_WINDOW_MS, "0"),
            (vars::MAX_CHILDREN, "3"),
            (vars::DISABLE_BUNDLED_MCP, "Yes"),
            (vars::CODEX_HOME, "relative/dir"),
            (vars::TRUSTED_DRIVERS, " lfs, ,upper"),
            (vars::AGENT_POLICY, ""),
            (vars::DEBUG_FOLLOW_DELAY_MS, "25"),
        ]);
        let config = Config::from(&env, &[]).expect("config");
        assert_eq!(
            config.run_dir.as_deref(),
            Some(std::path::Path::new("/home/u/.local/share/FluxGit/run"))
        );
        assert_eq!(config.gateway_addr.as_deref(), Some("http://127.0.0.1:1"));
        assert!(config.audit.disabled);
        assert_eq!(config.audit.sign_key, Some(PathBuf::new()));
        assert_eq!(config.audit.rotate_bytes, None);
        assert_eq!(config.audit.refusal_window_ms, Some(0));
        assert_eq!(config.process.max_children, Some(3));
        assert!(config.specs_disabled);
        assert_eq!(config.user.codex_home, None);
        assert_eq!(config.trusted_drivers, ["lfs", "upper"]);
        assert!(!config.presence_disabled);
        assert_eq!(config.agent_policy, None);
        let knobs = DebugKnobs::from_env(&env);
        assert_eq!((knobs.crash_at, knobs.follow_delay_ms), (None, Some(25)));
    }

    #[test]
    fn the_list_names_each_variable_once() {
        let mut names = vars::ALL.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), vars::ALL.len());
    }
}
