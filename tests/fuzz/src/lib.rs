//! What the fuzz targets share: parameters read off the front of an input, and feeding
//! bytes to a streaming parser in arbitrary chunks.
//!
//! Every parser input has the same layout, so one seed format serves every target:
//!
//! ```text
//! input := param seed data
//! ```
//!
//! `param` sets the parser's caps (how many entries it keeps), `seed` the chunk sizes the
//! data arrives in. A streaming parser must give the same answer however its input is
//! chunked, so each target parses the data twice, whole and chunked, and compares.

use std::fmt::Debug;

use gitward::parse::{ParseError, RecordParser, Records};
use gitward::process::{Flow, Sink};

/// A fuzz input split into its parameter byte, chunking seed and data.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    pub param: u8,
    pub seed: u8,
    pub data: &'a [u8],
}

impl<'a> Input<'a> {
    pub fn split(bytes: &'a [u8]) -> Input<'a> {
        match bytes {
            [param, seed, data @ ..] => Input {
                param: *param,
                seed: *seed,
                data,
            },
            _ => Input {
                param: 0,
                seed: 0,
                data: bytes,
            },
        }
    }

    /// A small cap (0–15): small enough that inputs reach the truncation paths.
    pub fn max(&self) -> usize {
        usize::from(self.param & 0x0f)
    }
}

/// Chunk lengths in `1..=limit`, pseudo-random from a seed (xorshift), so a seed stands
/// for one reproducible way of cutting the stream.
#[derive(Debug, Clone)]
pub struct Chunks {
    state: u32,
    limit: usize,
}

impl Chunks {
    pub fn new(seed: u8, limit: usize) -> Self {
        Chunks {
            state: 0x9e37_79b9 ^ u32::from(seed).wrapping_mul(0x0101_0101),
            limit: limit.max(1),
        }
    }

    pub fn next_len(&mut self) -> usize {
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.state = x;
        1 + (x as usize) % self.limit
    }
}

/// Feeds `data` to `sink` in chunks until it has all or asks to stop; true when it took
/// everything (git ran to the end).
pub fn feed<S: Sink>(sink: &mut S, data: &[u8], chunks: Option<&mut Chunks>) -> bool {
    let Some(chunks) = chunks else {
        return data.is_empty() || sink.accept(data) == Flow::More;
    };
    let mut rest = data;
    while !rest.is_empty() {
        let n = chunks.next_len().min(rest.len());
        let (head, tail) = rest.split_at(n);
        if sink.accept(head) == Flow::Enough {
            return false;
        }
        rest = tail;
    }
    true
}

/// Parses NUL-terminated records whole and chunked; both must agree. Returns the parser
/// (or the error) of the whole-buffer run for further checks.
pub fn records<P: RecordParser + Debug>(
    make: impl Fn() -> P,
    input: &Input,
) -> Result<P, ParseError> {
    let mut whole = Records::new(make());
    let complete = feed(&mut whole, input.data, None);
    let whole = whole.finish(complete);

    let mut chunked = Records::new(make());
    let mut chunks = Chunks::new(input.seed, 64);
    let complete = feed(&mut chunked, input.data, Some(&mut chunks));
    let chunked = chunked.finish(complete);

    assert_eq!(
        format!("{whole:?}"),
        format!("{chunked:?}"),
        "chunking changed the result"
    );
    whole
}
