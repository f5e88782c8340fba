//! The `otherAgents` hint of a preview: the other coding agents `agents.presence` finds in
//! the proposal's repository, and the proposal paths they touched too.
//!
//! Informational only. Detection starts beside the gateway call but its answer is added
//! only after the gateway decided, so it can never block, delay a refusal or change how a
//! proposal is approved. Absent when agent detection is disabled.

use std::sync::Arc;
use std::time::Duration;

use crate::config::Config;
use crate::git::Repo;
use crate::presence::overlap::{self, Viewer};

pub use crate::presence::overlap::OtherAgents;

/// The detection budget: a hint is worth a short wait, never a slow proposal.
const BUDGET: Duration = Duration::from_millis(250);

/// Detects the other agents in `repo`; `None` when detection is disabled. `paths` are the
/// proposal's repository-relative paths, when it names them.
pub async fn other_agents(
    config: Arc<Config>,
    repo: Arc<Repo>,
    caller: Option<String>,
    paths: Vec<String>,
) -> Option<OtherAgents> {
    overlap::other_agents(config, repo, Viewer::Caller(caller), paths, BUDGET).await
}
