//! Stdin for the serving loop, read on a thread of its own.
//!
//! The thread blocks in `read` and hands the loop whole frames, so a request costs the
//! loop one wake-up. An async stdin would instead hand every read to a blocking-pool
//! thread and wake the loop again when it is done, once per read.
//!
//! At most one frame waits in the hand-over, and the thread reads no further until the
//! loop takes it: input past that stays in the pipe, as it does for any bounded reader.

use std::io::{Cursor, Result};

use tokio::io::{AsyncReadExt, BufReader};
use tokio::sync::mpsc;

use super::framing::{Frame, FrameReader};
use super::opening::{BlockingStdin, block_on};

/// Frames read from stdin by the `gitward-stdin` thread.
pub struct StdinFrames {
    rx: mpsc::Receiver<Result<Frame>>,
}

impl StdinFrames {
    /// Starts the reading thread: `ahead` (input already read) first, then stdin, through
    /// a buffer of `capacity` bytes.
    pub(super) fn start(ahead: Vec<u8>, capacity: usize) -> StdinFrames {
        let (tx, rx) = mpsc::channel(1);
        let on_failure = tx.clone();
        let spawned = std::thread::Builder::new()
            .name("gitward-stdin".into())
            .spawn(move || read_frames(ahead, capacity, &tx));
        if let Err(e) = spawned {
            // The loop learns of it from its first read, and stops as on a read error.
            let _ = on_failure.try_send(Err(e));
        }
        StdinFrames { rx }
    }

    /// The next frame; past end of input, [`Frame::Eof`] again.
    pub async fn next(&mut self) -> Result<Frame> {
        Ok(match self.rx.recv().await {
            Some(frame) => frame?,
            None => Frame::Eof,
        })
    }
}

/// Reads frames until end of input, a read error, or a loop that no longer listens.
fn read_frames(ahead: Vec<u8>, capacity: usize, tx: &mpsc::Sender<Result<Frame>>) {
    let input = AsyncReadExt::chain(Cursor::new(ahead), BlockingStdin);
    let mut reader = FrameReader::new(BufReader::with_capacity(capacity, input));
    loop {
        let frame = block_on(reader.next());
        let last = matches!(frame, Ok(Frame::Eof) | Err(_));
        if tx.blocking_send(frame).is_err() || last {
            return;
        }
    }
}
