//! Taking bytes as they arrive, without holding more than one chooses to.
//!
//! A leaf both sides share: `process` feeds a child's stdout to a [`Sink`], and the
//! parsers in `parse` are sinks, so neither has to know the other.

/// What a [`Sink`] wants after a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    More,
    /// Stop reading and kill the child: the sink has all it will keep.
    Enough,
}

/// Receives a child's stdout, chunk by chunk, without holding more than it chooses to.
pub trait Sink: Send + 'static {
    fn accept(&mut self, chunk: &[u8]) -> Flow;
}

/// A sink that keeps the first `cap` bytes and stops the child at `cap + 1`.
#[derive(Debug)]
pub struct Capped {
    pub bytes: Vec<u8>,
    pub cap: usize,
    pub truncated: bool,
}

impl Capped {
    pub fn new(cap: usize) -> Self {
        Capped {
            bytes: Vec::new(),
            cap,
            truncated: false,
        }
    }
}

impl Sink for Capped {
    fn accept(&mut self, chunk: &[u8]) -> Flow {
        let room = self.cap - self.bytes.len();
        if chunk.len() > room {
            self.bytes.extend_from_slice(&chunk[..room]);
            self.truncated = true;
            Flow::Enough
        } else {
            self.bytes.extend_from_slice(chunk);
            Flow::More
        }
    }
}
