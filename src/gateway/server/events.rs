//! The live side: every transition, whoever made it (a request, the expiry timer, the
//! executor on its own connection), is followed from the store's append-only transition
//! log, written to the audit ledger and streamed to the approval page as the card's new
//! state.
//!
//! Following the log rather than the code paths means nothing can change a proposal
//! without being audited: the cursor (the last audited `seq`) is stored, so after a crash
//! the follower resumes where the ledger stopped. The cursor moves only over entries the
//! ledger took: one it refuses (a full disk) holds the cursor and is retried until it
//! lands, reported meanwhile. Appends are idempotent per transition: before writing after
//! a start or a refusal, the follower reads which transitions after the cursor the ledger
//! already holds (written just before a crash, or after a refused one) and skips them.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::broadcast;

use super::app::{ApiError, App};
use super::audit;
use super::audit_gap::AuditGap;
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
    /// Transitions waiting for a ledger that refuses them.
    pub audit_gap: AuditGap,
}

impl Default for Events {
    fn default() -> Self {
        Events {
            tx: broadcast::channel(BUFFER).0,
            order: tokio::sync::Mutex::new(()),
            audit_gap: AuditGap::default(),
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
    let cursor = match app.store.run(|s| s.audit_cursor()).await {
        Ok(seq) => seq,
        Err(e) => {
            eprintln!("gitward gateway: cannot read the audit cursor: {e}");
            0
        }
    };
    let mut f = Follow {
        cursor,
        recorded: None,
    };
    let mut failures: u32 = 0;
    loop {
        let mut wait = POLL;
        match round(&app, &mut f).await {
            Ok(Round::Full) => {
                failures = 0;
                continue;
            }
            Ok(Round::Done) => failures = 0,
            Ok(Round::Refused) => {
                // The ledger refused: try again, less often the longer it lasts.
                failures = failures.saturating_add(1);
                wait = RETRY.saturating_mul(1 << failures.min(5)).min(RETRY_MAX);
                if done.is_cancelled() {
                    if let Some(gap) = app.events.audit_gap.current() {
                        eprintln!(
                            "gitward gateway: stopping with {} transition(s) from seq {} not in \
                             the audit ledger; they are written at the next start",
                            gap.waiting, gap.first_seq
                        );
                    }
                    return;
                }
            }
            Err(e) => eprintln!("gitward gateway: following transitions: {e}"),
        }
        if done.is_cancelled() {
            return;
        }
        tokio::select! {
            () = app.changed.notified() => {}
            () = tokio::time::sleep(wait) => {}
            // One more round after the cancellation reads everything stored before it.
            () = done.cancelled() => {}
        }
    }
}

/// The follower's memory between rounds.
struct Follow {
    /// The last transition the ledger holds, with every one before it.
    cursor: i64,
    /// Transitions after `cursor` found in the ledger (written before a crash, or after
    /// a refused one in the same round): never written again. `None` until read.
    recorded: Option<HashSet<(String, i64)>>,
}

/// How a round ended.
enum Round {
    /// Everything read is audited and more may wait.
    Full,
    /// Everything stored is audited.
    Done,
    /// The ledger refused an entry: the cursor stays before it, to be retried.
    Refused,
}

/// First wait after the ledger refused, doubled per failure up to [`RETRY_MAX`].
const RETRY: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(3);

/// One round: everything after the cursor.
async fn round(app: &Arc<App>, f: &mut Follow) -> Result<Round, String> {
    let cursor = f.cursor;
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
    if transitions.is_empty() {
        return Ok(Round::Done);
    }
    let full = transitions.len() == BATCH as usize;
    if f.recorded.is_none()
        && let Some(writer) = &app.audit
    {
        f.recorded = Some(recorded_in(writer.path(), cursor).await?);
    }
    debug_delay().await;
    let mut waits = Vec::with_capacity(transitions.len());
    for t in &transitions {
        let key = (t.preview_id.clone(), t.seq);
        let (Some(stored), Some(writer)) = (cards.get(&t.preview_id), &app.audit) else {
            waits.push((t.seq, None));
            continue;
        };
        if f.recorded.as_ref().is_some_and(|r| r.contains(&key)) {
            waits.push((t.seq, None));
            continue;
        }
        let risk = risk(&stored.record.operation_type, &stored.proposal.fields);
        let entry = audit::transition_entry(t, &stored.record, risk);
        let recorded = writer.submit_waiting(Box::new(move || entry), Durability::Written);
        waits.push((t.seq, Some((key, recorded))));
    }
    // The cursor moves over what the ledger holds, up to the first entry it refused.
    let mut reached = cursor;
    let mut refused: Option<(i64, String)> = None;
    for (seq, wait) in waits {
        let outcome = match wait {
            None => Ok(()),
            Some((key, recorded)) => {
                let outcome = recorded
                    .await
                    .unwrap_or_else(|_| Err("the audit writer stopped".to_owned()));
                if outcome.is_ok()
                    && let Some(r) = f.recorded.as_mut()
                {
                    r.insert(key);
                }
                outcome
            }
        };
        match outcome {
            Ok(()) if refused.is_none() => reached = seq,
            Ok(()) => {}
            Err(e) => {
                refused.get_or_insert((seq, e));
            }
        }
    }
    if reached > cursor {
        crate::operation::crash::point(crate::operation::crash::AUDIT_WRITTEN);
        // In memory first: the entries are in the ledger whether or not the store takes
        // the cursor now, and must not be written again.
        f.cursor = reached;
        if let Some(r) = f.recorded.as_mut() {
            r.retain(|(_, seq)| *seq > reached);
        }
        app.store
            .run(move |s| s.set_audit_cursor(reached))
            .await
            .map_err(|e| e.to_string())?;
    }
    let outcome = match refused {
        Some((first, error)) => {
            // Entries after the refused one may still have landed: read the ledger again
            // before the retry rather than guess.
            f.recorded = None;
            let waiting = app
                .store
                .run(move |s| s.transitions_count_after(reached))
                .await
                .unwrap_or(0);
            if app.events.audit_gap.open(first, waiting, error.clone()) {
                eprintln!(
                    "gitward gateway: the audit ledger refused transition seq {first} ({error}); \
                     {waiting} transition(s) wait and are retried until the ledger takes them"
                );
            }
            Round::Refused
        }
        None => {
            if let Some(gap) = app.events.audit_gap.close() {
                let late = crate::audit::ledger::now_ms().saturating_sub(gap.since);
                eprintln!(
                    "gitward gateway: the audit ledger took the waiting transitions (from seq \
                     {}), {} ms after it first refused",
                    gap.first_seq, late
                );
            }
            if full { Round::Full } else { Round::Done }
        }
    };
    // Read again now, not the cards read before waiting for the ledger: a preview stored
    // meanwhile would otherwise be overtaken by a card still waiting for it.
    for id in cards.keys() {
        let _ = publish(app, id).await;
    }
    Ok(outcome)
}

/// The transitions after `cursor` the ledger at `path` already holds.
async fn recorded_in(path: &Path, cursor: i64) -> Result<HashSet<(String, i64)>, String> {
    let path = path.to_owned();
    tokio::task::spawn_blocking(move || {
        crate::audit::scan::transitions_recorded(&path, audit::EVENT_TYPE, cursor)
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| format!("reading the audit ledger: {e}"))
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
