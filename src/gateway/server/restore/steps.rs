//! When each step of taking a restore point started and ended, relative to the start of
//! the whole capture. Steps run side by side, so the figures show which one the capture
//! waited for; benchmarks print them, nothing else reads them.

use std::future::Future;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One step: its name, and when it started and ended after the capture began.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub name: &'static str,
    pub start: Duration,
    pub end: Duration,
}

/// The steps of one capture, in the order they ended.
#[derive(Debug)]
pub struct Steps {
    began: Instant,
    done: Mutex<Vec<Step>>,
}

impl Default for Steps {
    fn default() -> Self {
        Steps {
            began: Instant::now(),
            done: Mutex::new(Vec::new()),
        }
    }
}

impl Steps {
    /// Runs `fut` as the step `name`.
    pub async fn time<T>(&self, name: &'static str, fut: impl Future<Output = T>) -> T {
        let start = self.began.elapsed();
        let out = fut.await;
        let end = self.began.elapsed();
        if let Ok(mut done) = self.done.lock() {
            done.push(Step { name, start, end });
        }
        out
    }

    /// The steps recorded so far.
    pub fn list(&self) -> Vec<Step> {
        self.done.lock().map(|d| d.clone()).unwrap_or_default()
    }
}
