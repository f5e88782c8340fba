//! `gitward capability add|list|revoke`: the workspace capabilities `serve --http` honours.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::json;

use crate::config::Config;
use crate::transport::http::{self, capability};

/// Mint, list or revoke the workspace capabilities of `serve --http`.
#[derive(Debug, Args)]
pub struct CapabilityArgs {
    #[command(subcommand)]
    verb: Verb,
}

#[derive(Debug, Subcommand)]
enum Verb {
    /// Freeze a copy of a workspace descriptor (the FYLLO_WORKSPACE_JSON document) behind a
    /// new capability and print the URL to give the agent.
    Add {
        /// The workspace descriptor.
        #[arg(long, value_name = "FILE")]
        workspace: PathBuf,
        /// The address `serve --http` listens on, for the printed URL.
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8765")]
        http: String,
    },
    /// List the capabilities: id, workspace id, creation time (never the secret).
    List,
    /// Revoke a capability by id; its URL stops working at once.
    Revoke { id: String },
}

impl CapabilityArgs {
    pub fn run(self) -> ExitCode {
        let Some(run_dir) = Config::from_env(&[]).ok().and_then(|c| c.run_dir) else {
            return super::usage_error(
                "capability",
                "no run directory (set FLUXGIT_RUN_DIR or an absolute HOME)",
            );
        };
        let file = capability::file(&run_dir);
        let mut out = std::io::stdout().lock();
        let result = match self.verb {
            Verb::Add { workspace, http } => {
                let addr = match crate::gateway::server::run::parse_listen(&http) {
                    Ok(addr) if addr.port() != 0 => addr,
                    Ok(_) => return super::usage_error("capability", "--http needs a port"),
                    Err(why) => return super::usage_error("capability", &why),
                };
                std::fs::read_to_string(&workspace)
                    .map_err(|e| format!("cannot read {}: {e}", workspace.display()))
                    .and_then(|text| capability::add(&file, &text))
                    .map(|(cap, token)| {
                        let line = json!({ "id": cap.id, "url": http::url(addr, Some(&token)) });
                        let _ = writeln!(out, "{line}");
                    })
            }
            Verb::List => capability::load(&file).map(|all| {
                for cap in all {
                    let workspace = serde_json::from_str::<serde_json::Value>(&cap.workspace)
                        .ok()
                        .and_then(|w| w["workspaceId"].as_str().map(str::to_owned))
                        .unwrap_or_default();
                    let _ = writeln!(out, "{}  {}  {}", cap.id, workspace, cap.created);
                }
            }),
            Verb::Revoke { id } => match capability::revoke(&file, &id) {
                Ok(true) => Ok(()),
                Ok(false) => Err(format!("no capability {id}")),
                Err(e) => Err(e),
            },
        };
        let _ = out.flush();
        match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(why) => {
                eprintln!("gitward capability: {why}");
                ExitCode::FAILURE
            }
        }
    }
}
