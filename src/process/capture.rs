//! Spawning, draining and stopping a child.

use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio_util::sync::CancellationToken;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::{Invocation, Program, RunError, env, limit, priority, program};
use crate::sink::{Flow, Sink};

/// How a child ended, with its sink and the stderr we kept.
#[derive(Debug)]
pub struct Finished<S> {
    pub sink: S,
    /// The exit code; `None` when we stopped the child because the sink had enough, or
    /// when a signal ended it.
    pub code: Option<i32>,
    /// True when the sink asked to stop before the child finished.
    pub stopped_early: bool,
    pub stderr: Vec<u8>,
    pub stderr_truncated: bool,
    pub elapsed: std::time::Duration,
}

impl<S> Finished<S> {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// Stderr as trimmed text, for messages.
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).trim().to_owned()
    }
}

/// The largest read of a child's stdout: a pipe holds 64 KiB.
const CHUNK: usize = 64 * 1024;
/// The first read's buffer. Most children print less, or print it in the 4 KiB pieces of
/// stdio buffering; one that fills it gets a buffer twice as large, up to [`CHUNK`].
const FIRST_CHUNK: usize = 8 * 1024;
/// Stderr is read in pieces this large (it is mostly empty).
const ERR_CHUNK: usize = 2 * 1024;

pub(super) async fn run<S: Sink>(
    inv: Invocation,
    sink: S,
    cancel: &CancellationToken,
) -> Result<Finished<S>, RunError> {
    run_within(inv, sink, cancel, limit::children()).await
}

/// Runs `inv` once `limit` gives it a turn, holding the turn until the child is reaped.
async fn run_within<S: Sink>(
    mut inv: Invocation,
    mut sink: S,
    cancel: &CancellationToken,
    limit: &Arc<Semaphore>,
) -> Result<Finished<S>, RunError> {
    let name = inv.program.name();
    let started = Instant::now();
    let stdin = match (inv.stdin_pipe.take(), inv.stdin.take()) {
        (Some(pipe), _) => Stdin::Pipe(pipe),
        (None, Some(bytes)) => Stdin::Bytes(bytes),
        (None, None) => Stdin::Null,
    };
    let path = match (&inv.path, inv.program) {
        (Some(path), _) => path.as_path(),
        (None, Program::Git) => {
            let git = program::git()?;
            program::ensure_git_version(git).await?;
            git
        }
        (None, Program::OpenSpec) => {
            return Err(RunError::NotFound(
                "the OpenSpec CLI was not located".into(),
            ));
        }
        (None, Program::Npm) => {
            return Err(RunError::NotFound("npm was not located".into()));
        }
        (None, Program::Opener) => {
            return Err(RunError::NotFound("no URL opener was located".into()));
        }
    };
    // Queued, not started, while the machine already runs its share of children; the
    // deadline starts with the child, so a wait in the queue never times a call out.
    priority::give_way().await;
    let mut turn = Some(limit::turn_in(limit, cancel).await?);
    let Spawned {
        handle,
        pid,
        mut out,
        mut err,
    } = spawn(&inv, path, stdin)?;
    let io_err = |source| RunError::Io {
        program: name,
        source,
    };

    let orphan = Orphan {
        handle: Arc::clone(&handle),
        pid,
        live: std::sync::atomic::AtomicBool::new(true),
    };
    let kill = |handle: &Arc<duct::Handle>, turn| {
        orphan
            .live
            .store(false, std::sync::atomic::Ordering::Relaxed);
        kill_child(handle, pid, turn)
    };

    let deadline = tokio::time::Instant::now() + inv.timeout;
    let mut out_buf: Vec<u8> = Vec::with_capacity(FIRST_CHUNK);
    // On the heap: the call's future is moved on the stack in unoptimized builds.
    let mut err_buf = vec![0u8; ERR_CHUNK];
    let mut stderr = Vec::new();
    let mut stderr_truncated = false;
    let (mut out_open, mut err_open) = (true, true);
    let mut stopped_early = false;

    while out_open || err_open {
        tokio::select! {
            biased;
            _ = cancel.cancelled() => {
                terminate(&handle, pid, inv.term_grace).await;
                kill(&handle, turn.take());
                return Err(RunError::Cancelled);
            }
            _ = tokio::time::sleep_until(deadline) => {
                kill(&handle, turn.take());
                return Err(RunError::Timeout { program: name, after: inv.timeout });
            }
            // Into the buffer's spare room: nothing is zeroed first.
            read = out.read_buf(&mut out_buf), if out_open => {
                let n = read.map_err(io_err)?;
                if n == 0 {
                    out_open = false;
                } else if sink.accept(&out_buf) == Flow::Enough {
                    stopped_early = true;
                    break;
                } else {
                    grow_or_clear(&mut out_buf);
                }
            }
            read = err.read(&mut err_buf), if err_open => {
                let n = read.map_err(io_err)?;
                if n == 0 {
                    err_open = false;
                } else {
                    let keep = n.min(inv.stderr_cap.saturating_sub(stderr.len()));
                    stderr.extend_from_slice(&err_buf[..keep]);
                    stderr_truncated |= keep < n;
                }
            }
        }
    }

    let code = if stopped_early {
        kill(&handle, turn.take());
        None
    } else {
        let code = wait_exit(&handle, pid, &mut turn, cancel, deadline, &inv).await;
        // Reaped, or handed to the reaper that kill_child starts.
        orphan
            .live
            .store(false, std::sync::atomic::Ordering::Relaxed);
        code?
    };
    Ok(Finished {
        sink,
        code,
        stopped_early,
        stderr,
        stderr_truncated,
        elapsed: started.elapsed(),
    })
}

