//! The archive's steps, by name, and the recovery plan each stopping point leaves.
//!
//! Step names are part of the tool's contract (`completedSteps`, `remainingSteps`,
//! `failedStep`, `gitOps[].step`, the `git-<step>-failed` codes): they are spelled once,
//! in [`Step::name`], and every list a result carries is built from [`Step`] values.

use serde_json::{Value, json};

/// Everything the archive does or asks the agent to do, in the order it happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `openspec archive`: the change folder moves under `openspec/changes/archive/`.
    OpenspecArchive,
    /// The delta specs merged into `openspec/specs/` (part of the OpenSpec archive).
    SpecSync,
    /// `status: archived` in the archived `.openspec.yaml`.
    ArchiveMetadata,
    /// The agent repairs that file by hand when gitward could not write it.
    RepairArchiveMetadata,
    /// The agent protects unrelated changes (asking the user) before a retry.
    ProtectAndCleanWorkspaces,
    /// Stage exactly the archive's paths and commit them.
    Commit,
    /// Rebase the proposal branch onto main when main moved on.
    RebaseOntoMain,
    /// The agent resolves or aborts a rebase that stopped on a conflict.
    ResolveOrAbortRebase,
    /// The agent looks at both worktrees after an unexplained git failure.
    InspectGitState,
    /// The agent finds where the proposal's commits went.
    RestoreOrIdentifyProposalBranch,
    /// Fast-forward main to the proposal branch.
    MergeToMain,
    /// The same fast-forward after a rebase or a repair.
    MergeToMainRetry,
    /// Remove the linked worktree.
    WorktreeRemove,
    /// Delete the proposal branch (`-d`).
    BranchDelete,
    /// Worktree removal and branch deletion, as one step still to finish.
    Cleanup,
    /// The same, after the merge already landed.
    CompleteWorktreeAndBranchCleanup,
}

impl Step {
    pub const fn name(self) -> &'static str {
        match self {
            Step::OpenspecArchive => "openspec-archive",
            Step::SpecSync => "spec-sync",
            Step::ArchiveMetadata => "archive-metadata",
            Step::RepairArchiveMetadata => "repair-archive-metadata",
            Step::ProtectAndCleanWorkspaces => "protect-and-clean-workspaces",
            Step::Commit => "commit",
            Step::RebaseOntoMain => "rebase-onto-main",
            Step::ResolveOrAbortRebase => "resolve-or-abort-rebase",
            Step::InspectGitState => "inspect-git-state",
            Step::RestoreOrIdentifyProposalBranch => "restore-or-identify-proposal-branch",
            Step::MergeToMain => "merge-to-main",
            Step::MergeToMainRetry => "merge-to-main-retry",
            Step::WorktreeRemove => "worktree-remove",
            Step::BranchDelete => "branch-delete",
            Step::Cleanup => "cleanup",
            Step::CompleteWorktreeAndBranchCleanup => "complete-worktree-and-branch-cleanup",
        }
    }
}

/// The steps OpenSpec itself completes.
pub const ARCHIVED: [Step; 2] = [Step::OpenspecArchive, Step::SpecSync];

/// The git steps of a linked proposal after the commit.
const LINKED_AFTER_COMMIT: [Step; 3] =
    [Step::MergeToMain, Step::WorktreeRemove, Step::BranchDelete];

/// Where the archive stopped, and so what is left to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The archived metadata could not be written.
    Metadata { linked: bool },
    /// Other staged changes would be swept into the commit.
    StagedOther,
    /// Staging or committing the archive failed.
    Commit,
    /// The fast-forward failed while a worktree has uncommitted changes.
    MergeDirty,
    /// The proposal branch is gone.
    MissingBranch,
    /// The fast-forward failed for a reason other than main having moved on.
    MergeUnknown,
    /// The rebase onto main stopped on a conflict.
    RebaseConflict,
    /// The rebase failed otherwise.
    RebaseUnknown,
    /// The fast-forward after the rebase failed.
    MergeRetry,
    /// Removing the worktree or deleting the branch failed.
    Cleanup,
}

