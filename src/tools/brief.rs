//! `repo.brief`: one call that tells an agent where it stands in a repository.
//!
//! Every independent question runs at once: one `status` (branch, upstream, counts,
//! stashes, submodule flags), one `log` (recent commits and the subjects conventions are
//! learned from), two small `for-each-ref` listings (branch naming, default branch), one
//! `config` read, and `.gitmodules` when present; in-progress operations, hooks and
//! convention files are read straight from disk (from HEAD's tree in a bare repository).
//! The answer is then trimmed, section by section, until it fits the caller's token
//! budget, and says what was trimmed.

use std::collections::BTreeMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::input::Bounded;
use super::{Annotations, CallCtx, Local, Tool};
use crate::config::Toolset;
use crate::error::ToolError;
use crate::git::operation::{InProgress, in_progress};
use crate::git::status::{IgnoreSubmodules, StatusQuery, Untracked};
use crate::git::{Git, ObjectFormat, Repo, repo};
use crate::model::{PathText, opt_name_text};
use crate::parse::log::{self, Commit, Log};
use crate::parse::status_v2::{self, Entry, Kind};
use crate::parse::{ParseError, RecordParser, Records, codeowners};
use crate::process::Flow;

/// How many subjects the commit-message conventions are learned from.
const STYLE_SAMPLE: usize = 50;
/// Local branch names read for naming conventions.
const BRANCH_SAMPLE: usize = 2000;
/// Paths kept per class before the budget decides how many are shown.
const TOP_PATHS: usize = 8;
/// Submodules named in `attention` at most.
const ATTENTION: usize = 5;
/// Hook names listed at most.
const HOOK_NAMES: usize = 12;
/// Bytes of `.gitattributes` examined for LFS.
const ATTRIBUTES_CAP: u64 = 1024 * 1024;
/// Hints given at most, most urgent first.
const MAX_HINTS: usize = 3;
/// Characters per token the budget assumes (JSON text, mostly ASCII).
const CHARS_PER_TOKEN: usize = 4;

/// `repo.brief`: branch, operation, working tree, conventions and next steps in one call.
pub struct Brief;

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
    pub max_tokens: Bounded<200, 8000, 1500>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BriefData {
    pub bare: bool,
    /// True in a linked worktree (`git worktree add`).
    pub linked_worktree: bool,
    /// `sha1` or `sha256`.
    pub object_format: &'static str,
    pub head: Head,
    /// The operation git is in the middle of (`rebase`, `am`, `merge`, `cherry-pick`,
    /// `revert` or `bisect`), or null.
    pub operation_in_progress: Option<&'static str>,
    /// What that operation is doing (branch, onto, step, incoming commit); null when none.
    pub operation_details: Option<Operation>,
    /// Null in a bare repository.
    pub working_tree: Option<WorkingTree>,
    pub stashes: u64,
    /// Null when the repository has no submodules.
    pub submodules: Option<Submodules>,
    pub recent_commits: Vec<RecentCommit>,
    pub recent_commits_truncated: bool,
    /// Null only when the budget could not hold it (see `budget.trimmed`).
    pub conventions: Option<Conventions>,
    /// Next steps, most urgent first; each names the tool to call.
    pub hints: Vec<Hint>,
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
    pub detached: bool,
    /// True on a branch with no commits yet.
    pub unborn: bool,
    pub sha: Option<String>,
    /// Left out only when the budget is very tight.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub short_sha: Option<String>,
    pub upstream: Option<String>,
    /// Base64 of the upstream name, present only when it is not valid UTF-8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream_bytes_b64: Option<String>,
    pub ahead: Option<u64>,
    pub behind: Option<u64>,
    /// True while a rebase is replaying `branch`.
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
    /// Every changed path (the true total).
    pub changed: u64,
    pub staged: u64,
    pub unstaged: u64,
    pub untracked: u64,
    pub conflicted: u64,
    pub renamed: u64,
    /// A few changed paths, conflicts first.
    pub top_paths: Vec<TopPath>,
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
    /// Submodules listed in `.gitmodules`.
    pub total: u64,
    /// Checked out at another commit than the one recorded.
    pub drifted: u64,
    /// With modified tracked content.
    pub modified: u64,
    /// With untracked files.
    pub untracked: u64,
    /// Listed but not checked out.
    pub uninitialized: u64,
    pub conflicts: u64,
    pub attention: Vec<SubmoduleAttention>,
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
    pub sha: String,
    pub subject: String,
    pub author: String,
    /// Author time, Unix seconds.
    pub time: i64,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Conventions {
    /// The default branch: from `origin/HEAD`, else a `main`/`master` that exists.
    pub default_branch: Option<String>,
    /// `origin/HEAD`, `local` or `remote`.
    pub default_branch_source: Option<&'static str>,
    pub commit_messages: CommitStyle,
    pub branch_names: BranchNaming,
    /// Which CODEOWNERS file applies (the first of the three standard locations).
    pub codeowners: Option<String>,
    /// Guidance files present: AGENTS.md, CLAUDE.md, CONTRIBUTING, …
    pub guidance_files: Vec<String>,
    pub hooks: Hooks,
    /// `.gitattributes` routes paths through `filter=lfs`.
    pub lfs: bool,
    pub sparse_checkout: bool,
    /// `commit.gpgsign` is on: commits are expected to be signed.
    pub commit_signing: bool,
}

#[derive(Debug, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommitStyle {
    /// Non-merge subjects examined (at most 50).
    pub sampled: u64,
    /// Share of them written as Conventional Commits (`type(scope)!: subject`).
    pub conventional_commit_ratio: Option<f64>,
    /// `conventional`, `mixed` or `free-form`.
    pub style: Option<&'static str>,
    /// Most used Conventional Commit types.
    pub types: Vec<Counted>,
    pub examples: Vec<String>,
}

