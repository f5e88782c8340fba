//! The pins of a plan's `merge` and `reset` steps from one look at the repository:
//! `HEAD` read once, the index file read once (its digest and cache-tree root in one
//! pass), and every commit, tree and merge base the steps name asked of one
//! `git rev-parse`. The other steps pin themselves beside it.
//!
//! Each step's pins are exactly those its own [`crate::operation::Operation::pin`]
//! records, built by the same functions from the same kind of reading; steps that name
//! the same ref or commit simply see one reading of it. Whenever this shared read cannot answer as certainly as
//! the steps would (no working tree, `HEAD` or the index not readable here, a name git
//! refuses or that cannot be batched), it answers `None` and every step pins itself, so
//! refusals read exactly as a step's own.

use serde_json::Value;

use super::Step;
use crate::git::rev_batch::{self, Answer, Ask};
use crate::git::{Git, Oid, Rev, index_lookup, ref_file};
use crate::operation::intent::Found;
use crate::operation::merge::{self, MergeFields};
use crate::operation::reset::{self, ResetFields};
use crate::operation::{Ctx, OpError, pins};

/// What one step takes from the shared read.
enum Want {
    Merge {
        f: MergeFields,
        source: Source,
    },
    Reset {
        f: ResetFields,
        target: Source,
    },
    /// The step pins itself.
    Own,
}

/// A commit named by a step: known from the ref files, or the place of its answer in
/// the batch.
enum Source {
    Known(Oid),
    Asked(usize),
}

/// The shared reading.
struct Read {
    head: Found,
    index: String,
    answers: Vec<Answer>,
    /// Per merge step (in step order), the place of its merge bases in the answers.
    bases: Vec<Option<usize>>,
    staged: Option<bool>,
}

/// Every step's pins (or its refusal) in step order, or `None` when the steps must pin
/// themselves.
pub async fn pin(ctx: Ctx<'_>, steps: &[Step]) -> Option<Vec<Result<Value, OpError>>> {
    let mut wants = wants(steps)?;
    ctx.repo.worktree.as_ref()?;
    let alone: Vec<bool> = wants.iter().map(|w| matches!(w, Want::Own)).collect();
    let own =
        futures_util::future::join_all(steps.iter().zip(alone).map(|(s, alone)| async move {
            match alone {
                true => Some(s.op.pin(ctx, &s.fields).await.map(|p| p.0)),
                false => None,
            }
        }));
    let (read, own) = tokio::join!(read(ctx, &mut wants), own);
    let read = read?;
    let mut merges = read.bases.iter();
    let mut pinned = Vec::with_capacity(steps.len());
    for (want, own) in wants.iter().zip(own) {
        pinned.push(match want {
            Want::Own => own?,
            Want::Merge { f, source } => {
                let bases = match merges.next().copied().flatten().map(|at| &read.answers[at]) {
                    Some(Answer::Bases(b)) => b.as_slice(),
                    _ => &[],
                };
                merge::pins_from(
                    f,
                    &read.head,
                    &oid_of(&read.answers, source)?,
                    read.index.clone(),
                    bases,
                    Ok(read.staged.unwrap_or(false)),
                )
            }
            Want::Reset { target, .. } => reset::pins_from(
                &read.head,
                &oid_of(&read.answers, target)?,
                read.index.clone(),
            ),
        });
    }
    Some(pinned)
}

/// What each step wants; `None` when no step reads anything shared.
fn wants(steps: &[Step]) -> Option<Vec<Want>> {
    let wants: Vec<Want> = steps
        .iter()
        .map(|s| match s.op.kind() {
            "merge" => MergeFields::from_fields(&s.fields).map_or(Want::Own, |f| Want::Merge {
                f,
                source: Source::Asked(0),
            }),
            "reset" => ResetFields::from_fields(&s.fields).map_or(Want::Own, |f| Want::Reset {
                f,
                target: Source::Asked(0),
            }),
            _ => Want::Own,
        })
        .collect();
    wants
        .iter()
        .any(|w| !matches!(w, Want::Own))
        .then_some(wants)
}

fn oid_of(answers: &[Answer], source: &Source) -> Option<Oid> {
    match source {
        Source::Known(oid) => Some(oid.clone()),
        Source::Asked(at) => match answers.get(*at) {
            Some(Answer::Oid(oid)) => Some(oid.clone()),
            _ => None,
        },
    }
}

/// `HEAD`, then the index beside one `rev-parse` of every name, tree and merge base the
/// steps ask; `None` when any of it must be read by the steps themselves.
async fn read(ctx: Ctx<'_>, wants: &mut [Want]) -> Option<Read> {
    let git = Git::new(ctx.repo, ctx.cancel);
    let head = pins::head(&git).await.ok()?;
    let tip = merge::tip_of(&head);
    let mut asks = Vec::new();
    let mut bases = Vec::new();
    for want in wants.iter_mut() {
        let (name, field, slot) = match want {
            Want::Merge { f, source } => (f.source_ref.as_str(), "sourceRef", source),
            Want::Reset { f, target } => (f.target_ref.as_str(), "targetRef", target),
            Want::Own => continue,
        };
        let mut rev = Rev::parse(field, name).ok()?;
        *slot = match ref_file::branch_named(ctx.repo, name) {
            Some((_, oid)) => {
                // The merge bases of the commit read, not of whatever the name is later.
                rev = Rev::parse(field, oid.as_str()).ok()?;
                Source::Known(oid)
            }
            None => {
                asks.push(Ask::Commit(rev.clone()));
                Source::Asked(asks.len() - 1)
            }
        };
        if matches!(want, Want::Merge { .. }) {
            bases.push(tip.as_ref().map(|tip| {
                asks.push(Ask::Bases(tip.clone(), rev));
                asks.len() - 1
            }));
        }
    }
    let merging = wants.iter().any(|w| matches!(w, Want::Merge { .. }));
    let tree_at = match (&tip, merging) {
        (Some(tip), true) => {
            asks.push(Ask::Tree(tip.clone()));
            Some(asks.len() - 1)
        }
        _ => None,
    };
    let (index, answers) = tokio::join!(index(&git), rev_batch::resolve(&git, &asks));
    let (digest, root) = index?;
    let answers = answers.ok()??;
    let index = match digest {
        Some(digest) => digest,
        None => pins::index_digest(&git).await.ok()?,
    };
    let staged = match tree_at.map(|at| &answers[at]) {
        Some(Answer::Oid(tree)) => match root {
            Some(root) => Some(*tree != root),
            None => Some(crate::git::diff::anything_staged(&git).await.ok()?),
        },
        _ => None,
    };
    Some(Read {
        head,
        index,
        answers,
        bases,
        staged,
    })
}

/// The index's digest and cache-tree root from one read of the file, off the async
/// workers; `None` when the read stalled.
async fn index(git: &Git<'_>) -> Option<(Option<String>, Option<Oid>)> {
    let path = git.repo.git_dir.join("index");
    let format = git.repo.object_format;
    crate::safe_file::off_thread(git.cancel(), move || {
        index_lookup::digest_and_tree(&path, format)
    })
    .await
    .ok()
}
