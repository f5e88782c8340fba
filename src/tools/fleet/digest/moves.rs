//! One reflog move: as read ([`Raw`]), as reported ([`Event`]), and what its message
//! says about it ([`classify`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::git::Oid;
use crate::model::Identity;

/// Messages longer than this are cut (at a character boundary) and end with `…`.
const MESSAGE_CAP: usize = 1024;

/// Which reflogs to read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RefScope {
    /// `HEAD` only.
    Head,
    /// Local branches (`refs/heads/*`) only.
    Branches,
    /// Both.
    #[default]
    All,
}

impl RefScope {
    pub(super) fn head(self) -> bool {
        matches!(self, RefScope::Head | RefScope::All)
    }

    pub(super) fn branches(self) -> bool {
        matches!(self, RefScope::Branches | RefScope::All)
    }
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub repo_path: String,
    /// `HEAD` or `refs/heads/<name>`.
    #[serde(rename = "ref")]
    pub ref_name: String,
    /// Base64 of a non-UTF-8 `ref`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ref_bytes_b64: Option<String>,
    /// Null when the move created the ref (or, in a reftable repository, for its oldest
    /// entry, whose previous value git does not show).
    pub old_oid: Option<String>,
    /// Null when the move deleted the ref.
    pub new_oid: Option<String>,
    /// When the move was recorded, epoch milliseconds.
    pub at_ms: i64,
    /// The recorder's UTC offset (`+0100`).
    pub tz: String,
    /// The identity git recorded for the move: the configured identity, not proof of a
    /// person or an agent.
    pub identity: Identity,
    pub message: String,
    /// `commit`, `amend`, `reset`, `rebase`, `merge`, `checkout`, `pull`, `branch`,
    /// `cherry-pick`, `revert` or `other`.
    pub action: Action,
    /// The move dropped the previous tip: it is not an ancestor of the new one (reset,
    /// amend, rebase, forced moves). A checkout only moves HEAD and never counts.
    pub rewrote: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    Commit,
    Amend,
    Reset,
    Rebase,
    Merge,
    Checkout,
    Pull,
    Branch,
    CherryPick,
    Revert,
    Other,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Window {
    pub(super) since: i64,
    pub(super) until: i64,
    pub(super) scope: RefScope,
    /// Most events worth keeping from one reflog (no more can be returned).
    pub(super) keep: usize,
}

impl Window {
    pub(super) fn contains(&self, ms: i64) -> bool {
        ms >= self.since && ms <= self.until
    }
}

/// One move as read, before it is chosen and checked.
#[derive(Debug)]
pub(super) struct Raw {
    pub(super) ref_name: String,
    /// The exact name, kept only when it is not UTF-8.
    pub(super) ref_bytes: Option<Vec<u8>>,
    /// 0 for HEAD, then branches in name order: ties in time list HEAD first.
    pub(super) ref_rank: usize,
    /// Position in its reflog counting from the newest (0).
    pub(super) seq: usize,
    pub(super) old: Option<Oid>,
    pub(super) new: Option<Oid>,
    pub(super) time: i64,
    pub(super) tz: String,
    pub(super) name: Vec<u8>,
    pub(super) email: Vec<u8>,
    pub(super) message: Vec<u8>,
}

impl Raw {
    fn at_ms(&self) -> i64 {
        self.time.saturating_mul(1000)
    }