#[derive(Debug, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BranchNaming {
    /// Local branches examined (the default branch excluded).
    pub sampled: u64,
    /// Most used prefixes such as `feat/` or `fix/`.
    pub prefixes: Vec<Counted>,
    pub examples: Vec<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Counted {
    pub name: String,
    pub count: u64,
}

#[derive(Debug, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Hooks {
    /// `core.hooksPath` when set, else null (the repository's own hooks directory).
    pub hooks_path: Option<String>,
    /// Installed hooks (sample files excluded). Listed only, never run.
    pub names: Vec<String>,
    pub count: u64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Hint {
    /// The tool to call next.
    pub tool: &'static str,
    pub reason: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    pub max_tokens: u64,
    /// Size of this whole result in tokens (characters / 4).
    pub approx_tokens: u64,
    /// Sections shortened to fit, in the order they were cut.
    pub trimmed: Vec<&'static str>,
}

impl Tool for Brief {
    type Input = BriefInput;
    type Output = Local<BriefData>;

    const NAME: &'static str = "repo.brief";
    const TITLE: &'static str = "Repository brief";
    const DESCRIPTION: &'static str = "The recommended first call: current branch (or detached/unborn), upstream ahead/behind, any in-progress merge/rebase (with step n/m)/cherry-pick/revert/bisect/am, working-tree counts with a few top paths, stash count, submodule drift, recent commits, detected conventions (default branch, Conventional Commits usage, branch prefixes, CODEOWNERS, AGENTS.md/CLAUDE.md/CONTRIBUTING, hooks, LFS, sparse checkout, signing) and hints naming the tool to call next. Fits in maxTokens; budget.trimmed says what was shortened.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: BriefInput) -> Result<Self::Output, ToolError> {
        let repo = repo::open(&ctx.config, "repoPath", &input.repo_path, &ctx.cancel).await?;
        let git = Git::new(&repo, &ctx.cancel).with_timeout(std::time::Duration::from_secs(30));
        let data = gather(&git, &repo, input.recent_commits.usize()).await?;
        Ok(fit(Local::new::<Self>(&repo, data), input.max_tokens.get()))
    }
}

/// What the concurrent git calls and disk reads found, before budgeting.
async fn gather(git: &Git<'_>, repo: &Repo, recent: usize) -> Result<BriefData, ToolError> {
    let worktree = repo.worktree.clone();
    let status = async {
        match &worktree {
            Some(_) => read_status(git).await.map(Some),
            None => Ok(None),
        }
    };
    let bare_head = async {
        match &worktree {
            Some(_) => Ok(None),
            None => bare_head(git).await.map(Some),
        }
    };
    let commits = recent_log(git, recent.max(STYLE_SAMPLE));
    let refs = branch_refs(git);
    let config = read_config(git);
    let modules = submodule_paths(git, worktree.as_deref());
    let files = convention_files(git, worktree.as_deref());
    let git_dir = repo.git_dir.clone();
    let operation = async {
        crate::safe_file::off_thread(git.cancel(), move || {
            in_progress(&git_dir).map(Operation::from)
        })
        .await
        .map_err(ToolError::from)
    };
    let (status, bare_head, commits, refs, config, modules, files, operation) = tokio::try_join!(
        status, bare_head, commits, refs, config, modules, files, operation
    )?;

    let (head, working_tree, stashes, mut submodules) = match (status, bare_head) {
        (Some(s), _) => summarize_status(s),
        (None, Some(h)) => (h.head, None, h.stashes, Submodules::default()),
        (None, None) => return Err(ToolError::internal("neither status nor HEAD was read")),
    };
    let mut head = head;
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
    count_uninitialized(&mut submodules, worktree.as_deref(), &modules);

    let commits = if head.unborn { Vec::new() } else { commits };
    let recent_commits: Vec<RecentCommit> = commits
        .iter()
        .take(recent)
        .map(|c| RecentCommit {
            sha: c.oid.to_string(),
            subject: c.subject.clone(),
            author: c.author_name.clone(),
            time: c.author_time,
        })
        .collect();
    let recent_commits_truncated = commits.len() > recent_commits.len();
    let (default_branch, default_branch_source) = default_branch(&refs);
    let conventions = Conventions {
        branch_names: branch_naming(&refs, default_branch.as_deref()),
        default_branch,
        default_branch_source,
        commit_messages: commit_style(&commits),
        codeowners: files.codeowners,
        guidance_files: files.guidance,
        hooks: list_hooks(repo, config.hooks_path.as_deref()),
        lfs: files.lfs,
        sparse_checkout: config.sparse_checkout,
        commit_signing: config.commit_signing,
    };
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
        recent_commits,
        recent_commits_truncated,
        conventions: Some(conventions),
        hints: Vec::new(),
        budget: Budget {
            max_tokens: 0,
            approx_tokens: 0,
            trimmed: Vec::new(),
        },
    };
    data.hints = hints(&data);
    Ok(data)
}

