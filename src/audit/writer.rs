//! Appending off the request path: a dedicated thread owns the `Ledger`; callers hand it
//! work over a channel and return at once. Whatever is queued when several calls finish
//! together is written under one lock and one sync.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::{AuditError, Entry, Ledger};

/// Builds an entry on the writer thread (hashing, path resolution happen there).
pub type Build = Box<dyn FnOnce() -> Entry + Send>;

enum Msg {
    Entry(Build),
    /// Reply once everything sent before has been written (or failed).
    Flush(mpsc::Sender<()>),
    Stop,
}

/// Largest batch written under one lock.
const MAX_BATCH: usize = 4096;

/// The writer thread and its queue. Dropping it (or `finish`) writes what is queued.
pub struct AuditWriter {
    tx: mpsc::Sender<Msg>,
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
        let thread = std::thread::Builder::new()
            .name("audit-writer".into())
            .spawn(move || run(ledger, rx))?;
        Ok(Arc::new(AuditWriter {
            tx,
            thread: Mutex::new(Some(thread)),
        }))
    }

    /// Queues an entry; never blocks on disk.
    pub fn submit(&self, build: Build) {
        let _ = self.tx.send(Msg::Entry(build));
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
    let mut waiters: Vec<mpsc::Sender<()>> = Vec::new();
    while let Ok(first) = rx.recv() {
        let mut stop = false;
        let mut next = Some(first);
        while let Some(msg) = next.take() {
            match msg {
                Msg::Entry(build) => batch.push(build()),
                Msg::Flush(done) => waiters.push(done),
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
            let result = ledger.append_batch(std::mem::take(&mut batch));
            for notice in ledger.take_notices() {
                eprintln!("gitward: audit: {notice}");
            }
            if let Err(e) = result
                && !degraded.swap(true, Ordering::Relaxed)
            {
                eprintln!(
                    "gitward: audit: cannot append to {}: {e}; the audit ledger is degraded \
                     (tool calls continue unaffected)",
                    ledger.path().display()
                );
            }
        }
        for done in waiters.drain(..) {
            let _ = done.send(());
        }
        if stop {
            break;
        }
    }
}