/// Empties `buf` for the next read, doubling it (up to [`CHUNK`]) when this read filled
/// it: a child that writes fast is then read in fewer, larger pieces.
fn grow_or_clear(buf: &mut Vec<u8>) {
    let full = buf.len() == buf.capacity();
    let capacity = buf.capacity();
    buf.clear();
    if full && capacity < CHUNK {
        buf.reserve_exact((capacity * 2).min(CHUNK));
    }
}

/// Waits for a child whose pipes are closed: it has exited or is about to, and the deadline
/// still holds for one that closed its pipes and lingers.
async fn wait_exit(
    handle: &Arc<duct::Handle>,
    pid: Option<u32>,
    turn: &mut Option<OwnedSemaphorePermit>,
    cancel: &CancellationToken,
    deadline: tokio::time::Instant,
    inv: &Invocation,
) -> Result<Option<i32>, RunError> {
    let name = inv.program.name();
    // A child that closed both pipes is exiting: its descriptors close a moment before it
    // can be reaped. Reaping it here, after a yield or two if need be, spares a hop to a
    // blocking thread and back; one that lingers is waited for there.
    for _ in 0..3 {
        match handle.try_wait() {
            Ok(Some(output)) => return Ok(output.status.code()),
            Ok(None) => tokio::task::yield_now().await,
            Err(source) => {
                return Err(RunError::Io {
                    program: name,
                    source,
                });
            }
        }
    }
    tokio::select! {
        biased;
        _ = cancel.cancelled() => {
            terminate(handle, pid, inv.term_grace).await;
            kill_child(handle, pid, turn.take());
            Err(RunError::Cancelled)
        }
        _ = tokio::time::sleep_until(deadline) => {
            kill_child(handle, pid, turn.take());
            Err(RunError::Timeout { program: name, after: inv.timeout })
        }
        reaped = reap(handle, pid) => reaped.map_err(|source| RunError::Io { program: name, source }),
    }
}

/// Reaps a child that is about to exit. Its pidfd turns readable once it can be reaped,
/// an event the runtime's poller already waits for; without pidfds (an older kernel), a
/// blocking-pool thread waits for it instead.
async fn reap(handle: &Arc<duct::Handle>, pid: Option<u32>) -> std::io::Result<Option<i32>> {
    if let Some(exit) = pid.and_then(exit_watch)
        && exit.readable().await.is_ok()
        && let Some(output) = handle.try_wait()?
    {
        return Ok(output.status.code());
    }
    let waiter = Arc::clone(handle);
    tokio::task::spawn_blocking(move || waiter.wait().map(|o| o.status.code()))
        .await
        .map_err(std::io::Error::other)?
}

/// The child's pidfd, registered with the runtime's poller; `None` where pidfds are not
/// available.
fn exit_watch(pid: u32) -> Option<tokio::io::unix::AsyncFd<OwnedFd>> {
    let pid = rustix::process::Pid::from_raw(i32::try_from(pid).ok()?)?;
    let fd = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::NONBLOCK).ok()?;
    // Deprecated as unsound for a `T` whose raw descriptor could change or close while
    // registered; an `OwnedFd` owned by the `AsyncFd` cannot.
    #[allow(deprecated)]
    tokio::io::unix::AsyncFd::with_interest(fd, tokio::io::Interest::READABLE).ok()
}

