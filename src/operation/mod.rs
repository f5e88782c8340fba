//! The write vocabulary shared by the sidecar and the gateway: for each operation type its
//! own proposal fields (serde + JSON Schema), their validation, its risk, the
//! preconditions it pins when proposed, the preview computed by real git, and the git
//! steps that carry it out.
//!
//! Every type implements [`Operation`], which is object-safe so that [`ALL`] is the one
//! ordered list both sides read: the sidecar builds its tool list from it, the gateway
//! validates and executes through it. Nothing here knows MCP or HTTP; it imports `git`
//! and `config` only.
//!
//! The lifecycle of one proposal through this trait:
//!
//! ```text
//! validate (both sides) → pin (gateway, before the answer)
//!   → late pins + preview (gateway, after the answer, for the card)
//!   … a person approves the card with its preview …
//! revalidate (under the repository lock) → intent → execute → the intent's post-state
//! ```

pub mod branch;
pub mod branch_delete;
pub mod commit;
pub mod crash;
pub mod discard;
mod fields;
pub mod identity;
pub mod intent;
pub mod merge;
pub mod patch;
pub mod path_state;
pub mod paths;
pub mod pins;
pub mod plan;
mod preview;
pub mod programs;
pub mod push;
pub mod rebase;
pub mod reset;
pub mod risk;
pub mod submodule_pointer;
pub mod worktree;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::gateway::api::FieldError;
use crate::git::{GitError, Repo};

pub use intent::{Expect, Intent};

/// An operation's own fields, as they arrive beside the common ones.
pub type Fields = Map<String, Value>;

/// How much a person should look before approving.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    Low,
    Medium,
    High,
}

impl Risk {
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Low => "low",
            Risk::Medium => "medium",
            Risk::High => "high",
        }
    }
}

/// The preconditions read when the operation was proposed, stored with the proposal and
/// compared again right before the first write. Opaque outside the type that made them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Pins(pub Value);

/// One precondition that no longer holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Moved {
    /// What moved, for a person: `HEAD`, `refs/heads/main`, `path src/a.rs`, `index`, ….
    pub what: String,
    /// As pinned at proposal time.
    pub expected: Value,
    /// As found now.
    pub found: Value,
}

/// Why an operation step did not happen.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OpError {
    /// A field cannot be used; `field` is its wire name.
    #[error("invalid `{field}`: {reason}")]
    Invalid { field: String, reason: String },
    /// A precondition pinned at proposal time moved.
    #[error("the repository moved since the proposal: {}", describe(.moved))]
    Stale { moved: Vec<Moved> },
    /// Git refused the write (or a read it needed).
    #[error("git failed: {message}")]
    Git { message: String },
    /// Git refused the write, and the result says more than the message (`conflicts`, …):
    /// `details` join the failure's fields.
    #[error("git failed: {message}")]
    Refused { message: String, details: Fields },
    /// A step of a write made of several failed: the executor puts the repository back to
    /// the restore point taken before the first step, and reports `details` (what each
    /// step did) with `failure: "rolledBack"`.
    #[error("{message}")]
    RollBack { message: String, details: Fields },
    /// Something this operation does not do (a bare repository, …).
    #[error("{0}")]
    Unsupported(String),
    /// Never expected: a bug, a timeout, a cancellation.
    #[error("{0}")]
    Internal(String),
}

