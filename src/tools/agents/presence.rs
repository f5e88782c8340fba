//! `agents.presence`: which other coding agents are working in a repository.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Toolset;
use crate::error::{ToolError, code};
use crate::git::repo;
use crate::presence::detect::{self, Agent, ScanStats, Scope, Unavailable};
use crate::tools::input::Bounded;
use crate::tools::{Annotations, CallCtx, Local, Tool};

const NOTE: &str = "Local, best-effort detection (processes, the agents' own session stores, files in the repository, FluxGit MCP presence records); informational only. Agent and client names are what each tool declares about itself, not authenticated identities. working = activity within 120 s; open = a live process in the repository, idle; recent = no live process, store touched within 6 h.";

/// `agents.presence`.
pub struct Presence;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PresenceInput {
    /// Absolute path of the repository (any directory inside a working tree works).
    pub repo_path: String,
    /// FluxGit workspace id; accepted for compatibility and not needed locally.
    #[serde(default)]
    pub repo_id: Option<String>,
    /// Keep findings probably of your own session (marked `likelyCaller`)
    #[serde(default = "yes")]
    pub include_likely_caller: bool,
    /// Keep agents whose only sign is store activity within the last 6 hours.
    #[serde(default = "yes")]
    pub include_recent: bool,
    /// Most agents to return
    #[serde(default)]
    pub max_agents: Bounded<1, 50, 20>,
    /// Time budget in ms; unfinished sources are listed in `sourcesUnavailable`.
    #[serde(default)]
    pub budget_ms: Bounded<50, 2000, 300>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PresenceData {
    pub agents: Vec<Agent>,
    /// True number of agents found (after the filters), kept or not.
    pub agent_count: u64,
    pub agents_truncated: bool,
    /// Findings that were probably the caller's own session and were left out.
    pub omitted_likely_caller: u64,
    /// Every source looked at: `process`, `mcpPresence`, one per agent store, `repoFiles`,
    /// `editor`.
    pub sources_checked: Vec<String>,
    /// Sources that could not answer; never an error.
    pub sources_unavailable: Vec<Unavailable>,
    pub scan: ScanStats,
    pub note: &'static str,
}

impl Tool for Presence {
    type Input = PresenceInput;
    type Output = Local<PresenceData>;

    const NAME: &'static str = "agents.presence";
    const TITLE: &'static str = "Other agents in this repository";
    const DESCRIPTION: &'static str = "Which other coding agents work in this repository, from local sources only: state, sources, branch, last tool and files. Your own session is left out or marked likelyCaller; never prompts or file contents.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: PresenceInput) -> Result<Self::Output, ToolError> {
        if ctx.config.agent_detection_disabled {
            return Err(ToolError::new(
                code::AGENT_DETECTION_DISABLED,
                "Agent detection is disabled (FLUXGIT_MCP_AGENT_DETECTION_DISABLED)",
                serde_json::json!({ "reason": "disabled" }),
            ));
        }
        let deadline = Instant::now() + Duration::from_millis(input.budget_ms.0);
        let repo = repo::open(&ctx.config, "repoPath", &input.repo_path, &ctx.cancel).await?;
        let mut scope = Scope::for_repo(&repo, &ctx.config, deadline);
        scope.caller_client = ctx.client.name.clone();
        let found = tokio::select! {
            found = detect::detect(scope, input.include_likely_caller) => found,
            _ = ctx.cancel.cancelled() => return Err(ToolError::new(
                code::GIT_FAILED,
                "The request was cancelled",
                serde_json::json!({ "reason": "cancelled" }),
            )),
        };
        let mut agents: Vec<Agent> = found
            .agents
            .into_iter()
            .filter(|a| input.include_recent || a.state != detect::State::Recent)
            .collect();
        let count = agents.len();
        let max = input.max_agents.0 as usize;
        agents.truncate(max);
        let mut scan = found.stats;
        scan.budget_ms = input.budget_ms.0;
        Ok(Local::new::<Self>(
            &repo,
            PresenceData {
                agent_count: count as u64,
                agents_truncated: count > max,
                agents,
                omitted_likely_caller: found.omitted_likely_caller,
                sources_checked: found.sources_checked,
                sources_unavailable: found.sources_unavailable,
                scan,
                note: NOTE,
            },
        ))
    }
}
