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
            format!(
                "{conflicted} conflicted path(s): read them as structured data before editing."
            ),
        );
    }
    if let Some(op) = &d.operation_details {
        let what = match (op.step, op.total) {
            (Some(s), Some(t)) => format!("A {} is in progress (step {s}/{t})", op.kind),
            _ => format!("A {} is in progress", op.kind),
        };
        if conflicted == 0 && op.kind != "bisect" {
            hint(
                "conflict.read",
                format!("{what}: see what it is applying before recommending continue or abort."),
            );
        } else if op.kind == "bisect" {
            hint(
                "repo.reflog",
                format!("{what}: the reflog shows the commits already tested."),
            );
        }
    }
    if d.head.detached && !d.head.rebasing && d.operation_in_progress.is_none() {
        hint(
            "repo.branchStack",
            "HEAD is detached: commits made here belong to no branch.".to_owned(),
        );
    }
    if let Some(behind) = d.head.behind.filter(|b| *b > 0) {
        hint(
            "repo.conflictPreflight",
            format!(
                "Branch is {behind} commit(s) behind {}; predict the merge or rebase before recommending one.",
                d.head.upstream.as_deref().unwrap_or("its upstream")
            ),
        );
    }
    let s = d.submodules.as_ref().map_or(&NO_SUBMODULES, |s| s);
    if s.drifted + s.uninitialized + s.conflicts + s.modified > 0 {
        hint(
            "submodule.status",
            format!(
                "Submodules need attention ({} drifted, {} modified, {} uninitialized).",
                s.drifted, s.modified, s.uninitialized
            ),
        );
    }
    if let Some(w) = d
        .working_tree
        .as_ref()
        .filter(|w| !w.clean && w.conflicted == 0)
    {
        hint(
            "worktree.changes",
            format!("{} changed path(s) in the working tree.", w.changed),
        );
    }
    if d.head.unborn {
        hint("repo.status", "No commits yet on this branch.".to_owned());
    } else {
        hint(
            "repo.history",
            "Page through more history, or repo.scope for one directory.".to_owned(),
        );
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
    fn a_clean_branch_points_at_history() {
        assert_eq!(tools(&sample(1)), ["repo.history"]);
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
