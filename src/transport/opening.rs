//! The first stdio message, read and answered on the calling thread before the async
//! runtime and the writer threads exist, so a client's `initialize` does not wait for
//! them to start.
//!
//! The frame is read by the same [`FrameReader`] the serving loop uses, over a stdin
//! whose reads block, and only an `initialize` request is answered here, by the same
//! [`Handler`]. Anything else (a bad line, a batch, a notification, another method) is
//! handed to the serving loop untouched, as its first frame, so every answer is the one
//! the loop gives.

use std::io::{Read, Write};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncRead, BufReader, ReadBuf};

use super::dispatch::{Handler, Session};
use super::framing::{Frame, FrameReader};
use super::jsonrpc::{self, Incoming};
use super::stdin::StdinFrames;
use crate::config::Config;
use crate::process::CancellationToken;

/// The serving loop's input buffer, as the stdio server has always used.
const INPUT_BUFFER: usize = 64 * 1024;

/// The first frame's buffer: an `initialize` is a few hundred bytes, and every page of a
/// larger buffer is zeroed before the answer. A longer frame is read in more pieces.
const FIRST_BUFFER: usize = 8 * 1024;

/// What the first message left for the serving loop.
#[derive(Default)]
pub struct Opening {
    /// Input read past the first frame.
    rest: Vec<u8>,
    /// The first frame, when it was not answered here.
    pub(super) first: Option<Frame>,
    pub(super) session: Session,
}

impl Opening {
    /// Stdin as the serving loop reads it: what was read ahead, then the rest.
    pub fn input(&mut self) -> StdinFrames {
        StdinFrames::start(std::mem::take(&mut self.rest), INPUT_BUFFER)
    }
}

/// Reads the first frame from stdin and answers it on stdout if it is `initialize`.
pub fn answer_first(config: &Arc<Config>) -> std::io::Result<Opening> {
    let mut reader = FrameReader::new(BufReader::with_capacity(FIRST_BUFFER, BlockingStdin));
    let frame = block_on(reader.next())?;
    let rest = reader.into_inner().buffer().to_vec();
    let handler = Handler::new(
        Arc::clone(config),
        Vec::new().into(),
        CancellationToken::new(),
    );
    let reply = match &frame {
        Frame::Message(bytes) => match jsonrpc::classify(bytes) {
            Incoming::Request { id, method, params } if method == "initialize" => {
                handler.inline(&id, &method, &params)
            }
            _ => None,
        },
        _ => None,
    };
    let first = match reply {
        Some(reply) => {
            let mut line = crate::tools::compact(&reply).into_bytes();
            line.push(b'\n');
            let mut out = std::io::stdout().lock();
            // As in the serving loop, a closed stdout does not stop reading.
            let _ = out.write_all(&line).and_then(|()| out.flush());
            None
        }
        None => Some(frame),
    };
    Ok(Opening {
        rest,
        first,
        session: handler.into_session(),
    })
}

/// Stdin read with blocking reads: never pending, so the frame reader needs no runtime.
pub(super) struct BlockingStdin;

impl AsyncRead for BlockingStdin {
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let mut stdin = std::io::stdin().lock();
        loop {
            match stdin.read(buf.initialize_unfilled()) {
                Ok(n) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

/// Drives a future whose reads all block to its end.
pub(super) fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        // Not reached with blocking reads; yielding keeps a surprise from spinning hot.
        std::thread::yield_now();
    }
}
