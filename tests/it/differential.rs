//! The differential suite: every operation type on every fixture, once through a real
//! gateway (proposed on its handshake API, approved through its human API) and once as
//! the plain git commands a person would type, on a twin built by the same commands at
//! the same date. Both sides must then hold the same refs, HEAD, index entries (stages
//! and flags), worktree bytes, modes and links (untracked and ignored files included),
//! reflog messages, configuration, git's state files and hook canaries. The gateway's
//! restore point must then put back the state before, byte for byte (the index file
//! included). The differences the gateway makes on purpose are the table in
//! `docs/differences-from-git.md`; each normalization below names its row.
//!
//! The cases run in sequence per fixture (one template built, then copied for each side
//! of each case); the fixtures run in parallel.

use std::path::Path;

use crate::common::Fixture;
use crate::differential_fixtures::{SHAPES, Shape, build, copy, dirty};
use crate::differential_ops::{Ctx, MATRIX, Op, VARIANTS};
use crate::differential_support::{
    Mode, Picture, differences, gateway, git, picture, restore, run, without,
};
use crate::operation_e2e::Gateway;

/// Row "safety stash" of the table: a discard records one, plain git keeps nothing.
fn no_safety_stash(p: Picture) -> Picture {
    without(p, |k| {
        k.ends_with("ref refs/stash") || k.ends_with("logs/refs/stash")
    })
}

/// The deliberate differences between the gateway's side and git's, for `op`.
fn deliberate(op: &Op, p: Picture) -> Picture {
    match op.kind {
        "discard" => no_safety_stash(p),
        _ => p,
    }
}

/// What a restore of `op` leaves on purpose (rows "worktree kept", "remote keeps the
/// push", "submodule checkout"), taken out of both pictures.
fn unrestorable(op: &Op, p: Picture) -> Picture {
    let p = no_safety_stash(p);
    match op.kind {
        "worktree" => without(p, |k| {
            k.starts_with("wt/")
                || k.starts_with("wt ")
                || k.contains(".git/worktrees/wt/")
                || k.ends_with("ref refs/heads/wt-new")
        }),
        "push" => {
            let mut p = without(p, |k| {
                k.starts_with("origin.git") || k.contains(" ref refs/remotes/origin/")
            });
            for (k, v) in p.iter_mut() {
                if k.ends_with(" status") {
                    *v = v
                        .lines()
                        .filter(|l| !l.starts_with("# branch.ab"))
                        .collect::<Vec<_>>()
                        .join("\n");
                }
            }
            p
        }
        "submodulePointer" if op.name == "submodule-return" => without(p, |k| {
            k.contains(".git/modules/lib/") || k.starts_with("repo/lib") || k.ends_with(" status")
        }),
        _ => p,
    }
}

/// Runs `op` on `shape` both ways; every difference found, as text.
pub fn case(fx: &Fixture, gw: &Gateway, shape: Shape, op: &Op) -> Result<(), String> {
    let base = fx.path(&format!("{}-{}", shape.name, op.name));
    let (ours, theirs) = (base.join("gw"), base.join("git"));
    let template = fx.path(&format!("template-{}", shape.name));
    if !template.exists() {
        build(fx, &template, shape);
    }
    let repo = ours.join(
        picked(fx, &template, shape)
            .strip_prefix(&template)
            .unwrap(),
    );
    let twin = theirs.join(repo.strip_prefix(&ours).unwrap());
    std::fs::create_dir_all(&base).unwrap();
    copy(&template, &ours);
    copy(&template, &theirs);
    if op.dirty {
        dirty(fx, &repo);
        dirty(fx, &twin);
    }
    let branch = git(fx, &repo, &["symbolic-ref", "--short", "HEAD"]);
    let before = picture(fx, &ours, Mode::Exact);
    let ctx = |repo: &Path, side: &Path| Ctx {
        repo: repo.to_owned(),
        side: side.to_owned(),
        branch: branch.clone(),
    };
    let record = run(gw, op.kind, &repo, &(op.fields)(&ctx(&repo, &ours)));
    let git_ok = (op.git)(fx, &ctx(&twin, &theirs));
    let gw_ok = record["status"] == "completed";
    let label = format!("{} on {}", op.name, shape.name);
    let mut found = Vec::new();
    if gw_ok != git_ok {
        found.push(format!(
            "{label}: plain git succeeded: {git_ok}, the gateway: {record}"
        ));
    }
    found.extend(differences(
        &format!("{label}: gateway (-) against plain git (+)"),
        &deliberate(op, picture(fx, &ours, Mode::Git)),
        &deliberate(op, picture(fx, &theirs, Mode::Git)),
    ));
    if let Some(rp) = record["result"]["restorePointId"].as_str() {
        let (status, answer) = restore(gw, rp);
        if status != 200 {
            found.push(format!("{label}: restore answered {status}: {answer}"));
        }
        found.extend(differences(
            &format!("{label}: before (-) against restored (+)"),
            &unrestorable(op, before.clone()),
            &unrestorable(op, picture(fx, &ours, Mode::Exact)),
        ));
    } else if record["status"] != "refused" {
        found.push(format!("{label}: no restore point in {record}"));
    }
    if found.is_empty() {
        Ok(())
    } else {
        Err(found.join("\n"))
    }
}

