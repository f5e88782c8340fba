//! How much of a ledger `verify-audit` has checked, for whoever watches: counted in
//! bytes, told at most once per [`Checked::STEP`] and once at the end, so a ledger of a
//! million lines costs a million additions and a few dozen reports.

use crate::progress::Progress;

/// The ledger's bytes checked so far, reported every [`Checked::STEP`] bytes.
#[derive(Default)]
pub(super) struct Checked {
    progress: Progress,
    done: u64,
    reported: u64,
    total: u64,
}

impl Checked {
    const STEP: u64 = 1 << 20;

    /// Nothing checked yet of a ledger of `total` bytes.
    pub(super) fn new(progress: &Progress, total: u64) -> Checked {
        Checked {
            progress: progress.clone(),
            total,
            ..Checked::default()
        }
    }

    pub(super) fn add(&mut self, n: u64) {
        self.done += n;
        if self.done - self.reported >= Self::STEP || self.done == self.total {
            self.reported = self.done;
            let (done, total) = (self.done, self.total.max(self.done));
            let mib = |b: u64| b as f64 / f64::from(1 << 20);
            self.progress.report(done, Some(total), || {
                format!("verify-audit: {:.1} of {:.1} MiB", mib(done), mib(total))
            });
        }
    }
}
