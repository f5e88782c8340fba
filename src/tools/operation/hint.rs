//! The `otherAgents` hint of a preview: the other coding agents `agents.presence` finds in
//! the proposal's repository, and the proposal paths they touched too.
//!
//! Informational only. Detection starts beside the gateway call but its answer is added
//! only after the gateway decided, so it can never block, delay a refusal or change how a
//! proposal is approved. Absent when agent detection is disabled.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Serialize;

use crate::config::Config;
use std::sync::Arc;

use crate::git::Repo;
use crate::presence::detect::{self, Scope, Source, State};

/// The detection budget: a hint is worth a short wait, never a slow proposal.
const BUDGET: Duration = Duration::from_millis(250);

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

/// Detects the other agents in `repo`; `None` when detection is disabled. `paths` are the
/// proposal's repository-relative paths, when it names them.
pub async fn other_agents(
    config: Arc<Config>,
    repo: Arc<Repo>,
    caller: Option<String>,
    paths: Option<Vec<String>>,
) -> Option<OtherAgents> {
    if config.agent_detection_disabled {
        return None;
    }
    let mut scope = Scope::for_repo(&repo, &config, Instant::now() + BUDGET);
    scope.caller_client = caller;
    let found = detect::detect(scope, false).await;
    let proposal = paths.unwrap_or_default();
    let agents: Vec<OtherAgent> = found
        .agents
        .into_iter()
        .map(|a| OtherAgent {
            overlapping_paths: a
                .files
                .iter()
                .filter(|f| proposal.iter().any(|p| overlaps(p, f)))
                .cloned()
                .collect(),
            agent: a.agent,
            state: a.state,
            sources: a.sources,
            branch: a.branch,
            last_tool: a.last_tool,
            files: a.files,
            pid: a.pid,
            last_activity_ms: a.last_activity_ms,
            mcp_client: a.mcp_client,
            same_agent_as_caller: a.same_agent_as_caller,
        })
        .collect();
    Some(OtherAgents {
        informational: true,
        agent_count: agents.len() as u64,
        overlapping_agent_count: agents
            .iter()
            .filter(|a| !a.overlapping_paths.is_empty())
            .count() as u64,
        proposal_paths_known: !proposal.is_empty(),
        omitted_likely_caller: found.omitted_likely_caller,
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
