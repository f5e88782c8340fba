//! `repo.branchStack`: where the current branch stands against its upstream, the base
//! branch and its neighbours.
//!
//! Ahead/behind for every local branch comes from one `for-each-ref` walk with
//! `%(ahead-behind:…)` (git ≥ 2.41), or from one `rev-list` per branch on older git.

mod assess;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Toolset;
use crate::error::ToolError;
use crate::git::args::check_ref_name;
use crate::git::head::{self, Upstream};
use crate::git::refs::{self, BranchLine};
use crate::git::{Git, Oid, log, repo};
use crate::model::opt_name_text;
use crate::parse::for_each_ref::Track;
use crate::tools::input::Bounded;
use crate::tools::{Annotations, CallCtx, Local, Tool};

/// Base branch names tried when the caller gives none.
const DEFAULT_BASES: [&str; 5] = ["main", "master", "develop", "dev", "trunk"];
/// Local branches read from `for-each-ref` at most.
const BRANCH_CAP: usize = 5000;
/// Branches compared one by one when git is too old for `%(ahead-behind:…)`.
const FALLBACK_CAP: usize = 50;
/// `%(ahead-behind:…)` arrived in git 2.41.
const AHEAD_BEHIND_ATOM: (u32, u32) = (2, 41);

/// `repo.branchStack`: the current branch against its upstream, base and neighbours.
pub struct BranchStack;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BranchStackInput {
    /// Absolute path of the repository (any directory inside a working tree works).
    pub repo_path: String,
    #[serde(default)]
    pub repo_id: Option<String>,
    /// Base branches to try in order (default main, master, develop, dev, trunk)
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
    /// Base64 of a non-UTF-8 `ref`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ref_bytes_b64: Option<String>,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ref_bytes_b64: Option<String>,
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
    #[serde(serialize_with = "crate::model::tool_name::serialize_served")]
    pub tool: &'static str,
    #[serde(serialize_with = "crate::model::tool_name::serialize_prose")]
    pub reason: String,
}

impl Tool for BranchStack {
    type Input = BranchStackInput;
    type Output = Local<BranchStackData>;

