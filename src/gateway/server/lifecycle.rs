//! The proposal lifecycle as data: the one table of legal moves.
//!
//! ```text
//! pending ─▶ approved ─▶ executing ─▶ completed | failed
//!    └─▶ rejected | cancelled | expired
//! ```
//!
//! The store consults [`is_legal`] before every compare-and-set, so a new move is added
//! here or nowhere. There is deliberately no edge out of `approved` except into
//! `executing`: an approved proposal resumes only through the claim (and its
//! revalidation), and `executing` ends only in `completed` or `failed` — reconciliation
//! after a crash uses the same two edges, never a re-run.

use crate::gateway::api::Status;

/// Every legal `(from, to)` move.
pub const TRANSITIONS: [(Status, Status); 7] = [
    (Status::Pending, Status::Approved),
    (Status::Pending, Status::Rejected),
    (Status::Pending, Status::Cancelled),
    (Status::Pending, Status::Expired),
    (Status::Approved, Status::Executing),
    (Status::Executing, Status::Completed),
    (Status::Executing, Status::Failed),
];

/// True when a proposal in `from` may move to `to`.
pub fn is_legal(from: Status, to: Status) -> bool {
    TRANSITIONS.contains(&(from, to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pair_is_legal_exactly_when_the_contract_draws_it() {
        use Status::*;
        let expected = |from: Status, to: Status| -> bool {
            matches!(
                (from, to),
                (Pending, Approved | Rejected | Cancelled | Expired)
                    | (Approved, Executing)
                    | (Executing, Completed | Failed)
            )
        };
        let mut legal = 0;
        for from in Status::ALL {
            for to in Status::ALL {
                assert_eq!(is_legal(from, to), expected(from, to), "{from:?} -> {to:?}");
                legal += usize::from(is_legal(from, to));
            }
        }
        assert_eq!(legal, TRANSITIONS.len());
    }

    #[test]
    fn terminal_states_have_no_way_out_and_pending_has_no_way_in() {
        for from in Status::ALL.into_iter().filter(|s| s.is_terminal()) {
            assert!(
                Status::ALL.into_iter().all(|to| !is_legal(from, to)),
                "{from:?}"
            );
        }
        assert!(
            Status::ALL
                .into_iter()
                .all(|from| !is_legal(from, Status::Pending))
        );
    }
}
