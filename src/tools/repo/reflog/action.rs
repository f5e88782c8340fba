//! What kind of move a reflog message records, from the words git writes.

/// The kind of move a reflog message records.
pub fn action(message: &str) -> &'static str {
    let head = message.split(':').next().unwrap_or("").trim();
    let word = head.split([' ', '(']).next().unwrap_or("");
    match word {
        "commit" if head.contains("(amend)") => "amend",
        "commit" if head.contains("(merge)") => "merge",
        "commit" => "commit",
        "reset" => "reset",
        "rebase" => "rebase",
        "checkout" | "switch" => "checkout",
        "merge" => "merge",
        "pull" | "initial" if head.contains("pull") => "pull",
        "branch" | "Branch" => "branch",
        "clone" => "clone",
        "cherry-pick" => "cherry-pick",
        "revert" => "revert",
        "fetch" => "fetch",
        "push" | "update" if head.contains("push") => "push",
        "am" => "am",
        "stash" | "On" | "WIP" => "stash",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_from_messages() {
        let cases = [
            ("commit (initial): one", "commit"),
            ("commit: two", "commit"),
            ("commit (amend): two", "amend"),
            ("commit (merge): Merge x", "merge"),
            ("reset: moving to HEAD~2", "reset"),
            ("rebase (finish): returning to refs/heads/a", "rebase"),
            ("rebase -i (pick): x", "rebase"),
            ("checkout: moving from main to a", "checkout"),
            ("merge topic: Fast-forward", "merge"),
            ("pull: Fast-forward", "pull"),
            ("pull --rebase (finish): x", "pull"),
            ("branch: Created from HEAD", "branch"),
            ("Branch: renamed refs/heads/a to refs/heads/b", "branch"),
            ("clone: from /x", "clone"),
            ("cherry-pick: x", "cherry-pick"),
            ("update by push", "push"),
            ("", "other"),
        ];
        for (message, want) in cases {
            assert_eq!(action(message), want, "{message}");
        }
    }
}