    pub(super) fn into_event(self, repo_path: String, rewrote: bool) -> Event {
        let message = String::from_utf8_lossy(&self.message);
        Event {
            repo_path,
            action: classify(&message).0,
            at_ms: self.at_ms(),
            ref_name: self.ref_name,
            ref_bytes_b64: self
                .ref_bytes
                .as_deref()
                .and_then(|b| crate::model::name_text(b).1),
            old_oid: self.old.map(|o| o.as_str().to_owned()),
            new_oid: self.new.map(|o| o.as_str().to_owned()),
            tz: self.tz,
            identity: Identity {
                name: String::from_utf8_lossy(&self.name).into_owned(),
                email: String::from_utf8_lossy(&self.email).into_owned(),
            },
            message: cap(&message),
            rewrote,
        }
    }
}

fn cap(text: &str) -> String {
    if text.len() <= MESSAGE_CAP {
        return text.to_owned();
    }
    let mut end = MESSAGE_CAP;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// What a move's action says about `rewrote` before looking at the commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Known {
    /// Decided by the action.
    Is(bool),
    /// Needs an ancestry check; the value is the fallback when none can be run.
    Check(bool),
}

/// The action of a reflog message, and what it tells about `rewrote`.
pub(super) fn classify(message: &str) -> (Action, Known) {
    let starts = |p: &str| message.starts_with(p);
    if starts("commit (amend)") {
        (Action::Amend, Known::Is(true))
    } else if starts("commit (merge)") {
        (Action::Merge, Known::Is(false))
    } else if starts("commit") {
        (Action::Commit, Known::Is(false))
    } else if starts("reset") {
        (Action::Reset, Known::Check(true))
    } else if starts("rebase") {
        // A pick puts a new commit on top of HEAD; everything else may replace history.
        if message.contains("(pick)") {
            (Action::Rebase, Known::Is(false))
        } else {
            (Action::Rebase, Known::Check(true))
        }
    } else if starts("merge") {
        (Action::Merge, Known::Is(false))
    } else if starts("checkout") || starts("switch") {
        (Action::Checkout, Known::Is(false))
    } else if starts("pull") {
        (Action::Pull, Known::Check(message.contains("rebase")))
    } else if starts("branch") || starts("Branch") {
        (Action::Branch, Known::Check(message.contains("Reset")))
    } else if starts("cherry-pick") {
        (Action::CherryPick, Known::Is(false))
    } else if starts("revert") {
        (Action::Revert, Known::Is(false))
    } else {
        (Action::Other, Known::Check(false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_from_real_messages() {
        let cases = [
            "commit (initial): first",
            "commit: second",
            "commit (amend): second, amended",
            "commit (merge): Merge branch 'topic'",
            "reset: moving to HEAD~1",
            "rebase (start): checkout main",
            "rebase (pick): add feature",
            "rebase (finish): returning to refs/heads/topic",
            "rebase (finish): refs/heads/topic onto 4f3a614c06acda773c323ef3e208f09782f8b101",
            "merge topic: Fast-forward",
            "checkout: moving from main to topic",
            "pull: Fast-forward",
            "pull --rebase (finish): refs/heads/main onto 4f3a614c",
            "branch: Created from HEAD",
            "branch: Reset to main",
            "Branch: renamed refs/heads/a to refs/heads/b",
            "cherry-pick: fix",
            "revert: Revert \"fix\"",
            "update by push",
            "",
        ];
        let shown: Vec<String> = cases
            .iter()
            .map(|m| {
                let (action, known) = classify(m);
                format!("{m:?} -> {action:?} {known:?}")
            })
            .collect();
        insta::assert_debug_snapshot!(shown, @r#"
        [
            "\"commit (initial): first\" -> Commit Is(false)",
            "\"commit: second\" -> Commit Is(false)",
            "\"commit (amend): second, amended\" -> Amend Is(true)",
            "\"commit (merge): Merge branch 'topic'\" -> Merge Is(false)",
            "\"reset: moving to HEAD~1\" -> Reset Check(true)",
            "\"rebase (start): checkout main\" -> Rebase Check(true)",
            "\"rebase (pick): add feature\" -> Rebase Is(false)",
            "\"rebase (finish): returning to refs/heads/topic\" -> Rebase Check(true)",
            "\"rebase (finish): refs/heads/topic onto 4f3a614c06acda773c323ef3e208f09782f8b101\" -> Rebase Check(true)",
            "\"merge topic: Fast-forward\" -> Merge Is(false)",
            "\"checkout: moving from main to topic\" -> Checkout Is(false)",
            "\"pull: Fast-forward\" -> Pull Check(false)",
            "\"pull --rebase (finish): refs/heads/main onto 4f3a614c\" -> Pull Check(true)",
            "\"branch: Created from HEAD\" -> Branch Check(false)",
            "\"branch: Reset to main\" -> Branch Check(true)",
            "\"Branch: renamed refs/heads/a to refs/heads/b\" -> Branch Check(false)",
            "\"cherry-pick: fix\" -> CherryPick Is(false)",
            "\"revert: Revert \\\"fix\\\"\" -> Revert Is(false)",
            "\"update by push\" -> Other Check(false)",
            "\"\" -> Other Check(false)",
        ]
        "#);
    }
}
