//! A `git fast-import` process that starts before its whole stream is known and is
//! handed each piece as it is written, so its start and the work on the first pieces
//! overlap the caller's own work.
//!
//! The pieces travel through an unbounded channel to a task that writes them into the
//! child's stdin, beside the task that drains its output: the caller never waits for the
//! child to read. The child holds a turn of the process door while it waits for its
//! input, so at most half of those turns go to fed children: the caller's other children
//! (which the rest of the stream depends on) always find one.

use std::os::fd::OwnedFd;
use std::sync::{Arc, OnceLock};

use tokio::io::AsyncWriteExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::JoinHandle;

use super::super::{Command, GitError};
use crate::process::{Capped, Finished};

static EARLY: OnceLock<Arc<Semaphore>> = OnceLock::new();

/// A turn to start a fed child now; `None` when half the door's turns are taken by fed
/// children already (or the door runs one child at a time).
pub(super) fn early_turn() -> Option<OwnedSemaphorePermit> {
    let turns =
        EARLY.get_or_init(|| Arc::new(Semaphore::new(crate::process::limit::max_children() / 2)));
    Arc::clone(turns).try_acquire_owned().ok()
}

type Outcome = Result<Finished<Capped>, GitError>;

/// The child's run and its stdin, in this order: dropped together (the task aborted),
/// the child is killed before its stdin closes, so it never acts on a cut stream.
struct Fed<R> {
    run: std::pin::Pin<Box<R>>,
    stdin: Option<tokio::net::unix::pipe::Sender>,
}

/// A running child and the way to its stdin. Dropped before the child ended, the child
/// is killed (as the process door kills a child whose call is dropped).
pub(super) struct Feed {
    pieces: Option<mpsc::UnboundedSender<Vec<u8>>>,
    task: Option<JoinHandle<Outcome>>,
}

impl Feed {
    /// Starts `cmd` (capturing at most `cap` bytes of output) with a pipe for stdin.
    /// `turn` is held until the child has ended.
    pub(super) fn start(
        cmd: Command,
        cap: usize,
        turn: OwnedSemaphorePermit,
    ) -> Result<Feed, GitError> {
        let failed = |e: std::io::Error| GitError::internal(format!("no pipe for git: {e}"));
        let (read, write) = os_pipe::pipe().map_err(failed)?;
        let write =
            tokio::net::unix::pipe::Sender::from_owned_fd(OwnedFd::from(write)).map_err(failed)?;
        let run = cmd.stdin_pipe(OwnedFd::from(read)).capture(cap);
        let (pieces, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        // The child is started by the task, in the caller's lane (background work stays
        // background).
        let task = tokio::spawn(crate::process::priority::same_lane(async move {
            let mut fed = Fed {
                run: Box::pin(run),
                stdin: Some(write),
            };
            let stdin = &mut fed.stdin;
            let feed = async move {
                while let Some(piece) = rx.recv().await {
                    let Some(pipe) = stdin.as_mut() else { break };
                    // A child that stopped reading has ended or is being killed; how it
                    // ended is what the run reports.
                    if pipe.write_all(&piece).await.is_err() {
                        break;
                    }
                }
                // Closes the child's stdin: the stream is whole.
                stdin.take();
            };
            let (outcome, ()) = tokio::join!(&mut fed.run, feed);
            drop(turn);
            outcome
        }));
        Ok(Feed {
            pieces: Some(pieces),
            task: Some(task),
        })
    }

    /// Hands `piece` to the child.
    pub(super) fn send(&self, piece: Vec<u8>) {
        if let Some(pieces) = &self.pieces {
            // Refused only once the feeding stopped because the child is gone; `end`
            // then reports how it ended.
            let _ = pieces.send(piece);
        }
    }

    /// Closes the child's stdin after the pieces sent, and waits for it to end.
    pub(super) async fn end(mut self) -> Outcome {
        self.pieces.take();
        let task = self
            .task
            .as_mut()
            .ok_or_else(|| GitError::internal("fast-import was already waited for"))?;
        let joined = task.await;
        self.task = None;
        joined.map_err(|e| GitError::internal(format!("fast-import stopped: {e}")))?
    }

    /// Hands `last` to the child, closes its stdin and lets it end on its own.
    pub(super) fn detach(mut self, last: Vec<Vec<u8>>) {
        for piece in last {
            self.send(piece);
        }
        self.pieces.take();
        self.task.take();
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        let Some(task) = self.task.take() else {
            return;
        };
        task.abort();
        // The channel stays open until the task is gone, so its stdin never closes
        // before the child is killed.
        let pieces = self.pieces.take();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = task.await;
                drop(pieces);
            });
        }
    }
}
