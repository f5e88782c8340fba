//! `otherAgents`: the other coding agents `agents.presence` finds in a proposal's
//! repository, and the proposal's paths they touched too — the hint a preview returns to
//! the proposing agent, and what the approval card shows the person.
//!
//! Informational only: it never blocks, delays or changes a decision. Absent when agent
//! detection is disabled.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Serialize;

use std::sync::Arc;

use super::detect::{self, Scope, Source, State};
use crate::config::Config;
use crate::git::Repo;

const NOTE: &str = "Informational only: other agents found locally in this repository (names are what each tool declares about itself). It did not influence the gateway, and the person approving sees the same overlap.";

/// The hint as the preview result carries it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OtherAgents {
    /// Always true.
    pub informational: bool,
    pub agents: Vec<OtherAgent>,
    pub agent_count: u64,
    /// Agents with at least one path in `overlappingPaths`.
    pub overlapping_agent_count: u64,
    /// True when the proposal names its paths (commit `paths`), so overlaps could be
    /// computed.
    pub proposal_paths_known: bool,
    /// Findings that were probably the caller's own session, left out.
    pub omitted_likely_caller: u64,
    pub note: &'static str,
}

/// One other agent.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OtherAgent {
    pub agent: String,
    pub state: State,
    pub sources: Vec<Source>,
    pub branch: Option<String>,
    pub last_tool: Option<String>,
    /// Repository-relative paths it touched, newest first.
    pub files: Vec<String>,
    /// The proposal's paths among `files`.
    pub overlapping_paths: Vec<String>,
    pub pid: Option<u32>,
    pub last_activity_ms: Option<u64>,
    pub mcp_client: Option<String>,
    pub same_agent_as_caller: bool,
}

/// Who asks: the sidecar for its own caller, or the gateway for a proposal's agent.
#[derive(Debug, Clone)]
pub enum Viewer {
    /// The caller is this process's agent ancestor, or the MCP client named here.
    Caller(Option<String>),
    /// The gateway, whose own ancestry says nothing about the proposer: every session
    /// that declared the proposal's `agentId` as its MCP client name is the proposer as
    /// far as the gateway can tell, and is left out.
    Proposer(String),
}

/// Detects the other agents in `repo` within `budget`; `None` when detection is
/// disabled. `paths` are the proposal's repository-relative paths (empty when it names
/// none).
pub async fn other_agents(
    config: Arc<Config>,
    repo: Arc<Repo>,
    viewer: Viewer,
    paths: Vec<String>,
    budget: Duration,
) -> Option<OtherAgents> {
    if config.agent_detection_disabled {
        return None;
    }
    let mut scope = Scope::for_repo(&repo, &config, Instant::now() + budget);
    let proposer = match viewer {
        Viewer::Caller(client) => {
            scope.caller_client = client;
            None
        }
        Viewer::Proposer(agent_id) => {
            scope.caller_client = Some(agent_id.clone());
            Some(agent_id)
        }
    };
    let found = detect::detect(scope, proposer.is_some()).await;
    let mut omitted = found.omitted_likely_caller;
    let proposer_kind = proposer
        .as_deref()
        .map(|id| detect::agent_for_client(id).unwrap_or(id).to_owned());
    let agents: Vec<OtherAgent> = found
        .agents
        .into_iter()
        .filter(|a| {
            let own = proposer.is_some() && a.mcp_client == proposer;
            omitted += u64::from(own);
            !own
        })
        .map(|a| OtherAgent {
            overlapping_paths: a
                .files
                .iter()
                .filter(|f| paths.iter().any(|p| overlaps(p, f)))
                .cloned()
                .collect(),
            same_agent_as_caller: match &proposer_kind {
                Some(kind) => *kind == a.agent,
                None => a.same_agent_as_caller,
            },
            agent: a.agent,
            state: a.state,
            sources: a.sources,
            branch: a.branch,
            last_tool: a.last_tool,
            files: a.files,
            pid: a.pid,
            last_activity_ms: a.last_activity_ms,
            mcp_client: a.mcp_client,
        })
        .collect();
    Some(OtherAgents {
        informational: true,
        agent_count: agents.len() as u64,
        overlapping_agent_count: agents
            .iter()
            .filter(|a| !a.overlapping_paths.is_empty())
            .count() as u64,
        proposal_paths_known: !paths.is_empty(),
        omitted_likely_caller: omitted,
        agents,
        note: NOTE,
    })
}

/// True when `touched` is the proposal path or lies inside it (a directory proposed).
fn overlaps(proposed: &str, touched: &str) -> bool {
    let proposed = proposed.trim_end_matches('/');
    touched == proposed
        || touched
            .strip_prefix(proposed)
            .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::overlaps;

    #[test]
    fn a_path_overlaps_itself_and_what_lies_inside_it() {
        assert!(overlaps("src/a.rs", "src/a.rs"));
        assert!(overlaps("src", "src/a.rs"));
        assert!(overlaps("src/", "src/a.rs"));
        assert!(!overlaps("src/a", "src/a.rs"));
        assert!(!overlaps("src/a.rs", "src"));
    }
}