/// The repository path of the fixture built under `template`.
fn picked(_: &Fixture, template: &Path, shape: Shape) -> std::path::PathBuf {
    if shape.name == "linked" {
        template.join("linked")
    } else {
        template.join("repo")
    }
}

/// Runs every op of `ops` on `shape` through one gateway; panics listing every difference.
pub fn suite(shape: &str, ops: &[&Op]) {
    run_all(*SHAPES.iter().find(|s| s.name == shape).unwrap(), ops);
}

/// [`suite`] of a shape of its own.
pub fn run_all(shape: Shape, ops: &[&Op]) {
    let fx = Fixture::new();
    let gw = gateway(&fx);
    let failures: Vec<String> = ops
        .iter()
        .filter_map(|op| case(&fx, &gw, shape, op).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} operations differ from git on {}:\n{}",
        failures.len(),
        ops.len(),
        shape.name,
        failures.join("\n\n")
    );
}

fn matrix() -> Vec<&'static Op> {
    MATRIX.iter().collect()
}

#[test]
fn every_operation_matches_git_and_restores_on_a_plain_repository() {
    suite("plain", &matrix());
}

#[test]
fn more_strategies_and_modes_match_git_and_restore() {
    suite("plain", &VARIANTS.iter().collect::<Vec<_>>());
}

#[test]
fn every_operation_matches_git_and_restores_with_line_ending_attributes() {
    // A rebase rewrites `dir1/m.txt` (LF on disk, `eol=crlf`) as CRLF: its restore must
    // put the LF bytes back, which the file's index blob alone does not tell.
    suite("eol", &matrix());
}

#[test]
fn every_operation_matches_git_and_restores_in_a_cone_sparse_checkout() {
    // `branch` checks out `side`, which lacks `dir1/m.txt`, a file outside the sparse
    // checkout: its restore must leave the file absent, as git's sparse checkout has it.
    suite("sparse-cone", &matrix());
}

#[test]
fn every_operation_matches_git_and_restores_in_a_non_cone_sparse_checkout() {
    suite("sparse-nocone", &matrix());
}

#[test]
fn every_operation_matches_git_and_restores_from_a_linked_worktree() {
    suite("linked", &matrix());
}

#[test]
fn every_operation_matches_git_and_restores_with_a_split_index() {
    suite("split-index", &matrix());
}

#[test]
fn every_operation_matches_git_and_restores_with_fsmonitor_and_untracked_cache() {
    suite("caches", &matrix());
}

#[test]
fn every_operation_matches_git_and_restores_with_a_clean_smudge_filter() {
    suite("filter", &matrix());
}

#[test]
fn every_operation_matches_git_and_restores_with_skip_worktree_entries_in_a_shared_index() {
    // The split index file lists no entry: `branch` checks out `side`, which lacks
    // `dir1/m.txt`, a skip-worktree entry of the shared index only. Its restore must
    // leave the file absent, as with the same sparse checkout unsplit.
    let mut ops = matrix();
    ops.extend(VARIANTS.iter());
    suite("split-sparse", &ops);
}

#[test]
fn checkouts_over_ignored_files_match_git_and_restore_every_byte() {
    // `i.env` is ignored on `main` and tracked on `side` and `feature`: git's switch,
    // merge and rebase overwrite it; each restore must put back its bytes.
    let mut ops = matrix();
    ops.extend(VARIANTS.iter());
    suite("tracked-ignored", &ops);
}