// ---------------------------------------------------------------------------------------
// status

/// Status records, watched one at a time so conflicts and submodules are counted over
/// every path while only a few paths are kept.
struct BriefStatus {
    status: status_v2::Status,
    conflicted: Vec<Entry>,
    others: Vec<Entry>,
    subs: Submodules,
}

impl BriefStatus {
    fn new() -> Self {
        BriefStatus {
            // Each entry is taken out as soon as it is complete, so one slot is enough.
            status: status_v2::Status::new(1),
            conflicted: Vec::new(),
            others: Vec::new(),
            subs: Submodules::default(),
        }
    }

    fn observe(&mut self, entry: Entry) {
        if entry.kind == Kind::Ignored {
            return;
        }
        if let Some(flags) = entry.submodule {
            let state = if entry.kind == Kind::Unmerged {
                self.subs.conflicts += 1;
                Some("conflicted")
            } else {
                self.subs.drifted += u64::from(flags.commit_changed);
                self.subs.modified += u64::from(flags.modified);
                self.subs.untracked += u64::from(flags.untracked);
                if flags.commit_changed {
                    Some("drifted")
                } else if flags.modified {
                    Some("modified")
                } else if flags.untracked {
                    Some("untracked")
                } else {
                    None
                }
            };
            if let Some(state) = state {
                push_attention(&mut self.subs, PathText::from_bytes(&entry.path), state);
            }
        }
        let list = if entry.kind == Kind::Unmerged {
            &mut self.conflicted
        } else {
            &mut self.others
        };
        if list.len() < TOP_PATHS {
            list.push(entry);
        }
    }
}

fn push_attention(subs: &mut Submodules, path: PathText, state: &'static str) {
    if subs.attention.len() < ATTENTION {
        subs.attention.push(SubmoduleAttention { path, state });
    } else {
        subs.attention_truncated = true;
    }
}

impl RecordParser for BriefStatus {
    fn record(&mut self, record: &[u8], offset: usize) -> Result<Flow, ParseError> {
        let flow = self.status.record(record, offset)?;
        if let Some(entry) = self.status.entries.pop() {
            self.observe(entry);
        }
        Ok(flow)
    }

    fn finish(&mut self, rest: &[u8], offset: usize) -> Result<(), ParseError> {
        self.status.finish(rest, offset)
    }
}

async fn read_status(git: &Git<'_>) -> Result<BriefStatus, ToolError> {
    let query = StatusQuery {
        show_stash: true,
        ignore_submodules: Some(IgnoreSubmodules::None),
        untracked: Some(Untracked::Normal),
        ..StatusQuery::with_branch()
    };
    Ok(query.stream(git, BriefStatus::new()).await?)
}

fn summarize_status(s: BriefStatus) -> (Head, Option<WorkingTree>, u64, Submodules) {
    let b = s.status.branch;
    let c = s.status.counts;
    let (branch, branch_bytes_b64) = opt_name_text(b.head.as_deref());
    let (upstream, upstream_bytes_b64) = opt_name_text(b.upstream.as_deref());
    let head = Head {
        detached: b.head.is_none(),
        unborn: b.oid.is_none(),
        short_sha: b.oid.as_ref().map(|o| o.short().to_owned()),
        sha: b.oid.map(|o| o.to_string()),
        branch,
        branch_bytes_b64,
        upstream,
        upstream_bytes_b64,
        ahead: b.ahead_behind.map(|(a, _)| a),
        behind: b.ahead_behind.map(|(_, b)| b),
        rebasing: false,
    };
    let changed = c.entries - c.ignored;
    let top_paths: Vec<TopPath> = s
        .conflicted
        .into_iter()
        .chain(s.others)
        .take(TOP_PATHS)
        .map(|e| TopPath {
            status: String::from_utf8_lossy(&e.xy).into_owned(),
            path: PathText::from_bytes(&e.path),
        })
        .collect();
    let tree = WorkingTree {
        clean: changed == 0,
        changed,
        staged: c.staged,
        unstaged: c.unstaged,
        untracked: c.untracked,
        conflicted: c.conflicted,
        renamed: c.renamed,
        top_paths_truncated: (top_paths.len() as u64) < changed,
        top_paths,
    };
    (head, Some(tree), b.stashes.unwrap_or(0), s.subs)
}