fn describe(moved: &[Moved]) -> String {
    moved
        .iter()
        .map(|m| m.what.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

impl OpError {
    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        OpError::Invalid {
            field: field.into(),
            reason: reason.into(),
        }
    }

    pub fn git(message: impl Into<String>) -> Self {
        OpError::Git {
            message: message.into(),
        }
    }
}

impl From<GitError> for OpError {
    fn from(e: GitError) -> Self {
        match e {
            GitError::Invalid { arg, reason } => OpError::Invalid { field: arg, reason },
            GitError::Failed { stderr, .. } => OpError::Git { message: stderr },
            GitError::Unsupported(reason) => OpError::Unsupported(reason),
            other => OpError::Internal(other.to_string()),
        }
    }
}

impl From<FieldError> for OpError {
    fn from(e: FieldError) -> Self {
        OpError::invalid(e.field, e.reason)
    }
}

/// A tree a write checks out: `commit`'s, and with `since` that of every commit of
/// `since..commit` on the way (a rebase replays them one by one). Git treats an ignored
/// file as expendable when a tree it checks out tracks that path, so the restore point
/// must hold such files before the write (see `gateway::server::restore::overwritten`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkout {
    pub commit: String,
    pub since: Option<String>,
}

impl Checkout {
    /// The tree of the commit pinned under `key`; nothing when none is pinned.
    pub fn of(pins: &Value, key: &str) -> Vec<Checkout> {
        pins[key]
            .as_str()
            .map(|c| Checkout {
                commit: c.to_owned(),
                since: None,
            })
            .into_iter()
            .collect()
    }
}

/// Where an operation runs: the repository (opened and checked against the allowed
/// roots), the settings (allowed roots for any further path an operation names) and the
/// request's cancellation.
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    pub repo: &'a Repo,
    pub config: &'a Config,
    pub cancel: &'a CancellationToken,
}