/// A started child whose call may still be dropped before it ended (a request abandoned
/// from outside, the runtime shutting down). Left running, it would go on writing into
/// files its caller already removed: in an index copy's directory, a git that finds its
/// index gone rolls its lock back and leaves the directory behind, empty.
struct Orphan {
    handle: Arc<duct::Handle>,
    pid: Option<u32>,
    live: std::sync::atomic::AtomicBool,
}

impl Drop for Orphan {
    fn drop(&mut self) {
        if !self.live.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        if let Some(pid) = self
            .pid
            .and_then(|p| rustix::process::Pid::from_raw(p as i32))
        {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = self.handle.kill();
        // Reaped off the async workers when a runtime is still there to run it.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let handle = Arc::clone(&self.handle);
            runtime.spawn_blocking(move || {
                let _ = handle.wait();
            });
        }
    }
}

/// With a `grace`, sends `SIGTERM` to the child's process group and waits up to `grace`
/// for the child to exit, so it can clean up (git removes its lock files); whatever is
/// left is then killed by the caller.
async fn terminate(handle: &duct::Handle, pid: Option<u32>, grace: Option<Duration>) {
    let (Some(grace), Some(pid)) = (
        grace,
        pid.and_then(|p| rustix::process::Pid::from_raw(p as i32)),
    ) else {
        return;
    };
    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::TERM);
    let end = tokio::time::Instant::now() + grace;
    while tokio::time::Instant::now() < end {
        if !matches!(handle.try_wait(), Ok(None)) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Kills the child's whole process group and reaps it in the background, so no zombie is
/// left and the caller is not delayed; the turn is given back only once the child is gone.
fn kill_child(handle: &Arc<duct::Handle>, pid: Option<u32>, turn: Option<OwnedSemaphorePermit>) {
    if let Some(pid) = pid.and_then(|p| rustix::process::Pid::from_raw(p as i32)) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = handle.kill();
    let handle = Arc::clone(handle);
    tokio::task::spawn_blocking(move || {
        let _ = handle.wait();
        drop(turn);
    });
}

/// A started child: its handle and the read ends of its two pipes.
struct Spawned {
    handle: Arc<duct::Handle>,
    pid: Option<u32>,
    out: pipe::Receiver,
    err: pipe::Receiver,
}

/// What the child reads.
enum Stdin {
    Null,
    Bytes(Vec<u8>),
    Pipe(Arc<OwnedFd>),
}

fn spawn(inv: &Invocation, path: &Path, stdin: Stdin) -> Result<Spawned, RunError> {
    let name = inv.program.name();
    let spawn_err = |source| RunError::Spawn {
        program: name,
        source,
    };
    let (out_r, out_w) = os_pipe::pipe().map_err(spawn_err)?;
    let (err_r, err_w) = os_pipe::pipe().map_err(spawn_err)?;
    let niceness = priority::of_child(inv.niceness);

    // The one sanctioned spawn site.
    #[allow(clippy::disallowed_methods)]
    let mut expr = duct::cmd(path, &inv.args)
        .full_env(
            env::child_env()
                .iter()
                .cloned()
                .chain(inv.extra_env.iter().cloned()),
        )
        .stdout_file(out_w)
        .stderr_file(err_w)
        .unchecked()
        // A group of its own lets a kill reach any helper process git starts.
        .before_spawn(move |cmd| {
            std::os::unix::process::CommandExt::process_group(cmd, 0);
            if let Some(niceness) = niceness {
                priority::apply(cmd, niceness);
            }
            Ok(())
        });
    expr = match stdin {
        Stdin::Bytes(bytes) => expr.stdin_bytes(bytes),
        Stdin::Pipe(pipe) => {
            let read_end = Arc::try_unwrap(pipe)
                .or_else(|shared| shared.try_clone())
                .map_err(spawn_err)?;
            expr.stdin_file(read_end)
        }
        Stdin::Null => expr.stdin_null(),
    };
    if let Some(dir) = &inv.dir {
        expr = expr.dir(dir);
    }
    let handle = Arc::new(expr.start().map_err(spawn_err)?);
    // The expression owns our copies of the pipes' write ends; dropping it leaves the child
    // as the only writer, so the reads below see end-of-file when it exits.
    drop(expr);
    let pid = handle.pids().first().copied();

    let io_err = |source| RunError::Io {
        program: name,
        source,
    };
    let out = pipe::Receiver::from_owned_fd(OwnedFd::from(out_r)).map_err(io_err)?;
    let err = pipe::Receiver::from_owned_fd(OwnedFd::from(err_r)).map_err(io_err)?;
    Ok(Spawned {
        handle,
        pid,
        out,
        err,
    })
}

#[cfg(test)]
#[path = "capture_tests.rs"]
mod tests;
