//! How many children run at once, across every call of the process.
//!
//! A burst of tool calls would otherwise start hundreds of git processes together, which
//! only makes each slower and can exhaust memory, processes or file descriptors. Children
//! beyond the bound wait their turn in a first-come, first-served queue (tokio's semaphore
//! is fair), without holding anything but their place; a call cancelled while it waits
//! leaves the queue and never starts its child. The server keeps reading and answering
//! (`ping`, cancellation, calls that need no child) while calls wait here.

use std::sync::{Arc, OnceLock};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use super::RunError;

/// The default bound per core: git spends much of its time waiting for the disk, so a few
/// children per core keep the machine busy without thrashing it.
const PER_CORE: usize = 4;
/// Bounds of the default: enough for one `fleet` or `brief` call's parallel reads on a
/// small machine, and not so many that a burst exhausts a large one's memory.
const MIN: usize = 4;
const MAX: usize = 32;

static CHILDREN: OnceLock<Arc<Semaphore>> = OnceLock::new();

/// The bound: the configured one (`GITWARD_MAX_CHILDREN`), else four per core within
/// 4..=32.
pub fn max_children() -> usize {
    super::settings::get().max_children.unwrap_or_else(|| {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        cores.saturating_mul(PER_CORE).clamp(MIN, MAX)
    })
}

pub(super) fn children() -> &'static Arc<Semaphore> {
    CHILDREN.get_or_init(|| Arc::new(Semaphore::new(max_children())))
}

/// Waits for a turn to run a child; the permit is the turn, given back when dropped
/// (after the child has been reaped).
pub async fn turn(cancel: &CancellationToken) -> Result<OwnedSemaphorePermit, RunError> {
    turn_in(children(), cancel).await
}

pub(super) async fn turn_in(
    limit: &Arc<Semaphore>,
    cancel: &CancellationToken,
) -> Result<OwnedSemaphorePermit, RunError> {
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(RunError::Cancelled),
        permit = Arc::clone(limit).acquire_owned() => {
            permit.map_err(|_| RunError::Cancelled)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_cancelled_waiter_leaves_the_queue() {
        let limit = Arc::new(Semaphore::new(1));
        let cancel = CancellationToken::new();
        let held = turn_in(&limit, &cancel).await.unwrap();
        let waiting = CancellationToken::new();
        let trigger = waiting.clone();
        let waiter = {
            let limit = Arc::clone(&limit);
            tokio::spawn(async move { turn_in(&limit, &waiting).await })
        };
        trigger.cancel();
        assert!(matches!(waiter.await.unwrap(), Err(RunError::Cancelled)));
        drop(held);
        assert_eq!(limit.available_permits(), 1, "nothing leaked");
    }
}