struct BareHead {
    head: Head,
    stashes: u64,
}

/// HEAD of a bare repository, which `status` refuses to describe.
async fn bare_head(git: &Git<'_>) -> Result<BareHead, ToolError> {
    let symbolic = git
        .cmd(["symbolic-ref", "--quiet", "HEAD"])
        .capture_allowing(4096, &[0, 1, 128]);
    let stashes = git
        .cmd(["rev-list", "--walk-reflogs", "--count", "refs/stash", "--"])
        .capture_allowing(4096, &[0, 128]);
    let (symbolic, oid, stashes) = tokio::try_join!(symbolic, git.head(), stashes)?;
    let name = symbolic.success().then(|| {
        let name = symbolic.sink.bytes.trim_ascii_end();
        name.strip_prefix(b"refs/heads/").unwrap_or(name)
    });
    let (branch, branch_bytes_b64) = opt_name_text(name);
    let stashes = String::from_utf8_lossy(&stashes.sink.bytes)
        .trim()
        .parse()
        .unwrap_or(0);
    Ok(BareHead {
        head: Head {
            detached: branch.is_none(),
            unborn: oid.is_none(),
            short_sha: oid.as_ref().map(|o| o.short().to_owned()),
            sha: oid.map(|o| o.to_string()),
            branch,
            branch_bytes_b64,
            upstream: None,
            upstream_bytes_b64: None,
            ahead: None,
            behind: None,
            rebasing: false,
        },
        stashes,
    })
}

// ---------------------------------------------------------------------------------------
// commits and refs

async fn recent_log(git: &Git<'_>, n: usize) -> Result<Vec<Commit>, ToolError> {
    let done = git
        .cmd([
            "log",
            "-z",
            &log::format(),
            &format!("--max-count={n}"),
            "HEAD",
            "--",
        ])
        .stream_allowing(Records::new(Log::new(n)), &[0, 128])
        .await?;
    if done.code == Some(128) {
        // An unborn branch has no log; anything else shows up in `status` as well.
        return Ok(Vec::new());
    }
    let parsed = done
        .sink
        .finish(true)
        .map_err(|e| ToolError::internal(e.to_string()))?;
    Ok(parsed.commits)
}

/// Local branch names and the few remote refs that reveal the default branch.
#[derive(Debug, Default)]
struct BranchRefs {
    local: Vec<String>,
    origin_head: Option<String>,
    origin: Vec<String>,
}

async fn branch_refs(git: &Git<'_>) -> Result<BranchRefs, ToolError> {
    let format = "--format=%(refname)%00%(symref)";
    // Two listings, so a repository with thousands of local branches cannot push the
    // default-branch refs past the `--count` cut.
    let local = git
        .cmd([
            "for-each-ref",
            format,
            &format!("--count={BRANCH_SAMPLE}"),
            "refs/heads/",
        ])
        .capture(4 * 1024 * 1024);
    let origin = git
        .cmd([
            "for-each-ref",
            format,
            "refs/remotes/origin/HEAD",
            "refs/remotes/origin/main",
            "refs/remotes/origin/master",
        ])
        .capture(64 * 1024);
    let (local, origin) = tokio::try_join!(local, origin)?;
    let mut bytes = local.sink.bytes;
    bytes.extend_from_slice(&origin.sink.bytes);
    Ok(parse_branch_refs(&bytes))
}

/// `for-each-ref --format=%(refname)%00%(symref)` lines. Ref names never contain NUL or
/// a newline, so both separators are unambiguous.
fn parse_branch_refs(bytes: &[u8]) -> BranchRefs {
    let mut refs = BranchRefs::default();
    for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let text = String::from_utf8_lossy(line);
        let (name, target) = text.split_once('\0').unwrap_or((&text, ""));
        if let Some(local) = name.strip_prefix("refs/heads/") {
            if refs.local.len() < BRANCH_SAMPLE {
                refs.local.push(local.to_owned());
            }
        } else if name == "refs/remotes/origin/HEAD" {
            refs.origin_head = target
                .strip_prefix("refs/remotes/origin/")
                .map(str::to_owned);
        } else if let Some(remote) = name.strip_prefix("refs/remotes/origin/") {
            refs.origin.push(remote.to_owned());
        }
    }
    refs
}

