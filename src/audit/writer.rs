//! Appending off the async workers, with group commit: a dedicated thread owns the
//! `Ledger`; callers hand it entries over a channel. Whatever is queued when several calls
//! finish together is written under one lock, with one `write` and one `fdatasync`.
//!
//! A caller that must not answer before its entry is on disk submits with a [`Durability`]
//! and waits for the returned [`Recorded`]: it is released once the batch holding its entry
//! is written (so a crash of this process can no longer lose it) or, for
//! [`Durability::Synced`], once that batch is also synced (so a crash of the machine cannot
//! either). A failing ledger releases everyone too, with the error: audit trouble never
//! holds a call, and a caller that must not lose its entry (the gateway's transitions)
//! learns that it was not recorded and tries again.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use tokio::sync::oneshot;

use super::{AuditError, Entry, Ledger};

/// Builds an entry on the writer thread (hashing, path resolution happen there).
pub type Build = Box<dyn FnOnce() -> Entry + Send>;

/// How far an entry must have gone before its waiter is released.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// `write(2)` returned: the entry survives the process.
    Written,
    /// `fdatasync(2)` returned too: the entry survives the machine.
    Synced,
}

/// Resolves with `Ok` when the entry reached the durability asked for, and with an error
/// when the ledger failed (or the writer is gone): the entry may then not be recorded.
pub type Recorded = oneshot::Receiver<Result<(), String>>;

struct Waiter {
    tx: oneshot::Sender<Result<(), String>>,
    durability: Durability,
}

enum Msg {
    Entry(Build, Option<Waiter>),
    /// Reply once everything sent before has been written (or failed).
    Flush(mpsc::Sender<()>),
    Stop,
}

/// Largest batch written under one lock.
const MAX_BATCH: usize = 4096;

/// The writer thread and its queue. Dropping it (or `finish`) writes what is queued.
pub struct AuditWriter {
    tx: mpsc::Sender<Msg>,
    /// The ledger's active segment.
    path: std::path::PathBuf,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for AuditWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuditWriter")
    }
}

impl AuditWriter {
    /// Starts the writer thread. Append failures are reported on stderr once, as degraded.
    pub fn spawn(ledger: Ledger) -> Result<Arc<AuditWriter>, AuditError> {
        let (tx, rx) = mpsc::channel();
        let path = ledger.path().to_owned();
        let thread = std::thread::Builder::new()
            .name("audit-writer".into())
            .spawn(move || run(ledger, rx))?;
        Ok(Arc::new(AuditWriter {
            tx,
            path,
            thread: Mutex::new(Some(thread)),
        }))
    }

    /// The ledger's active segment.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Queues an entry; never blocks on disk.
    pub fn submit(&self, build: Build) {
        let _ = self.tx.send(Msg::Entry(build, None));
    }

    /// Queues an entry and returns what to wait on before answering the call it records.
    pub fn submit_waiting(&self, build: Build, durability: Durability) -> Recorded {
        let (tx, rx) = oneshot::channel();
        // If the thread is gone, the sender is dropped with the message and the receiver
        // resolves at once: nothing waits on a ledger that cannot write.
        let _ = self
            .tx
            .send(Msg::Entry(build, Some(Waiter { tx, durability })));
        rx
    }

    /// Waits until everything queued so far has been handled.
    pub fn flush(&self) {
        let (tx, rx) = mpsc::channel();
        if self.tx.send(Msg::Flush(tx)).is_ok() {
            let _ = rx.recv();
        }
    }

    /// Writes everything queued and stops the thread.
    pub fn finish(&self) {
        let _ = self.tx.send(Msg::Stop);
        let handle = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(handle) = handle {
            let _ = handle.join();
        }
    }
}

impl Drop for AuditWriter {
    fn drop(&mut self) {
        self.finish();
    }
}

fn run(mut ledger: Ledger, rx: mpsc::Receiver<Msg>) {
    let degraded = AtomicBool::new(false);
    let mut batch: Vec<Entry> = Vec::new();
    let mut waiters: Vec<Waiter> = Vec::new();
    let mut flushes: Vec<mpsc::Sender<()>> = Vec::new();
    while let Ok(first) = rx.recv() {
        let mut stop = false;
        let mut next = Some(first);
        while let Some(msg) = next.take() {
            match msg {
                Msg::Entry(build, waiter) => {
                    batch.push(build());
                    waiters.extend(waiter);
                }
                Msg::Flush(done) => flushes.push(done),
                Msg::Stop => {
                    stop = true;
                    break;
                }
            }
            if batch.len() < MAX_BATCH {
                next = rx.try_recv().ok();
            }
        }
        if !batch.is_empty() {
            let (synced, written): (Vec<Waiter>, Vec<Waiter>) = waiters
                .drain(..)
                .partition(|w| w.durability == Durability::Synced);
            let mut written = Some(written);
            let result = ledger.append_batch_then(std::mem::take(&mut batch), || {
                release(written.take().unwrap_or_default(), &Ok(()));
            });
            // An entry too long even with its summary cut is skipped; the rest are written.
            let outcome = match &result {
                Ok(()) | Err(AuditError::TooLong) => Ok(()),
                Err(e) => Err(e.to_string()),
            };
            release(written.take().unwrap_or_default(), &outcome);
            release(synced, &outcome);
            for notice in ledger.take_notices() {
                crate::observe::notes::warn(format!("audit: {notice}"));
            }
            match result {
                Err(e) if !degraded.swap(true, Ordering::Relaxed) => {
                    crate::observe::notes::warn(format!(
                        "audit: cannot append to {}: {e}; the audit ledger is degraded \
                         (tool calls continue unaffected)",
                        ledger.path().display()
                    ));
                }
                Ok(()) if degraded.swap(false, Ordering::Relaxed) => {
                    crate::observe::notes::warn(format!(
                        "audit: appending to {} again",
                        ledger.path().display()
                    ));
                }
                _ => {}
            }
        }
        for done in flushes.drain(..) {
            let _ = done.send(());
        }
        if stop {
            break;
        }
    }
}

fn release(waiters: Vec<Waiter>, outcome: &Result<(), String>) {
    for w in waiters {
        let _ = w.tx.send(outcome.clone());
    }
}
