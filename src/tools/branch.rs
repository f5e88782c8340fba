//! Branch-shaped reads: `repo.branchStack` (where the current branch stands against its
//! upstream, the base branch and its neighbours) and `repo.reflog` (where refs have been,
//! with hints for commits nothing points at any more).
//!
//! `repo.branchStack` computes ahead/behind for every local branch in one `for-each-ref`
//! walk with `%(ahead-behind:…)` (git ≥ 2.41), falling back to one `rev-list` per branch
//! on older git. `repo.reflog` reads the reflog line itself (files backend), so old and new
//! ids are the ones git recorded, and decides reachability with one bounded `rev-list`.

use std::collections::HashSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::input::Bounded;
use super::{Annotations, CallCtx, Local, Tool};
use crate::config::Toolset;
use crate::error::ToolError;
use crate::git::{Git, Oid, Repo, repo};
use crate::parse::Records;
use crate::parse::reflog::{self, Entry};
use crate::process::{Capped, Flow, Sink};

/// Base branch names tried when the caller gives none.
const DEFAULT_BASES: [&str; 5] = ["main", "master", "develop", "dev", "trunk"];
/// Local branches read from `for-each-ref` at most.
const BRANCH_CAP: usize = 5000;
/// Bytes of a reflog file's tail read (newest entries are at the end).
const REFLOG_TAIL: u64 = 1024 * 1024;
/// Output of the reachability walk read at most.
const REACH_CAP: usize = 8 * 1024 * 1024;
/// Branches compared one by one when git is too old for `%(ahead-behind:…)`.
const FALLBACK_CAP: usize = 50;

// ---------------------------------------------------------------------------------------
// ref-name validation

