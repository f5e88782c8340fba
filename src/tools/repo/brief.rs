//! `repo.brief`: one call that tells an agent where it stands in a repository.
//!
//! Every independent question runs at once: one `status` (branch, upstream, counts,
//! stashes, submodule flags), one `log` (recent commits and the subjects conventions are
//! learned from), two small `for-each-ref` listings (branch naming, default branch), one
//! `config` read, and `.gitmodules` when present; in-progress operations, hooks and
//! convention files are read straight from disk (from HEAD's tree in a bare repository).
//! The answer is then trimmed, section by section, until it fits the caller's token
//! budget, and says what was trimmed.

mod budget;
mod conventions;
mod hints;
mod nested;
mod status;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::{Config, Toolset};
use crate::error::ToolError;
use crate::git::log::{LogQuery, Start};
use crate::git::operation::{InProgress, in_progress};
use crate::git::{Git, ObjectFormat, Repo, repo};
use crate::model::{Hint, PathText};
use crate::parse::log::Commit;
use crate::tools::input::Bounded;
use crate::tools::{Annotations, CallCtx, Local, Tool};

/// `repo.brief`: branch, operation, working tree, conventions and next steps in one call.
pub struct Brief;

/// The token budget when the caller names none.
const DEFAULT_MAX_TOKENS: u64 = 1500;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BriefInput {
    /// Absolute path of the repository (any directory inside a working tree works).
    pub repo_path: String,
    /// FluxGit workspace id; accepted for compatibility and not needed locally.
    #[serde(default)]
    pub repo_id: Option<String>,
    /// How many recent commits to show (fewer when the budget is tight).
    #[serde(default)]
    pub recent_commits: Bounded<1, 20, 10>,
    /// Token budget for the whole result (about 4 characters per token).
    #[serde(default)]
    pub max_tokens: Bounded<200, 8000, DEFAULT_MAX_TOKENS>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BriefData {
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub bare: bool,
    /// True in a linked worktree (`git worktree add`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub linked_worktree: bool,
    /// `sha256`; omitted for `sha1`.
    #[serde(skip_serializing_if = "is_sha1")]
    pub object_format: &'static str,
    pub head: Head,
    /// The operation git is in the middle of (`rebase`, `am`, `merge`, `cherry-pick`,
    /// `revert` or `bisect`), or null.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation_in_progress: Option<&'static str>,
    /// What that operation is doing (branch, onto, step, incoming commit); null when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation_details: Option<Operation>,
    /// Null in a bare repository.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub working_tree: Option<WorkingTree>,
    #[serde(skip_serializing_if = "is_zero")]
    pub stashes: u64,
    /// Null when the repository has no submodules.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub submodules: Option<Submodules>,
    pub recent_commits: Vec<RecentCommit>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub recent_commits_truncated: bool,
    /// Null only when the budget could not hold it (see `budget.trimmed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conventions: Option<Conventions>,
    /// Next steps, most urgent first; each names the tool to call. Empty when nothing
    /// asks for one.
    pub hints: Vec<Hint>,
    /// Omitted when the caller named no budget and nothing had to be cut.
    #[serde(skip_serializing_if = "Budget::is_quiet")]
    pub budget: Budget,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Head {
    /// The current branch; during a rebase, the branch being rebased. Null when detached.
    /// Not valid UTF-8: shown with U+FFFD, and `branchBytesB64` holds the exact name.
    pub branch: Option<String>,
    /// Base64 of the branch name, present only when it is not valid UTF-8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch_bytes_b64: Option<String>,
    /// True when HEAD points at a commit directly (also during a rebase).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub detached: bool,
    /// True on a branch with no commits yet.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unborn: bool,
    /// The full commit id; `recentCommits[0].sha` is git's abbreviation of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
    /// Base64 of the upstream name, present only when it is not valid UTF-8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream_bytes_b64: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ahead: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub behind: Option<u64>,
    /// True while a rebase is replaying `branch`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rebasing: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Operation {
    /// `rebase`, `am`, `merge`, `cherry-pick`, `revert` or `bisect` (shown as
    /// `operationInProgress`).
    #[serde(skip)]
    pub kind: &'static str,
    /// The branch being rebased.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The commit a rebase replays onto.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub onto: Option<String>,
    /// The step git is at (1-based) and how many there are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// The commit being merged, picked or reverted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incoming: Option<String>,
    /// A multi-commit cherry-pick or revert stopped between commits.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub sequencer_only: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkingTree {
    pub clean: bool,
    /// Every changed path (the true total); omitted when `clean`.
    #[serde(skip_serializing_if = "is_zero")]
    pub changed: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub staged: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub unstaged: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub untracked: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub conflicted: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub renamed: u64,
    /// A few changed paths, conflicts first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub top_paths: Vec<TopPath>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub top_paths_truncated: bool,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TopPath {
    /// Index and worktree letters as in `repo.status` (`??` untracked).
    pub status: String,
    #[serde(flatten)]
    pub path: PathText,
}

#[derive(Debug, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Submodules {
    /// Submodules declared in `.gitmodules`, at every depth (as are all counts here).
    pub total: u64,
    /// Checked out at another commit than the one recorded.
    #[serde(skip_serializing_if = "is_zero")]
    pub drifted: u64,
    /// With modified tracked content.
    #[serde(skip_serializing_if = "is_zero")]
    pub modified: u64,
    /// With untracked files.
    #[serde(skip_serializing_if = "is_zero")]
    pub untracked: u64,
    /// Listed but not checked out.
    #[serde(skip_serializing_if = "is_zero")]
    pub uninitialized: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub conflicts: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attention: Vec<SubmoduleAttention>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub attention_truncated: bool,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubmoduleAttention {
    #[serde(flatten)]
    pub path: PathText,
    /// `drifted`, `modified`, `untracked`, `uninitialized` or `conflicted`.
    pub state: &'static str,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecentCommit {
    /// The shortest unique abbreviation git gives (`commit.details` and `repo.history`
    /// take it and show the full id).
    pub sha: String,
    pub subject: String,
    /// The author's name; omitted when it is the same as the commit listed before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// Author time, Unix seconds.
    pub time: i64,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Conventions {
    /// The default branch: from `origin/HEAD`, else a `main`/`master` that exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_branch: Option<String>,
    /// `local` or `remote` when guessed from a branch that exists; omitted when
    /// `origin/HEAD` names it.
    #[serde(skip_serializing_if = "is_none_or_origin_head")]
    pub default_branch_source: Option<&'static str>,
    pub commit_messages: CommitStyle,
    /// Omitted when there is no local branch besides the default one.
    #[serde(skip_serializing_if = "BranchNaming::is_empty")]
    pub branch_names: BranchNaming,
    /// Which CODEOWNERS file applies (the first of the three standard locations).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub codeowners: Option<String>,
    /// Guidance files present: AGENTS.md, CLAUDE.md, CONTRIBUTING, …
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub guidance_files: Vec<String>,
    #[serde(skip_serializing_if = "Hooks::is_empty")]
    pub hooks: Hooks,
    /// `.gitattributes` routes paths through `filter=lfs`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub lfs: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub sparse_checkout: bool,
    /// `commit.gpgsign` is on: commits are expected to be signed.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub commit_signing: bool,
}

#[derive(Debug, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommitStyle {
    /// Non-merge subjects examined (at most 50).
    pub sampled: u64,
    /// Share of them written as Conventional Commits (`type(scope)!: subject`);
    /// omitted when none is.
    #[serde(skip_serializing_if = "is_none_or_zero")]
    pub conventional_commit_ratio: Option<f64>,
    /// `conventional`, `mixed` or `free-form`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub style: Option<&'static str>,
    /// Most used Conventional Commit types with how many subjects use each, most used
    /// first: `{"feat": 12, "fix": 3}`.
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "counted_map")]
    #[schemars(with = "std::collections::BTreeMap<String, u64>")]
    pub types: Vec<Counted>,
    /// Up to two recent subjects, leaving out those `recentCommits` already shows.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
}