fn default_branch(refs: &BranchRefs) -> (Option<String>, Option<&'static str>) {
    if let Some(head) = &refs.origin_head {
        return (Some(head.clone()), Some("origin/HEAD"));
    }
    for name in ["main", "master"] {
        if refs.local.iter().any(|b| b == name) {
            return (Some(name.to_owned()), Some("local"));
        }
    }
    for name in ["main", "master"] {
        if refs.origin.iter().any(|b| b == name) {
            return (Some(name.to_owned()), Some("remote"));
        }
    }
    (None, None)
}

fn top(counts: BTreeMap<String, u64>, n: usize) -> Vec<Counted> {
    let mut list: Vec<Counted> = counts
        .into_iter()
        .map(|(name, count)| Counted { name, count })
        .collect();
    list.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
    list.truncate(n);
    list
}

fn branch_naming(refs: &BranchRefs, default: Option<&str>) -> BranchNaming {
    let names: Vec<&String> = refs
        .local
        .iter()
        .filter(|b| Some(b.as_str()) != default)
        .collect();
    let mut prefixes = BTreeMap::new();
    for name in &names {
        if let Some((prefix, rest)) = name.split_once('/') {
            if !rest.is_empty() {
                *prefixes.entry(format!("{prefix}/")).or_insert(0) += 1;
            }
        }
    }
    BranchNaming {
        sampled: names.len() as u64,
        prefixes: top(prefixes, 5),
        examples: names.iter().take(3).map(|s| s.to_string()).collect(),
    }
}

/// The type of a Conventional Commits subject (`feat(api)!: add x` → `feat`), lowercased.
pub fn conventional_type(subject: &str) -> Option<String> {
    let (head, rest) = subject.split_once(": ")?;
    if rest.trim().is_empty() {
        return None;
    }
    let head = head.strip_suffix('!').unwrap_or(head);
    let kind = match head.split_once('(') {
        Some((kind, scope)) => {
            let scope = scope.strip_suffix(')')?;
            if scope.is_empty() || scope.contains(['(', ')']) {
                return None;
            }
            kind
        }
        None => head,
    };
    let ok = (1..=16).contains(&kind.len()) && kind.bytes().all(|b| b.is_ascii_alphabetic());
    ok.then(|| kind.to_ascii_lowercase())
}

fn commit_style(commits: &[Commit]) -> CommitStyle {
    let subjects: Vec<&str> = commits
        .iter()
        .take(STYLE_SAMPLE)
        .filter(|c| c.parents.len() < 2)
        .map(|c| c.subject.as_str())
        .collect();
    if subjects.is_empty() {
        return CommitStyle::default();
    }
    let mut types = BTreeMap::new();
    let mut conventional = 0u64;
    for subject in &subjects {
        if let Some(kind) = conventional_type(subject) {
            conventional += 1;
            *types.entry(kind).or_insert(0) += 1;
        }
    }
    let ratio = conventional as f64 / subjects.len() as f64;
    let ratio = (ratio * 100.0).round() / 100.0;
    CommitStyle {
        sampled: subjects.len() as u64,
        conventional_commit_ratio: Some(ratio),
        style: Some(match ratio {
            r if r >= 0.6 => "conventional",
            r if r >= 0.2 => "mixed",
            _ => "free-form",
        }),
        types: top(types, 5),
        examples: subjects.iter().take(2).map(|s| clip(s, 72)).collect(),
    }
}

fn clip(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

// ---------------------------------------------------------------------------------------
// config, files on disk

#[derive(Debug, Default)]
struct ConfigFacts {
    hooks_path: Option<String>,
    sparse_checkout: bool,
    commit_signing: bool,
}

async fn read_config(git: &Git<'_>) -> Result<ConfigFacts, ToolError> {
    let out = git
        .cmd([
            "config",
            "--show-scope",
            "-z",
            "--get-regexp",
            r"^(core\.hookspath|core\.sparsecheckout|commit\.gpgsign)$",
        ])
        .capture_allowing(64 * 1024, &[0, 1])
        .await?;
    let mut facts = ConfigFacts::default();
    // `-z --show-scope`: scope NUL key LF value NUL. Our own `-c` overrides have scope
    // `command` and say nothing about the repository, so they are skipped.
    let fields: Vec<&[u8]> = out.sink.bytes.split(|b| *b == 0).collect();
    for pair in fields.chunks(2) {
        let [scope, kv] = pair else { continue };
        if *scope == b"command" {
            continue;
        }
        let text = String::from_utf8_lossy(kv);
        let (key, value) = text.split_once('\n').unwrap_or((&text, "true"));
        let truthy = matches!(
            value.to_ascii_lowercase().as_str(),
            "true" | "yes" | "on" | "1"
        );
        match key {
            "core.hookspath" => facts.hooks_path = Some(value.to_owned()),
            "core.sparsecheckout" => facts.sparse_checkout = truthy,
            "commit.gpgsign" => facts.commit_signing = truthy,
            _ => {}
        }
    }
    Ok(facts)
}

fn list_hooks(repo: &Repo, hooks_path: Option<&str>) -> Hooks {
    let dir = match hooks_path {
        Some(p) if Path::new(p).is_absolute() => Path::new(p).to_path_buf(),
        Some(p) => repo.path.join(p),
        None => repo.common_dir.join("hooks"),
    };
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".sample") && !n.starts_with('.'))
        .collect();
    names.sort();
    let count = names.len() as u64;
    names.truncate(HOOK_NAMES);
    Hooks {
        hooks_path: hooks_path.map(str::to_owned),
        names,
        count,
    }
}

