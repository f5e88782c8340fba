//! `fleet.digest`: HEAD and local-branch moves of many repositories since a time, newest
//! first, read from the reflog files themselves.
//!
//! Reading files is what keeps a hundred repositories well under a second: locating the
//! git directory, listing `logs/refs/heads/**` and reading each reflog backwards from its
//! end (stopping at the first entry older than `since`) needs no process. Processes run
//! only for what files cannot answer: repositories whose refs live in a reftable (read
//! with `git reflog list` and `git log -g`), and whether a returned move dropped the
//! previous tip when its action alone does not say (`git merge-base --is-ancestor`, a
//! bounded number per call). No symlink inside the git directory is followed, so a
//! repository cannot point us at files outside it.

mod back_lines;
mod files;
mod moment;
mod moves;
mod reftable;
mod rewrites;

use std::cmp::Reverse;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Fleet, bounded, check_paths};
use crate::config::{Config, Toolset};
use crate::error::ToolError;
use crate::tools::input::Bounded;
use crate::tools::{Annotations, CallCtx, Tool};
use files::{Scan, scan_files};
pub use moment::Moment;
pub use moves::{Action, Event, RefScope};
use moves::{Raw, Window};
use reftable::scan_with_git;
use rewrites::rewrites;

/// Most repositories one call may name (or take from the registered list).
const MAX_REPOS: usize = 200;
/// Repositories read at once; file reads are short, so this mostly bounds open files.
const PARALLEL_REPOS: usize = 8;
/// Ancestry checks (one `git merge-base` each) per call; moves past this use their action.
const MAX_ANCESTRY_CHECKS: usize = 64;
const PARALLEL_CHECKS: usize = 4;
/// Reflog bytes read per repository before we stop and mark it `partial`.
const BYTES_PER_REPO: u64 = 64 * 1024 * 1024;
/// Branch reflog files looked at per repository.
const MAX_BRANCH_LOGS: usize = 5000;
/// Entries taken from one `git log -g` walk of a reftable repository.
const MAX_WALK_ENTRIES: usize = 50_000;