#[derive(Debug, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BranchNaming {
    /// Local branches examined (the default branch excluded).
    pub sampled: u64,
    /// Most used prefixes such as `feat/` or `fix/` with how many branches use each, most
    /// used first: `{"feat/": 2}`.
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "counted_map")]
    #[schemars(with = "std::collections::BTreeMap<String, u64>")]
    pub prefixes: Vec<Counted>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
}

/// A name and how often it was seen; a list of them is shown as one object, in order.
#[derive(Debug, Clone)]
pub struct Counted {
    pub name: String,
    pub count: u64,
}

/// `[{name, count}, …]` as `{name: count, …}`: the same facts without repeating two
/// keys per entry (the order, most used first, is kept).
fn counted_map<S: serde::Serializer>(list: &[Counted], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(list.len()))?;
    for c in list {
        map.serialize_entry(&c.name, &c.count)?;
    }
    map.end()
}

#[derive(Debug, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Hooks {
    /// `core.hooksPath` when set, else null (the repository's own hooks directory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hooks_path: Option<String>,
    /// Installed hooks (sample files excluded). Listed only, never run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
    pub count: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    /// The budget asked for; omitted when it is the default (1500).
    #[serde(skip_serializing_if = "is_default_budget")]
    pub max_tokens: u64,
    /// Size of this whole result in tokens (characters / 4).
    pub approx_tokens: u64,
    /// Sections shortened to fit, in the order they were cut.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub trimmed: Vec<&'static str>,
}

