//! Settings read once at start: command-line flags and the environment variables the
//! product contract names. Nothing else reads the environment for behaviour.

use std::path::PathBuf;

/// Every environment variable gitward reads, in one place.
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
    /// `1` disables the spec tools.
    pub const DISABLE_BUNDLED_MCP: &str = "FYLLO_DISABLE_BUNDLED_MCP";
    /// Explicit OpenSpec CLI path.
    pub const OPENSPEC_CLI_PATH: &str = "FYLLO_OPENSPEC_CLI_PATH";
    /// Comma-separated filter driver names a repository may run during reads, when the
    /// program behind each resolves outside the repository and every allowed root.
    pub const TRUSTED_DRIVERS: &str = "GITWARD_TRUSTED_DRIVERS";
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
    pub workspace: Option<std::sync::Arc<crate::specs::workspace::Workspace>>,
    /// Filter drivers the user trusts to run during reads (see `git::trust`).
    pub trusted_drivers: Vec<String>,
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
        }
    }
}

impl Config {
    /// Builds the configuration from the environment plus `--allowed-root` flags.
    ///
    /// Roots that do not exist are an error: a typo must not silently widen or empty the
    /// set of reachable repositories.
    pub fn from_env(extra_roots: &[PathBuf]) -> Result<Config, String> {
        let mut roots: Vec<PathBuf> = std::env::var_os(vars::ALLOWED_ROOTS)
            .map(|list| std::env::split_paths(&list).collect())
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
            .filter_map(|name| std::env::var(name).ok())
            .find(|v| !v.trim().is_empty());
        let trusted_drivers = std::env::var(vars::TRUSTED_DRIVERS)
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(str::to_owned)
            .collect();
        Ok(Config {
            allowed_roots,
            gateway_addr,
            trusted_drivers,
            run_dir: run_dir(),
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

/// Whether an "any value" switch variable is set.
pub fn flag(name: &str) -> bool {
    std::env::var_os(name).is_some()
}

/// FluxGit's run directory: `FLUXGIT_RUN_DIR`, else the per-user default of the platform
/// under an absolute `HOME` (a relative one would move with the working directory).
pub fn run_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(vars::RUN_DIR).filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())?;
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
}
