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

/// A sink that never stops the child: it keeps the first and the last `cap / 2` bytes
/// and counts the rest. A write's output is a report of what git did — killing git for
/// printing too much would cut the write short after it happened — so the whole stream
/// is read, and the beginning and the end (where git sums up) are what is kept.
#[derive(Debug)]
pub struct HeadTail {
    pub head: Vec<u8>,
    /// The last bytes seen, in a ring of `cap - cap / 2` bytes starting at `start`.
    tail: Vec<u8>,
    start: usize,
    cap: usize,
    /// Every byte the child wrote.
    pub total: u64,
}

impl HeadTail {
    pub fn new(cap: usize) -> Self {
        HeadTail {
            head: Vec::new(),
            tail: Vec::new(),
            start: 0,
            cap,
            total: 0,
        }
    }

    /// How many bytes between the head and the tail were left out.
    pub fn omitted(&self) -> u64 {
        self.total - (self.head.len() + self.tail.len()) as u64
    }

    /// The bytes kept, with a line saying how many were left out between head and tail.
    pub fn text(&self) -> Vec<u8> {
        let mut out = self.head.clone();
        if self.omitted() > 0 {
            out.extend_from_slice(
                format!("\n[… {} bytes of output left out …]\n", self.omitted()).as_bytes(),
            );
        }
        out.extend_from_slice(&self.tail[self.start..]);
        out.extend_from_slice(&self.tail[..self.start]);
        out
    }
}

impl Sink for HeadTail {
    fn accept(&mut self, mut chunk: &[u8]) -> Flow {
        self.total += chunk.len() as u64;
        let head_cap = self.cap / 2;
        let room = head_cap.saturating_sub(self.head.len());
        let take = room.min(chunk.len());
        self.head.extend_from_slice(&chunk[..take]);
        chunk = &chunk[take..];
        let ring = self.cap - head_cap;
        if ring == 0 || chunk.is_empty() {
            return Flow::More;
        }
        if chunk.len() >= ring {
            self.tail.clear();
            self.tail.extend_from_slice(&chunk[chunk.len() - ring..]);
            self.start = 0;
            return Flow::More;
        }
        for &b in chunk {
            if self.tail.len() < ring {
                self.tail.push(b);
            } else {
                self.tail[self.start] = b;
                self.start = (self.start + 1) % ring;
            }
        }
        Flow::More
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_tail_reads_everything_and_keeps_both_ends() {
        let mut sink = HeadTail::new(8);
        for chunk in [&b"abc"[..], b"defghij", b"kl", b"mnopqrstuvwxyz"] {
            assert_eq!(sink.accept(chunk), Flow::More);
        }
        assert_eq!(sink.total, 26);
        assert_eq!(sink.omitted(), 18);
        assert_eq!(
            String::from_utf8(sink.text()).unwrap(),
            "abcd\n[… 18 bytes of output left out …]\nwxyz"
        );
        let mut small = HeadTail::new(8);
        small.accept(b"abcdef");
        small.accept(b"g");
        assert_eq!(small.text(), b"abcdefg");
    }
}