/// Guidance files looked for, in the order they are reported.
const GUIDANCE: [&str; 8] = [
    "AGENTS.md",
    "CLAUDE.md",
    ".github/copilot-instructions.md",
    "CONTRIBUTING.md",
    "CONTRIBUTING",
    "CONTRIBUTING.rst",
    ".github/CONTRIBUTING.md",
    "docs/CONTRIBUTING.md",
];

#[derive(Debug, Default)]
struct ConventionFiles {
    codeowners: Option<String>,
    guidance: Vec<String>,
    lfs: bool,
}

/// Which convention files exist: on disk in a working tree, in HEAD's tree when bare.
async fn convention_files(
    git: &Git<'_>,
    worktree: Option<&Path>,
) -> Result<ConventionFiles, ToolError> {
    let wanted: Vec<&str> = codeowners::LOCATIONS
        .iter()
        .chain(GUIDANCE.iter())
        .copied()
        .collect();
    let (present, attributes): (Vec<&str>, Vec<u8>) = match worktree {
        Some(top) => {
            let top = top.to_path_buf();
            crate::safe_file::off_thread(git.cancel(), move || {
                let present = wanted
                    .iter()
                    .copied()
                    .filter(|f| top.join(f).is_file())
                    .collect();
                (present, read_capped(&top, ".gitattributes", ATTRIBUTES_CAP))
            })
            .await?
        }
        None => {
            let listed = git
                .cmd([
                    "--literal-pathspecs",
                    "ls-tree",
                    "-z",
                    "--name-only",
                    "HEAD",
                    "--",
                ])
                .args(wanted.iter().copied())
                .capture_allowing(64 * 1024, &[0, 128]);
            let attributes = git
                .cmd(["cat-file", "blob", "HEAD:.gitattributes"])
                .capture_allowing(1024 * 1024, &[0, 128]);
            let (listed, attributes) = tokio::try_join!(listed, attributes)?;
            let names: Vec<String> = listed
                .sink
                .bytes
                .split(|b| *b == 0)
                .map(|n| String::from_utf8_lossy(n).into_owned())
                .collect();
            let present = wanted
                .iter()
                .copied()
                .filter(|w| names.iter().any(|n| n == w))
                .collect();
            let attributes = if attributes.success() {
                attributes.sink.bytes
            } else {
                Vec::new()
            };
            (present, attributes)
        }
    };
    Ok(ConventionFiles {
        codeowners: codeowners::LOCATIONS
            .iter()
            .find(|l| present.contains(l))
            .map(|l| l.to_string()),
        guidance: GUIDANCE
            .iter()
            .filter(|g| present.contains(g))
            .map(|g| g.to_string())
            .collect(),
        lfs: uses_lfs(&attributes),
    })
}

/// True when some `.gitattributes` line sets `filter=lfs`.
fn uses_lfs(attributes: &[u8]) -> bool {
    String::from_utf8_lossy(attributes).lines().any(|line| {
        let line = line.trim();
        !line.starts_with('#') && line.split_whitespace().skip(1).any(|a| a == "filter=lfs")
    })
}

/// Submodule paths from `.gitmodules` (working trees only; a bare repository has none
/// checked out).
async fn submodule_paths(
    git: &Git<'_>,
    worktree: Option<&Path>,
) -> Result<Vec<Vec<u8>>, ToolError> {
    let Some(top) = worktree else {
        return Ok(Vec::new());
    };
    // Like git, never through a symlink: it could name any file on the machine.
    let modules = std::fs::symlink_metadata(top.join(".gitmodules"));
    if !modules.is_ok_and(|m| m.is_file()) {
        return Ok(Vec::new());
    }
    let out = git
        .cmd([
            "config",
            "--file",
            ".gitmodules",
            "-z",
            "--get-regexp",
            r"^submodule\..*\.path$",
        ])
        .capture_allowing(1024 * 1024, &[0, 1])
        .await?;
    Ok(out
        .sink
        .bytes
        .split(|b| *b == 0)
        .filter_map(|kv| {
            kv.iter()
                .position(|b| *b == b'\n')
                .map(|at| kv[at + 1..].to_vec())
        })
        .collect())
}

