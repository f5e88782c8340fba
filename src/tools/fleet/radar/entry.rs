//! What `fleet.radar` reports: one entry per repository and the ranked attention stack.

use schemars::JsonSchema;
use serde::Serialize;

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RadarData {
    /// One entry per inspected repository, in the order given.
    pub entries: Vec<Entry>,
    /// Repositories that need attention (everything but `clean`), most urgent first.
    pub attention_stack: Vec<Attention>,
    pub requested_count: u64,
    pub scanned_count: u64,
    /// Repositories that could not be inspected (`unknown`).
    pub failed_count: u64,
    pub dirty_count: u64,
    pub conflict_count: u64,
    pub potential_conflict_count: u64,
    /// Repositories listed but not inspected because of `maxRepos`.
    pub truncated_count: u64,
    pub max_repos: u64,
    pub elapsed_ms: u64,
    pub network: Network,
    pub guidance: &'static str,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Network {
    pub fetch_performed: bool,
    pub remote_state_source: &'static str,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RepoStatus {
    Conflict,
    PotentialConflict,
    Divergent,
    Bisecting,
    LocalChanges,
    Behind,
    Ahead,
    NoUpstream,
    #[default]
    Unknown,
    Clean,
}

impl RepoStatus {
    pub fn priority(self) -> u8 {
        match self {
            RepoStatus::Conflict => 100,
            RepoStatus::PotentialConflict => 95,
            RepoStatus::Divergent => 90,
            RepoStatus::Bisecting => 85,
            RepoStatus::LocalChanges => 80,
            RepoStatus::Behind => 70,
            RepoStatus::Ahead => 60,
            RepoStatus::NoUpstream => 40,
            RepoStatus::Unknown => 10,
            RepoStatus::Clean => 0,
        }
    }
}

#[derive(Debug, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repo_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The canonical top level, or the path as given when it could not be resolved.
    pub repo_path: String,
    pub status: RepoStatus,
    /// conflict 100, potential_conflict 95, divergent 90, bisecting 85, local_changes 80,
    /// behind 70, ahead 60, no_upstream 40, unknown 10, clean 0.
    pub priority: u8,
    pub summary: String,
    pub branch: Option<String>,
    pub detached: bool,
    pub head: Option<String>,
    pub short_head: Option<String>,
    pub dirty: bool,
    /// Changed paths, untracked included.
    pub changed_files: u64,
    pub conflicted_files: u64,
    pub has_upstream: bool,
    pub upstream: Option<String>,
    /// Null without an upstream, or when the upstream ref is gone.
    pub ahead: Option<u64>,
    pub behind: Option<u64>,
    /// Paths are unmerged right now.
    pub conflict_active: bool,
    /// The in-progress operation the conflicts belong to.
    pub conflict_operation: Option<&'static str>,
    /// An operation in progress (`merge`, `rebase`, `cherry-pick`, `revert`, `am`,
    /// `bisect`), conflicts or not.
    pub operation: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bisect: Option<Bisect>,
    /// Merging the upstream would conflict (checked only when diverged).
    pub potential_conflict_active: bool,
    pub potential_conflict_count: u64,
    pub potential_conflict_target: Option<String>,
    pub potential_conflict_paths: Vec<String>,
    /// Why the merge prediction was not made although the branch diverged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub potential_conflict_skipped: Option<&'static str>,
    /// Filter drivers the repository defines that were not run (see `repo.status`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub disarmed_filters: Vec<String>,
    /// Committer time of HEAD, epoch milliseconds.
    pub last_commit_timestamp: Option<i64>,
    pub elapsed_ms: u64,
    pub error: Option<String>,
    /// Tools to call next for this repository.
    pub suggested_actions: Vec<Suggestion>,
}

#[derive(Debug, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Bisect {
    /// HEAD is the commit under test.
    pub bad: Option<String>,
    pub good: Vec<String>,
    /// Custom `[bad, good]` terms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terms: Option<[String; 2]>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Suggestion {
    #[serde(serialize_with = "crate::model::tool_name::serialize_served")]
    pub tool: &'static str,
    #[serde(serialize_with = "crate::model::tool_name::serialize_prose")]
    pub reason: &'static str,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Attention {
    pub rank: u64,
    pub repo_path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub status: RepoStatus,
    pub priority: u8,
    pub summary: String,
    /// The first suggested tool, as it is served.
    #[serde(serialize_with = "crate::model::tool_name::serialize_served_opt")]
    pub next_tool: Option<&'static str>,
}
