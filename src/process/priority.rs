//! Scheduling priority of children started for work nobody is waiting on.
//!
//! A card's preview is computed after its proposal was answered; on a small machine its
//! git processes would otherwise take the cores from the next call someone is waiting
//! for. Such work runs inside [`background`], and every child it starts gets a higher
//! niceness, set in the child between fork and exec so not one instruction of the program
//! runs at the caller's priority (and whatever the child starts inherits it).

use std::future::Future;

/// The niceness of background children: well below interactive work, still scheduled.
pub const BACKGROUND: i32 = 10;

tokio::task_local! {
    static NICENESS: i32;
}

/// Runs `work` with every child it starts (in this task) at `niceness`.
pub async fn background<F: Future>(niceness: i32, work: F) -> F::Output {
    NICENESS.scope(niceness, work).await
}

/// The niceness the current task asks for its children, if any.
pub(super) fn current() -> Option<i32> {
    NICENESS.try_with(|n| *n).ok()
}

/// Makes the child of `cmd` run at `niceness` from before its program starts.
pub(super) fn apply(cmd: &mut std::process::Command, niceness: i32) {
    #[allow(unsafe_code)]
    // SAFETY: the hook runs in the forked child before exec, where only async-signal-safe
    // calls are allowed: it makes at most two system calls (no allocation, no lock) on the
    // child itself. A child already nicer is left as it is (making it less nice needs a
    // privilege); a niceness the system refuses fails the spawn rather than run the child
    // at the caller's priority.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(cmd, move || {
            if rustix::process::getpriority_process(None)? < niceness {
                rustix::process::setpriority_process(None, niceness)?;
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::{CancellationToken, Invocation, Program};

    /// Field 19 of `/proc/<pid>/stat`, the process's niceness.
    fn nice_in(stat: &str) -> i32 {
        let after_name = &stat[stat.rfind(')').unwrap() + 1..];
        after_name
            .split_whitespace()
            .nth(16)
            .unwrap()
            .parse()
            .unwrap()
    }

    /// The niceness of a child as the child itself sees it: `cat` reading its own stat.
    async fn child_niceness(inv: Invocation) -> i32 {
        let done = inv
            .program_path("/bin/cat")
            .arg("/proc/self/stat")
            .capture(4096, &CancellationToken::new())
            .await
            .unwrap();
        assert!(done.success(), "{}", done.stderr_text());
        nice_in(&String::from_utf8(done.sink.bytes).unwrap())
    }

    fn own() -> i32 {
        nice_in(&std::fs::read_to_string("/proc/thread-self/stat").unwrap())
    }

    #[tokio::test]
    async fn a_niceness_is_set_in_the_child_before_its_program_runs() {
        let want = own().max(BACKGROUND);
        let nice = Invocation::new(Program::Git).niceness(BACKGROUND);
        assert_eq!(child_niceness(nice).await, want);
        // Never less nice than gitward: that would need a privilege, and is not asked.
        let eager = Invocation::new(Program::Git).niceness(own() - 5);
        assert_eq!(child_niceness(eager).await, own());
    }

    #[tokio::test]
    async fn background_work_starts_its_children_nicer_and_only_it() {
        let plain = child_niceness(Invocation::new(Program::Git)).await;
        assert_eq!(plain, own());
        let inside = background(BACKGROUND, child_niceness(Invocation::new(Program::Git))).await;
        assert_eq!(inside, own().max(BACKGROUND));
        assert_ne!(
            inside, plain,
            "the test runs at a niceness below {BACKGROUND}"
        );
        // The scope ends with the work: the next child is back at the caller's priority.
        assert_eq!(child_niceness(Invocation::new(Program::Git)).await, plain);
    }
}
