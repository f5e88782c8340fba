//! Repository-wide read tools: `repo.status`, `repo.refs`, `repo.history`.

pub mod conflict_preflight;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::input::Bounded;
use super::{Annotations, CallCtx, Local, Tool};
use crate::config::Toolset;
use crate::error::ToolError;
use crate::git::status::StatusQuery;
use crate::git::{Git, Oid, RepoRelPath, Rev, repo};
use crate::model::{OrigPathText, PathText, opt_name_text};
use crate::parse::for_each_ref::{self, ForEachRef, Rows, Track};
use crate::parse::status_v2::{self, Kind};
use crate::parse::{ParseError, Records, log, remote_v, stash};
use crate::process::Flow;

/// Serialized entries stop being kept past this many bytes, so a default result stays
/// under 64 KiB even when paths are long.
const ENTRY_BYTES_BUDGET: usize = 56 * 1024;
/// Most bytes of `git remote -v` read; past it the call fails rather than drop remotes.
const REMOTES_CAP: usize = 4 * 1024 * 1024;

/// `repo.status`: branch, upstream, and the changed paths of the working tree.
pub struct Status;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StatusInput {
    /// Absolute path of the repository (any directory inside a working tree works).
    pub repo_path: String,
    /// FluxGit workspace id; accepted for compatibility and not needed locally.
    #[serde(default)]
    pub repo_id: Option<String>,
    /// Most entries to return; counts always cover every path.
    #[serde(default)]
    pub max_entries: Bounded<1, 5000, 500>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusData {
    /// Current branch name; null when detached. Not valid UTF-8: shown with U+FFFD,
    /// and `branchBytesB64` holds the exact name.
    pub branch: Option<String>,
    /// Base64 of the branch name, present only when it is not valid UTF-8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch_bytes_b64: Option<String>,
    pub detached: bool,
    /// True on a branch with no commits yet.
    pub unborn: bool,
    /// The commit HEAD points at; null when unborn.
    pub head_oid: Option<String>,
    pub upstream: Option<String>,
    /// Base64 of the upstream name, present only when it is not valid UTF-8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream_bytes_b64: Option<String>,
    /// Commits ahead of / behind the upstream; null without an upstream.
    pub ahead: Option<u64>,
    pub behind: Option<u64>,
    /// No changes, untracked files included.
    pub clean: bool,
    /// True number of changed paths (every entry, kept or not).
    pub changed_files: u64,
    pub counts: StatusCounts,
    pub entries: Vec<StatusEntry>,
    pub entries_truncated: bool,
    pub max_entries: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusCounts {
    pub staged: u64,
    pub unstaged: u64,
    pub untracked: u64,
    pub conflicted: u64,
    pub renamed: u64,
    pub submodules: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusEntry {
    /// Two-letter code: index then worktree (`.` unchanged, `M`, `A`, `D`, `R`, `C`, `T`,
    /// `U`; `??` untracked).
    pub status: String,
    /// `changed`, `renamed`, `copied`, `unmerged` or `untracked`.
    pub kind: &'static str,
    #[serde(flatten)]
    pub path: PathText,
    /// The source of a rename or copy.
    #[serde(flatten)]
    pub orig_path: Option<OrigPathText>,
    /// Similarity score of a rename or copy (0–100).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<u8>,
    /// Present for submodules.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub submodule: Option<SubmoduleState>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubmoduleState {
    pub commit_changed: bool,
    pub modified: bool,
    pub untracked: bool,
}

impl From<status_v2::Entry> for StatusEntry {
    fn from(e: status_v2::Entry) -> Self {
        let kind = match (e.kind, e.score.as_deref().and_then(|s| s.chars().next())) {
            (Kind::Renamed, Some('C')) => "copied",
            (Kind::Renamed, _) => "renamed",
            (Kind::Changed, _) => "changed",
            (Kind::Unmerged, _) => "unmerged",
            (Kind::Untracked, _) => "untracked",
            (Kind::Ignored, _) => "ignored",
        };
        StatusEntry {
            status: String::from_utf8_lossy(&e.xy).into_owned(),
            kind,
            path: PathText::from_bytes(&e.path),
            orig_path: e.orig_path.as_deref().map(OrigPathText::from_bytes),
            similarity: e.score.as_deref().and_then(|s| s.get(1..)?.parse().ok()),
            submodule: e.submodule.map(|s| SubmoduleState {
                commit_changed: s.commit_changed,
                modified: s.modified,
                untracked: s.untracked,
            }),
        }
    }
}

impl Tool for Status {
    type Input = StatusInput;
    type Output = Local<StatusData>;

    const NAME: &'static str = "repo.status";
    const TITLE: &'static str = "Repository status";
    const DESCRIPTION: &'static str = "Working tree status: current branch (or detached/unborn), upstream with ahead/behind, counts of staged, unstaged, untracked and conflicted paths, and the changed paths themselves (renames with their source, submodule state). Entries are capped by maxEntries; counts and changedFiles are always true totals.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: StatusInput) -> Result<Self::Output, ToolError> {
        let repo = repo::open(&ctx.config, "repoPath", &input.repo_path, &ctx.cancel).await?;
        repo.require_worktree()?;
        let git = Git::new(&repo, &ctx.cancel);
        let max = input.max_entries.usize();
        let status = StatusQuery::with_branch().read(&git, max).await?;
        Ok(Local::new::<Self>(&repo, status_data(status, max)))
    }
}

fn status_data(status: status_v2::Status, max: usize) -> StatusData {
    let mut truncated = status.truncated();
    let mut budget = ENTRY_BYTES_BUDGET;
    let mut entries = Vec::with_capacity(status.entries.len());
    for entry in status.entries {
        let cost = 96 + entry.path.len() * 2 + entry.orig_path.as_ref().map_or(0, |p| p.len() * 2);
        if cost > budget {
            truncated = true;
            break;
        }
        budget -= cost;
        entries.push(StatusEntry::from(entry));
    }
    let b = status.branch;
    let c = status.counts;
    let (branch, branch_bytes_b64) = opt_name_text(b.head.as_deref());
    let (upstream, upstream_bytes_b64) = opt_name_text(b.upstream.as_deref());
    StatusData {
        detached: b.head.is_none(),
        unborn: b.oid.is_none(),
        head_oid: b.oid.map(|o| o.to_string()),
        branch,
        branch_bytes_b64,
        upstream,
        upstream_bytes_b64,
        ahead: b.ahead_behind.map(|(a, _)| a),
        behind: b.ahead_behind.map(|(_, b)| b),
        clean: c.entries == 0,
        changed_files: c.entries,
        counts: StatusCounts {
            staged: c.staged,
            unstaged: c.unstaged,
            untracked: c.untracked,
            conflicted: c.conflicted,
            renamed: c.renamed,
            submodules: c.submodules,
        },
        entries,
        entries_truncated: truncated,
        max_entries: max as u64,
    }
}

/// A parse failure is our bug or a git we do not understand; never the caller's.
fn parse_failed(err: ParseError) -> ToolError {
    ToolError::internal(err.to_string())
}

/// `repo.refs`: HEAD, branches, remote-tracking branches, tags, remotes and stashes.
pub struct Refs;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RefsInput {
    /// Absolute path of the repository (a working tree, a directory inside one, or a bare
    /// repository).
    pub repo_path: String,
    /// FluxGit workspace id; accepted for compatibility and not needed locally.
    #[serde(default)]
    pub repo_id: Option<String>,
    /// Most entries kept in each list; the `*Total` fields always count every entry.
    #[serde(default)]
    pub max_per_list: Bounded<1, 10000, 1000>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefsData {
    pub head: HeadRef,
    /// Local branches, by name.
    pub local: Vec<LocalBranch>,
    pub local_truncated: bool,
    pub local_total: u64,
    /// Remote-tracking branches, by name.
    pub remote: Vec<RemoteBranch>,
    pub remote_truncated: bool,
    pub remote_total: u64,
    pub tags: Vec<TagRef>,
    pub tags_truncated: bool,
    pub tags_total: u64,
    /// Configured remotes; credentials in their URLs are redacted.
    pub remotes: Vec<RemoteInfo>,
    pub remotes_truncated: bool,
    pub remotes_total: u64,
    /// Stash entries, newest first.
    pub stashes: Vec<StashEntry>,
    pub stashes_truncated: bool,
    pub stashes_total: u64,
    pub max_per_list: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HeadRef {
    /// The branch HEAD points at (`refs/heads/main`); null when detached.
    #[serde(rename = "ref")]
    pub ref_name: Option<String>,
    /// The commit HEAD points at; null on an unborn branch.
    pub oid: Option<Oid>,
    pub detached: bool,
    pub unborn: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocalBranch {
    /// Branch name without `refs/heads/`.
    pub name: String,
    pub oid: Oid,
    /// The configured upstream (`origin/main`); null without one.
    pub upstream: Option<String>,
    /// True when an upstream is configured but its ref no longer exists.
    pub upstream_gone: bool,
    /// Commits ahead of / behind the upstream; null without a usable upstream.
    pub ahead: Option<u64>,
    pub behind: Option<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemoteBranch {
    /// Name without `refs/remotes/` (`origin/main`).
    pub name: String,
    pub oid: Oid,
    /// For a symbolic ref such as `origin/HEAD`: the branch it points to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symref: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TagRef {
    /// Tag name without `refs/tags/`.
    pub name: String,
    /// The object the tag ref points at (the tag object when annotated).
    pub oid: Oid,
    pub annotated: bool,
    /// For an annotated tag: the object it finally points to (usually a commit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_oid: Option<Oid>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemoteInfo {
    pub name: String,
    /// The fetch URL as `git remote -v` shows it (`url.<base>.insteadOf` applied), with
    /// any password or token replaced by `***`.
    pub fetch_url: String,
    /// The push URLs as `git remote -v` shows them (`pushurl`, or the URL with
    /// `pushInsteadOf` or `insteadOf` applied), redacted the same way.
    pub push_urls: Vec<String>,
    pub credentials_redacted: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StashEntry {
    /// `n` in `stash@{n}`.
    pub index: u64,
    pub oid: Oid,
    pub message: String,
}

/// for-each-ref fields `repo.refs` asks for, in this order. One call covers every ref:
/// branches get their tracking counts, tags their peeled target, symbolic refs (such as
/// `origin/HEAD`) their target.
const REF_FIELDS: [&str; 7] = [
    "%(refname)",
    "%(objectname)",
    "%(objecttype)",
    "%(*objectname)",
    "%(upstream:short)",
    "%(upstream:track,nobracket)",
    "%(symref)",
];

/// Sorts refs into the lists of `repo.refs`, each capped, each counted.
struct RefLists {
    max: usize,
    local: (Vec<LocalBranch>, u64),
    remote: (Vec<RemoteBranch>, u64),
    tags: (Vec<TagRef>, u64),
    has_stash: bool,
}

fn keep<T>(
    list: &mut (Vec<T>, u64),
    max: usize,
    item: impl FnOnce() -> Result<T, ParseError>,
) -> Result<(), ParseError> {
    list.1 += 1;
    if list.0.len() < max {
        list.0.push(item()?);
    }
    Ok(())
}

impl Rows for RefLists {
    fn row(&mut self, f: Vec<Vec<u8>>, offset: usize) -> Result<Flow, ParseError> {
        let text = |i: usize| String::from_utf8_lossy(&f[i]).into_owned();
        let oid = |i: usize| {
            Oid::from_bytes(&f[i]).ok_or_else(|| ParseError::new(offset, "bad object id"))
        };
        let name = text(0);
        let max = self.max;
        if let Some(branch) = name.strip_prefix("refs/heads/") {
            keep(&mut self.local, max, || {
                let upstream = (!f[4].is_empty()).then(|| text(4));
                let track = for_each_ref::track(&f[5])
                    .ok_or_else(|| ParseError::new(offset, "bad upstream tracking text"))?;
                let (ahead, behind) = match (&upstream, track) {
                    (Some(_), Track::Counts(a, b)) => (Some(a), Some(b)),
                    _ => (None, None),
                };
                Ok(LocalBranch {
                    name: branch.to_owned(),
                    oid: oid(1)?,
                    upstream_gone: upstream.is_some() && track == Track::Gone,
                    upstream,
                    ahead,
                    behind,
                })
            })?;
        } else if let Some(branch) = name.strip_prefix("refs/remotes/") {
            keep(&mut self.remote, max, || {
                Ok(RemoteBranch {
                    name: branch.to_owned(),
                    oid: oid(1)?,
                    symref: (!f[6].is_empty()).then(|| {
                        let target = text(6);
                        target
                            .strip_prefix("refs/remotes/")
                            .map(str::to_owned)
                            .unwrap_or(target)
                    }),
                })
            })?;
        } else if let Some(tag) = name.strip_prefix("refs/tags/") {
            keep(&mut self.tags, max, || {
                let annotated = f[2] == b"tag";
                Ok(TagRef {
                    name: tag.to_owned(),
                    oid: oid(1)?,
                    annotated,
                    target_oid: if annotated && !f[3].is_empty() {
                        Some(oid(3)?)
                    } else {
                        None
                    },
                })
            })?;
        } else if name == "refs/stash" {
            self.has_stash = true;
        }
        Ok(Flow::More)
    }
}

impl Tool for Refs {
    type Input = RefsInput;
    type Output = Local<RefsData>;

    const NAME: &'static str = "repo.refs";
    const TITLE: &'static str = "Branches, tags, remotes and stashes";
    const DESCRIPTION: &'static str = "HEAD (branch or detached, unborn), local branches with upstream and ahead/behind, remote-tracking branches (symbolic ones such as origin/HEAD marked), tags (annotated or not, with their target), configured remotes with credentials redacted, and stashes. Each list is capped by maxPerList with a *Truncated flag and a true *Total. Works on bare repositories.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: RefsInput) -> Result<Self::Output, ToolError> {
        let repo = repo::open(&ctx.config, "repoPath", &input.repo_path, &ctx.cancel).await?;
        let git = Git::new(&repo, &ctx.cancel);
        let max = input.max_per_list.usize();
        let lists = RefLists {
            max,
            local: (Vec::new(), 0),
            remote: (Vec::new(), 0),
            tags: (Vec::new(), 0),
            has_stash: false,
        };
        let refs = git
            .cmd(["for-each-ref".to_owned(), for_each_ref::format(&REF_FIELDS)])
            .stream(Records::new(ForEachRef::new(REF_FIELDS.len(), lists)));
        let symbolic = git
            .cmd(["symbolic-ref", "--quiet", "HEAD"])
            .capture_allowing(4096, &[0, 1]);
        // `remote -v` rather than the raw configuration: it applies insteadOf rewrites.
        let remotes = git.cmd(["remote", "-v"]).capture(REMOTES_CAP);
        let (refs, symbolic, head, remotes) = tokio::join!(refs, symbolic, git.head(), remotes);
        let lists = refs?.sink.finish(true).map_err(parse_failed)?.rows;
        let symbolic = symbolic?;
        let head_ref = symbolic
            .success()
            .then(|| {
                String::from_utf8_lossy(&symbolic.sink.bytes)
                    .trim()
                    .to_owned()
            })
            .filter(|r| !r.is_empty());
        let head = head?;
        let remotes = remotes?;
        let remotes_parsed = remote_v::parse(&remotes.sink.bytes).map_err(parse_failed)?;

        let (stashes, stashes_total) = if lists.has_stash {
            let done = git
                .cmd(["log", "-g", "-z", stash::FORMAT, "refs/stash", "--"])
                .stream(Records::new(stash::Stashes::new(max)))
                .await?;
            let parsed = done.sink.finish(true).map_err(parse_failed)?;
            let entries = parsed
                .stashes
                .into_iter()
                .map(|s| StashEntry {
                    index: s.index,
                    oid: s.oid,
                    message: s.message,
                })
                .collect();
            (entries, parsed.total)
        } else {
            (Vec::new(), 0)
        };

        let (remotes, remotes_total) = remote_list(&remotes_parsed, max);
        let data = RefsData {
            head: HeadRef {
                detached: head_ref.is_none(),
                unborn: head.is_none(),
                ref_name: head_ref,
                oid: head,
            },
            local_truncated: lists.local.1 > lists.local.0.len() as u64,
            local_total: lists.local.1,
            local: lists.local.0,
            remote_truncated: lists.remote.1 > lists.remote.0.len() as u64,
            remote_total: lists.remote.1,
            remote: lists.remote.0,
            tags_truncated: lists.tags.1 > lists.tags.0.len() as u64,
            tags_total: lists.tags.1,
            tags: lists.tags.0,
            // Past the entries read, remotes are known to exist but not how many.
            remotes_truncated: remotes_total > remotes.len() as u64,
            remotes_total,
            remotes,
            stashes_truncated: stashes_total > stashes.len() as u64,
            stashes_total,
            stashes,
            max_per_list: max as u64,
        };
        Ok(Local::new::<Self>(&repo, data))
    }
}

/// One entry per remote that has a URL, in `git remote -v` order.
fn remote_list(parsed: &[remote_v::Remote], max: usize) -> (Vec<RemoteInfo>, u64) {
    let with_url: Vec<_> = parsed
        .iter()
        .filter_map(|r| Some((r, r.fetch_url.as_deref()?)))
        .collect();
    let out = with_url
        .iter()
        .take(max)
        .map(|(remote, fetch)| {
            let (fetch_url, mut credentials_redacted) = redact_url(&String::from_utf8_lossy(fetch));
            let push_urls = remote
                .push_urls
                .iter()
                .map(|url| {
                    let (shown, redacted) = redact_url(&String::from_utf8_lossy(url));
                    credentials_redacted |= redacted;
                    shown
                })
                .collect();
            RemoteInfo {
                name: remote.name.clone(),
                fetch_url,
                push_urls,
                credentials_redacted,
            }
        })
        .collect();
    (out, with_url.len() as u64)
}

/// Hides secrets a remote URL may carry in its userinfo.
///
/// For `scheme://user:secret@host/…` the whole userinfo goes (for https a lone "user" is
/// very often a token); for ssh only a password does, since `ssh://git@host` names an
/// account. An scp-like `user@host:path` keeps its user unless it carries a `:` secret.
pub(crate) fn redact_url(url: &str) -> (String, bool) {
    if let Some((scheme, rest)) = url.split_once("://") {
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(authority_end);
        let Some(at) = authority.rfind('@') else {
            return (url.to_owned(), false);
        };
        let (userinfo, host) = (&authority[..at], &authority[at + 1..]);
        let ssh = matches!(
            scheme.to_ascii_lowercase().as_str(),
            "ssh" | "git+ssh" | "ssh+git"
        );
        let kept = match userinfo.split_once(':') {
            Some((user, _)) if ssh => format!("{user}:***"),
            None if ssh => return (url.to_owned(), false),
            _ => "***".to_owned(),
        };
        return (format!("{scheme}://{kept}@{host}{tail}"), true);
    }
    // scp-like syntax: `[user@]host:path`; a `:` before the `@` can only be a secret.
    if let Some(at) = url.find('@') {
        let userinfo = &url[..at];
        if let Some((user, _)) = userinfo.split_once(':')
            && !userinfo.contains('/')
        {
            return (format!("{user}:***{}", &url[at..]), true);
        }
    }
    (url.to_owned(), false)
}

/// `repo.history`: a page of commits, with a cursor that survives new commits.
pub struct History;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HistoryInput {
    /// Absolute path of the repository (a working tree, a directory inside one, or a bare
    /// repository).
    pub repo_path: String,
    /// FluxGit workspace id; accepted for compatibility and not needed locally.
    #[serde(default)]
    pub repo_id: Option<String>,
    /// Commits per page.
    #[serde(default)]
    pub limit: Bounded<1, 200, 50>,
    /// `nextCursor` from a previous page. It pins where the walk started, so pages stay
    /// stable while new commits arrive; `ref` is then ignored.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Revision to start from (branch, tag, commit); default HEAD.
    #[serde(default, rename = "ref")]
    pub ref_name: Option<String>,
    /// Only commits touching this repository-relative path.
    #[serde(default)]
    pub path: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistoryData {
    pub commits: Vec<HistoryCommit>,
    /// Pass as `cursor` for the next page; null at the end of history.
    pub next_cursor: Option<String>,
    /// True when HEAD is a branch with no commits yet (and no `ref` was given).
    pub unborn: bool,
    /// The commit the walk starts from.
    pub start_oid: Option<Oid>,
    /// Commits skipped before this page.
    pub skip: u64,
    pub limit: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistoryCommit {
    pub oid: Oid,
    pub short_oid: String,
    pub parents: Vec<Oid>,
    pub author_name: String,
    pub author_email: String,
    /// Unix seconds.
    pub author_time: i64,
    pub committer_name: String,
    pub committer_email: String,
    /// Unix seconds.
    pub committer_time: i64,
    pub subject: String,
}

impl From<log::Commit> for HistoryCommit {
    fn from(c: log::Commit) -> Self {
        HistoryCommit {
            short_oid: c.oid.short().to_owned(),
            oid: c.oid,
            parents: c.parents,
            author_name: c.author_name,
            author_email: c.author_email,
            author_time: c.author_time,
            committer_name: c.committer_name,
            committer_email: c.committer_email,
            committer_time: c.committer_time,
            subject: c.subject,
        }
    }
}

/// Cursor text: base64url of `v1:<start oid>:<skip>`.
const CURSOR_VERSION: &str = "v1";

fn encode_cursor(start: &Oid, skip: u64) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(format!("{CURSOR_VERSION}:{start}:{skip}"))
}

fn decode_cursor(text: &str) -> Result<(Oid, u64), ToolError> {
    use base64::Engine;
    let bad = || {
        ToolError::invalid(
            "cursor",
            "is not a cursor this tool returned (pass nextCursor unchanged)",
        )
    };
    if text.len() > 256 {
        return Err(bad());
    }
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text)
        .map_err(|_| bad())?;
    let raw = String::from_utf8(raw).map_err(|_| bad())?;
    let mut parts = raw.split(':');
    let (Some(CURSOR_VERSION), Some(oid), Some(skip), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad());
    };
    let oid = Oid::parse(oid).ok_or_else(bad)?;
    if skip.is_empty() || !skip.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let skip = skip.parse::<u64>().map_err(|_| bad())?;
    Ok((oid, skip))
}

impl Tool for History {
    type Input = HistoryInput;
    type Output = Local<HistoryData>;

    const NAME: &'static str = "repo.history";
    const TITLE: &'static str = "Commit history";
    const DESCRIPTION: &'static str = "A page of commits (newest first) from HEAD or `ref`, optionally only those touching `path`: id, parents, author and committer with Unix times, subject. `nextCursor` fetches the next page and stays valid while new commits arrive; it is null at the end. An unborn branch gives an empty list with unborn:true. Works on bare repositories.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: HistoryInput) -> Result<Self::Output, ToolError> {
        let cursor = input.cursor.as_deref().map(decode_cursor).transpose()?;
        let rev = Rev::parse_opt("ref", input.ref_name.as_deref())?;
        let path = RepoRelPath::parse_opt("path", input.path.as_deref())?;
        let repo = repo::open(&ctx.config, "repoPath", &input.repo_path, &ctx.cancel).await?;
        let git = Git::new(&repo, &ctx.cancel);
        let limit = input.limit.get();
        // From HEAD without a path filter, the first commit `git log HEAD` prints is HEAD
        // itself, so one git run gives both the page and the commit the cursor builds on.
        if cursor.is_none() && rev.is_none() && path.is_none() {
            let done = git
                .cmd(log_args(limit, 0, "HEAD", None))
                .stream_allowing(Records::new(log::Log::new(limit as usize)), &[0, 128])
                .await?;
            if done.code == Some(0) {
                let parsed = done.sink.finish(true).map_err(parse_failed)?;
                if let Some(start) = parsed.commits.first().map(|c| c.oid.clone()) {
                    return Ok(Local::new::<Self>(
                        &repo,
                        history_data(parsed, start, 0, limit),
                    ));
                }
            }
            // An unborn HEAD, or anything unexpected, takes the general path below.
        }
        let (start, skip) = match (cursor, rev) {
            (Some((oid, skip)), _) => {
                let rev = Rev::parse("cursor", oid.as_str())?;
                let oid = git.resolve_commit("cursor", &rev).await.map_err(|_| {
                    ToolError::invalid("cursor", "names a commit this repository does not have")
                })?;
                (Some(oid), skip)
            }
            (None, Some(rev)) => (Some(git.resolve_commit("ref", &rev).await?), 0),
            (None, None) => (git.head().await?, 0),
        };
        let Some(start) = start else {
            return Ok(Local::new::<Self>(
                &repo,
                HistoryData {
                    commits: Vec::new(),
                    next_cursor: None,
                    unborn: true,
                    start_oid: None,
                    skip: 0,
                    limit,
                },
            ));
        };
        let done = git
            .cmd(log_args(
                limit,
                skip,
                start.as_str(),
                path.as_ref().map(|p| p.as_str()),
            ))
            .stream(Records::new(log::Log::new(limit as usize)))
            .await?;
        let parsed = done.sink.finish(true).map_err(parse_failed)?;
        let data = history_data(parsed, start, skip, limit);
        Ok(Local::new::<Self>(&repo, data))
    }
}

/// `git log` for one page: one commit more than the page, to know whether another follows.
fn log_args(limit: u64, skip: u64, start: &str, path: Option<&str>) -> Vec<String> {
    let mut args = vec![
        "--literal-pathspecs".to_owned(),
        "log".to_owned(),
        "-z".to_owned(),
        log::format(),
        format!("--max-count={}", limit + 1),
        format!("--skip={skip}"),
        "--end-of-options".to_owned(),
        start.to_owned(),
        "--".to_owned(),
    ];
    if let Some(path) = path {
        args.push(path.to_owned());
    }
    args
}

fn history_data(parsed: log::Log, start: Oid, skip: u64, limit: u64) -> HistoryData {
    let more = parsed.seen > limit;
    HistoryData {
        next_cursor: more.then(|| encode_cursor(&start, skip + limit)),
        commits: parsed
            .commits
            .into_iter()
            .map(HistoryCommit::from)
            .collect(),
        unborn: false,
        start_oid: Some(start),
        skip,
        limit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_survive() {
        let cases = [
            "https://user:s3cret@example.com/x.git",
            "https://ghp_token123@github.com/o/r.git",
            "https://example.com/x.git",
            "ssh://git@host/r.git",
            "ssh://git:pw@host/r.git",
            "git@github.com:o/r.git",
            "me:pw@host:r.git",
            "/srv/repos/a@b.git",
            "http://a:b@c@host/p",
        ];
        let out: Vec<_> = cases.iter().map(|c| redact_url(c)).collect();
        insta::assert_debug_snapshot!(out, @r#"
        [
            (
                "https://***@example.com/x.git",
                true,
            ),
            (
                "https://***@github.com/o/r.git",
                true,
            ),
            (
                "https://example.com/x.git",
                false,
            ),
            (
                "ssh://git@host/r.git",
                false,
            ),
            (
                "ssh://git:***@host/r.git",
                true,
            ),
            (
                "git@github.com:o/r.git",
                false,
            ),
            (
                "me:***@host:r.git",
                true,
            ),
            (
                "/srv/repos/a@b.git",
                false,
            ),
            (
                "http://***@host/p",
                true,
            ),
        ]
        "#);
    }

    #[test]
    fn cursors_round_trip_and_refuse_garbage() {
        let oid = Oid::parse(&"ab".repeat(20)).unwrap();
        let text = encode_cursor(&oid, 50);
        assert_eq!(decode_cursor(&text).unwrap(), (oid, 50));
        use base64::Engine;
        let enc = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        for bad in [
            "50".to_owned(),
            "!!!".to_owned(),
            enc("v1:abc:5"),
            enc(&format!("v2:{}:5", "ab".repeat(20))),
            enc(&format!("v1:{}:-5", "ab".repeat(20))),
            enc(&format!("v1:{}:5:6", "ab".repeat(20))),
            enc(&format!("v1:{}:", "ab".repeat(20))),
        ] {
            assert_eq!(decode_cursor(&bad).unwrap_err().code, -32602, "{bad}");
        }
    }
}
