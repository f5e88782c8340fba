//! Stopping the executor without leaving a repository half-done or a status false.
//!
//! ```text
//! stop_taking()  → no new claim: an approved proposal stays approved for the next start
//! idle()         → every claimed execution has ended (completed or failed, recorded)
//! abort()        → past the bound: the running git command is stopped, the operation
//!                  it left in progress aborted, the repository put back to the restore
//!                  point, and the proposal recorded failed/interrupted
//! ```
//!
//! The running count is raised before the stop flag is read (and the flag set before the
//! count is read), so an execution either sees the stop and never claims, or is counted
//! and waited for: none slips between.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use jiff::Timestamp;
use serde_json::json;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::in_progress;
use crate::config::Config;
use crate::gateway::api::OperationResult;
use crate::gateway::server::restore;
use crate::gateway::server::store::{RestorePoint, Store};
use crate::git::Repo;
use crate::operation::intent::{Reached, reached};
use crate::operation::{Ctx, Fields, Intent};

/// The executor's stop state; one per executor.
#[derive(Default)]
pub struct Stop {
    stopping: AtomicBool,
    running: AtomicUsize,
    idle: Notify,
    abort: CancellationToken,
}

/// One counted execution; uncounted when dropped.
pub(super) struct Running<'a>(&'a Stop);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        if self.0.running.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

impl Stop {
    /// Counts an execution about to claim; `None` once stopping.
    pub(super) fn enter(&self) -> Option<Running<'_>> {
        self.running.fetch_add(1, Ordering::SeqCst);
        let running = Running(self);
        (!self.stopping.load(Ordering::SeqCst)).then_some(running)
    }

    /// No execution claims from now on.
    pub fn stop_taking(&self) {
        self.stopping.store(true, Ordering::SeqCst);
    }

    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// Executions running now.
    pub fn running(&self) -> usize {
        self.running.load(Ordering::SeqCst)
    }

    /// Resolves once no execution runs.
    pub async fn idle(&self) {
        loop {
            let woken = self.idle.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            if self.running() == 0 {
                return;
            }
            woken.await;
        }
    }

    /// Stops what runs: every running execution's git command is cancelled, and each
    /// ends its write as interrupted.
    pub fn abort(&self) {
        self.abort.cancel();
    }

    pub fn aborted(&self) -> bool {
        self.abort.is_cancelled()
    }

    /// A token cancelled by `outer` or by [`Stop::abort`]; the link ends with the guard.
    pub(super) fn linked(&self, outer: &CancellationToken) -> (CancellationToken, Link) {
        let token = self.abort.child_token();
        let (outer, inner) = (outer.clone(), token.clone());
        let task = tokio::spawn(async move {
            outer.cancelled().await;
            inner.cancel();
        });
        (token, Link(task))
    }
}

/// Ends the task that passes the caller's cancellation on.
pub(super) struct Link(tokio::task::JoinHandle<()>);

impl Drop for Link {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A write stopped past the bound: its git command was killed by the cancellation.
pub(super) struct Interrupted<'a> {
    pub store: &'a mut Store,
    pub repo: &'a Repo,
    pub config: &'a Config,
    /// The operation type (which git operations it can leave in progress).
    pub kind: &'a str,
    pub intent: &'a Intent,
    pub point: &'a RestorePoint,
}

impl Interrupted<'_> {
    /// Aborts the git operation the write left in progress, then puts the repository back
    /// to the restore point unless the write had in fact reached its post-state (then it
    /// is `completed`, the truth). `Err` holds the `failed/interrupted` result's fields.
    pub(super) async fn settle(self) -> Result<OperationResult, Fields> {
        // The write's own token is cancelled; the clean-up must run to its end.
        let cancel = CancellationToken::new();
        let aborted = in_progress::abort(self.repo, self.kind, self.intent, &cancel).await;
        let mut fields = Fields::new();
        let ctx = Ctx {
            repo: self.repo,
            config: self.config,
            cancel: &cancel,
        };
        if let Ok(Reached::Post) = reached(ctx, self.intent).await {
            fields.extend(aborted.map(|a| ("inProgress".to_owned(), a)));
            fields.insert("stoppedAfterWrite".into(), json!(true));
            return Ok(OperationResult {
                failure: None,
                restore_point_id: Some(self.point.id.clone()),
                fields,
            });
        }
        let mut aborted = aborted;
        let mut found = vec!["the gateway was stopped and the write did not finish within its bound, so it was stopped".to_owned()];
        let now = Timestamp::now();
        let rolled_back = match restore::restore_in(
            self.store, self.repo, self.point, true, &cancel, now,
        )
        .await
        {
            Ok(restored) => {
                fields.insert("rollback".into(), restored.to_json());
                if let Some(a) = aborted.as_mut() {
                    in_progress::after_restore(self.repo, a, &self.point.id).await;
                }
                format!(
                    "the repository was put back to restore point {}",
                    self.point.id
                )
            }
            Err(e) => {
                fields.insert("rollbackError".into(), json!(e.to_string()));
                format!(
                    "putting the repository back to restore point {} did not finish: {e}",
                    self.point.id
                )
            }
        };
        if let Some(what) = aborted.as_ref().and_then(in_progress::said) {
            found.push(what);
        }
        found.push(rolled_back);
        fields.extend(aborted.map(|a| ("inProgress".to_owned(), a)));
        fields.insert("found".into(), json!(found.join("; ")));
        Err(fields)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_stop_refuses_new_executions_and_waits_for_the_running_one() {
        let stop = Stop::default();
        let running = stop.enter().expect("not stopping yet");
        stop.stop_taking();
        assert!(stop.enter().is_none());
        assert_eq!(stop.running(), 1);
        let idle = stop.idle();
        tokio::pin!(idle);
        let waited = tokio::time::timeout(std::time::Duration::from_millis(50), idle.as_mut());
        assert!(waited.await.is_err(), "idle while one runs");
        drop(running);
        idle.await;
        let outer = CancellationToken::new();
        let (token, _link) = stop.linked(&outer);
        assert!(!token.is_cancelled());
        stop.abort();
        assert!(token.is_cancelled() && !outer.is_cancelled());
    }
}
