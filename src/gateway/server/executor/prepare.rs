//! What the gateway computes from the repository when a proposal arrives: the pins
//! (refusing a proposal that cannot be carried out, with the field to fix) and then the
//! card's preview.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::gateway::api::Proposal;
use crate::operation::{self, Ctx, OpError, Pins};

fn op_of(proposal: &Proposal) -> Result<&'static dyn operation::Operation, OpError> {
    operation::find(&proposal.operation_type).ok_or_else(|| {
        OpError::invalid(
            "operationType",
            format!("this gateway cannot execute `{}`", proposal.operation_type),
        )
    })
}

/// Validates the operation's fields, opens the repository (inside the allowed roots) and
/// reads the pins, the late ones included (the handshake reads those after its answer).
pub async fn pin_proposal(
    config: &Config,
    proposal: &Proposal,
    cancel: &CancellationToken,
) -> Result<(Pins, Value), OpError> {
    let op = op_of(proposal)?;
    op.validate(&proposal.fields)?;
    let path = proposal
        .repo_path
        .as_deref()
        .ok_or_else(|| OpError::invalid("repoPath", "is required"))?;
    let repo = crate::git::repo::open(config, "repoPath", path, cancel).await?;
    let ctx = Ctx {
        repo: &repo,
        config,
        cancel,
    };
    let pins = op.pin(ctx, &proposal.fields).await?;
    let identity = crate::operation::identity::read(&repo)?;
    let pins = crate::operation::with_late_pins(op, ctx, &proposal.fields, pins).await?;
    Ok((pins, identity))
}

/// The card's preview of `proposal` against its pins, with the late pins read again
/// beside it (what the card shows is what is pinned); both are returned.
pub async fn compute_preview(
    config: &Config,
    proposal: &Proposal,
    pins: Pins,
    cancel: &CancellationToken,
) -> Result<(Pins, Value), OpError> {
    let op = op_of(proposal)?;
    let path = proposal
        .repo_path
        .as_deref()
        .ok_or_else(|| OpError::invalid("repoPath", "is required"))?;
    let repo = crate::git::repo::open(config, "repoPath", path, cancel).await?;
    let ctx = Ctx {
        repo: &repo,
        config,
        cancel,
    };
    let pins = crate::operation::with_late_pins(op, ctx, &proposal.fields, pins).await?;
    let mut preview = op.preview(ctx, &proposal.fields, &pins).await?;
    operation::programs::annotate(ctx, &mut preview).await;
    Ok((pins, preview))
}
