//! Refused calls in bulk become one counted entry, so a client looping on a bad request
//! cannot rotate the real history out of the ledger within seconds.
//!
//! A refused call is one answered without running anything: an unknown tool, or bad
//! arguments (-32602). Per kind (the tool and the code; every unknown tool is one kind, or
//! a stream of invented names would make as many kinds), the first refusal of a
//! [`WINDOW`] is written as an entry of its own; the others of that window are counted and
//! written as one `refused_calls` entry when the window has passed and the next call of
//! any kind arrives, or when the server stops. A crash loses at most one window's count.
//!
//! Successful reads use the same folding with a larger budget ([`Flood::with_budget`]): the
//! first [`READ_BUDGET`] reads of a tool per [`READ_WINDOW`] are entries of their own, the
//! rest are counted into one `read_calls` entry, so a read flood cannot rotate decisions
//! out of the ledger either.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long refusals of one kind are folded into one entry.
pub const WINDOW: Duration = Duration::from_secs(10);

/// Reads of one tool written as entries of their own per [`READ_WINDOW`].
pub const READ_BUDGET: u64 = 60;
/// The window of the read budget.
pub const READ_WINDOW: Duration = Duration::from_secs(60);

/// [`WINDOW`], unless the configuration says otherwise in milliseconds (a test knob:
/// `0` records every refusal, so tests that use refused calls as cheap load keep one
/// entry per call).
pub fn window(configured_ms: Option<u64>) -> Duration {
    configured_ms.map_or(WINDOW, Duration::from_millis)
}

/// What to do with one refused call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// The first of its window: write it as an ordinary entry.
    Record,
    /// Counted into the window's summary.
    Counted,
}

/// The refusals of one kind beyond the first, over one window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary<K> {
    pub kind: K,
    pub count: u64,
    pub first_ms: u64,
    pub last_ms: u64,
}

#[derive(Debug)]
struct Window {
    opened: Instant,
    /// Admissions recorded as entries of their own in this window.
    recorded: u64,
    count: u64,
    first_ms: u64,
    last_ms: u64,
}

/// Open windows, per kind.
#[derive(Debug)]
pub struct Flood<K> {
    windows: Mutex<HashMap<K, Window>>,
    window: Duration,
    /// Admissions per window recorded as entries of their own.
    budget: u64,
}

impl<K: std::hash::Hash + Eq + Clone> Flood<K> {
    /// One entry per kind and window, the rest counted.
    pub fn new(window: Duration) -> Flood<K> {
        Flood::with_budget(window, 1)
    }

    /// `budget` entries per kind and window (at least one), the rest counted.
    pub fn with_budget(window: Duration, budget: u64) -> Flood<K> {
        Flood {
            windows: Mutex::new(HashMap::new()),
            window,
            budget: budget.max(1),
        }
    }

    /// Notes one refusal of `kind` at `now` (`now_ms` on the wall clock).
    pub fn admit(&self, kind: &K, now: Instant, now_ms: u64) -> Admit {
        let mut windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        match windows.get_mut(kind) {
            Some(w) if now.duration_since(w.opened) < self.window && w.recorded < self.budget => {
                w.recorded += 1;
                Admit::Record
            }
            Some(w) if now.duration_since(w.opened) < self.window => {
                if w.count == 0 {
                    w.first_ms = now_ms;
                }
                w.count += 1;
                w.last_ms = now_ms;
                Admit::Counted
            }
            // A closed window still holding a count is summarized by `due` first; the
            // caller asks for that before admitting.
            _ => {
                windows.insert(
                    kind.clone(),
                    Window {
                        opened: now,
                        recorded: 1,
                        count: 0,
                        first_ms: now_ms,
                        last_ms: now_ms,
                    },
                );
                Admit::Record
            }
        }
    }

    /// Closes the windows that have passed and returns the counts they hold.
    pub fn due(&self, now: Instant) -> Vec<Summary<K>> {
        self.take(|w| now.duration_since(w.opened) >= self.window)
    }

    /// Closes every window (the server is stopping).
    pub fn drain(&self) -> Vec<Summary<K>> {
        self.take(|_| true)
    }

    fn take(&self, closed: impl Fn(&Window) -> bool) -> Vec<Summary<K>> {
        let mut windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        if windows.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        windows.retain(|kind, w| {
            if !closed(w) {
                return true;
            }
            if w.count > 0 {
                out.push(Summary {
                    kind: kind.clone(),
                    count: w.count,
                    first_ms: w.first_ms,
                    last_ms: w.last_ms,
                });
            }
            false
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_entry_per_kind_and_window_then_one_summary() {
        let flood = Flood::new(Duration::from_secs(10));
        let t0 = Instant::now();
        assert_eq!(flood.admit(&"a", t0, 1000), Admit::Record);
        for i in 1..=5 {
            assert_eq!(
                flood.admit(&"a", t0 + Duration::from_secs(i), 1000 + i * 1000),
                Admit::Counted
            );
        }
        assert_eq!(flood.admit(&"b", t0, 1000), Admit::Record);
        assert_eq!(flood.due(t0 + Duration::from_secs(9)), []);
        let due = flood.due(t0 + Duration::from_secs(10));
        assert_eq!(
            due,
            [Summary {
                kind: "a",
                count: 5,
                first_ms: 2000,
                last_ms: 6000
            }],
            "b had nothing beyond its first"
        );
        assert_eq!(
            flood.admit(&"a", t0 + Duration::from_secs(11), 12_000),
            Admit::Record,
            "a new window"
        );
        assert_eq!(
            flood.admit(&"a", t0 + Duration::from_secs(12), 13_000),
            Admit::Counted
        );
        assert_eq!(flood.drain().len(), 1);
        assert!(flood.drain().is_empty());
    }

    #[test]
    fn a_budget_records_that_many_per_window_and_counts_the_rest() {
        let flood = Flood::with_budget(Duration::from_secs(60), 3);
        let t0 = Instant::now();
        let admitted: Vec<Admit> = (0..10)
            .map(|i| flood.admit(&"repo.status", t0 + Duration::from_secs(i), i * 1000))
            .collect();
        assert_eq!(&admitted[..3], [Admit::Record; 3]);
        assert!(admitted[3..].iter().all(|a| *a == Admit::Counted));
        let due = flood.due(t0 + Duration::from_secs(60));
        assert_eq!(due.len(), 1);
        assert_eq!(
            (due[0].count, due[0].first_ms, due[0].last_ms),
            (7, 3000, 9000)
        );
        assert_eq!(
            flood.admit(&"repo.status", t0 + Duration::from_secs(61), 61_000),
            Admit::Record
        );
    }
}
