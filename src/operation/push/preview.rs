//! What a push card shows: where it goes (URL with any secret hidden), the commits it
//! sends, and with `forceWithLease` the commits the remote branch would lose.

use serde_json::{Value, json};

use super::PushFields;
use crate::git::log::{self, Hide};
use crate::git::{Git, Oid};
use crate::operation::{Ctx, OpError, Pins};

/// Commits listed per side at most.
const MAX_COMMITS: usize = 100;

/// The commits reachable from `tip` and not hidden by `hide`: `[{oid, subject}]` (at most
/// [`MAX_COMMITS`]) and whether more were left out.
async fn commits(git: &Git<'_>, tip: &Oid, hide: Hide<'_>) -> Result<(Vec<Value>, bool), OpError> {
    let walk = log::only_in(git, tip, hide, MAX_COMMITS, Some(MAX_COMMITS as u64 + 1)).await?;
    let list = walk
        .commits
        .iter()
        .map(|c| json!({"oid": c.oid.as_str(), "subject": c.subject}))
        .collect();
    Ok((list, walk.seen > MAX_COMMITS as u64))
}

fn pinned(pins: &Pins, key: &str) -> Result<Option<Oid>, OpError> {
    match pins.0[key].as_str() {
        None => Ok(None),
        Some(text) => Oid::parse(text)
            .map(Some)
            .ok_or_else(|| OpError::Internal(format!("{key} pinned as {text:?}"))),
    }
}

pub(super) async fn card(ctx: Ctx<'_>, f: &PushFields, pins: &Pins) -> Result<Value, OpError> {
    let git = Git::new(ctx.repo, ctx.cancel);
    let push_oid =
        pinned(pins, "pushOid")?.ok_or_else(|| OpError::Internal("no pushOid pinned".into()))?;
    let remote = pinned(pins, "remoteOid")?;
    let sent = match &remote {
        Some(old) => Hide::Commit(old),
        None => Hide::Remote(&f.remote),
    };
    let (to_push, more) = commits(&git, &push_oid, sent).await?;
    let (lost, lost_more) = match &remote {
        Some(old) => commits(&git, old, Hide::Commit(&push_oid)).await?,
        None => (Vec::new(), false),
    };
    let push = push_oid.as_str().to_owned();
    let remote_oid = remote.as_ref().map(|o| o.as_str().to_owned());
    let url = crate::git::remote::list(&git)
        .await?
        .into_iter()
        .find(|r| r.name == f.remote)
        .map(|r| r.push_urls.first().cloned().unwrap_or(r.fetch_url));
    let fast_forward = lost.is_empty();
    let warning = match (f.force_with_lease, fast_forward) {
        (true, false) => Some(format!(
            "HIGH RISK: replaces the remote branch; the {} commit(s) listed under `lost` \
             disappear from it (unless someone else still has them)",
            lost.len()
        )),
        (true, true) => Some(
            "HIGH RISK: force-with-lease requested; this push happens to be a fast-forward"
                .to_owned(),
        ),
        (false, false) => Some(
            "not a fast-forward: the remote will refuse it unless forceWithLease is set".to_owned(),
        ),
        (false, true) => None,
    };
    Ok(json!({
        "remote": f.remote,
        "url": url,
        "branch": pins.0["branch"],
        "destination": format!("refs/heads/{}", pins.0["branch"].as_str().unwrap_or_default()),
        "pushOid": push,
        "remoteOid": remote_oid,
        "commits": to_push,
        "commitsTruncated": more,
        "lost": lost,
        "lostTruncated": lost_more,
        "fastForward": fast_forward,
        "forceWithLease": f.force_with_lease,
        "lease": f.force_with_lease.then(|| remote_oid.clone().unwrap_or_default()),
        "setUpstream": f.set_upstream,
        "revertTo": f.revert_to,
        "warning": warning,
    }))
}