impl Budget {
    /// Nothing to report: the default budget, and the answer fitted whole (its size is
    /// the size of the text the caller already holds).
    fn is_quiet(&self) -> bool {
        is_default_budget(&self.max_tokens) && self.trimmed.is_empty()
    }
}

impl Hooks {
    fn is_empty(&self) -> bool {
        self.hooks_path.is_none() && self.names.is_empty() && self.count == 0
    }
}

impl BranchNaming {
    fn is_empty(&self) -> bool {
        self.sampled == 0 && self.prefixes.is_empty() && self.examples.is_empty()
    }
}

fn is_none_or_zero(ratio: &Option<f64>) -> bool {
    ratio.is_none_or(|r| r == 0.0)
}

fn is_none_or_origin_head(source: &Option<&'static str>) -> bool {
    source.is_none_or(|s| s == "origin/HEAD")
}

fn is_default_budget(max_tokens: &u64) -> bool {
    *max_tokens == DEFAULT_MAX_TOKENS
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_sha1(format: &&'static str) -> bool {
    *format == "sha1"
}

impl Tool for Brief {
    type Input = BriefInput;
    type Output = Local<BriefData>;

    const NAME: &'static str = "repo.brief";
    const TITLE: &'static str = "Repository brief";
    const DESCRIPTION: &'static str = "The recommended first call: branch, upstream, in-progress operation, working-tree counts, stashes, submodule drift, recent commits, conventions and hints naming the next tool, within maxTokens.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: BriefInput) -> Result<Self::Output, ToolError> {
        let repo = repo::open(&ctx.config, "repoPath", &input.repo_path, &ctx.cancel).await?;
        let git = Git::new(&repo, &ctx.cancel).with_timeout(std::time::Duration::from_secs(30));
        let data = gather(&ctx.config, &git, &repo, input.recent_commits.usize()).await?;
        Ok(budget::fit(
            Local::new::<Self>(&repo, data),
            input.max_tokens.get(),
        ))
    }
}

