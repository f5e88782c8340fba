//! `fleet.radar`: one status line per repository and a ranked attention queue.
//!
//! Per repository: `git status --porcelain=v2 -z --branch` (branch, upstream, ahead and
//! behind from cached remote refs, changed and conflicted paths) and `git log -1` (the last
//! commit's time) run side by side; in-progress operations come from marker files in the
//! git directory. Only a repository that has diverged from its upstream costs one more
//! process: `git merge-tree --write-tree` against the upstream predicts whether merging
//! would conflict. merge-tree writes the merged objects, so it writes them into a
//! temporary object directory (the repository's own objects serve as an alternate) that
//! is deleted afterwards: the repository is left exactly as it was. Nothing is fetched.

mod entry;
mod rank;

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Fleet, bounded, check_paths, reason};
use crate::config::{Config, Toolset};
use crate::error::ToolError;
use crate::git::merge::{MergeQuery, Scratch};
use crate::git::status::StatusQuery;
use crate::git::{Git, GitError, Repo, log, repo};
use crate::process::CancellationToken;
use crate::progress::Counter;
use crate::tools::input::Bounded;
use crate::tools::{Annotations, CallCtx, Tool};
pub use entry::{Attention, Entry, Network, RadarData, RepoStatus, Suggestion};

/// Repositories inspected at once.
const PARALLEL_REPOS: usize = 8;
/// Time one repository may take, all its commands together.
const REPO_BUDGET: Duration = Duration::from_secs(10);
/// Most entries a call may list across `repoPaths`, `repositories` and `repoPath`.
const MAX_LISTED: usize = 1000;
/// Conflicting paths named per repository.
const MAX_CONFLICT_PATHS: usize = 10;
/// Longest `label` / `repoId` accepted.
const MAX_TAG_LEN: usize = 256;

/// `fleet.radar`: which repositories need attention, most urgent first.
pub struct Radar;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RadarInput {
    /// Absolute repository paths.
    #[serde(default)]
    #[schemars(length(max = 1000))]
    pub repo_paths: Option<Vec<String>>,
    /// Repositories with an optional FluxGit id and a label to show.
    #[serde(default)]
    #[schemars(length(max = 1000))]
    pub repositories: Option<Vec<RepoRef>>,
    /// A single repository.
    #[serde(default)]
    pub repo_path: Option<String>,
    /// Most repositories to inspect; the rest are counted in `truncatedCount`.
    #[serde(default)]
    pub max_repos: Bounded<1, 500, 200>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RepoRef {
    pub repo_path: String,
    #[serde(default)]
    pub repo_id: Option<String>,
    #[serde(default)]
    pub label: Option<String>,
}

struct Item {
    path: String,
    repo_id: Option<String>,
    label: Option<String>,
}

impl Tool for Radar {
    type Input = RadarInput;
    type Output = Fleet<RadarData>;

    const NAME: &'static str = "fleet.radar";
    const TITLE: &'static str = "Fleet radar";
    const DESCRIPTION: &'static str = "Multi-repo attention queue: each repository's status (conflict, divergent, local changes, behind, …), branch, ahead/behind and next tools, ranked in attentionStack.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: RadarInput) -> Result<Self::Output, ToolError> {
        let started = Instant::now();
        let items = items(input.repositories, input.repo_paths, input.repo_path)?;
        let requested = items.len();
        let max = input.max_repos.usize();
        let scanned: Vec<Item> = items.into_iter().take(max).collect();
        let truncated = requested - scanned.len();

        let done = Counter::start(&ctx.progress, scanned.len() as u64, |done, total| {
            format!("radar: {done} of {total} repositories")
        });
        let results = bounded(scanned, PARALLEL_REPOS, |item| {
            let ctx = ctx.clone();
            let done = done.clone();
            async move {
                let entry = inspect(ctx, item).await;
                done.tick();
                entry
            }
        })
        .await;
        let entries: Vec<Entry> = results
            .into_iter()
            .map(|e| {
                e.unwrap_or_else(|| Entry {
                    error: Some("could not be inspected".into()),
                    ..Entry::default()
                })
            })
            .collect();
        let mut stack: Vec<&Entry> = entries.iter().filter(|e| e.priority > 0).collect();
        stack.sort_by_key(|e| std::cmp::Reverse(e.priority));
        let attention_stack = stack
            .into_iter()
            .enumerate()
            .map(|(i, e)| Attention {
                rank: i as u64 + 1,
                repo_path: e.repo_path.clone(),
                label: e.label.clone(),
                status: e.status,
                priority: e.priority,
                summary: e.summary.clone(),
                next_tool: e.suggested_actions.first().map(|s| s.tool),
            })
            .collect();
        let count = |f: fn(&Entry) -> bool| entries.iter().filter(|e| f(e)).count() as u64;
        let data = RadarData {
            requested_count: requested as u64,
            scanned_count: count(|e| e.error.is_none()),
            failed_count: count(|e| e.error.is_some()),
            dirty_count: count(|e| e.dirty),
            conflict_count: count(|e| e.conflict_active),
            potential_conflict_count: count(|e| e.potential_conflict_active),
            truncated_count: truncated as u64,
            max_repos: max as u64,
            elapsed_ms: started.elapsed().as_millis() as u64,
            network: Network {
                fetch_performed: false,
                remote_state_source: "cached local refs only",
            },
            guidance: "Work the attentionStack from the top; each entry names the tool to call next. Ahead/behind compare with the last fetched remote refs, which may be stale.",
            attention_stack,
            entries,
        };
        Ok(Fleet::new(Self::NAME, data))
    }
}

