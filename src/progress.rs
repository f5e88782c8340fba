//! How far long work has come, told to whoever watches it: an MCP client that sent a
//! `progressToken` (`transport`), or a person at a terminal (`cli`). Neutral ground, as
//! `observe` is: tools, the semantic engine and the spec workflow report here, and none of
//! them knows who listens, or whether anyone does.
//!
//! A [`Progress`] without a watcher is a no-op that costs a branch, so work reports
//! unconditionally and builds its message only when someone will read it. A watcher sees
//! only reports that move forward (MCP requires `progress` to increase with every
//! notification, and a bar that jumps back reads as a fault), at most one per
//! [`MIN_INTERVAL`] besides the one that completes the total (hosts redraw a line; they
//! do not need every step of a thousand), and none once [`Progress::close`] has returned:
//! a transport closes a request's progress before it queues the response, so nothing
//! about a request ever follows its answer.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The shortest time between two updates a watcher sees: ten a second at most.
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);

/// One step of the work, as a watcher sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Update<'a> {
    /// Done so far; larger than in any earlier update.
    pub progress: u64,
    /// The whole, when it is known.
    pub total: Option<u64>,
    /// A short line for a person, such as `radar: 37 of 120 repositories`.
    pub message: &'a str,
}

/// Who is told: the transport's notifier, or the terminal's line.
pub trait Watcher: Send + Sync + 'static {
    fn update(&self, update: &Update<'_>);

    /// The work is over (answered, failed or stopped): no update follows.
    fn finish(&self) {}
}

/// The handle work reports through; clones report to the same watcher.
#[derive(Clone, Default)]
pub struct Progress {
    shared: Option<Arc<Shared>>,
}

struct Shared {
    watcher: Box<dyn Watcher>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    closed: bool,
    last: Option<u64>,
    sent_at: Option<Instant>,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progress")
            .field("watched", &self.is_watched())
            .finish()
    }
}

impl Progress {
    /// Nobody watches: every report is dropped.
    pub fn none() -> Progress {
        Progress::default()
    }

    pub fn new(watcher: impl Watcher) -> Progress {
        Progress {
            shared: Some(Arc::new(Shared {
                watcher: Box::new(watcher),
                state: Mutex::new(State::default()),
            })),
        }
    }

    /// Whether anyone may still read a report.
    pub fn is_watched(&self) -> bool {
        self.shared.as_ref().is_some_and(|s| !s.lock().closed)
    }

    /// Reports `progress` of `total`; `message` is built only when the update is passed on.
    ///
    /// Safe from any thread: the watcher is called under this handle's lock, so updates
    /// reach it one at a time and in order, and never after [`Progress::close`].
    pub fn report(&self, progress: u64, total: Option<u64>, message: impl FnOnce() -> String) {
        let Some(shared) = &self.shared else {
            return;
        };
        let mut state = shared.lock();
        if state.closed || state.last.is_some_and(|last| progress <= last) {
            return;
        }
        let now = Instant::now();
        let completes = total == Some(progress);
        let too_soon = state
            .sent_at
            .is_some_and(|at| now.duration_since(at) < MIN_INTERVAL);
        if too_soon && !completes {
            return;
        }
        state.last = Some(progress);
        state.sent_at = Some(now);
        let message = message();
        shared.watcher.update(&Update {
            progress,
            total,
            message: &message,
        });
    }

    /// Ends the reporting: once this returns, the watcher hears nothing more.
    pub fn close(&self) {
        let Some(shared) = &self.shared else {
            return;
        };
        let mut state = shared.lock();
        if !state.closed {
            state.closed = true;
            shared.watcher.finish();
        }
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Counts finished items of a known whole and reports each, from any task or thread.
#[derive(Clone)]
pub struct Counter {
    progress: Progress,
    done: Arc<std::sync::atomic::AtomicU64>,
    total: u64,
    describe: Arc<dyn Fn(u64, u64) -> String + Send + Sync>,
}

impl Counter {
    /// Reports `0 of total` at once, so a watcher learns the whole before the first item
    /// is done; `describe(done, total)` words each update.
    pub fn start(
        progress: &Progress,
        total: u64,
        describe: impl Fn(u64, u64) -> String + Send + Sync + 'static,
    ) -> Counter {
        let counter = Counter {
            progress: progress.clone(),
            done: Arc::default(),
            total,
            describe: Arc::new(describe),
        };
        counter
            .progress
            .report(0, Some(total), || (counter.describe)(0, total));
        counter
    }

    /// One more item is done.
    pub fn tick(&self) {
        let done = self
            .done
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            .saturating_add(1)
            .min(self.total);
        self.progress
            .report(done, Some(self.total), || (self.describe)(done, self.total));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Seen = (u64, Option<u64>, String);

    /// Keeps every update it is shown, and counts the times it is finished.
    #[derive(Clone, Default)]
    struct Log(Arc<Mutex<Vec<Seen>>>, Arc<Mutex<u32>>);

    impl Watcher for Log {
        fn update(&self, u: &Update<'_>) {
            self.0
                .lock()
                .unwrap()
                .push((u.progress, u.total, u.message.to_owned()));
        }
        fn finish(&self) {
            *self.1.lock().unwrap() += 1;
        }
    }

    #[test]
    fn without_a_watcher_nothing_is_built() {
        let progress = Progress::none();
        assert!(!progress.is_watched());
        progress.report(1, None, || unreachable!("no one reads it"));
        progress.close();
    }

    #[test]
    fn updates_only_move_forward_at_a_bounded_rate_and_stop_at_close() {
        let log = Log::default();
        let progress = Progress::new(log.clone());
        progress.report(0, Some(10), || "0".into());
        // Too soon after the first, and not the end: dropped, message never built.
        progress.report(1, Some(10), || unreachable!("rate-limited"));
        // Backwards: dropped.
        progress.report(0, Some(10), || unreachable!("not forward"));
        // The end of a known total is always shown.
        progress.report(10, Some(10), || "10".into());
        std::thread::sleep(MIN_INTERVAL);
        // Past the end (a total that grew): forward, after the interval.
        progress.report(11, None, || "11".into());
        progress.close();
        progress.close();
        progress.report(12, None, || unreachable!("closed"));
        assert!(!progress.is_watched());
        let seen: Vec<u64> = log.0.lock().unwrap().iter().map(|u| u.0).collect();
        assert_eq!(seen, [0, 10, 11]);
        assert_eq!(*log.1.lock().unwrap(), 1, "finished once");
    }

    #[test]
    fn a_counter_from_many_threads_reports_a_rising_count_that_ends_complete() {
        let log = Log::default();
        let progress = Progress::new(log.clone());
        let counter = Counter::start(&progress, 400, |d, t| format!("{d} of {t}"));
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| (0..100).for_each(|_| counter.tick()));
            }
        });
        let seen = log.0.lock().unwrap().clone();
        assert_eq!(seen.first(), Some(&(0, Some(400), "0 of 400".into())));
        assert_eq!(seen.last(), Some(&(400, Some(400), "400 of 400".into())));
        assert!(seen.windows(2).all(|w| w[0].0 < w[1].0), "{seen:?}");
    }
}