    const NAME: &'static str = "repo.branchStack";
    const TITLE: &'static str = "Branch stack";
    const DESCRIPTION: &'static str = "The current branch against its upstream, its base branch (first of baseCandidates found) and related local branches, with ahead/behind, a risk level and guidance.";
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

fn short_label(ref_name: &str) -> String {
    ref_name
        .strip_prefix("refs/heads/")
        .or_else(|| ref_name.strip_prefix("refs/remotes/"))
        .unwrap_or(ref_name)
        .to_owned()
}

/// What git says before anything is compared.
struct Facts {
    current_ref: Option<String>,
    /// The exact name of the current branch (two names may show alike lossily).
    current_raw: Option<Vec<u8>>,
    head: Option<Oid>,
    upstream: Option<Upstream>,
    /// The first candidate that exists, local before origin, never the current branch.
    base: Option<(String, Oid)>,
    one_walk: bool,
}

async fn facts(git: &Git<'_>, candidates: &[String]) -> Result<Facts, ToolError> {
    let patterns: Vec<String> = candidates
        .iter()
        .flat_map(|c| {
            [
                format!("refs/heads/{c}"),
                format!("refs/remotes/origin/{c}"),
            ]
        })
        .collect();
    let (current_raw, head, upstream, existing, version) = tokio::try_join!(
        head::symbolic(git),
        git.head(),
        head::upstream(git),
        refs::resolve(git, &patterns),
        crate::git::version(),
    )?;
    let current_ref = current_raw
        .as_deref()
        .map(|r| String::from_utf8_lossy(r).into_owned());
    let base = candidates.iter().find_map(|c| {
        [
            format!("refs/heads/{c}"),
            format!("refs/remotes/origin/{c}"),
        ]
        .into_iter()
        .filter(|r| Some(r) != current_ref.as_ref())
        .find_map(|r| existing.iter().find(|(n, _)| *n == r).cloned())
    });
    Ok(Facts {
        current_ref,
        current_raw,
        head,
        upstream,
        base,
        one_walk: version >= AHEAD_BEHIND_ATOM,
    })
}

async fn branch_stack(
    git: &Git<'_>,
    candidates: &[String],
    max_related: usize,
) -> Result<BranchStackData, ToolError> {
    let f = facts(git, candidates).await?;
    let base_oid = f.base.as_ref().map(|(_, o)| o);
    let (walk_head, walk_base) = match f.one_walk {
        true => (f.head.as_ref(), base_oid),
        false => (None, None),
    };
    let detached_base = async {
        match (&f.current_ref, &f.head, base_oid) {
            (None, Some(h), Some(b)) => Ok::<_, ToolError>(Some(log::left_right(git, h, b).await?)),
            _ => Ok(None),
        }
    };
    let listing = async { Ok(refs::branches(git, BRANCH_CAP, walk_head, walk_base).await?) };
    let (mut lines, detached_base) = tokio::try_join!(listing, detached_base)?;
    if !f.one_walk {
        fill_by_rev_list(git, &mut lines, f.head.as_ref(), base_oid).await?;
    }
    let own = f
        .current_raw
        .as_ref()
        .and_then(|r| lines.iter().find(|l| raw_name(l) == r.as_slice()));
    let (current, upstream) = current_and_upstream(&f, own);
    let base = f.base.as_ref().map(|(name, oid)| {
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
    let mut related = related(&lines, &f);
    let related_total = related.len() as u64;
    related.truncate(max_related);
    let mut data = BranchStackData {
        current,
        upstream,
        base,
        related_truncated: related_total > related.len() as u64,
        related,
        related_total,
        risk: "low",
        summary: String::new(),
        guidance: Vec::new(),
        suggested_actions: Vec::new(),
        model: "real-git-refs-no-virtual-branches",
        network_fetch_performed: false,
        ahead_behind_method: if f.one_walk {
            "for-each-ref"
        } else {
            "rev-list"
        },
    };
    let on_candidate = candidates
        .iter()
        .any(|c| f.current_ref.as_deref() == Some(&format!("refs/heads/{c}")));
    assess::assess(&mut data, on_candidate);
    Ok(data)
}

/// The current branch and its upstream; `own` is the current branch's listing line.
fn current_and_upstream(f: &Facts, own: Option<&BranchLine>) -> (Current, Option<RefPoint>) {
    let (ahead, behind, gone) = match own.map(|l| l.track) {
        Some(Track::Counts(a, b)) => (a, b, false),
        Some(Track::Gone) => (0, 0, true),
        None => (0, 0, false),
    };
    let upstream = match (own.and_then(|l| l.upstream.clone()), &f.upstream) {
        (Some(configured), _) if gone => Some(RefPoint {
            label: short_label(&configured),
            ref_name: configured,
            commit: None,
            gone: true,
        }),
        (_, Some(up)) => Some(RefPoint {
            label: short_label(&up.ref_name),
            ref_name: up.ref_name.clone(),
            commit: up.oid.as_ref().map(|o| o.to_string()),
            gone: false,
        }),
        _ => None,
    };
    let has_upstream = upstream.as_ref().is_some_and(|u| !u.gone);
    let current = Current {
        label: f
            .current_ref
            .as_deref()
            .map(short_label)
            .unwrap_or_else(|| "HEAD".to_owned()),
        ref_name: f.current_ref.clone(),
        ref_bytes_b64: opt_name_text(f.current_raw.as_deref()).1,
        commit: f.head.as_ref().map(|o| o.to_string()),
        detached: f.current_ref.is_none(),
        unborn: f.head.is_none(),
        ahead: has_upstream.then_some(ahead),
        behind: has_upstream.then_some(behind),
    };
    (current, upstream)
}

/// Every other local branch, those tracking the current one first, then those built on
/// it, then the rest; within a relation git's newest-first order stays.
fn related(lines: &[BranchLine], f: &Facts) -> Vec<Related> {
    let base_ref = f.base.as_ref().map(|(n, _)| n);
    let mut related: Vec<Related> = lines
        .iter()
        .filter(|l| Some(raw_name(l)) != f.current_raw.as_deref() && Some(&l.ref_name) != base_ref)
        .map(|l| {
            let relation = if f.current_ref.is_some() && l.upstream == f.current_ref {
                "tracks-current"
            } else if l.vs_head.is_some_and(|(_, behind)| behind == 0) {
                "descends-from-current"
            } else {
                "shares-base"
            };
            Related {
                label: short_label(&l.ref_name),
                ref_name: l.ref_name.clone(),
                ref_bytes_b64: opt_name_text(l.ref_bytes.as_deref()).1,
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
    related.sort_by_key(|r| rank(r.relation));
    related
}

/// The exact name of a listed branch.
fn raw_name(l: &BranchLine) -> &[u8] {
    l.ref_bytes.as_deref().unwrap_or(l.ref_name.as_bytes())
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
            line.vs_head = Some(log::left_right(git, &line.oid, h).await?);
        }
        if let Some(b) = base {
            line.vs_base = Some(log::left_right(git, &line.oid, b).await?);
        }
    }
    Ok(())
}
