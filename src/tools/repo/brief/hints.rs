//! The next steps `repo.brief` suggests, most urgent first, each naming a tool.

use super::{BriefData, Submodules};
use crate::model::Hint;

/// Hints given at most, most urgent first.
const MAX_HINTS: usize = 3;

pub(super) fn hints(d: &BriefData) -> Vec<Hint> {
    let mut out = Vec::new();
    let mut hint = |tool, reason: String| out.push(Hint { tool, reason });
    let conflicted = d.working_tree.as_ref().map_or(0, |w| w.conflicted);
    if conflicted > 0 {
        hint(
            "conflict.read",
            "Read the conflicts before editing.".to_owned(),
        );
    }
    // Reasons leave out the counts and names the data above already gives.
    if let Some(op) = &d.operation_details {
        if conflicted == 0 && op.kind != "bisect" {
            hint(
                "conflict.read",
                "See what the operation applies before recommending continue or abort.".to_owned(),
            );
        } else if op.kind == "bisect" {
            hint(
                "repo.reflog",
                "The reflog shows the commits the bisect already tested.".to_owned(),
            );
        }
    }
    if d.head.detached && !d.head.rebasing && d.operation_in_progress.is_none() {
        hint(
            "repo.branchStack",
            "HEAD is detached: commits made here belong to no branch.".to_owned(),
        );
    }
    if d.head.behind.is_some_and(|b| b > 0) {
        hint(
            "repo.conflictPreflight",
            "Behind the upstream: predict the merge or rebase before recommending one.".to_owned(),
        );
    }
    let s = d.submodules.as_ref().map_or(&NO_SUBMODULES, |s| s);
    if s.drifted + s.uninitialized + s.conflicts + s.modified > 0 {
        hint(
            "submodule.status",
            "Submodules drifted, changed or not checked out.".to_owned(),
        );
    }
    if d.working_tree
        .as_ref()
        .is_some_and(|w| !w.clean && w.conflicted == 0)
    {
        hint(
            "worktree.changes",
            "Uncommitted changes in the working tree.".to_owned(),
        );
    }
    // More history is always one call away; `recentCommitsTruncated` already says there
    // is some, so a hint pointing at it would only repeat that on every brief.
    if d.head.unborn {
        hint("repo.status", "No commits yet on this branch.".to_owned());
    }
    out.truncate(MAX_HINTS);
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

#[cfg(test)]
mod tests {
    use super::super::{Operation, sample};
    use super::*;

    fn tools(d: &BriefData) -> Vec<&'static str> {
        hints(d).iter().map(|h| h.tool).collect()
    }

    #[test]
    fn a_clean_branch_needs_no_next_step() {
        assert!(tools(&sample(1)).is_empty());
        let mut unborn = sample(0);
        unborn.head.unborn = true;
        assert_eq!(tools(&unborn), ["repo.status"]);
    }

    #[test]
    fn conflicts_and_operations_come_first_and_the_list_is_capped() {
        let mut d = sample(1);
        if let Some(w) = &mut d.working_tree {
            w.conflicted = 2;
            w.clean = false;
            w.changed = 2;
        }
        d.head.behind = Some(3);
        d.head.detached = true;
        d.operation_in_progress = Some("bisect");
        d.operation_details = Some(Operation {
            kind: "bisect",
            branch: None,
            onto: None,
            step: None,
            total: None,
            incoming: None,
            sequencer_only: false,
        });
        assert_eq!(
            tools(&d),
            ["conflict.read", "repo.reflog", "repo.conflictPreflight"]
        );
    }
}