/// The repositories to inspect, in the order given, each checked for form.
fn items(
    repositories: Option<Vec<RepoRef>>,
    repo_paths: Option<Vec<String>>,
    repo_path: Option<String>,
) -> Result<Vec<Item>, ToolError> {
    let repositories = repositories.unwrap_or_default();
    let repo_paths = repo_paths.unwrap_or_default();
    check_paths(
        "repositories",
        repositories.iter().map(|r| r.repo_path.as_str()),
        MAX_LISTED,
    )
    .map_err(|e| rename_field(e, "repositories", ".repoPath"))?;
    check_paths(
        "repoPaths",
        repo_paths.iter().map(String::as_str),
        MAX_LISTED,
    )?;
    if let Some(path) = &repo_path {
        check_paths("repoPath", std::iter::once(path.as_str()), 1)
            .map_err(|e| rename_field(e, "repoPath", ""))?;
    }
    for (i, r) in repositories.iter().enumerate() {
        for (name, value) in [("repoId", &r.repo_id), ("label", &r.label)] {
            if let Some(v) = value
                && (v.len() > MAX_TAG_LEN || v.chars().any(char::is_control))
            {
                return Err(ToolError::invalid(
                    &format!("repositories[{i}].{name}"),
                    format!("must be at most {MAX_TAG_LEN} bytes without control characters"),
                ));
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    let items: Vec<Item> = repositories
        .into_iter()
        .map(|r| Item {
            path: r.repo_path,
            repo_id: r.repo_id,
            label: r.label,
        })
        .chain(repo_paths.into_iter().chain(repo_path).map(|path| Item {
            path,
            repo_id: None,
            label: None,
        }))
        .filter(|item| seen.insert(item.path.clone()))
        .collect();
    if items.is_empty() {
        return Err(ToolError::invalid(
            "repoPaths",
            "name at least one repository (repoPaths, repositories or repoPath)",
        ));
    }
    if items.len() > MAX_LISTED {
        return Err(ToolError::invalid(
            "repoPaths",
            format!("at most {MAX_LISTED} repositories in one call"),
        ));
    }
    Ok(items)
}

/// `repositories[3]` → `repositories[3].repoPath`; `repoPath[0]` → `repoPath`.
fn rename_field(err: ToolError, field: &str, suffix: &str) -> ToolError {
    let Some(at) = err.data.get("field").and_then(|f| f.as_str()) else {
        return err;
    };
    let reason = err.data["reason"].as_str().unwrap_or_default().to_owned();
    let new = if suffix.is_empty() {
        field.to_owned()
    } else if at.contains('[') {
        format!("{at}{suffix}")
    } else {
        at.to_owned()
    };
    ToolError::invalid(&new, reason)
}

/// Inspects one repository within its time budget.
async fn inspect(ctx: CallCtx, item: Item) -> Entry {
    let started = Instant::now();
    let token = ctx.cancel.child_token();
    let timer = {
        let token = token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(REPO_BUDGET).await;
            token.cancel();
        })
    };
    let mut entry = Entry {
        repo_id: item.repo_id.clone(),
        label: item.label.clone(),
        repo_path: item.path.clone(),
        ..Entry::default()
    };
    let result = look(&ctx.config, &item.path, &token, &mut entry).await;
    timer.abort();
    if let Err(why) = result {
        entry.error = Some(if token.is_cancelled() && !ctx.cancel.is_cancelled() {
            format!("did not finish within {} s", REPO_BUDGET.as_secs())
        } else {
            why
        });
    }
    rank::rank(&mut entry);
    entry.elapsed_ms = started.elapsed().as_millis() as u64;
    entry
}

async fn look(
    config: &Config,
    path: &str,
    cancel: &CancellationToken,
    entry: &mut Entry,
) -> Result<(), String> {
    let repo = repo::open(config, "repoPaths", path, cancel)
        .await
        .map_err(reason)?;
    entry.repo_path = repo.display();
    entry.disarmed_filters = repo.disarmed_filters();
    repo.require_worktree()
        .map_err(|e| ToolError::from(e).message)?;
    let git = Git::new(&repo, cancel).with_timeout(REPO_BUDGET);
    let query = StatusQuery::with_branch();
    let (status, last) = tokio::join!(query.read(&git, 0), log::head_time(&git));
    let status = status.map_err(message)?;
    entry.last_commit_timestamp = last.ok().flatten().map(|s| s * 1000);
    let b = status.branch;
    entry.detached = b.head.is_none();
    entry.branch = b.head.map(|h| String::from_utf8_lossy(&h).into_owned());
    entry.short_head = b.oid.as_ref().map(|o| o.short().to_owned());
    entry.head = b.oid.map(|o| o.as_str().to_owned());
    entry.has_upstream = b.upstream.is_some();
    entry.upstream = b.upstream.map(|u| String::from_utf8_lossy(&u).into_owned());
    entry.ahead = b.ahead_behind.map(|(a, _)| a);
    entry.behind = b.ahead_behind.map(|(_, b)| b);
    entry.changed_files = status.counts.entries;
    entry.conflicted_files = status.counts.conflicted;
    entry.dirty = status.counts.entries > 0;
    entry.conflict_active = status.counts.conflicted > 0;
    let git_dir = repo.git_dir.clone();
    entry.operation = crate::safe_file::off_thread(cancel, move || {
        crate::git::operation::in_progress(&git_dir).map(|op| op.kind)
    })
    .await
    .map_err(|e| e.to_string())?;
    if entry.conflict_active {
        entry.conflict_operation = entry.operation.or(Some("merge"));
    }
    let diverged = matches!(b.ahead_behind, Some((a, b)) if a > 0 && b > 0);
    if diverged && !entry.conflict_active {
        // A failed prediction (an old git without `merge-tree --write-tree`, say) only
        // loses the prediction, not the repository's status.
        if predict_merge(&git, &repo, entry).await.is_err() {
            entry.potential_conflict_skipped = Some("git could not predict the merge");
        }
    }
    Ok(())
}

/// Would merging the upstream conflict? merge-tree writes no file of the repository (it
/// may freshen an existing object's modification time; see `crate::git::merge`).
async fn predict_merge(git: &Git<'_>, repo: &Repo, entry: &mut Entry) -> Result<(), String> {
    let scratch = Scratch::new(repo).map_err(message)?;
    let merged = MergeQuery {
        base: None,
        ours: "HEAD",
        theirs: "@{upstream}",
        messages: false,
        max_paths: MAX_CONFLICT_PATHS,
    }
    .run(git, &scratch)
    .await
    .map_err(message)?
    .tree;
    let conflicts = &merged.stages;
    entry.potential_conflict_target = entry.upstream.clone();
    entry.potential_conflict_count = conflicts.unmerged_total;
    entry.potential_conflict_active = conflicts.unmerged_total > 0;
    entry.potential_conflict_paths = conflicts
        .unmerged
        .iter()
        .map(|u| String::from_utf8_lossy(&u.path).into_owned())
        .collect();
    Ok(())
}

/// The message shown for a failure inside one repository.
fn message(err: GitError) -> String {
    match err {
        GitError::Parse(e) => e.to_string(),
        other => ToolError::from(other).message,
    }
}
