//! The live side: every transition, whoever made it (a request, the expiry timer, the
//! executor on its own connection), is followed from the store's append-only transition
//! log, written to the audit ledger and streamed to the approval page as the card's new
//! state.
//!
//! Following the log rather than the code paths means nothing can change a proposal
//! without being audited: the cursor (the last audited `seq`) is stored, so after a crash
//! the follower resumes where the ledger stopped. An entry may then be written twice
//! (ledger written, cursor not yet); `transitionSeq` identifies the repeat.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::broadcast;

use super::app::{ApiError, App};
use super::audit;
use super::human::card::{self, Card, risk};
use crate::audit::writer::Durability;

/// How often the follower looks at the log without being woken (transitions the executor
/// writes on its own connection).
const POLL: Duration = Duration::from_millis(100);

/// Transitions read per round.
const BATCH: u32 = 256;

/// Cards waiting for a slow page before it is told to reload.
const BUFFER: usize = 1024;

/// The broadcast of changed cards.
pub struct Events {
    tx: broadcast::Sender<Arc<Value>>,
    /// Held from reading a card to sending it. Several tasks publish (the follower, the
    /// preview, an extension); reading and sending as one step means cards go out in the
    /// order they were read, so a card sent later is never older than one sent before.
    order: tokio::sync::Mutex<()>,
}

impl Default for Events {
    fn default() -> Self {
        Events {
            tx: broadcast::channel(BUFFER).0,
            order: tokio::sync::Mutex::new(()),
        }
    }
}

impl Events {
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Value>> {
        self.tx.subscribe()
    }

    fn send(&self, card: &Card) {
        if let Ok(value) = serde_json::to_value(card) {
            // No page open is not an error.
            let _ = self.tx.send(Arc::new(value));
        }
    }
}

/// Reads proposal `id`'s card as stored now and streams it to every open page; returns
/// it. Call after the change it shows is stored.
pub async fn publish(app: &Arc<App>, id: &str) -> Result<Card, ApiError> {
    let _turn = app.events.order.lock().await;
    let card = card::load(app, id).await?;
    app.events.send(&card);
    Ok(card)
}

/// Audits and streams transitions until `done` is cancelled; then follows what is left
/// (a stop's last transitions reach the ledger before the process exits) and returns.
pub async fn follow(app: Arc<App>, done: tokio_util::sync::CancellationToken) {
    let mut cursor = match app.store.run(|s| s.audit_cursor()).await {
        Ok(seq) => seq,
        Err(e) => {
            eprintln!("gitward gateway: cannot read the audit cursor: {e}");
            0
        }
    };
    loop {
        match round(&app, cursor).await {
            Ok((next, full)) => {
                cursor = next;
                if full {
                    continue;
                }
            }
            Err(e) => eprintln!("gitward gateway: following transitions: {e}"),
        }
        if done.is_cancelled() {
            return;
        }
        tokio::select! {
            () = app.changed.notified() => {}
            () = tokio::time::sleep(POLL) => {}
            // One more round after the cancellation reads everything stored before it.
            () = done.cancelled() => {}
        }
    }
}

/// One round: everything after `cursor`. Returns the new cursor and whether the batch
/// was full (more may wait).
async fn round(app: &Arc<App>, cursor: i64) -> Result<(i64, bool), String> {
    let read = app
        .store
        .run(move |s| {
            let transitions = s.transitions_after(cursor, BATCH)?;
            let mut cards = BTreeMap::new();
            for t in &transitions {
                if !cards.contains_key(&t.preview_id) {
                    let stored = s.proposal(&t.preview_id)?;
                    cards.insert(t.preview_id.clone(), stored);
                }
            }
            Ok((transitions, cards))
        })
        .await;
    let (transitions, cards) = read.map_err(|e| e.to_string())?;
    let Some(last) = transitions.last().map(|t| t.seq) else {
        return Ok((cursor, false));
    };
    debug_delay().await;
    let mut recorded = None;
    for t in &transitions {
        let Some(stored) = cards.get(&t.preview_id) else {
            continue;
        };
        if let Some(writer) = &app.audit {
            let risk = risk(&stored.record.operation_type, &stored.proposal.fields);
            let entry = audit::transition_entry(t, &stored.record, risk);
            recorded = Some(writer.submit_waiting(Box::new(move || entry), Durability::Written));
        }
    }
    // Entries are written in order, so the last one on disk means all of them are.
    if let Some(recorded) = recorded {
        let _ = recorded.await;
    }
    app.store
        .run(move |s| s.set_audit_cursor(last))
        .await
        .map_err(|e| e.to_string())?;
    // Read again now, not the cards read before waiting for the ledger: a preview stored
    // meanwhile would otherwise be overtaken by a card still waiting for it.
    for id in cards.keys() {
        let _ = publish(app, id).await;
    }
    Ok((last, transitions.len() == BATCH as usize))
}

/// Development builds only: `GITWARD_DEBUG_FOLLOW_DELAY_MS` holds each round that read
/// transitions between reading them and publishing, the window in which other
/// publishers may overtake it.
#[cfg(debug_assertions)]
async fn debug_delay() {
    if let Some(ms) = crate::config::debug_knobs().follow_delay_ms {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
}

#[cfg(not(debug_assertions))]
async fn debug_delay() {}
