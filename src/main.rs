//! The `gitward` executable: its own C `main`, in place of std's.
//!
//! A stdio MCP server is started for every client session, and the time to its first
//! answer is mostly the process's own start-up. std's entry point spends about a tenth of
//! a millisecond of it before `main` runs, most of it finding the main thread's stack
//! (glibc reads and parses `/proc/self/maps` for that) to install a guard-page handler
//! on an alternate signal stack. What std does there that the server relies on is done
//! here instead: the standard descriptors are made valid (a closed stdout must not
//! become the next file opened) and SIGPIPE is ignored (a closed pipe is an error to
//! handle, never a silent death). Arguments still come through std, which reads them on
//! glibc without its entry point.
//!
//! What is given up: a stack overflow kills the process with SIGSEGV, without std's
//! "has overflowed its stack" line first, and the main thread has no name in panic
//! messages. A panic that reaches here still exits with status 101, as under std.

#![no_main]

use std::io::Write;
use std::process::ExitCode;

#[allow(unsafe_code)]
// SAFETY: the C `main` that glibc's start-up calls, defined once, with its signature.
#[unsafe(no_mangle)]
extern "C" fn main(
    _argc: std::ffi::c_int,
    _argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    standard_descriptors();
    ignore_sigpipe();
    let code =
        std::panic::catch_unwind(|| gitward::cli::main(std::env::args_os().skip(1).collect()))
            .unwrap_or(ExitCode::from(101));
    // std's entry point flushes stdout on the way out; C's `exit` does not know its buffer.
    let _ = std::io::stdout().flush();
    // ExitCode keeps its number to itself; it is one of the 256 it can be built from.
    (0..=u8::MAX)
        .find(|&n| ExitCode::from(n) == code)
        .map_or(1, std::ffi::c_int::from)
}

/// Opens `/dev/null` on each of descriptors 0, 1 and 2 that is closed, as std's entry point
/// does, so nothing opened later takes their place.
fn standard_descriptors() {
    use rustix::event::{PollFd, PollFlags, poll};
    use rustix::stdio::{stderr, stdin, stdout};
    let mut fds =
        [stdin(), stdout(), stderr()].map(|fd| PollFd::from_borrowed_fd(fd, PollFlags::empty()));
    let now = rustix::event::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    if poll(&mut fds, Some(&now)).is_err() {
        return;
    }
    let closed = fds.map(|fd| fd.revents().contains(PollFlags::NVAL));
    // Each open takes the lowest free descriptor: the closed ones, in order.
    for _ in closed.iter().filter(|&&closed| closed) {
        match rustix::fs::open(
            "/dev/null",
            rustix::fs::OFlags::RDWR,
            rustix::fs::Mode::empty(),
        ) {
            Ok(fd) => {
                let _ = std::os::fd::IntoRawFd::into_raw_fd(fd);
            }
            Err(_) => std::process::abort(),
        }
    }
}

/// Ignores SIGPIPE, as std's entry point does: a write to a closed pipe then fails with
/// `EPIPE`. Children get the default back (std restores it when it spawns them).
fn ignore_sigpipe() {
    #[allow(unsafe_code)]
    // SAFETY: called first thing, before any other thread exists; SIG_IGN runs no code.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}
