//! Reflogs of a reftable repository, which only git can read.

use std::collections::HashMap;

use super::moves::{Raw, Window};
use super::{MAX_BRANCH_LOGS, MAX_WALK_ENTRIES};
use crate::error::ToolError;
use crate::git::{Git, GitError, Oid, reflog, repo};
use crate::parse::reflog_walk;
use crate::tools::CallCtx;
use crate::tools::fleet::reason;

/// Reads a reftable repository's reflogs through git: `reflog list`, then one `log -g`.
pub(super) async fn scan_with_git(
    ctx: &CallCtx,
    path: &str,
    window: Window,
) -> Result<(Vec<Raw>, u64, bool), String> {
    let repo = repo::open(&ctx.config, "repoPaths", path, &ctx.cancel)
        .await
        .map_err(reason)?;
    let git = Git::new(&repo, &ctx.cancel).with_timeout(crate::process::DEFAULT_TIMEOUT * 3);
    let mut refs: Vec<String> = reflog::listed(&git)
        .await
        .map_err(|e| ToolError::from(e).message)?
        .into_iter()
        .filter(|r| {
            (r == "HEAD" && window.scope.head())
                || (r.starts_with("refs/heads/") && window.scope.branches())
        })
        .collect();
    refs.sort_by_key(|r| (r != "HEAD", r.clone()));
    refs.truncate(MAX_BRANCH_LOGS);
    if refs.is_empty() {
        return Ok((Vec::new(), 0, false));
    }
    let walk = reflog::walk_all(&git, &refs, MAX_WALK_ENTRIES)
        .await
        .map_err(|e| match e {
            GitError::Parse(e) => format!("reflog: {e}"),
            other => ToolError::from(other).message,
        })?;
    let rank: HashMap<&str, usize> = refs
        .iter()
        .enumerate()
        .map(|(i, r)| (r.as_str(), i))
        .collect();
    // Within one ref entries come newest first, so an entry's old value is the new value
    // of the next entry of the same ref.
    let mut per_ref: HashMap<String, Vec<reflog_walk::Entry>> = HashMap::new();
    for entry in walk.entries {
        per_ref
            .entry(entry.refname.clone())
            .or_default()
            .push(entry);
    }
    let mut events = Vec::new();
    let mut total = 0;
    for (name, entries) in per_ref {
        let olds: Vec<Option<Oid>> = entries
            .iter()
            .skip(1)
            .map(|e| Some(e.new.clone()))
            .chain(std::iter::once(None))
            .collect();
        let mut seq = 0;
        for (entry, old) in entries.into_iter().zip(olds) {
            let ms = entry.time.saturating_mul(1000);
            if !window.contains(ms) {
                continue;
            }
            total += 1;
            if seq < window.keep {
                events.push(Raw {
                    ref_bytes: None,
                    ref_rank: rank.get(name.as_str()).copied().unwrap_or(usize::MAX),
                    ref_name: name.clone(),
                    seq,
                    old: old.filter(|o| !o.is_zero()),
                    new: (!entry.new.is_zero()).then_some(entry.new),
                    time: entry.time,
                    tz: entry.tz,
                    name: entry.name,
                    email: entry.email,
                    message: entry.message,
                });
            }
            seq += 1;
        }
    }
    Ok((events, total, walk.truncated))
}