/// What the concurrent git calls and disk reads found, before budgeting.
async fn gather(
    config: &Config,
    git: &Git<'_>,
    repo: &Repo,
    recent: usize,
) -> Result<BriefData, ToolError> {
    let worktree = repo.worktree.as_deref();
    let git_dir = repo.git_dir.clone();
    let operation = async {
        crate::safe_file::off_thread(git.cancel(), move || {
            in_progress(&git_dir).map(Operation::from)
        })
        .await
        .map_err(ToolError::from)
    };
    let (state, commits, sources, modules, operation) = tokio::try_join!(
        status::read(git, worktree),
        recent_log(git, recent.max(conventions::STYLE_SAMPLE)),
        conventions::read(git, worktree),
        status::submodule_paths(git, worktree),
        operation,
    )?;
    let status::State {
        mut head,
        working_tree,
        stashes,
        mut submodules,
    } = state;
    if let Some(Operation {
        kind: "rebase",
        branch: Some(branch),
        ..
    }) = &operation
    {
        head.branch = Some(branch.clone());
        head.branch_bytes_b64 = None;
        head.rebasing = true;
    }
    status::count_uninitialized(&mut submodules, worktree, b"", &modules);
    if let Some(top) = worktree {
        nested::add_nested(config, git.cancel(), top, &modules, &mut submodules).await?;
    }

    let commits = if head.unborn { Vec::new() } else { commits };
    let shown = commits.iter().take(recent);
    let before = std::iter::once(None).chain(commits.iter().map(Some));
    let recent_commits: Vec<RecentCommit> = shown
        .zip(before)
        .map(|(c, prev)| RecentCommit {
            sha: c.short.clone(),
            subject: c.subject.clone(),
            author: prev
                .is_none_or(|p| p.author_name != c.author_name)
                .then(|| c.author_name.clone()),
            time: c.author_time,
        })
        .collect();
    let mut conventions = conventions::build(sources, &commits, repo);
    // An example already listed among the recent commits would only repeat it, clipped
    // (`…`) or whole.
    conventions
        .commit_messages
        .examples
        .retain(|e| !recent_commits.iter().any(|c| repeats(e, &c.subject)));
    let mut data = BriefData {
        bare: repo.bare,
        linked_worktree: repo.git_dir != repo.common_dir,
        object_format: match repo.object_format {
            ObjectFormat::Sha1 => "sha1",
            ObjectFormat::Sha256 => "sha256",
        },
        head,
        operation_in_progress: operation.as_ref().map(|op| op.kind),
        operation_details: operation,
        working_tree,
        stashes,
        submodules: (submodules.total
            + submodules.drifted
            + submodules.modified
            + submodules.untracked
            + submodules.conflicts
            > 0)
        .then_some(submodules),
        recent_commits_truncated: commits.len() > recent_commits.len(),
        recent_commits,
        conventions: Some(conventions),
        hints: Vec::new(),
        budget: Budget {
            max_tokens: 0,
            approx_tokens: 0,
            trimmed: Vec::new(),
        },
    };
    data.hints = hints::hints(&data);
    Ok(data)
}

/// Whether `example` is `subject`, or `subject` clipped with `…`.
fn repeats(example: &str, subject: &str) -> bool {
    example == subject
        || example
            .strip_suffix('…')
            .is_some_and(|head| subject.starts_with(head))
}

async fn recent_log(git: &Git<'_>, n: usize) -> Result<Vec<Commit>, ToolError> {
    // An unborn branch has no log; anything else shows up in `status` as well.
    let log = LogQuery::new(Start::Head, n as u64).read(git, n).await?;
    Ok(log.map(|l| l.commits).unwrap_or_default())
}

impl From<InProgress> for Operation {
    fn from(op: InProgress) -> Self {
        Operation {
            kind: op.kind,
            branch: op.branch,
            onto: op.onto,
            step: op.step,
            total: op.total,
            incoming: op.incoming,
            sequencer_only: op.sequencer_only,
        }
    }
}

/// A brief of a clean repository on `main` with `commits` recent commits, for the
/// helpers' tests.
#[cfg(test)]
fn sample(commits: usize) -> BriefData {
    BriefData {
        bare: false,
        linked_worktree: false,
        object_format: "sha1",
        head: Head {
            branch: Some("main".into()),
            branch_bytes_b64: None,
            detached: false,
            unborn: false,
            sha: Some("a".repeat(40)),
            upstream: None,
            upstream_bytes_b64: None,
            ahead: None,
            behind: None,
            rebasing: false,
        },
        operation_in_progress: None,
        operation_details: None,
        working_tree: Some(WorkingTree {
            clean: true,
            changed: 0,
            staged: 0,
            unstaged: 0,
            untracked: 0,
            conflicted: 0,
            renamed: 0,
            top_paths: Vec::new(),
            top_paths_truncated: false,
        }),
        stashes: 0,
        submodules: None,
        recent_commits: (0..commits)
            .map(|i| RecentCommit {
                sha: format!("{i:040}"),
                subject: format!("feat: change number {i} with a fairly long subject line"),
                author: Some("A U Thor".into()),
                time: 1_700_000_000 + i as i64,
            })
            .collect(),
        recent_commits_truncated: false,
        conventions: None,
        hints: Vec::new(),
        budget: Budget {
            max_tokens: 0,
            approx_tokens: 0,
            trimmed: Vec::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::repeats;

    #[test]
    fn a_clipped_example_repeats_its_subject() {
        let subject = "Fix `extend()` dropping numeric `retry` limit when merging with an object";
        let clipped = super::conventions::clip(subject, 72);
        assert!(clipped.ends_with('…'));
        assert!(repeats(&clipped, subject));
        assert!(repeats(subject, subject));
        assert!(!repeats("Fix CI", subject));
        assert!(!repeats("Fix `extend()` x…", subject));
    }
}
