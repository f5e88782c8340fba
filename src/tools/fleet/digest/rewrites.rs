//! Whether each reported move dropped the previous tip: from its action where that
//! decides, otherwise from a bounded number of ancestry checks.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::files::Scan;
use super::moves::{Known, Raw, classify};
use super::{MAX_ANCESTRY_CHECKS, PARALLEL_CHECKS};
use crate::git::{Git, Oid, Repo, merge_base, repo};
use crate::tools::CallCtx;
use crate::tools::fleet::bounded;

/// `rewrote` for each chosen event, and how many came from the action alone.
pub(super) async fn rewrites(
    ctx: &CallCtx,
    scans: &[Scan],
    chosen: &[(usize, Raw)],
) -> (Vec<bool>, u64) {
    let mut answers: Vec<Known> = Vec::with_capacity(chosen.len());
    let mut checks: Vec<(usize, Oid, Oid)> = Vec::new();
    for (r, raw) in chosen {
        let known = match (&raw.old, &raw.new) {
            (Some(old), Some(new)) if old != new => {
                classify(&String::from_utf8_lossy(&raw.message)).1
            }
            // Creation, deletion or no move at all drops nothing.
            _ => Known::Is(false),
        };
        if let (Known::Check(_), Some(old), Some(new)) = (known, &raw.old, &raw.new) {
            let key = (*r, old.clone(), new.clone());
            if !checks.contains(&key) && checks.len() < MAX_ANCESTRY_CHECKS {
                checks.push(key);
            }
        }
        answers.push(known);
    }
    // Each repository is opened the one checked way (driver disarming included) before
    // any command runs in it; one that cannot be opened leaves its checks undecided.
    let mut tops: Vec<(usize, PathBuf)> = Vec::new();
    for (r, ..) in &checks {
        if let Some(layout) = &scans[*r].layout
            && !tops.iter().any(|(seen, _)| seen == r)
        {
            tops.push((*r, layout.top.clone()));
        }
    }
    let (config, cancel) = (Arc::clone(&ctx.config), ctx.cancel.clone());
    let opened = bounded(tops, PARALLEL_CHECKS, move |(r, top)| {
        let (config, cancel) = (Arc::clone(&config), cancel.clone());
        async move {
            let repo = repo::open_path(&config, "repoPaths", &top, &cancel).await;
            repo.ok().map(|repo| (r, repo))
        }
    })
    .await;
    let repos: HashMap<usize, Arc<Repo>> = opened.into_iter().flatten().flatten().collect();
    let jobs: Vec<(usize, Oid, Oid, Option<Arc<Repo>>)> = checks
        .iter()
        .map(|(r, o, n)| (*r, o.clone(), n.clone(), repos.get(r).cloned()))
        .collect();
    let cancel = ctx.cancel.clone();
    let results = bounded(jobs, PARALLEL_CHECKS, move |(_, old, new, repo)| {
        let cancel = cancel.clone();
        async move {
            let repo = repo?;
            let git = Git::new(&repo, &cancel);
            // An ancestor of the new tip was kept; anything else was dropped.
            let kept = merge_base::is_ancestor(&git, &old, &new).await.ok()??;
            Some(!kept)
        }
    })
    .await;
    let decided: HashMap<(usize, Oid, Oid), bool> = checks
        .into_iter()
        .zip(results)
        .filter_map(|(key, result)| Some((key, result??)))
        .collect();
    let mut unchecked = 0;
    let values = answers
        .into_iter()
        .zip(chosen)
        .map(|(known, (r, raw))| match known {
            Known::Is(v) => v,
            Known::Check(fallback) => {
                let decision = match (&raw.old, &raw.new) {
                    (Some(old), Some(new)) => decided.get(&(*r, old.clone(), new.clone())).copied(),
                    _ => None,
                };
                decision.unwrap_or_else(|| {
                    unchecked += 1;
                    fallback
                })
            }
        })
        .collect();
    (values, unchecked)
}
