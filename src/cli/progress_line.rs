//! The progress line a command draws on a terminal: the same reports an MCP client gets
//! as `notifications/progress`, as one line on stderr that is cleared when the work ends.
//!
//! Drawn only when stderr is a terminal: piped or redirected, a command prints exactly
//! what it printed before, and stdout never carries any of it.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::progress::{Progress, Update, Watcher};

/// How often the spinner turns while no report comes (a long single step).
const TICK: Duration = Duration::from_millis(120);

/// Progress drawn on stderr when it is a terminal; nothing otherwise.
pub fn on_stderr() -> Progress {
    if !std::io::stderr().is_terminal() {
        return Progress::none();
    }
    Progress::new(Line::start(String::new()))
}

/// A spinner with `message` on stderr while work with no reports of its own runs (a
/// request to another process); `None` when stderr is no terminal.
pub fn spinner(message: String) -> Option<Line> {
    std::io::stderr()
        .is_terminal()
        .then(|| Line::start(message))
}

/// One line on stderr.
pub struct Line {
    bar: ProgressBar,
}

impl Line {
    fn start(message: String) -> Line {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(spinner_style());
        bar.set_message(message);
        // Drawn at once, not at the first tick: a short request still shows what it did.
        bar.tick();
        bar.enable_steady_tick(TICK);
        Line { bar }
    }

    /// Clears the line.
    pub fn clear(&self) {
        self.bar.finish_and_clear();
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

impl Watcher for Line {
    fn update(&self, update: &Update<'_>) {
        match update.total {
            Some(total) if self.bar.length() != Some(total) => {
                self.bar.set_style(bar_style());
                self.bar.set_length(total);
            }
            _ => {}
        }
        self.bar.set_position(update.progress);
        self.bar.set_message(update.message.to_owned());
    }

    fn finish(&self) {
        self.clear();
    }
}

fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {wide_msg} {elapsed}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

fn bar_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} [{bar:24}] {wide_msg} {elapsed}")
        .map(|s| s.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar())
}
