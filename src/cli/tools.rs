//! `gitward tools [--json]`: the tools this configuration serves.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use serde_json::Value;

use super::options::SharedOptions;
use crate::config::Config;
use crate::tools;
use crate::transport;

/// List the tools, or print the tools/list payload.
#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// Print the tools/list payload as JSON instead of a table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    options: SharedOptions,
}

impl ToolsArgs {
    pub fn run(self) -> ExitCode {
        match self.options.config() {
            Ok(config) => list(&config, self.json),
            Err(why) => super::usage_error("tools", &why),
        }
    }
}

fn list(config: &Config, json: bool) -> ExitCode {
    let mut out = std::io::stdout().lock();
    if json {
        let version = transport::protocol::Version::V2026_07_28;
        let tools: Vec<Value> = tools::visible(config)
            .map(|t| transport::protocol::tool_descriptor(t, version))
            .collect();
        let _ = writeln!(out, "{}", serde_json::json!({ "tools": tools }));
    } else {
        for tool in tools::visible(config) {
            let kind = if tool.annotations.read_only {
                "read"
            } else {
                "propose"
            };
            let name = crate::model::tool_name::served(tool.name);
            let _ = writeln!(out, "{:<36} {:<8} {}", name, kind, tool.title);
        }
    }
    ExitCode::SUCCESS
}
