//! How long a response waits for what its observers must keep (the audit entry).

use std::time::Duration;

use crate::observe::Settled;

/// The longest a response waits for its observers. A ledger that cannot write releases
/// its calls at once; this bounds the wait behind a lock some other process holds and
/// does not release (stopped, say), so a call is delayed, never hung.
const SETTLE_LIMIT: Duration = Duration::from_secs(10);

/// Waits for every observer's [`Settled`] (a dropped one counts as settled), at most
/// `SETTLE_LIMIT` in all.
pub async fn settle(pending: impl IntoIterator<Item = Settled>) {
    let all = async {
        for settled in pending {
            let _ = settled.await;
        }
    };
    if tokio::time::timeout(SETTLE_LIMIT, all).await.is_err() {
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| {
            crate::observe::notes::warn(format!(
                "a call's audit entry was not written within {}s (is another process \
                 holding the ledger's lock?); answering without waiting for it",
                SETTLE_LIMIT.as_secs()
            ));
        });
    }
}
