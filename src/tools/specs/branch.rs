//! A `proposal/<name>` branch that exists before its worktree does: a proposal whose
//! worktree was removed, or somebody else's branch under the same name.

use serde_json::json;

use crate::git::{Git, head_tree, merge_base, refs};
use crate::process::CancellationToken;
use crate::specs::SpecError;
use crate::specs::target::Owner;

/// What to do with an existing branch of the proposal's name.
pub(super) enum Existing {
    /// No such branch: create it with the worktree.
    None,
    /// The same change's branch (it holds the change, or nothing of its own yet): check it
    /// out in the new worktree.
    Reuse,
}

/// Decides whether `proposal/<name>` can be used for the change `name`; an error when it
/// belongs to something else.
pub(super) async fn existing(
    owner: &Owner,
    name: &str,
    cancel: &CancellationToken,
) -> Result<Existing, SpecError> {
    let branch = format!("proposal/{name}");
    let full = format!("refs/heads/{branch}");
    let Some(repo) = &owner.repo else {
        return Ok(Existing::None);
    };
    let git = Git::new(repo, cancel);
    let tip = match refs::resolve(&git, std::slice::from_ref(&full)).await {
        Ok(found) => match found.into_iter().find(|(r, _)| *r == full) {
            Some((_, oid)) => oid,
            None => return Ok(Existing::None),
        },
        Err(_) => return Ok(Existing::None),
    };
    let change = format!("openspec/changes/{name}");
    let holds_change = head_tree::tracked_of(&git, &tip, std::slice::from_ref(&change))
        .await
        .is_ok_and(|found| !found.is_empty());
    let nothing_own = match git.head().await.ok().flatten() {
        Some(head) => merge_base::is_ancestor(&git, &tip, &head)
            .await
            .ok()
            .flatten()
            .unwrap_or(false),
        None => false,
    };
    if holds_change || nothing_own {
        return Ok(Existing::Reuse);
    }
    Err(SpecError::new(
        "WorkspaceError",
        "PROPOSAL_BRANCH_EXISTS",
        format!(
            "branch {branch} already exists with commits of its own and does not hold {change}/, so it is not this change's; nothing was created"
        ),
    )
    .with(json!({
        "branch": branch,
        "tip": tip.as_str(),
        "nextSteps": [
            "Call create-proposal again with another changeName, or",
            format!("ask the user what {branch} is; only they decide whether to rename or delete it, then call create-proposal again"),
        ],
    })))
}