/// Checks a ref name the way `git check-ref-format` would (plus: no leading `-`, so it
/// can never be read as an option), allowing one-level names such as `HEAD` or `main`.
pub fn check_ref_name(field: &str, value: &str) -> Result<(), ToolError> {
    let bad = |why: &str| Err(ToolError::invalid(field, why.to_owned()));
    if value.is_empty() {
        return bad("must not be empty");
    }
    if value.len() > 1024 {
        return bad("must be at most 1024 bytes");
    }
    if value.starts_with('-') {
        return bad("must not start with '-'");
    }
    if value.chars().any(|c| c.is_control()) {
        return bad("must not contain control characters (NUL, newline, …)");
    }
    if value.contains([' ', '~', '^', ':', '?', '*', '[', '\\']) {
        return bad("must not contain spaces or any of ~ ^ : ? * [ \\");
    }
    if value.contains("..") || value.contains("@{") || value == "@" {
        return bad("must not contain '..' or '@{' (give a ref name, not a revision)");
    }
    if value.starts_with('/') || value.ends_with('/') || value.contains("//") {
        return bad("must not start or end with '/' or contain '//'");
    }
    if value.ends_with('.') {
        return bad("must not end with '.'");
    }
    if value
        .split('/')
        .any(|c| c.starts_with('.') || c.ends_with(".lock"))
    {
        return bad("no component may start with '.' or end with '.lock'");
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// git version

/// `major * 1000 + minor` of the git in use.
async fn git_version() -> Result<u32, ToolError> {
    let (major, minor) = crate::git::version().await?;
    Ok(major * 1000 + minor)
}

/// `%(ahead-behind:…)` arrived in git 2.41.
const AHEAD_BEHIND_ATOM: u32 = 2041;

// ---------------------------------------------------------------------------------------
// repo.branchStack

/// `repo.branchStack`: the current branch against its upstream, base and neighbours.
pub struct BranchStack;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BranchStackInput {
    /// Absolute path of the repository (any directory inside a working tree works).
    pub repo_path: String,
    #[serde(default)]
    pub repo_id: Option<String>,
    /// Base branch names, tried in order under `refs/heads/` and then
    /// `refs/remotes/origin/` (default main, master, develop, dev, trunk).
    #[serde(default)]
    #[schemars(length(min = 1, max = 20))]
    pub base_candidates: Option<Vec<String>>,
    /// Related branches listed at most.
    #[serde(default)]
    pub max_related: Bounded<1, 50, 8>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BranchStackData {
    pub current: Current,
    pub upstream: Option<RefPoint>,
    pub base: Option<Base>,
    pub related: Vec<Related>,
    /// Local branches that qualified, listed or not.
    pub related_total: u64,
    pub related_truncated: bool,
    /// `low`, `medium` or `high`.
    pub risk: &'static str,
    pub summary: String,
    pub guidance: Vec<String>,
    pub suggested_actions: Vec<Suggested>,
    /// Always `real-git-refs-no-virtual-branches`.
    pub model: &'static str,
    /// Always false: remote-tracking refs are as of the last fetch.
    pub network_fetch_performed: bool,
    /// How ahead/behind was computed: `for-each-ref` (one walk) or `rev-list`.
    pub ahead_behind_method: &'static str,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Current {
    /// Full ref (`refs/heads/x`); null when detached.
    #[serde(rename = "ref")]
    pub ref_name: Option<String>,
    /// Branch name, or `HEAD` when detached.
    pub label: String,
    /// Null on an unborn branch.
    pub commit: Option<String>,
    pub detached: bool,
    pub unborn: bool,
    /// Against the upstream; null without one.
    pub ahead: Option<u64>,
    pub behind: Option<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefPoint {
    #[serde(rename = "ref")]
    pub ref_name: String,
    pub label: String,
    /// Null when the upstream is configured but its ref is gone.
    pub commit: Option<String>,
    /// The configured upstream ref no longer exists.
    pub gone: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Base {
    #[serde(rename = "ref")]
    pub ref_name: String,
    pub label: String,
    pub commit: String,
    /// Null when HEAD is unborn.
    pub distance: Option<Distance>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Distance {
    /// Commits on HEAD that the base lacks.
    pub ahead_from_base: u64,
    /// Commits on the base that HEAD lacks.
    pub behind_base: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Related {
    #[serde(rename = "ref")]
    pub ref_name: String,
    pub label: String,
    pub commit: String,
    /// `tracks-current`, `descends-from-current` or `shares-base`.
    pub relation: &'static str,
    /// Commits on this branch that HEAD lacks; null when HEAD is unborn.
    pub ahead_of_current: Option<u64>,
    pub behind_current: Option<u64>,
    pub upstream: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Suggested {
    pub tool: &'static str,
    pub reason: String,
}

impl Tool for BranchStack {
    type Input = BranchStackInput;
    type Output = Local<BranchStackData>;

    const NAME: &'static str = "repo.branchStack";
    const TITLE: &'static str = "Branch stack";
    const DESCRIPTION: &'static str = "The current branch against its upstream (ahead/behind), the base branch (first of baseCandidates found under refs/heads then refs/remotes/origin, with distance) and related local branches (tracks-current, descends-from-current, shares-base) with ahead/behind for each, plus a risk level, summary and guidance. Local refs only: nothing is fetched.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: BranchStackInput) -> Result<Self::Output, ToolError> {
        let candidates = base_candidates(input.base_candidates)?;
        let repo = repo::open(&ctx.config, "repoPath", &input.repo_path, &ctx.cancel).await?;
        let git = Git::new(&repo, &ctx.cancel);
        let data = branch_stack(&git, &candidates, input.max_related.usize()).await?;
        Ok(Local::new::<Self>(&repo, data))
    }
}

fn base_candidates(given: Option<Vec<String>>) -> Result<Vec<String>, ToolError> {
    let list = match given {
        None => return Ok(DEFAULT_BASES.iter().map(|s| s.to_string()).collect()),
        Some(list) => list,
    };
    if list.is_empty() || list.len() > 20 {
        return Err(ToolError::invalid(
            "baseCandidates",
            "must list 1 to 20 branch names",
        ));
    }
    for (i, name) in list.iter().enumerate() {
        let field = format!("baseCandidates[{i}]");
        check_ref_name(&field, name)?;
        if name == "HEAD" || name.starts_with("refs/") {
            return Err(ToolError::invalid(
                &field,
                "must be a branch name such as main (tried under refs/heads/ and refs/remotes/origin/)",
            ));
        }
    }
    Ok(list)
}

/// One `for-each-ref` line of the branch listing.
#[derive(Debug, Clone, PartialEq, Eq)]
struct BranchLine {
    ref_name: String,
    oid: Oid,
    upstream: Option<String>,
    track: String,
    /// Against HEAD: (commits only on this branch, commits only on HEAD).
    vs_head: Option<(u64, u64)>,
    /// Against the base.
    vs_base: Option<(u64, u64)>,
}

/// Parses `refname NUL oid NUL upstream NUL track [NUL a b] [NUL a b]` lines; which
/// ahead-behind fields are present is fixed by the format we asked for.
fn parse_branch_lines(
    bytes: &[u8],
    with_head: bool,
    with_base: bool,
) -> Result<Vec<BranchLine>, ToolError> {
    let want = 4 + usize::from(with_head) + usize::from(with_base);
    let pair = |text: &str| -> Option<(u64, u64)> {
        let (a, b) = text.split_once(' ')?;
        Some((a.parse().ok()?, b.parse().ok()?))
    };
    let mut out = Vec::new();
    for (n, line) in bytes.split(|b| *b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let bad = || ToolError::internal(format!("unexpected for-each-ref line {}", n + 1));
        let fields: Vec<String> = line
            .split(|b| *b == 0)
            .map(|f| String::from_utf8_lossy(f).into_owned())
            .collect();
        if fields.len() != want {
            return Err(bad());
        }
        let mut rest = fields[4..].iter();
        let vs_head = if with_head {
            Some(pair(rest.next().ok_or_else(bad)?).ok_or_else(bad)?)
        } else {
            None
        };
        let vs_base = if with_base {
            Some(pair(rest.next().ok_or_else(bad)?).ok_or_else(bad)?)
        } else {
            None
        };
        out.push(BranchLine {
            ref_name: fields[0].clone(),
            oid: Oid::parse(&fields[1]).ok_or_else(bad)?,
            upstream: (!fields[2].is_empty()).then(|| fields[2].clone()),
            track: fields[3].clone(),
            vs_head,
            vs_base,
        });
    }
    Ok(out)
}

/// `%(upstream:track,nobracket)`: `ahead N`, `behind N`, `ahead N, behind M`, `gone` or
/// empty (in sync). Returns (ahead, behind, gone).
fn parse_track(track: &str) -> (u64, u64, bool) {
    if track == "gone" {
        return (0, 0, true);
    }
    let mut ahead = 0;
    let mut behind = 0;
    for part in track.split(", ") {
        if let Some(n) = part.strip_prefix("ahead ") {
            ahead = n.parse().unwrap_or(0);
        } else if let Some(n) = part.strip_prefix("behind ") {
            behind = n.parse().unwrap_or(0);
        }
    }
    (ahead, behind, false)
}

fn short_label(ref_name: &str) -> String {
    ref_name
        .strip_prefix("refs/heads/")
        .or_else(|| ref_name.strip_prefix("refs/remotes/"))
        .unwrap_or(ref_name)
        .to_owned()
}

async fn lines_of(git: &Git<'_>, args: Vec<String>, cap: usize) -> Result<Capped, ToolError> {
    Ok(git.cmd(args).capture(cap).await?.sink)
}

/// `(left-only, right-only)` commit counts of `a...b`.
async fn left_right(git: &Git<'_>, a: &Oid, b: &Oid) -> Result<(u64, u64), ToolError> {
    let out = git
        .cmd([
            "rev-list",
            "--left-right",
            "--count",
            &format!("{a}...{b}"),
            "--",
        ])
        .capture(4096)
        .await?;
    let text = String::from_utf8_lossy(&out.sink.bytes);
    let mut it = text
        .split_whitespace()
        .map(|n| n.parse::<u64>().unwrap_or(0));
    Ok((it.next().unwrap_or(0), it.next().unwrap_or(0)))
}

async fn branch_stack(
    git: &Git<'_>,
    candidates: &[String],
    max_related: usize,
) -> Result<BranchStackData, ToolError> {
    let mut base_patterns = vec![
        "for-each-ref".to_owned(),
        "--format=%(refname)%00%(objectname)".to_owned(),
    ];
    for c in candidates {
        base_patterns.push(format!("refs/heads/{c}"));
        base_patterns.push(format!("refs/remotes/origin/{c}"));
    }
    let symbolic = git
        .cmd(["symbolic-ref", "--quiet", "HEAD"])
        .capture_allowing(4096, &[0, 1, 128]);
    let upstream = git
        .cmd([
            "rev-parse",
            "@{upstream}",
            "--symbolic-full-name",
            "@{upstream}",
        ])
        .capture_allowing(4096, &[0, 128]);
    let (symbolic, head, upstream, bases, version) = tokio::try_join!(
        async { Ok::<_, ToolError>(symbolic.await?) },
        async { Ok::<_, ToolError>(git.head().await?) },
        async { Ok::<_, ToolError>(upstream.await?) },
        lines_of(git, base_patterns, 1024 * 1024),
        git_version(),
    )?;
    let current_ref = symbolic.success().then(|| {
        String::from_utf8_lossy(&symbolic.sink.bytes)
            .trim()
            .to_owned()
    });

    // The first candidate that exists, local before origin, never the current branch.
    let existing: Vec<(String, Oid)> = bases
        .bytes
        .split(|b| *b == b'\n')
        .filter_map(|l| {
            let text = String::from_utf8_lossy(l);
            let (name, oid) = text.split_once('\0')?;
            Some((name.to_owned(), Oid::parse(oid)?))
        })
        .collect();
    let base = candidates.iter().find_map(|c| {
        [
            format!("refs/heads/{c}"),
            format!("refs/remotes/origin/{c}"),
        ]
        .into_iter()
        .filter(|r| Some(r) != current_ref.as_ref())
        .find_map(|r| existing.iter().find(|(n, _)| *n == r).cloned())
    });

    let one_walk = version >= AHEAD_BEHIND_ATOM;
    let mut format =
        "--format=%(refname)%00%(objectname)%00%(upstream)%00%(upstream:track,nobracket)"
            .to_owned();
    if let (true, Some(h)) = (one_walk, &head) {
        format.push_str(&format!("%00%(ahead-behind:{h})"));
    }
    if let (true, Some((_, b))) = (one_walk, &base) {
        format.push_str(&format!("%00%(ahead-behind:{b})"));
    }
    let listing = git
        .cmd([
            "for-each-ref",
            &format,
            "--sort=-committerdate",
            &format!("--count={BRANCH_CAP}"),
            "refs/heads/",
        ])
        .capture(32 * 1024 * 1024);
    let detached_base = async {
        match (&current_ref, &head, &base) {
            (None, Some(h), Some((_, b))) => left_right(git, h, b).await.map(Some),
            _ => Ok(None),
        }
    };
    let listing = async { Ok::<_, ToolError>(listing.await?) };
    let (listing, detached_base) = tokio::try_join!(listing, detached_base)?;
    let mut lines = parse_branch_lines(
        &listing.sink.bytes,
        one_walk && head.is_some(),
        one_walk && base.is_some(),
    )?;
    if !one_walk {
        fill_by_rev_list(
            git,
            &mut lines,
            head.as_ref(),
            base.as_ref().map(|(_, o)| o),
        )
        .await?;
    }

    let own = current_ref
        .as_ref()
        .and_then(|r| lines.iter().find(|l| &l.ref_name == r));
    let upstream_text = String::from_utf8_lossy(&upstream.sink.bytes).into_owned();
    let mut upstream_lines = upstream_text.lines();
    let (up_oid, up_ref) = match (
        upstream.success(),
        upstream_lines.next(),
        upstream_lines.next(),
    ) {
        (true, Some(oid), Some(name)) => (Oid::parse(oid), Some(name.to_owned())),
        _ => (None, None),
    };
    let (ahead, behind, gone) = own.map_or((0, 0, false), |l| parse_track(&l.track));
    let upstream_point = match (own.and_then(|l| l.upstream.clone()), up_ref) {
        (Some(configured), _) if gone => Some(RefPoint {
            label: short_label(&configured),
            ref_name: configured,
            commit: None,
            gone: true,
        }),
        (_, Some(name)) => Some(RefPoint {
            label: short_label(&name),
            ref_name: name,
            commit: up_oid.map(|o| o.to_string()),
            gone: false,
        }),
        _ => None,
    };
    let has_upstream = upstream_point.as_ref().is_some_and(|u| !u.gone);
    let current = Current {
        label: current_ref
            .as_deref()
            .map(short_label)
            .unwrap_or_else(|| "HEAD".to_owned()),
        ref_name: current_ref.clone(),
        commit: head.as_ref().map(|o| o.to_string()),
        detached: current_ref.is_none(),
        unborn: head.is_none(),
        ahead: has_upstream.then_some(ahead),
        behind: has_upstream.then_some(behind),
    };
    let base_out = base.as_ref().map(|(name, oid)| {
        let distance = match (own.and_then(|l| l.vs_base), detached_base) {
            (Some((a, b)), _) | (None, Some((a, b))) => Some(Distance {
                ahead_from_base: a,
                behind_base: b,
            }),
            _ => None,
        };
        Base {
            ref_name: name.clone(),
            label: short_label(name),
            commit: oid.to_string(),
            distance,
        }
    });

    let base_ref = base.as_ref().map(|(n, _)| n.clone());
    let mut related: Vec<Related> = lines
        .iter()
        .filter(|l| {
            Some(&l.ref_name) != current_ref.as_ref() && Some(&l.ref_name) != base_ref.as_ref()
        })
        .map(|l| {
            let relation = if current_ref.is_some() && l.upstream == current_ref {
                "tracks-current"
            } else if l.vs_head.is_some_and(|(_, behind)| behind == 0) {
                "descends-from-current"
            } else {
                "shares-base"
            };
            Related {
                label: short_label(&l.ref_name),
                ref_name: l.ref_name.clone(),
                commit: l.oid.to_string(),
                relation,
                ahead_of_current: l.vs_head.map(|(a, _)| a),
                behind_current: l.vs_head.map(|(_, b)| b),
                upstream: l.upstream.as_deref().map(short_label),
            }
        })
        .collect();
    let rank = |r: &str| match r {
        "tracks-current" => 0,
        "descends-from-current" => 1,
        _ => 2,
    };
    // Stable: within a relation, git's newest-first order stays.
    related.sort_by_key(|r| rank(r.relation));
    let related_total = related.len() as u64;
    related.truncate(max_related);

    let mut data = BranchStackData {
        current,
        upstream: upstream_point,
        base: base_out,
        related_truncated: related_total > related.len() as u64,
        related,
        related_total,
        risk: "low",
        summary: String::new(),
        guidance: Vec::new(),
        suggested_actions: Vec::new(),
        model: "real-git-refs-no-virtual-branches",
        network_fetch_performed: false,
        ahead_behind_method: if one_walk { "for-each-ref" } else { "rev-list" },
    };
    let on_candidate = candidates
        .iter()
        .any(|c| current_ref.as_deref() == Some(&format!("refs/heads/{c}")));
    assess(&mut data, on_candidate);
    Ok(data)
}

/// Ahead/behind one branch at a time, for git older than 2.41.
async fn fill_by_rev_list(
    git: &Git<'_>,
    lines: &mut [BranchLine],
    head: Option<&Oid>,
    base: Option<&Oid>,
) -> Result<(), ToolError> {
    for line in lines.iter_mut().take(FALLBACK_CAP) {
        if let Some(h) = head {
            line.vs_head = Some(left_right(git, &line.oid, h).await?);
        }
        if let Some(b) = base {
            line.vs_base = Some(left_right(git, &line.oid, b).await?);
        }
    }
    Ok(())
}

/// Risk, summary, guidance and next tools from the numbers.
fn assess(d: &mut BranchStackData, on_candidate: bool) {
    let c = &d.current;
    let mut risk = 0;
    let mut summary = Vec::new();
    let mut guidance = Vec::new();
    let mut actions = Vec::new();
    if c.unborn {
        summary.push(format!("{} has no commits yet", c.label));
        guidance.push("Nothing to compare until the first commit exists.".to_owned());
    } else if c.detached {
        summary.push("HEAD is detached".to_owned());
        guidance.push(
            "Commits made on a detached HEAD belong to no branch; propose a branch before building on it."
                .to_owned(),
        );
        risk = risk.max(1);
    } else {
        summary.push(format!("On {}", c.label));
    }
    match (&d.upstream, c.ahead, c.behind) {
        (Some(u), _, _) if u.gone => {
            summary.push(format!("upstream {} is gone", u.label));
            guidance.push(
                "The upstream branch was deleted on the remote (as of the last fetch).".to_owned(),
            );
            risk = risk.max(1);
        }
        (Some(u), Some(a), Some(b)) => {
            summary.push(format!("{a} ahead / {b} behind {}", u.label));
            if a > 0 && b > 0 {
                risk = risk.max(2);
                guidance.push(format!(
                    "Diverged from {}: integrating needs a merge or rebase.",
                    u.label
                ));
                actions.push(Suggested {
                    tool: "repo.conflictPreflight",
                    reason: format!(
                        "Predict conflicts with {} before proposing a merge or rebase.",
                        u.label
                    ),
                });
            } else if b > 0 {
                risk = risk.max(1);
                guidance.push(format!("Behind {}: a fast-forward is possible.", u.label));
            }
        }
        _ if !c.unborn && !c.detached => summary.push("no upstream".to_owned()),
        _ => {}
    }
    if let Some(base) = &d.base {
        if let Some(dist) = &base.distance {
            summary.push(format!(
                "{} ahead / {} behind base {}",
                dist.ahead_from_base, dist.behind_base, base.label
            ));
            if dist.behind_base > 0 {
                risk = risk.max(if dist.behind_base > 50 { 2 } else { 1 });
                actions.push(Suggested {
                    tool: "repo.conflictPreflight",
                    reason: format!(
                        "Check whether {} merges cleanly into this branch.",
                        base.label
                    ),
                });
            }
        }
    } else if on_candidate {
        guidance.push(
            "The current branch is itself a base candidate and no other candidate exists."
                .to_owned(),
        );
    } else {
        guidance.push("No base branch found among baseCandidates.".to_owned());
    }
    let descendants = d
        .related
        .iter()
        .filter(|r| r.relation == "descends-from-current")
        .count();
    if descendants > 0 {
        guidance.push(format!(
            "{descendants} branch(es) build on this one: rewriting it (rebase, amend, reset) would strand them."
        ));
        risk = risk.max(1);
    }
    actions.push(Suggested {
        tool: "repo.history",
        reason: "See the commits on this branch.".to_owned(),
    });
    actions.dedup_by_key(|a| a.tool);
    d.risk = ["low", "medium", "high"][risk];
    d.summary = summary.join("; ") + ".";
    d.guidance = guidance;
    d.suggested_actions = actions;
}

// ---------------------------------------------------------------------------------------
// repo.reflog

/// `repo.reflog`: where a ref has been, newest first, with recovery hints.
pub struct Reflog;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReflogInput {
    /// Absolute path of the repository (any directory inside a working tree works).
    pub repo_path: String,
    #[serde(default)]
    pub repo_id: Option<String>,
    /// The ref whose reflog to read: `HEAD` (default), a branch (`main`), or a full ref.
    #[serde(default, alias = "ref")]
    pub ref_name: Option<String>,
    /// Entries to return, newest first.
    #[serde(default)]
    pub limit: Bounded<1, 100, 12>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReflogData {
    /// The ref as asked.
    pub ref_name: String,
    /// The full ref it resolved to (`HEAD`, `refs/heads/main`, …). When several refs
    /// share the name (a branch and a tag), the first with a reflog, as `git reflog` picks.
    pub full_ref: String,
    pub entries: Vec<ReflogEntry>,
    pub entry_count: u64,
    /// More (older) entries exist than were returned.
    pub more_available: bool,
    /// `files` (old ids exactly as recorded) or `reftable` (old ids inferred).
    pub storage: &'static str,
    /// False when reachability could not be decided for every entry.
    pub reachability_complete: bool,
    pub recovery_guidance: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReflogEntry {
    pub index: u64,
    /// `<ref>@{n}`: usable with git to name this position (`<ref>` is `fullRef` when the
    /// name given is ambiguous).
    pub selector: String,
    /// Null for a ref's first entry under the reftable backend.
    pub old_oid: Option<String>,
    pub new_oid: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub old_oid_inferred: bool,
    /// `commit`, `amend`, `merge`, `reset`, `rebase`, `checkout`, `pull`, `branch`,
    /// `clone`, `cherry-pick`, `revert`, `fetch`, `push`, `am`, `stash` or `other`.
    pub action: &'static str,
    pub message: String,
    pub identity: Identity,
    /// When the ref moved, milliseconds since the epoch.
    pub timestamp: i64,
    /// The recorded time zone, `+hhmm`.
    pub tz: String,
    /// The new commit is no longer reachable from any ref (null: undecided).
    pub unreachable: Option<bool>,
    /// Unreachable, but the commit still exists: a branch or tag at it brings it back.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub recoverable: bool,
    /// The object no longer exists (pruned): nothing left to recover.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub missing: bool,
    /// For an unreachable commit: the command a human can run to keep it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery_hint: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Identity {
    pub name: String,
    pub email: String,
}

impl Tool for Reflog {
    type Input = ReflogInput;
    type Output = Local<ReflogData>;

    const NAME: &'static str = "repo.reflog";
    const TITLE: &'static str = "Reflog timeline";
    const DESCRIPTION: &'static str = "Where a ref (HEAD by default) has been, newest first: old and new commit as recorded, HEAD@{n} selector, action (commit, amend, reset, rebase, checkout, merge, pull, …), message, identity and time. Entries whose commit is no longer reachable from any ref are flagged unreachable with the exact git command a human can run to recover it; nothing is executed.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: ReflogInput) -> Result<Self::Output, ToolError> {
        let name = input.ref_name.unwrap_or_else(|| "HEAD".to_owned());
        check_ref_name("refName", &name)?;
        let repo = repo::open(&ctx.config, "repoPath", &input.repo_path, &ctx.cancel).await?;
        let git = Git::new(&repo, &ctx.cancel);
        let data = reflog_data(&git, &repo, name, input.limit.usize()).await?;
        Ok(Local::new::<Self>(&repo, data))
    }
}

/// The full name of `name` (`main` → `refs/heads/main`), by git's own lookup order
/// (`git help revisions`: `<name>`, `refs/<name>`, `refs/tags/`, `refs/heads/`,
/// `refs/remotes/`, `refs/remotes/<name>/HEAD`), and whether other refs share the name.
/// Like `git reflog <name>` (`dwim_log`), the first ref that has a reflog wins, so a
/// branch is not hidden by a tag of the same name. Symbolic refs are not followed: the
/// reflog of `origin/HEAD` is its own, not its target's.
async fn full_ref(git: &Git<'_>, name: &str) -> Result<(String, bool), ToolError> {
    if name == "HEAD" || name.starts_with("worktrees/") || name.starts_with("main-worktree/") {
        // HEAD-like names that for-each-ref does not list.
        return Ok((name.to_owned(), false));
    }
    let rules = [
        name.to_owned(),
        format!("refs/{name}"),
        format!("refs/tags/{name}"),
        format!("refs/heads/{name}"),
        format!("refs/remotes/{name}"),
        format!("refs/remotes/{name}/HEAD"),
    ];
    // Patterns are literal names that passed check_ref_name: never options.
    let out = git
        .cmd(["for-each-ref", "--format=%(refname)"])
        .args(rules.iter().filter(|r| r.starts_with("refs/")))
        .capture(1024 * 1024)
        .await?;
    let text = String::from_utf8_lossy(&out.sink.bytes);
    let existing: HashSet<&str> = text.lines().collect();
    let found: Vec<&String> = rules
        .iter()
        .filter(|r| existing.contains(r.as_str()))
        .collect();
    let Some(first) = found.first() else {
        return Err(ToolError::invalid(
            "refName",
            format!("no ref named '{name}' in this repository"),
        ));
    };
    if found.len() == 1 {
        return Ok(((*first).clone(), false));
    }
    for candidate in &found {
        if has_reflog(git, candidate).await? {
            return Ok(((*candidate).clone(), true));
        }
    }
    Ok(((*first).clone(), true))
}

/// Whether `full` (an existing, validated ref name) has a reflog.
async fn has_reflog(git: &Git<'_>, full: &str) -> Result<bool, ToolError> {
    if !git.repo.common_dir.join("reftable").is_dir() {
        return Ok(log_file(git.repo, full).is_file());
    }
    let out = git
        .cmd(["reflog", "exists", full])
        .capture_allowing(4096, &[0, 1])
        .await?;
    Ok(out.success())
}

/// Refs whose reflog lives in the worktree's own git directory rather than the common one.
fn per_worktree(full: &str) -> bool {
    full == "HEAD"
        || !full.starts_with("refs/")
        || full.starts_with("refs/bisect/")
        || full.starts_with("refs/worktree/")
        || full.starts_with("refs/rewritten/")
}

/// Where the files backend keeps the reflog of `full`, including the
/// `main-worktree/<ref>` and `worktrees/<name>/<ref>` names for other worktrees' refs.
fn log_file(repo: &Repo, full: &str) -> std::path::PathBuf {
    if let Some(rest) = full.strip_prefix("main-worktree/") {
        return repo.common_dir.join("logs").join(rest);
    }
    if let Some((name, rest)) = full
        .strip_prefix("worktrees/")
        .and_then(|r| r.split_once('/'))
    {
        return repo
            .common_dir
            .join("worktrees")
            .join(name)
            .join("logs")
            .join(rest);
    }
    let dir = if per_worktree(full) {
        &repo.git_dir
    } else {
        &repo.common_dir
    };
    dir.join("logs").join(full)
}

/// The last [`REFLOG_TAIL`] bytes of a reflog file, and whether that is all of it. A
/// symlink, FIFO or device in its place counts as no reflog.
fn read_tail(path: &std::path::Path) -> std::io::Result<(Vec<u8>, bool)> {
    use std::io::{Read, Seek, SeekFrom};
    let (mut file, meta) = crate::safe_file::open_regular(path)
        .map_err(|why| std::io::Error::other(why.to_string()))?;
    let len = meta.len();
    let start = len.saturating_sub(REFLOG_TAIL);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::with_capacity((len - start) as usize);
    file.take(REFLOG_TAIL).read_to_end(&mut bytes)?;
    Ok((bytes, start == 0))
}

async fn reflog_data(
    git: &Git<'_>,
    repo: &Repo,
    name: String,
    limit: usize,
) -> Result<ReflogData, ToolError> {
    let (full, ambiguous) = full_ref(git, &name).await?;
    // An ambiguous short name would make the selectors ambiguous too.
    let shown = if ambiguous {
        full.as_str()
    } else {
        name.as_str()
    };
    let reftable = repo.common_dir.join("reftable").is_dir();
    let (entries, more) = if reftable {
        let done = git
            .cmd([
                "log",
                "-g",
                "-z",
                "--date=raw",
                reflog::WALK_FORMAT,
                &format!("--max-count={}", limit + 1),
                "--end-of-options",
                &full,
                "--",
            ])
            .stream_allowing(Records::new(reflog::Walk::new(limit)), &[0, 128])
            .await?;
        if done.code == Some(128) {
            (Vec::new(), false)
        } else {
            let walk = done
                .sink
                .finish(!done.stopped_early)
                .map_err(|e| ToolError::internal(e.to_string()))?;
            let more = walk.more();
            (walk.into_entries(), more)
        }
    } else {
        let file = log_file(repo, &full);
        match crate::safe_file::off_thread(git.cancel(), move || read_tail(&file)).await? {
            Ok((bytes, complete)) => {
                let entries = reflog::newest_lines(&bytes, complete, limit + 1)
                    .map_err(|e| ToolError::internal(e.to_string()))?;
                let more = entries.len() > limit;
                (entries.into_iter().take(limit).collect(), more)
            }
            Err(_) => (Vec::new(), false),
        }
    };
    let (reach, complete) = reachability(git, &entries).await?;
    let stash = full == "refs/stash";
    let mut out = Vec::with_capacity(entries.len());
    let mut lost = 0;
    for (i, e) in entries.into_iter().enumerate() {
        let state = reach.get(&e.new).copied().unwrap_or(Reach::Unknown);
        let unreachable = match state {
            Reach::Unreachable | Reach::Missing => Some(true),
            Reach::Reachable => Some(false),
            Reach::Unknown => None,
        };
        // Older stashes live only in this reflog by design; they are not lost.
        let recovery_hint = (state == Reach::Unreachable && !stash).then(|| {
            lost += 1;
            format!("git branch recover-{} {}", e.new.short(), e.new)
        });
        out.push(ReflogEntry {
            index: i as u64,
            selector: format!("{shown}@{{{i}}}"),
            old_oid: e.old.as_ref().map(|o| o.to_string()),
            new_oid: e.new.to_string(),
            old_oid_inferred: e.old_inferred,
            action: action(&e.message),
            identity: Identity {
                name: e.name,
                email: e.email,
            },
            timestamp: e.time * 1000,
            tz: e.tz,
            message: e.message,
            unreachable,
            recoverable: state == Reach::Unreachable,
            missing: state == Reach::Missing,
            recovery_hint,
        });
    }
    let recovery_guidance = if stash {
        "Stash entries are kept by this reflog itself: each is listed by `git stash list` and is not lost while it is there.".to_owned()
    } else if lost > 0 {
        format!(
            "{lost} entr{} point at commits no ref reaches any more; they stay recoverable until the reflog expires and gc prunes them. Suggest the recoveryHint command to the human; nothing was run.",
            if lost == 1 { "y" } else { "ies" }
        )
    } else {
        "Every listed commit is still reachable from a ref; nothing needs recovering.".to_owned()
    };
    Ok(ReflogData {
        ref_name: name,
        full_ref: full,
        entry_count: out.len() as u64,
        entries: out,
        more_available: more,
        storage: if reftable { "reftable" } else { "files" },
        reachability_complete: complete,
        recovery_guidance,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    Reachable,
    Unreachable,
    Missing,
    Unknown,
}

/// Collects the object ids `rev-list` prints, one per line, until its cap.
struct OidLines {
    seen: HashSet<String>,
    wanted: HashSet<String>,
    pending: Vec<u8>,
    bytes: usize,
    capped: bool,
}

impl Sink for OidLines {
    fn accept(&mut self, chunk: &[u8]) -> Flow {
        self.bytes += chunk.len();
        for b in chunk {
            if *b == b'\n' {
                let line = String::from_utf8_lossy(&self.pending).into_owned();
                if self.wanted.contains(&line) {
                    self.seen.insert(line);
                }
                self.pending.clear();
            } else {
                self.pending.push(*b);
            }
        }
        if self.bytes > REACH_CAP {
            self.capped = true;
            return Flow::Enough;
        }
        Flow::More
    }
}

/// Which new ids are reachable from some ref (`--all`: every ref and every worktree's
/// HEAD), decided by one `rev-list <ids> --not --all`: it prints exactly the commits only
/// the reflog still holds. Missing objects are found with one `cat-file --batch-check`.
async fn reachability(
    git: &Git<'_>,
    entries: &[Entry],
) -> Result<(std::collections::HashMap<Oid, Reach>, bool), ToolError> {
    let mut ids: Vec<&Oid> = entries
        .iter()
        .map(|e| &e.new)
        .filter(|o| !o.is_zero())
        .collect();
    ids.sort();
    ids.dedup();
    let mut result = std::collections::HashMap::new();
    if ids.is_empty() {
        return Ok((result, true));
    }
    let stdin: Vec<u8> = ids
        .iter()
        .flat_map(|o| format!("{o}\n").into_bytes())
        .collect();
    let check = git
        .cmd(["cat-file", "--batch-check=%(objectname) %(objecttype)"])
        .stdin(stdin)
        .capture(1024 * 1024);
    let walk = git
        .cmd(["rev-list", "--ignore-missing"])
        .args(ids.iter().map(|o| o.to_string()))
        .args(["--not", "--all", "--"])
        .stream_allowing(
            OidLines {
                seen: HashSet::new(),
                wanted: ids.iter().map(|o| o.to_string()).collect(),
                pending: Vec::new(),
                bytes: 0,
                capped: false,
            },
            &[0, 128],
        );
    let (check, walk) = tokio::try_join!(check, walk)?;
    let missing: HashSet<String> = String::from_utf8_lossy(&check.sink.bytes)
        .lines()
        .filter_map(|l| l.strip_suffix(" missing"))
        .map(str::to_owned)
        .collect();
    // A failed walk (a non-commit object among the ids, say) decides nothing.
    let walked = walk.code == Some(0) || walk.stopped_early;
    let complete = walk.code == Some(0) && !walk.sink.capped;
    for id in ids {
        let text = id.to_string();
        let state = if missing.contains(&text) {
            Reach::Missing
        } else if !walked {
            Reach::Unknown
        } else if walk.sink.seen.contains(&text) {
            Reach::Unreachable
        } else if complete {
            Reach::Reachable
        } else {
            Reach::Unknown
        };
        result.insert(id.clone(), state);
    }
    let all_decided = result.values().all(|r| *r != Reach::Unknown);
    Ok((result, all_decided))
}

/// The kind of move a reflog message records.
pub fn action(message: &str) -> &'static str {
    let head = message.split(':').next().unwrap_or("").trim();
    let word = head.split([' ', '(']).next().unwrap_or("");
    match word {
        "commit" if head.contains("(amend)") => "amend",
        "commit" if head.contains("(merge)") => "merge",
        "commit" => "commit",
        "reset" => "reset",
        "rebase" => "rebase",
        "checkout" | "switch" => "checkout",
        "merge" => "merge",
        "pull" | "initial" if head.contains("pull") => "pull",
        "branch" | "Branch" => "branch",
        "clone" => "clone",
        "cherry-pick" => "cherry-pick",
        "revert" => "revert",
        "fetch" => "fetch",
        "push" | "update" if head.contains("push") => "push",
        "am" => "am",
        "stash" | "On" | "WIP" => "stash",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ref_names_like_check_ref_format() {
        for good in [
            "HEAD",
            "main",
            "feat/x-1",
            "refs/heads/-n",
            "refs/stash",
            "v1.0",
        ] {
            assert!(check_ref_name("refName", good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "-n",
            "--all",
            "--output=/tmp/x",
            "a\nb",
            "a\0b",
            "a b",
            "a..b",
            "HEAD@{1}",
            "@",
            "a/",
            "/a",
            "a//b",
            "a.",
            ".a",
            "a/.b",
            "x.lock",
            "a~1",
            "a^",
            "a:b",
            "a*",
            "a?",
            "a[",
            "a\\b",
        ] {
            assert!(check_ref_name("refName", bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn actions_from_messages() {
        let cases = [
            ("commit (initial): one", "commit"),
            ("commit: two", "commit"),
            ("commit (amend): two", "amend"),
            ("commit (merge): Merge x", "merge"),
            ("reset: moving to HEAD~2", "reset"),
            ("rebase (finish): returning to refs/heads/a", "rebase"),
            ("rebase -i (pick): x", "rebase"),
            ("checkout: moving from main to a", "checkout"),
            ("merge topic: Fast-forward", "merge"),
            ("pull: Fast-forward", "pull"),
            ("pull --rebase (finish): x", "pull"),
            ("branch: Created from HEAD", "branch"),
            ("Branch: renamed refs/heads/a to refs/heads/b", "branch"),
            ("clone: from /x", "clone"),
            ("cherry-pick: x", "cherry-pick"),
            ("update by push", "push"),
            ("", "other"),
        ];
        for (message, want) in cases {
            assert_eq!(action(message), want, "{message}");
        }
    }

    #[test]
    fn track_text() {
        assert_eq!(parse_track(""), (0, 0, false));
        assert_eq!(parse_track("ahead 2"), (2, 0, false));
        assert_eq!(parse_track("behind 3"), (0, 3, false));
        assert_eq!(parse_track("ahead 2, behind 3"), (2, 3, false));
        assert_eq!(parse_track("gone"), (0, 0, true));
    }

    /// Captured from `for-each-ref` with both `%(ahead-behind:…)` atoms (git 2.47).
    #[test]
    fn branch_lines() {
        let real = b"refs/heads/feat/a\x005ce3d0130b768a35612b525329786c651c13fbfb\0refs/heads/main\0ahead 1\x001 0\x001 0\n\
refs/heads/main\x006a4e5328780da6f0da64e1caa079505a3f2069c4\0\0\x000 1\x000 0\n";
        let lines = parse_branch_lines(real, true, true).unwrap();
        insta::assert_debug_snapshot!(lines, @r#"
        [
            BranchLine {
                ref_name: "refs/heads/feat/a",
                oid: Oid(
                    "5ce3d0130b768a35612b525329786c651c13fbfb",
                ),
                upstream: Some(
                    "refs/heads/main",
                ),
                track: "ahead 1",
                vs_head: Some(
                    (
                        1,
                        0,
                    ),
                ),
                vs_base: Some(
                    (
                        1,
                        0,
                    ),
                ),
            },
            BranchLine {
                ref_name: "refs/heads/main",
                oid: Oid(
                    "6a4e5328780da6f0da64e1caa079505a3f2069c4",
                ),
                upstream: None,
                track: "",
                vs_head: Some(
                    (
                        0,
                        1,
                    ),
                ),
                vs_base: Some(
                    (
                        0,
                        0,
                    ),
                ),
            },
        ]
        "#);
        assert!(parse_branch_lines(real, true, false).is_err());
        assert!(parse_branch_lines(b"refs/heads/x\0nothex\0\0\n", false, false).is_err());
        assert!(
            parse_branch_lines(
                b"refs/heads/x\x005ce3d0130b768a35612b525329786c651c13fbfb\0\0\0one two\n",
                true,
                false
            )
            .is_err()
        );
    }
}
