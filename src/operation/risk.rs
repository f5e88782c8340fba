//! The one risk table: how much a person should look before approving each operation
//! type. Tool annotations (`destructiveHint`), the audit labels, the card's badge and the
//! policy all read it here; nothing else states a risk.

use super::Risk;

/// Every operation type of the protocol with its risk. `discard` and `reset` lose work
/// outright; the others move refs or change files in ways a restore point undoes.
pub const TABLE: [(&str, Risk); 12] = [
    ("merge", Risk::Medium),
    ("rebase", Risk::Medium),
    ("discard", Risk::High),
    ("reset", Risk::High),
    ("patch", Risk::Medium),
    ("plan", Risk::Medium),
    ("worktree", Risk::Low),
    ("commit", Risk::Low),
    ("push", Risk::Medium),
    ("branch", Risk::Low),
    // Only branches whose every commit is kept elsewhere are deleted, and each tip is
    // journaled; still, refs a person may count on go away.
    ("branchDelete", Risk::Medium),
    ("submodulePointer", Risk::Medium),
];

/// The risk of `kind`; a type this table does not know is treated as medium.
pub fn of(kind: &str) -> Risk {
    TABLE
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or(Risk::Medium, |(_, risk)| *risk)
}

/// True when the effect cannot be taken back by moving refs: the tool's
/// `destructiveHint`.
pub fn destructive(kind: &str) -> bool {
    of(kind) == Risk::High
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_covers_exactly_the_protocol_types() {
        let mut kinds: Vec<_> = TABLE.iter().map(|(k, _)| *k).collect();
        let mut protocol = crate::gateway::api::OPERATION_TYPES.to_vec();
        kinds.sort_unstable();
        protocol.sort_unstable();
        assert_eq!(kinds, protocol);
        let destructive: Vec<_> = TABLE
            .iter()
            .filter(|(k, _)| super::destructive(k))
            .map(|(k, _)| *k)
            .collect();
        assert_eq!(destructive, ["discard", "reset"]);
        assert_eq!(of("amend"), Risk::Medium);
    }
}
