//! The stdin frame reader: newline-delimited JSON and `Content-Length` framing, arriving
//! in arbitrary chunk sizes.
//!
//! The input describes a stream rather than being it, so that streams past the 8 MiB
//! frame cap are reachable from small inputs:
//!
//! ```text
//! input  := seed item*
//! item   := 0xFF byte hi lo      `byte` repeated n = (hi & 0x7F)·256 + lo times (once
//!                                when 0), n·512 times when hi's top bit is set
//!         | byte                 itself
//!
//! (most runs stay short, so most inputs run fast; a flag bit reaches past the cap).
//! ```
//!
//! Checked: no panic; no allocation larger than the cap and no more than the cap (plus
//! slack) alive at once; the frames are the same however the stream is chunked; every
//! message fits the cap.
#![no_main]

use std::alloc::{GlobalAlloc, Layout, System};
use std::hash::Hasher;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use gitward::transport::framing::{Frame, FrameReader, MAX_FRAME};
use gitward_fuzz::Chunks;
use libfuzzer_sys::fuzz_target;
use tokio::io::{AsyncBufRead, AsyncRead, ReadBuf};

/// Longest stream built from one input: three frames past the cap.
const MAX_STREAM: usize = 3 * MAX_FRAME + 4096;
/// What the harness itself may hold beside the reader's buffers.
const SLACK: usize = 64 * 1024;

/// Counts live heap bytes and remembers the peak and the largest single request.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static LARGEST: AtomicUsize = AtomicUsize::new(0);

fn note(size: usize) {
    let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
    PEAK.fetch_max(live, Ordering::Relaxed);
    LARGEST.fetch_max(size, Ordering::Relaxed);
}

// SAFETY: every call forwards to the system allocator unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        note(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

enum Item<'a> {
    Bytes(&'a [u8]),
    Repeat(u8, usize),
}

fn items(mut data: &[u8]) -> Vec<Item<'_>> {
    let mut out = Vec::new();
    let mut total = 0;
    while total < MAX_STREAM {
        match data {
            [0xFF, byte, hi, lo, rest @ ..] => {
                let n = usize::from(*hi & 0x7f) << 8 | usize::from(*lo);
                let count = if *hi & 0x80 == 0 { n } else { n << 9 };
                let count = count.max(1).min(MAX_STREAM - total);
                out.push(Item::Repeat(*byte, count));
                total += count;
                data = rest;
            }
            [] => break,
            _ => {
                let end = data
                    .iter()
                    .position(|b| *b == 0xFF)
                    .unwrap_or(data.len())
                    .max(1)
                    .min(MAX_STREAM - total);
                out.push(Item::Bytes(&data[..end]));
                total += end;
                data = &data[end..];
            }
        }
    }
    out
}

/// A stream of items handed out in chunks of pseudo-random size.
struct Stream<'a> {
    items: &'a [Item<'a>],
    /// How far into the current item.
    at: usize,
    chunks: Chunks,
    /// The current chunk's length, fixed until it is consumed.
    chunk: usize,
    /// A run of one repeated byte to hand out slices of.
    run: Vec<u8>,
}

const RUN: usize = 64 * 1024;

impl<'a> Stream<'a> {
    fn new(items: &'a [Item<'a>], chunks: Chunks) -> Self {
        Stream {
            items,
            at: 0,
            chunks,
            chunk: 0,
            run: Vec::with_capacity(RUN),
        }
    }
}

impl AsyncRead for Stream<'_> {
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        _: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        unreachable!("the frame reader reads through fill_buf")
    }
}

impl AsyncBufRead for Stream<'_> {
    fn poll_fill_buf(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let this = self.get_mut();
        while let Some(item) = this.items.first() {
            let len = match item {
                Item::Bytes(b) => b.len(),
                Item::Repeat(_, n) => *n,
            };
            if this.at < len {
                break;
            }
            this.items = &this.items[1..];
            this.at = 0;
            this.chunk = 0;
        }
        let Some(item) = this.items.first() else {
            return Poll::Ready(Ok(&[]));
        };
        if this.chunk == 0 {
            // Runs come in pieces 128 times larger: the same cuts at a thousandth of
            // the calls, so streams past the cap stay cheap enough to fuzz.
            this.chunk = match item {
                Item::Bytes(_) => this.chunks.next_len(),
                Item::Repeat(..) => this.chunks.next_len() * 128,
            };
        }
        Poll::Ready(Ok(match item {
            Item::Bytes(b) => {
                let end = (this.at + this.chunk).min(b.len());
                &b[this.at..end]
            }
            Item::Repeat(byte, n) => {
                let len = this.chunk.min(n - this.at).min(RUN);
                if this.run.first() != Some(byte) || this.run.len() < len {
                    this.run.clear();
                    this.run.resize(RUN, *byte);
                }
                &this.run[..len]
            }
        }))
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        let this = self.get_mut();
        this.at += amt;
        this.chunk = this.chunk.saturating_sub(amt);
    }
}

/// Runs a future that never waits (the stream is always ready).
fn ready<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    match future.as_mut().poll(&mut cx) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("the frame reader waited on a ready stream"),
    }
}

/// A frame, small enough to compare: messages by length and a hash.
#[derive(Debug, PartialEq, Eq)]
enum Seen {
    Message(usize, u64),
    TooLarge,
    BadHeader(String),
}

fn hash(bytes: &[u8]) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    hasher.write(bytes);
    hasher.finish()
}

fn frames(items: &[Item<'_>], chunks: Chunks) -> Vec<Seen> {
    let mut stream = Stream::new(items, chunks);
    stream.run.resize(RUN, 0);
    let mut reader = FrameReader::new(stream);
    let mut seen = Vec::with_capacity(1024);
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    LARGEST.store(0, Ordering::Relaxed);
    loop {
        let frame = ready(reader.next()).expect("an in-memory stream cannot fail");
        let largest = LARGEST.load(Ordering::Relaxed);
        assert!(
            largest <= MAX_FRAME,
            "one allocation of {largest} bytes, over the {MAX_FRAME}-byte cap"
        );
        let peak = PEAK.load(Ordering::Relaxed) - base;
        assert!(
            peak <= MAX_FRAME + SLACK,
            "{peak} bytes alive at once, over the {MAX_FRAME}-byte cap"
        );
        match frame {
            Frame::Eof => break,
            Frame::Message(bytes) => {
                assert!(bytes.len() <= MAX_FRAME);
                if seen.len() < 1024 {
                    seen.push(Seen::Message(bytes.len(), hash(&bytes)));
                }
            }
            Frame::TooLarge => {
                if seen.len() < 1024 {
                    seen.push(Seen::TooLarge);
                }
            }
            Frame::BadHeader(why) => {
                if seen.len() < 1024 {
                    seen.push(Seen::BadHeader(why));
                }
            }
        }
    }
    seen
}

fuzz_target!(|bytes: &[u8]| {
    let (seed, data) = match bytes {
        [seed, data @ ..] => (*seed, data),
        [] => (0, bytes),
    };
    let items = items(data);
    // Chunks as small as a byte, and as large as a real stdin buffer delivers.
    let small = frames(&items, Chunks::new(seed, 64));
    let large = frames(&items, Chunks::new(seed, 8 * 1024));
    assert_eq!(small, large, "chunking changed the frames");
});
