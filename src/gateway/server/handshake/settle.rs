//! When a new proposal's background work starts: once the call that proposed it is
//! answered.
//!
//! A sidecar's preview call is the `POST` and then one status read of the same proposal.
//! The work after the `202` (auditing the transition, the card's preview, looking for
//! other agents) writes to the disk and takes the cores; started at once, it competes with
//! that status read and with the sidecar's own ledger entry. So it waits for the status
//! read, or [`QUIET`] at most when none comes (a client that proposes and never reads).
//!
//! Every handshake request in flight is the gateway's foreground: queued background work
//! starts no git process while one runs (the pins of the next proposal, above all).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

use crate::process::priority::Foreground;

/// The longest the background work of a proposal waits for its status read.
pub const QUIET: Duration = Duration::from_millis(20);

/// After the status read: the sidecar still writes its ledger entry and answers.
const GRACE: Duration = Duration::from_millis(2);

/// Proposals answered with a `202` whose status nobody has read yet.
pub struct Answered {
    waiting: Mutex<HashMap<String, Arc<Notify>>>,
    quiet: Duration,
    foreground: Foreground,
}

impl Default for Answered {
    fn default() -> Self {
        Answered::waiting_at_most(QUIET)
    }
}

impl Answered {
    fn waiting_at_most(quiet: Duration) -> Answered {
        Answered {
            waiting: Mutex::default(),
            quiet,
            foreground: Foreground::default(),
        }
    }

    /// The handshake requests in flight.
    pub fn foreground(&self) -> &Foreground {
        &self.foreground
    }

    /// Registers the new proposal `id`; call before its `202` is sent.
    pub fn expect(&self, id: &str) {
        self.lock().insert(id.to_owned(), Arc::new(Notify::new()));
    }

    /// `id`'s status was read: its background work may start.
    pub fn read(&self, id: &str) {
        if let Some(read) = self.lock().get(id) {
            // A permit is kept when the waiter is not there yet.
            read.notify_one();
        }
    }

    /// Resolves once `id`'s status was read (and the caller had a moment to finish), or
    /// after [`QUIET`].
    pub async fn settled(&self, id: &str) {
        let read = self.lock().get(id).cloned();
        if let Some(read) = read {
            if tokio::time::timeout(self.quiet, read.notified())
                .await
                .is_ok()
            {
                tokio::time::sleep(GRACE).await;
            }
        }
        self.lock().remove(id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Notify>>> {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn work_waits_for_the_status_read() {
        let answered = Arc::new(Answered::waiting_at_most(Duration::from_secs(3600)));
        answered.expect("a");
        let waiting = {
            let answered = Arc::clone(&answered);
            tokio::spawn(async move { answered.settled("a").await })
        };
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        assert!(!waiting.is_finished(), "started before the status read");
        answered.read("a");
        waiting.await.unwrap();
        assert!(answered.lock().is_empty());

        // Read before anyone waits: the permit is kept.
        answered.expect("b");
        answered.read("b");
        answered.settled("b").await;
        assert!(answered.lock().is_empty());
        // A status read of a proposal nobody waits for changes nothing.
        answered.read("c");
        assert!(answered.lock().is_empty());
    }

    #[tokio::test]
    async fn work_never_waits_for_a_read_that_does_not_come() {
        let answered = Answered::waiting_at_most(Duration::ZERO);
        answered.expect("a");
        answered.settled("a").await;
        assert!(answered.lock().is_empty(), "nothing is left behind");
    }
}