fn count_uninitialized(subs: &mut Submodules, worktree: Option<&Path>, paths: &[Vec<u8>]) {
    use std::os::unix::ffi::OsStrExt;
    subs.total = paths.len() as u64;
    let Some(top) = worktree else { return };
    for path in paths {
        let dir = top.join(std::ffi::OsStr::from_bytes(path));
        if !dir.join(".git").exists() {
            subs.uninitialized += 1;
            push_attention(subs, PathText::from_bytes(path), "uninitialized");
        }
    }
}

// ---------------------------------------------------------------------------------------
// in-progress operations

/// The first `cap` bytes of `rel` under `top` when it is a regular file reached without
/// a symlink (empty otherwise), so an enormous file cannot exhaust memory. Git itself does
/// not follow symbolic links for in-tree attribute files, and a link could lead to a FIFO.
fn read_capped(top: &Path, rel: &str, cap: u64) -> Vec<u8> {
    crate::safe_file::read_prefix_in(top, rel, cap).unwrap_or_default()
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

// ---------------------------------------------------------------------------------------
// hints and budget

fn hints(d: &BriefData) -> Vec<Hint> {
    let mut out = Vec::new();
    let mut hint = |tool, reason: String| out.push(Hint { tool, reason });
    let conflicted = d.working_tree.as_ref().map_or(0, |w| w.conflicted);
    if conflicted > 0 {
        hint(
            "conflict.read",
            format!(
                "{conflicted} conflicted path(s): read them as structured data before editing."
            ),
        );
    }
    if let Some(op) = &d.operation_details {
        let what = match (op.step, op.total) {
            (Some(s), Some(t)) => format!("A {} is in progress (step {s}/{t})", op.kind),
            _ => format!("A {} is in progress", op.kind),
        };
        if conflicted == 0 && op.kind != "bisect" {
            hint(
                "conflict.read",
                format!("{what}: see what it is applying before recommending continue or abort."),
            );
        } else if op.kind == "bisect" {
            hint(
                "repo.reflog",
                format!("{what}: the reflog shows the commits already tested."),
            );
        }
    }
    if d.head.detached && !d.head.rebasing && d.operation_in_progress.is_none() {
        hint(
            "repo.branchStack",
            "HEAD is detached: commits made here belong to no branch.".to_owned(),
        );
    }
    if let Some(behind) = d.head.behind.filter(|b| *b > 0) {
        hint(
            "repo.conflictPreflight",
            format!(
                "Branch is {behind} commit(s) behind {}; predict the merge or rebase before recommending one.",
                d.head.upstream.as_deref().unwrap_or("its upstream")
            ),
        );
    }
    let s = d.submodules.as_ref().map_or(&NO_SUBMODULES, |s| s);
    if s.drifted + s.uninitialized + s.conflicts + s.modified > 0 {
        hint(
            "submodule.status",
            format!(
                "Submodules need attention ({} drifted, {} modified, {} uninitialized).",
                s.drifted, s.modified, s.uninitialized
            ),
        );
    }
    if let Some(w) = d
        .working_tree
        .as_ref()
        .filter(|w| !w.clean && w.conflicted == 0)
    {
        hint(
            "worktree.changes",
            format!("{} changed path(s) in the working tree.", w.changed),
        );
    }
    if d.head.unborn {
        hint("repo.status", "No commits yet on this branch.".to_owned());
    } else {
        hint(
            "repo.history",
            "Page through more history, or repo.scope for one directory.".to_owned(),
        );
    }
    out.truncate(MAX_HINTS);
    out
}

/// Shrinks the result until it fits `max_tokens`, cutting the least useful detail first.
fn fit(mut out: Local<BriefData>, max_tokens: u64) -> Local<BriefData> {
    let limit = max_tokens as usize * CHARS_PER_TOKEN;
    out.data.budget.max_tokens = max_tokens;
    let size = |o: &Local<BriefData>| serde_json::to_string(o).map_or(usize::MAX, |s| s.len());
    type Step = fn(&mut BriefData) -> bool;
    let steps: [(&'static str, Step); 14] = [
        ("conventions.examples", |d| {
            let Some(c) = &mut d.conventions else {
                return false;
            };
            let had = !c.commit_messages.examples.is_empty() || !c.branch_names.examples.is_empty();
            c.commit_messages.examples.clear();
            c.branch_names.examples.clear();
            had
        }),
        ("recentCommits", |d| {
            halve(&mut d.recent_commits, 3, &mut d.recent_commits_truncated)
        }),
        ("workingTree.topPaths", |d| match &mut d.working_tree {
            Some(w) => halve(&mut w.top_paths, 3, &mut w.top_paths_truncated),
            None => false,
        }),
        ("conventions.hooks.names", |d| match &mut d.conventions {
            Some(c) if !c.hooks.names.is_empty() => {
                c.hooks.names.clear();
                true
            }
            _ => false,
        }),
        ("submodules.attention", |d| match &mut d.submodules {
            Some(s) if !s.attention.is_empty() => {
                s.attention.clear();
                s.attention_truncated = true;
                true
            }
            _ => false,
        }),
        ("conventions.types", |d| {
            let Some(c) = &mut d.conventions else {
                return false;
            };
            let had = !c.commit_messages.types.is_empty() || c.branch_names.prefixes.len() > 1;
            c.commit_messages.types.clear();
            c.branch_names.prefixes.truncate(1);
            had
        }),
        ("recentCommits.subjects", |d| {
            let mut cut = false;
            for c in &mut d.recent_commits {
                let short = clip(&c.subject, 48);
                cut |= short != c.subject;
                c.subject = short;
            }
            cut
        }),
        ("recentCommits", |d| {
            halve(&mut d.recent_commits, 1, &mut d.recent_commits_truncated)
        }),
        ("workingTree.topPaths", |d| match &mut d.working_tree {
            Some(w) => halve(&mut w.top_paths, 0, &mut w.top_paths_truncated),
            None => false,
        }),
        ("hints", |d| {
            let had = d.hints.len() > 1;
            d.hints.truncate(1);
            had
        }),
        ("conventions", |d| d.conventions.take().is_some()),
        ("recentCommits", |d| {
            halve(&mut d.recent_commits, 0, &mut d.recent_commits_truncated)
        }),
        ("hints", |d| {
            let had = !d.hints.is_empty();
            d.hints.clear();
            had
        }),
        ("head.shortSha", |d| d.head.short_sha.take().is_some()),
    ];
    let tokens = |o: &Local<BriefData>| size(o).div_ceil(CHARS_PER_TOKEN) as u64;
    for (name, step) in steps {
        loop {
            out.data.budget.approx_tokens = tokens(&out);
            if size(&out) <= limit {
                return out;
            }
            if !step(&mut out.data) {
                break;
            }
            let trimmed = &mut out.data.budget.trimmed;
            if !trimmed.contains(&name) {
                trimmed.push(name);
            }
            // A section dropped whole makes the notes about its parts redundant.
            if out.data.conventions.is_none() {
                trimmed.retain(|t| !t.starts_with("conventions."));
            }
            if out.data.recent_commits.is_empty() {
                trimmed.retain(|t| *t != "recentCommits.subjects");
            }
        }
    }
    // Whatever remains is the fixed skeleton (plus long names); report its true size.
    out.data.budget.approx_tokens = tokens(&out);
    out
}

/// What `hints` reads when the repository has no submodules.
static NO_SUBMODULES: Submodules = Submodules {
    total: 0,
    drifted: 0,
    modified: 0,
    untracked: 0,
    uninitialized: 0,
    conflicts: 0,
    attention: Vec::new(),
    attention_truncated: false,
};

/// Halves `list` (not below `floor`); false when it was already at the floor.
fn halve<T>(list: &mut Vec<T>, floor: usize, truncated: &mut bool) -> bool {
    if list.len() <= floor {
        return false;
    }
    let keep = (list.len() / 2).max(floor);
    list.truncate(keep);
    *truncated = true;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conventional_subjects() {
        let yes = [
            "feat: add x",
            "fix(parser): handle y",
            "refactor!: drop z",
            "Feat(API)!: shout",
            "chore(deps-dev): bump",
        ];
        let no = [
            "Add x",
            "feat:no space",
            "fix(): empty scope",
            "Merge branch 'a'",
            "fix(a)(b): twice",
            "feat: ",
            "WIP 2: stuff",
            "v1.2: release",
        ];
        for s in yes {
            assert!(conventional_type(s).is_some(), "{s}");
        }
        for s in no {
            assert!(conventional_type(s).is_none(), "{s}");
        }
        assert_eq!(
            conventional_type("Feat(API)!: shout").as_deref(),
            Some("feat")
        );
    }

    #[test]
    fn lfs_attribute_lines() {
        assert!(uses_lfs(b"*.psd filter=lfs diff=lfs merge=lfs -text\n"));
        assert!(!uses_lfs(b"# *.psd filter=lfs\n*.txt text\n"));
        assert!(!uses_lfs(b""));
    }

    #[test]
    fn default_branch_prefers_origin_head() {
        let refs = parse_branch_refs(
            b"refs/heads/feat/a\0\nrefs/heads/master\0\nrefs/remotes/origin/HEAD\0refs/remotes/origin/trunk\n",
        );
        assert_eq!(
            default_branch(&refs),
            (Some("trunk".into()), Some("origin/HEAD"))
        );
        let refs = parse_branch_refs(b"refs/heads/feat/a\0\nrefs/heads/master\0\n");
        assert_eq!(
            default_branch(&refs),
            (Some("master".into()), Some("local"))
        );
        let naming = branch_naming(&refs, Some("master"));
        assert_eq!(naming.sampled, 1);
        assert_eq!(naming.prefixes[0].name, "feat/");
    }
}