/// `fleet.digest`: what changed across many repositories since a time.
pub struct Digest;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DigestInput {
    /// Report moves at or after this time (RFC 3339 / ISO-8601, or epoch milliseconds).
    pub since: Moment,
    /// Report moves at or before this time; default: now.
    #[serde(default)]
    pub until: Option<Moment>,
    /// Absolute repository paths; default FluxGit's registered ones
    #[serde(default)]
    #[schemars(length(min = 1, max = 200))]
    pub repo_paths: Option<Vec<String>>,
    /// Most events to return, newest first
    #[serde(default)]
    pub max_events: Bounded<1, 1000, 200>,
    /// `head`, `branches` or `all` (default).
    #[serde(default)]
    pub refs: RefScope,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DigestData {
    /// The window, as RFC 3339 text and as epoch milliseconds.
    pub since: String,
    pub since_ms: i64,
    pub until: Option<String>,
    pub until_ms: Option<i64>,
    pub refs: RefScope,
    /// `repoPaths` when the caller named the repositories, `registered` otherwise.
    pub repo_source: &'static str,
    /// Newest first.
    pub events: Vec<Event>,
    pub event_count: u64,
    /// Every move in the window, returned or not (a lower bound if a repository is `partial`).
    pub events_total: u64,
    pub truncated: bool,
    pub max_events: u64,
    pub repos: Vec<RepoDigest>,
    /// True when more registered repositories exist than one call reads (200).
    pub repos_truncated: bool,
    /// Events whose `rewrote` comes from their action alone, because the ancestry check
    /// budget was spent or an object is gone.
    pub rewrote_unchecked: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RepoDigest {
    /// The canonical top level (or the path as given when it could not be resolved).
    pub repo_path: String,
    /// Moves of this repository in the window (returned or not).
    pub events: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// True when reading stopped early (very long reflogs); `events` is then a lower bound.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

impl Tool for Digest {
    type Input = DigestInput;
    type Output = Fleet<DigestData>;

    const NAME: &'static str = "fleet.digest";
    const TITLE: &'static str = "Fleet digest";
    const DESCRIPTION: &'static str = "What changed across repositories since a time: HEAD and local-branch reflog moves, newest first, with the identity as git recorded it and rewrote when a move dropped the previous tip.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: DigestInput) -> Result<Self::Output, ToolError> {
        let since = input.since.0;
        let until = input.until.map(|m| m.0);
        if let Some(until) = until
            && until < since
        {
            return Err(ToolError::invalid("until", "must not be before `since`"));
        }
        let (paths, repo_source, repos_truncated) = targets(&ctx, input.repo_paths)?;
        let window = Window {
            since,
            until: until.unwrap_or(i64::MAX),
            scope: input.refs,
            keep: input.max_events.usize(),
        };
        let max = input.max_events.usize();
        let mut scans = scan_all(&ctx, paths, window).await;
        let events_total: u64 = scans.iter().map(|s| s.total).sum();
        let chosen = newest(&mut scans, max);
        let (rewrote, unchecked) = rewrites(&ctx, &scans, &chosen).await;
        let events: Vec<Event> = chosen
            .into_iter()
            .zip(rewrote)
            .map(|((r, raw), rewrote)| raw.into_event(scans[r].display.clone(), rewrote))
            .collect();
        let repos = scans
            .iter()
            .map(|s| RepoDigest {
                repo_path: s.display.clone(),
                events: s.total,
                error: s.error.clone(),
                partial: s.partial,
            })
            .collect();
        Ok(Fleet::new(
            Self::NAME,
            DigestData {
                since: rfc3339(since),
                since_ms: since,
                until: until.map(rfc3339),
                until_ms: until,
                refs: input.refs,
                repo_source,
                event_count: events.len() as u64,
                truncated: events_total > events.len() as u64,
                events,
                events_total,
                max_events: max as u64,
                repos,
                repos_truncated,
                rewrote_unchecked: unchecked,
            },
        ))
    }
}

/// The repositories to read, where they came from, and whether more were registered.
fn targets(
    ctx: &CallCtx,
    repo_paths: Option<Vec<String>>,
) -> Result<(Vec<String>, &'static str, bool), ToolError> {
    match repo_paths {
        Some(paths) => {
            check_paths("repoPaths", paths.iter().map(String::as_str), MAX_REPOS)?;
            if paths.is_empty() {
                return Err(ToolError::invalid(
                    "repoPaths",
                    "must not be empty; omit it to use the registered repositories",
                ));
            }
            Ok((dedup(paths), "repoPaths", false))
        }
        None => {
            let (paths, more) = registered(&ctx.config);
            Ok((paths, "registered", more))
        }
    }
}

/// Every repository's moves in the window: files first, then git for reftable ones.
async fn scan_all(ctx: &CallCtx, paths: Vec<String>, window: Window) -> Vec<Scan> {
    let config = Arc::clone(&ctx.config);
    let cancel = ctx.cancel.clone();
    let done = crate::progress::Counter::start(&ctx.progress, paths.len() as u64, |d, t| {
        format!("digest: {d} of {t} repositories")
    });
    let scans = bounded(paths.clone(), PARALLEL_REPOS, move |path| {
        let config = Arc::clone(&config);
        let cancel = cancel.clone();
        let done = done.clone();
        async move {
            let scan =
                crate::safe_file::off_thread(&cancel, move || scan_files(&config, &path, window))
                    .await
                    .ok();
            done.tick();
            scan
        }
    })
    .await;
    let mut scans: Vec<Scan> = scans
        .into_iter()
        .zip(&paths)
        .map(|(scan, path)| {
            scan.flatten()
                .unwrap_or_else(|| Scan::failed(path, "could not be read".into()))
        })
        .collect();

    // Reftable repositories need git to read their reflogs.
    let reftable: Vec<usize> = (0..scans.len())
        .filter(|i| scans[*i].reftable && scans[*i].error.is_none())
        .collect();
    let walked = bounded(reftable.clone(), PARALLEL_CHECKS, |i| {
        let ctx = ctx.clone();
        let path = scans[i].display.clone();
        async move { scan_with_git(&ctx, &path, window).await }
    })
    .await;
    for (i, walked) in reftable.into_iter().zip(walked) {
        match walked {
            Some(Ok((events, total, partial))) => {
                scans[i].events = events;
                scans[i].total = total;
                scans[i].partial |= partial;
            }
            Some(Err(why)) => scans[i].error = Some(why),
            None => scans[i].error = Some("could not be read".into()),
        }
    }
    scans
}

/// Takes the `max` newest moves out of `scans`, newest first, each with its repository's
/// index; ties list repositories in the order given, then HEAD before branches.
fn newest(scans: &mut [Scan], max: usize) -> Vec<(usize, Raw)> {
    let mut order: Vec<(usize, usize)> = scans
        .iter()
        .enumerate()
        .flat_map(|(r, s)| (0..s.events.len()).map(move |e| (r, e)))
        .collect();
    order.sort_by_key(|&(r, e)| {
        let ev = &scans[r].events[e];
        (Reverse(ev.time), r, ev.ref_rank, ev.seq)
    });
    order.truncate(max);
    let mut taken: Vec<Vec<Option<Raw>>> = scans
        .iter_mut()
        .map(|s| {
            std::mem::take(&mut s.events)
                .into_iter()
                .map(Some)
                .collect()
        })
        .collect();
    order
        .into_iter()
        .filter_map(|(r, e)| Some((r, taken[r][e].take()?)))
        .collect()
}

fn rfc3339(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// Drops repeated paths, keeping the first.
fn dedup(paths: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    paths
        .into_iter()
        .filter(|p| seen.insert(p.clone()))
        .collect()
}

/// FluxGit's registered repositories inside the allowed roots, sorted, at most
/// [`MAX_REPOS`]; the flag says whether more were left out.
fn registered(config: &Config) -> (Vec<String>, bool) {
    let Some(run_dir) = config.run_dir.as_deref() else {
        return (Vec::new(), false);
    };
    let mut paths: Vec<String> = crate::registry::entries(run_dir)
        .into_iter()
        .map(|r| r.path)
        .filter(|p| {
            // Registered paths are canonical when written; resolving again judges the
            // roots by where they lead today.
            std::fs::canonicalize(p).map_or(config.allowed_roots.is_empty(), |c| config.allows(&c))
        })
        .collect();
    paths.sort();
    paths.dedup();
    let more = paths.len() > MAX_REPOS;
    paths.truncate(MAX_REPOS);
    (paths, more)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(ref_name: &str, ref_rank: usize, seq: usize, time: i64) -> Raw {
        Raw {
            ref_name: ref_name.into(),
            ref_rank,
            seq,
            old: None,
            new: None,
            time,
            tz: "+0000".into(),
            name: Vec::new(),
            email: Vec::new(),
            message: Vec::new(),
        }
    }

    #[test]
    fn newest_first_then_repository_order_then_head_before_branches() {
        let scan = |events| Scan {
            events,
            ..Scan::default()
        };
        let mut scans = vec![
            scan(vec![
                raw("refs/heads/a", 1, 0, 20),
                raw("HEAD", 0, 0, 20),
                raw("HEAD", 0, 1, 5),
            ]),
            scan(vec![raw("HEAD", 0, 0, 30), raw("HEAD", 0, 1, 20)]),
        ];
        let chosen: Vec<(usize, String, i64)> = newest(&mut scans, 4)
            .into_iter()
            .map(|(r, raw)| (r, raw.ref_name, raw.time))
            .collect();
        assert_eq!(
            chosen,
            [
                (1, "HEAD".into(), 30),
                (0, "HEAD".into(), 20),
                (0, "refs/heads/a".into(), 20),
                (1, "HEAD".into(), 20),
            ]
        );
        assert!(scans.iter().all(|s| s.events.is_empty()));
    }
}