/// One operation type. Object-safe: [`ALL`] holds every type as `&dyn Operation`.
#[async_trait]
pub trait Operation: Send + Sync {
    /// The wire name (`commit`, `branch`, …), as in the preview path.
    fn kind(&self) -> &'static str;
    /// From the one risk table ([`risk::TABLE`]).
    fn risk(&self) -> Risk {
        risk::of(self.kind())
    }
    /// A short title for the sidecar's tool.
    fn title(&self) -> &'static str;
    /// The product wording for the sidecar's tool.
    fn description(&self) -> &'static str;
    /// JSON Schema (draft 2020-12, closed object) of this type's own fields.
    fn fields_schema(&self) -> Value;
    /// Pure validation of this type's own fields; the error names the field.
    fn validate(&self, fields: &Fields) -> Result<(), FieldError>;
    /// True when approving needs the person's explicit destructive checkbox.
    fn needs_confirmation(&self, _fields: &Fields) -> bool {
        false
    }
    /// The repository-relative paths the operation names (commit `paths`, …), so the card
    /// and the hint can show which other agent touched them too; empty when it names none.
    fn touched_paths(&self, _fields: &Fields) -> Vec<String> {
        Vec::new()
    }
    /// The trees the write may check out into the worktree or read into the index (a
    /// switch, a hard or mixed reset, a merge, a rebase), as the pins name their commits;
    /// empty when it reads none.
    fn checks_out(&self, _fields: &Fields, _pins: &Pins) -> Vec<Checkout> {
        Vec::new()
    }
    /// The configuration keys the write may set (a push's `-u`: the branch's upstream),
    /// so that its restore point keeps their values and a restore puts them back.
    fn touched_config(&self, _fields: &Fields, _pins: &Pins) -> Vec<String> {
        Vec::new()
    }
    /// Every full ref name the write creates, moves or deletes (a worktree's: the branch
    /// it checks out), read from the pins so that it is the ref git will really move, not
    /// the one a field names: a commit's is the branch `HEAD` was on when pinned. A
    /// detached `HEAD` that moves is `HEAD`. The agent policy judges a proposal on these,
    /// so there is no default: a type that does not say what it moves cannot be built.
    fn touched_refs(&self, fields: &Fields, pins: &Pins) -> Result<Vec<String>, OpError>;
    /// Reads the preconditions at proposal time (validates first).
    async fn pin(&self, ctx: Ctx<'_>, fields: &Fields) -> Result<Pins, OpError>;
    /// Preconditions read after the proposal was answered, beside the card's preview:
    /// those that cost a whole-repository read and that the person judges from the card
    /// (a hard reset's overwritten files). Their keys join (replace) the pins' own before
    /// the preview is computed, and are stored with it; [`Operation::revalidate`] reads
    /// them again like the others, so pins without them (their reading failed) never
    /// match. `None`: this proposal has none.
    async fn late_pins(
        &self,
        _ctx: Ctx<'_>,
        _fields: &Fields,
        _pins: &Pins,
    ) -> Result<Option<Map<String, Value>>, OpError> {
        Ok(None)
    }
    /// The card's preview, computed by real git against the pinned state.
    async fn preview(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<Value, OpError>;
    /// Under the repository lock, right before the first write: reads the pins again;
    /// anything that moved is [`OpError::Stale`].
    async fn revalidate(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<(), OpError>;
    /// The refs the write expects to find and to leave (the intent record). Every ref
    /// named in it is captured by the restore point.
    fn intent(&self, fields: &Fields, pins: &Pins) -> Result<Intent, OpError>;
    /// The repositories the write also changes besides the proposal's own (canonical
    /// paths, as pinned), each with its intent. The executor opens each through the allowed
    /// roots, holds every repository's lock (taken in one order) from revalidation to
    /// verification, takes a restore point in each and verifies each intent.
    fn other_repositories(
        &self,
        _fields: &Fields,
        _pins: &Pins,
    ) -> Result<Vec<(String, Intent)>, OpError> {
        Ok(Vec::new())
    }
    /// Carries the operation out; returns the result fields (`commitSha`, …).
    async fn execute(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<Fields, OpError>;
}

/// `pins` with the late pins `op` reads now joined in; unchanged when it has none.
pub async fn with_late_pins(
    op: &dyn Operation,
    ctx: Ctx<'_>,
    fields: &Fields,
    pins: Pins,
) -> Result<Pins, OpError> {
    let Some(late) = op.late_pins(ctx, fields, &pins).await? else {
        return Ok(pins);
    };
    let mut joined = pins.0;
    match joined.as_object_mut() {
        Some(own) => own.extend(late),
        None => return Err(OpError::Internal("pins are not an object".into())),
    }
    Ok(Pins(joined))
}

/// Every operation type this build implements, in the order tools list them.
pub static ALL: &[&dyn Operation] = &[
    &worktree::Worktree,
    &commit::Commit,
    &branch::Branch,
    &branch_delete::BranchDelete,
    &merge::Merge,
    &discard::Discard,
    &reset::Reset,
    &plan::Plan,
    &rebase::Rebase,
    &patch::Patch,
    &push::Push,
    &submodule_pointer::SubmodulePointer,
];

/// The operation type named `kind`, if this build implements it.
pub fn find(kind: &str) -> Option<&'static dyn Operation> {
    ALL.iter().copied().find(|op| op.kind() == kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_unique_wire_names_of_the_protocol() {
        let mut seen = std::collections::HashSet::new();
        for op in ALL {
            assert!(seen.insert(op.kind()), "{}", op.kind());
            assert!(
                crate::gateway::api::OPERATION_TYPES.contains(&op.kind()),
                "{}",
                op.kind()
            );
            assert!(std::ptr::addr_eq(find(op.kind()).unwrap(), *op));
        }
        assert!(find("amend").is_none());
    }

    #[test]
    fn risks_follow_the_contract_labels() {
        for kind in ["commit", "branch", "worktree"] {
            assert_eq!(find(kind).unwrap().risk(), Risk::Low, "{kind}");
        }
        assert_eq!(serde_json::to_value(Risk::High).unwrap(), "high");
    }

    #[test]
    fn every_schema_is_a_closed_object() {
        for op in ALL {
            let schema = op.fields_schema();
            assert_eq!(schema["type"], "object", "{}", op.kind());
            assert_eq!(schema["additionalProperties"], false, "{}", op.kind());
            assert!(schema.get("$schema").is_none(), "{}", op.kind());
        }
    }
}
