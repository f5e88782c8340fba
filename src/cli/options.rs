//! The options `serve`, `call` and `tools` share, and the configuration they make.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;

use crate::config::{Config, Toolset, vars};
use crate::model::tool_name::Style;
use crate::specs::workspace::Workspace;

#[derive(Debug, Default, Args)]
pub struct SharedOptions {
    /// Hide every tool that proposes a change.
    #[arg(long)]
    pub read_only: bool,
    /// Comma-separated: git, ops, specs [default: all].
    #[arg(long, value_name = "LIST", value_parser = parse_toolsets)]
    pub toolsets: Option<Toolsets>,
    /// Only serve repositories under DIR (repeatable; adds to FLUXGIT_MCP_ALLOWED_ROOTS).
    #[arg(long = "allowed-root", value_name = "DIR")]
    pub roots: Vec<PathBuf>,
    /// Which tool names to list: safe (every host accepts them: repo_brief) or seed
    /// (repo.brief) [default: GITWARD_TOOL_NAMES, else safe]. Calls may use either.
    #[arg(long, value_name = "STYLE", value_parser = parse_tool_names)]
    pub tool_names: Option<Style>,
    /// The spec tools' workspace descriptor, read from FILE (otherwise FYLLO_WORKSPACE_JSON).
    #[arg(long, value_name = "FILE")]
    pub workspace: Option<PathBuf>,
}

/// A parsed `--toolsets` list; the whole list is one value, so a repeated flag replaces it.
#[derive(Debug, Clone)]
pub struct Toolsets(Vec<Toolset>);

fn parse_toolsets(list: &str) -> Result<Toolsets, String> {
    list.split(',')
        .map(|s| Toolset::parse(s).ok_or_else(|| format!("unknown toolset: {s}")))
        .collect::<Result<Vec<_>, _>>()
        .map(Toolsets)
}

fn parse_tool_names(text: &str) -> Result<Style, String> {
    Style::parse(text).ok_or_else(|| format!("unknown tool names: {text} (safe or seed)"))
}

impl SharedOptions {
    pub fn config(&self) -> Result<Config, String> {
        let mut config = Config::from_env(&self.roots)?;
        config.read_only = self.read_only;
        if let Some(style) = self.tool_names {
            config.tool_names = style;
        }
        crate::model::tool_name::configure(config.tool_names);
        if let Some(Toolsets(sets)) = &self.toolsets {
            config.toolsets = sets.clone();
        }
        config.workspace = self.workspace(&config)?.map(Arc::new);
        if config.workspace.is_none() {
            config.toolsets.retain(|t| *t != Toolset::Specs);
        }
        crate::specs::openspec::configure(&config);
        crate::process::configure(config.process.clone());
        Ok(config)
    }

    /// Whether spec tools may be served at all: not while `FYLLO_DISABLE_BUNDLED_MCP` is on,
    /// nor when `--toolsets` leaves them out.
    pub fn specs_allowed(&self, config: &Config) -> bool {
        !config.specs_disabled
            && self
                .toolsets
                .as_ref()
                .is_none_or(|Toolsets(sets)| sets.contains(&Toolset::Specs))
    }

    /// The spec tools' workspace: `--workspace FILE`, else `FYLLO_WORKSPACE_JSON`, else
    /// none. Workspace context comes only from a descriptor: allowed roots bound the git
    /// tools and never make a workspace, so a user who configured only git tools never
    /// gets `openspec/` written into a repository. A descriptor that is present but
    /// invalid stops the server; the current directory is never used.
    fn workspace(&self, config: &Config) -> Result<Option<Workspace>, String> {
        if config.specs_disabled || !config.has(Toolset::Specs) {
            return Ok(None);
        }
        if let Some(file) = &self.workspace {
            let text = std::fs::read_to_string(file)
                .map_err(|e| format!("cannot read --workspace {}: {e}", file.display()))?;
            return Workspace::parse(&text)
                .map(Some)
                .map_err(|e| format!("--workspace {}: {e}", file.display()));
        }
        if let Some(json) = &config.workspace_json {
            let json = json
                .to_str()
                .ok_or_else(|| format!("{} is not UTF-8", vars::WORKSPACE_JSON))?;
            return Workspace::parse(json)
                .map(Some)
                .map_err(|e| format!("{}: {e}", vars::WORKSPACE_JSON));
        }
        Ok(None)
    }
}
