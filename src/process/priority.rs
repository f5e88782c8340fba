//! Scheduling of children started for work nobody is waiting on.
//!
//! A card's preview is computed after its proposal was answered; on a small machine its
//! git processes would otherwise take the cores from the next call someone is waiting
//! for. Such work runs inside [`background`], and every child it starts:
//! - waits, before it starts, while foreground work is in flight ([`Foreground`]), at most
//!   [`PAUSE`], so a git process of its own never starts in the middle of someone's call;
//! - runs at a higher niceness, set in the child between fork and exec so not one
//!   instruction of the program runs at the caller's priority, and inherited by whatever
//!   the child starts.
//!
//! Not `SCHED_IDLE`: an idle task gets next to nothing while any other task wants the
//! core, and a person cannot approve a card before its preview is in. With a build running
//! in the same session, idle card previews were measured taking seconds; a niceness slows
//! them by a bounded share instead.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

/// The niceness of background children: well below interactive work, still scheduled.
pub const BACKGROUND: i32 = 10;

/// The longest a background child waits for the foreground to be quiet: work that never
/// pauses (a gateway polled without a break) still lets the cards move on.
pub const PAUSE: Duration = Duration::from_millis(100);

/// Foreground work in flight, which background children give way to.
#[derive(Clone, Debug)]
pub struct Foreground(Arc<watch::Sender<usize>>);

impl Default for Foreground {
    fn default() -> Self {
        Foreground(Arc::new(watch::Sender::new(0)))
    }
}

impl Foreground {
    /// Foreground work in flight until the guard is dropped.
    pub fn busy(&self) -> Busy {
        self.0.send_modify(|n| *n += 1);
        Busy(Arc::clone(&self.0))
    }

    /// Whether no foreground work is in flight now.
    pub fn is_quiet(&self) -> bool {
        *self.0.borrow() == 0
    }

    /// Resolves once no foreground work is in flight, or after `at_most`.
    pub async fn quiet(&self, at_most: Duration) {
        let mut rx = self.0.subscribe();
        let _ = tokio::time::timeout(at_most, rx.wait_for(|n| *n == 0)).await;
    }
}

/// One piece of foreground work in flight (see [`Foreground::busy`]).
#[derive(Debug)]
pub struct Busy(Arc<watch::Sender<usize>>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

tokio::task_local! {
    static LANE: Option<Foreground>;
}

/// Runs `work` as background work: every child it starts (in this task) gives way to
/// `foreground`, if any, and runs at [`BACKGROUND`] niceness.
pub async fn background<F: Future>(foreground: Option<Foreground>, work: F) -> F::Output {
    LANE.scope(foreground, work).await
}

/// `work`, to be run by a task the calling task spawns, in the caller's lane: children it
/// starts give way and are niced exactly as the caller's would be.
pub fn same_lane<F: Future>(work: F) -> impl Future<Output = F::Output> {
    let lane = LANE.try_with(Clone::clone).ok();
    async move {
        match lane {
            Some(foreground) => LANE.scope(foreground, work).await,
            None => work.await,
        }
    }
}

fn in_background() -> bool {
    LANE.try_with(|_| ()).is_ok()
}

/// The niceness of a child asking for `niceness`, inside or outside background work.
pub(super) fn of_child(niceness: Option<i32>) -> Option<i32> {
    niceness.or_else(|| in_background().then_some(BACKGROUND))
}

/// Inside background work: waits until the foreground is quiet (at most [`PAUSE`]).
pub(super) async fn give_way() {
    let foreground = LANE.try_with(Clone::clone).ok().flatten();
    if let Some(foreground) = foreground {
        foreground.quiet(PAUSE).await;
    }
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

    #[tokio::test]
    async fn a_task_spawned_in_the_same_lane_stays_background() {
        let carried = background(None, async {
            tokio::spawn(same_lane(async { in_background() }))
                .await
                .unwrap()
        })
        .await;
        assert!(carried);
        let plain = background(None, async {
            tokio::spawn(async { in_background() }).await.unwrap()
        })
        .await;
        assert!(!plain, "task-locals do not follow a spawn on their own");
    }

    /// The scheduling of a process from its `/proc/<pid>/stat`: field 19, the niceness,
    /// and field 41, the policy.
    fn schedule_in(stat: &str) -> (i32, u32) {
        let after_name = &stat[stat.rfind(')').unwrap() + 1..];
        let fields: Vec<&str> = after_name.split_whitespace().collect();
        (fields[16].parse().unwrap(), fields[38].parse().unwrap())
    }

    /// `SCHED_OTHER`, the normal policy.
    const NORMAL: u32 = 0;

    /// The scheduling of a child as the child itself sees it: `cat` reading its own stat.
    async fn child_schedule(inv: Invocation) -> (i32, u32) {
        let done = inv
            .program_path("/bin/cat")
            .arg("/proc/self/stat")
            .capture(4096, &CancellationToken::new())
            .await
            .unwrap();
        assert!(done.success(), "{}", done.stderr_text());
        schedule_in(&String::from_utf8(done.sink.bytes).unwrap())
    }

    fn own() -> (i32, u32) {
        schedule_in(&std::fs::read_to_string("/proc/thread-self/stat").unwrap())
    }

    #[tokio::test]
    async fn a_niceness_is_set_in_the_child_before_its_program_runs() {
        let (nice, policy) = own();
        assert_eq!(policy, NORMAL, "the test runs under the normal policy");
        let want = nice.max(BACKGROUND);
        let asked = Invocation::new(Program::Git).niceness(BACKGROUND);
        assert_eq!(child_schedule(asked).await, (want, NORMAL));
        // Never less nice than gitward: that would need a privilege, and is not asked.
        let eager = Invocation::new(Program::Git).niceness(nice - 5);
        assert_eq!(child_schedule(eager).await, (nice, NORMAL));
    }

    #[tokio::test]
    async fn background_work_starts_its_children_nicer_and_only_it() {
        let (nice, _) = own();
        let plain = child_schedule(Invocation::new(Program::Git)).await;
        assert_eq!(plain, (nice, NORMAL));
        let inside = background(None, child_schedule(Invocation::new(Program::Git))).await;
        assert_eq!(inside, (nice.max(BACKGROUND), NORMAL));
        let quiet = Foreground::default();
        let gated = background(
            Some(quiet.clone()),
            child_schedule(Invocation::new(Program::Git)),
        )
        .await;
        assert_eq!(gated, inside, "a quiet foreground lets the child start");
        // The scope ends with the work: the next child is back at the caller's priority.
        assert_eq!(child_schedule(Invocation::new(Program::Git)).await, plain);
    }

    #[tokio::test]
    async fn the_foreground_is_quiet_once_every_busy_guard_is_gone() {
        let foreground = Foreground::default();
        foreground.quiet(Duration::from_secs(3600)).await;
        let (one, two) = (foreground.busy(), foreground.busy());
        let waiting = {
            let foreground = foreground.clone();
            tokio::spawn(async move { foreground.quiet(Duration::from_secs(3600)).await })
        };
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        assert!(!waiting.is_finished(), "quiet while work is in flight");
        drop(one);
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        assert!(!waiting.is_finished(), "quiet while work is in flight");
        drop(two);
        waiting.await.unwrap();
        assert!(foreground.is_quiet());
        // A bound ends the wait however busy the foreground stays.
        let _held = foreground.busy();
        foreground.quiet(Duration::ZERO).await;
    }
}
