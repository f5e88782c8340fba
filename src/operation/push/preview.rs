//! What a push card shows: where it goes (URL with any secret hidden), the commits it
//! sends, and with `forceWithLease` the commits the remote branch would lose.

use serde_json::{Value, json};

use super::PushFields;
use crate::git::Git;
use crate::operation::{Ctx, OpError, Pins};

/// Commits listed per side at most.
const MAX_COMMITS: usize = 100;

/// `git log` of `revs`: `[{oid, subject}]` (at most [`MAX_COMMITS`]) and whether more
/// were left out.
async fn commits(git: &Git<'_>, revs: &[String]) -> Result<(Vec<Value>, bool), OpError> {
    let limit = format!("--max-count={}", MAX_COMMITS + 1);
    let done = git
        .cmd(["log", "-z", "--format=%H%x1f%s", &limit])
        .args(revs.iter())
        .capture(4 * 1024 * 1024)
        .await?;
    let text = String::from_utf8_lossy(&done.sink.bytes);
    let mut list: Vec<Value> = text
        .split('\0')
        .filter(|r| !r.is_empty())
        .filter_map(|r| r.split_once('\u{1f}'))
        .map(|(oid, subject)| json!({"oid": oid.trim(), "subject": subject}))
        .collect();
    let more = list.len() > MAX_COMMITS;
    list.truncate(MAX_COMMITS);
    Ok((list, more))
}

pub(super) async fn card(ctx: Ctx<'_>, f: &PushFields, pins: &Pins) -> Result<Value, OpError> {
    let git = Git::new(ctx.repo, ctx.cancel);
    let push = pins.0["pushOid"].as_str().unwrap_or_default().to_owned();
    let remote_oid = pins.0["remoteOid"].as_str().map(str::to_owned);
    let sent = match &remote_oid {
        Some(old) => vec![push.clone(), format!("^{old}")],
        None => vec![
            push.clone(),
            "--not".to_owned(),
            format!("--remotes={}", f.remote),
        ],
    };
    let (to_push, more) = commits(&git, &sent).await?;
    let (lost, lost_more) = match &remote_oid {
        Some(old) => commits(&git, &[old.clone(), format!("^{push}")]).await?,
        None => (Vec::new(), false),
    };
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