impl Stop {
    /// The steps still to do, the agent's own repair first.
    pub fn remaining(self) -> Vec<Step> {
        use Step::*;
        let mut steps = match self {
            Stop::Metadata { .. } => vec![RepairArchiveMetadata, Commit],
            Stop::StagedOther => vec![ProtectAndCleanWorkspaces, Commit],
            Stop::Commit => vec![Commit],
            Stop::MergeDirty => vec![
                ProtectAndCleanWorkspaces,
                RebaseOntoMain,
                MergeToMainRetry,
                WorktreeRemove,
                BranchDelete,
            ],
            Stop::MissingBranch => vec![RestoreOrIdentifyProposalBranch, MergeToMainRetry, Cleanup],
            Stop::MergeUnknown | Stop::RebaseUnknown => {
                vec![
                    InspectGitState,
                    MergeToMainRetry,
                    WorktreeRemove,
                    BranchDelete,
                ]
            }
            Stop::RebaseConflict => vec![
                ResolveOrAbortRebase,
                MergeToMainRetry,
                WorktreeRemove,
                BranchDelete,
            ],
            Stop::MergeRetry => vec![InspectGitState, WorktreeRemove, BranchDelete],
            Stop::Cleanup => vec![CompleteWorktreeAndBranchCleanup],
        };
        // Staged changes stop the archive before it knows whether the proposal is linked,
        // so its plan names the linked steps too.
        if matches!(self, Stop::StagedOther | Stop::Metadata { linked: true }) {
            steps.extend(LINKED_AFTER_COMMIT);
        }
        steps
    }
}

/// The kind of recovery a result names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    None,
    ArchiveMetadataUpdate,
    DirtyWorkspace,
    MissingBranch,
    RebaseConflict,
    UnknownGitError,
}

impl Recovery {
    pub const fn name(self) -> &'static str {
        match self {
            Recovery::None => "none",
            Recovery::ArchiveMetadataUpdate => "archive-metadata-update",
            Recovery::DirtyWorkspace => "dirty-workspace",
            Recovery::MissingBranch => "missing-branch",
            Recovery::RebaseConflict => "rebase-conflict",
            Recovery::UnknownGitError => "unknown-git-error",
        }
    }
}

/// Step names for a result.
pub fn names(steps: &[Step]) -> Vec<&'static str> {
    steps.iter().map(|s| s.name()).collect()
}

/// Where the recovery applies, shown beside every plan.
pub struct Place<'a> {
    pub main_path: String,
    pub workspace_path: &'a str,
    pub proposal_branch: String,
}

/// A `recovery` object: who must act, what kind of repair, and the steps done and left.
pub fn recovery(
    kind: Recovery,
    place: &Place<'_>,
    main_branch: Option<&str>,
    completed: &[Step],
    remaining: &[Step],
    instructions: Vec<String>,
) -> Value {
    json!({
        "required": if kind == Recovery::None { "none" } else { "agent" },
        "kind": kind.name(),
        "mainPath": place.main_path,
        "workspacePath": place.workspace_path,
        "mainBranch": main_branch,
        "proposalBranch": place.proposal_branch,
        "completedSteps": names(completed),
        "remainingSteps": names(remaining),
        "instructions": instructions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_names_are_the_contract() {
        let all = [
            (Step::OpenspecArchive, "openspec-archive"),
            (Step::SpecSync, "spec-sync"),
            (Step::ArchiveMetadata, "archive-metadata"),
            (Step::Commit, "commit"),
            (Step::RebaseOntoMain, "rebase-onto-main"),
            (Step::MergeToMain, "merge-to-main"),
            (Step::MergeToMainRetry, "merge-to-main-retry"),
            (Step::WorktreeRemove, "worktree-remove"),
            (Step::BranchDelete, "branch-delete"),
        ];
        for (step, name) in all {
            assert_eq!(step.name(), name);
        }
    }

    #[test]
    fn each_stop_leaves_its_plan() {
        let plan = |stop: Stop| names(&stop.remaining()).join(" ");
        assert_eq!(
            plan(Stop::Metadata { linked: false }),
            "repair-archive-metadata commit"
        );
        assert_eq!(
            plan(Stop::Metadata { linked: true }),
            "repair-archive-metadata commit merge-to-main worktree-remove branch-delete"
        );
        assert_eq!(
            plan(Stop::StagedOther),
            "protect-and-clean-workspaces commit merge-to-main worktree-remove branch-delete"
        );
        assert_eq!(plan(Stop::Commit), "commit");
        assert_eq!(
            plan(Stop::MergeDirty),
            "protect-and-clean-workspaces rebase-onto-main merge-to-main-retry worktree-remove branch-delete"
        );
        assert_eq!(
            plan(Stop::MissingBranch),
            "restore-or-identify-proposal-branch merge-to-main-retry cleanup"
        );
        for stop in [Stop::MergeUnknown, Stop::RebaseUnknown] {
            assert_eq!(
                plan(stop),
                "inspect-git-state merge-to-main-retry worktree-remove branch-delete"
            );
        }
        assert_eq!(
            plan(Stop::RebaseConflict),
            "resolve-or-abort-rebase merge-to-main-retry worktree-remove branch-delete"
        );
        assert_eq!(
            plan(Stop::MergeRetry),
            "inspect-git-state worktree-remove branch-delete"
        );
        assert_eq!(plan(Stop::Cleanup), "complete-worktree-and-branch-cleanup");
    }
}
