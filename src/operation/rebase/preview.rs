//! What a rebase card shows, and what a stopped rebase reports.
//!
//! The card's prediction replays the commits `git rebase` would pick one by one with
//! `merge-tree` in a scratch object directory (nothing is written to the repository), as
//! `repo.conflictPreflight` does, and stops at the first conflict.

use serde_json::{Value, json};

use super::RebaseFields;
use crate::git::merge::{MergeQuery, Scratch};
use crate::git::status::{IgnoreSubmodules, StatusQuery, Untracked};
use crate::git::write::GitWrite;
use crate::git::{Git, ObjectFormat, Oid, log};
use crate::operation::{Ctx, OpError, Pins};

/// Commits listed and replayed on a card at most.
const MAX_COMMITS: usize = 100;
/// Conflicting paths named at most.
const MAX_PATHS: usize = 50;

fn pinned(pins: &Pins, key: &str) -> Result<Oid, OpError> {
    Oid::parse(pins.0[key].as_str().unwrap_or_default())
        .ok_or_else(|| OpError::Internal(format!("no {key} pinned")))
}

fn empty_tree(format: ObjectFormat) -> &'static str {
    match format {
        ObjectFormat::Sha1 => "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        ObjectFormat::Sha256 => "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
    }
}

/// The card: the commits to replay, the first predicted conflict, whether the worktree
/// is clean enough for git to start, and the history warning.
pub(super) async fn card(ctx: Ctx<'_>, f: &RebaseFields, pins: &Pins) -> Result<Value, OpError> {
    let git = Git::new(ctx.repo, ctx.cancel);
    let onto = pinned(pins, "ontoOid")?;
    let current = pinned(pins, "currentOid")?;
    let picks = log::rebase_picks(&git, &onto, &current, MAX_COMMITS).await?;
    let commits: Vec<Value> = picks
        .commits
        .iter()
        .map(|c| json!({"oid": c.oid.as_str(), "subject": c.subject}))
        .collect();
    let scratch = Scratch::new(ctx.repo)?;
    let mut base = onto.clone();
    let mut first_conflict = Value::Null;
    let empty = empty_tree(ctx.repo.object_format);
    for (i, commit) in picks.commits.iter().enumerate() {
        let parent = commit.parents.first().map_or(empty, Oid::as_str);
        let merged = MergeQuery {
            base: Some(parent),
            ours: base.as_str(),
            theirs: commit.oid.as_str(),
            messages: false,
            max_paths: MAX_PATHS,
        }
        .run(&git, &scratch)
        .await?;
        if !merged.clean {
            let paths: Vec<String> = merged
                .tree
                .conflicts()
                .map(|(u, _)| String::from_utf8_lossy(&u.path).into_owned())
                .collect();
            first_conflict = json!({"oid": commit.oid.as_str(), "subject": commit.subject,
                                    "position": i + 1, "paths": paths});
            break;
        }
        base = merged.tree_oid()?.clone();
    }
    let tracked = StatusQuery {
        untracked: Some(Untracked::No),
        ignore_submodules: Some(IgnoreSubmodules::None),
        ..StatusQuery::default()
    }
    .read(&git, 0)
    .await?;
    Ok(json!({
        "branch": pins.0["branch"],
        "ontoRef": f.onto_ref,
        "ontoOid": onto.as_str(),
        "currentOid": current.as_str(),
        "commits": commits,
        "commitsTotal": picks.seen,
        "commitsTruncated": picks.seen > picks.commits.len() as u64,
        "firstConflict": first_conflict,
        "worktreeClean": tracked.counts.entries == 0,
        "warning": "Rewrites history: the replayed commits get new ids. If the branch was \
                    pushed, its remote copy will have diverged.",
    }))
}

/// Whether git holds a rebase in progress in `git_dir`.
pub(super) fn in_progress(git_dir: &std::path::Path) -> bool {
    git_dir.join("rebase-merge").is_dir() || git_dir.join("rebase-apply").is_dir()
}

/// A rebase that exited non-zero. When git stopped mid-rebase (a conflict), the rebase is
/// aborted and the error names the commit and the conflicting paths; otherwise git's own
/// refusal is reported (a dirty worktree, a rebase already in progress, …). `before`:
/// a rebase was in progress before ours ran; git refused to start over it, and that
/// rebase is the person's, so it is never aborted.
pub(super) async fn stopped(ctx: Ctx<'_>, w: &GitWrite<'_>, output: &str, before: bool) -> OpError {
    let dir = &ctx.repo.git_dir;
    if before || !in_progress(dir) {
        return OpError::git(output.trim().to_owned());
    }
    let git = Git::new(ctx.repo, ctx.cancel);
    let stopped_at = std::fs::read_to_string(dir.join("REBASE_HEAD"))
        .ok()
        .and_then(|t| Oid::parse(t.trim()));
    let subject = match &stopped_at {
        Some(oid) => log::subjects(&git, &[oid])
            .await
            .ok()
            .and_then(|mut s| s.remove(oid)),
        None => None,
    };
    let paths: Vec<String> = crate::git::ls_files::unmerged(&git, MAX_PATHS)
        .await
        .map(|s| {
            s.unmerged
                .iter()
                .map(|u| String::from_utf8_lossy(&u.path).into_owned())
                .collect()
        })
        .unwrap_or_default();
    let aborted = match w.rebase_abort().await {
        Ok(ran) if ran.ok() => "the rebase was aborted and the branch is as before".to_owned(),
        Ok(ran) => format!("aborting it failed too: {}", ran.combined().trim()),
        Err(e) => format!("aborting it failed too: {e}"),
    };
    let commit = match (&stopped_at, subject) {
        (Some(oid), Some(subject)) => format!("commit {oid} (\"{subject}\")"),
        (Some(oid), None) => format!("commit {oid}"),
        _ => "a commit".to_owned(),
    };
    let paths = if paths.is_empty() {
        String::new()
    } else {
        format!(" with conflicts in {}", paths.join(", "))
    };
    OpError::git(format!("the rebase stopped at {commit}{paths}; {aborted}"))
}
