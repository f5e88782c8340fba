//! Reading messages from stdin and writing them to stdout.
//!
//! Input is newline-delimited JSON; `Content-Length:` framing (the pre-standard stdio form)
//! is accepted too, for input only. Output is always one compact JSON value per line.
//! A frame over [`MAX_FRAME`] is skipped without being buffered, and reported so the
//! server can answer with an error and keep serving.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The largest message accepted, in bytes.
pub const MAX_FRAME: usize = 8 * 1024 * 1024;

#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    Message(Vec<u8>),
    /// A frame larger than [`MAX_FRAME`]; its bytes were discarded.
    TooLarge,
    /// A `Content-Length` header block we could not understand.
    BadHeader(String),
    Eof,
}

pub struct FrameReader<R> {
    inner: R,
}

impl<R: AsyncBufRead + Unpin> FrameReader<R> {
    pub fn new(inner: R) -> Self {
        FrameReader { inner }
    }

    /// The reader, with whatever it has buffered past the last frame.
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// The next frame, skipping blank lines between messages.
    pub async fn next(&mut self) -> std::io::Result<Frame> {
        loop {
            let line = match self.line().await? {
                Line::Eof => return Ok(Frame::Eof),
                Line::TooLong => return Ok(Frame::TooLarge),
                Line::Text(line) => line,
            };
            let trimmed = line.trim_ascii();
            if trimmed.is_empty() {
                continue;
            }
            if is_content_length(trimmed) {
                return self.content_length_body(trimmed).await;
            }
            return Ok(Frame::Message(line));
        }
    }

    /// Reads one line (without its terminator), refusing to buffer more than MAX_FRAME.
    async fn line(&mut self) -> std::io::Result<Line> {
        let mut line = Vec::new();
        let mut too_long = false;
        loop {
            let buf = self.inner.fill_buf().await?;
            if buf.is_empty() {
                return Ok(if too_long {
                    Line::TooLong
                } else if line.is_empty() {
                    Line::Eof
                } else {
                    Line::Text(line)
                });
            }
            let (chunk, found) = match buf.iter().position(|b| *b == b'\n') {
                Some(at) => (&buf[..at], Some(at)),
                None => (buf, None),
            };
            if !too_long {
                if line.len() + chunk.len() > MAX_FRAME {
                    too_long = true;
                    line = Vec::new();
                } else {
                    // Grow by doubling as Vec would, but never past the cap: a line just
                    // under it must not reserve nearly twice the cap.
                    let needed = line.len() + chunk.len();
                    if needed > line.capacity() {
                        let target = (line.capacity() * 2).max(needed).min(MAX_FRAME);
                        line.reserve_exact(target - line.len());
                    }
                    line.extend_from_slice(chunk);
                }
            }
            let used = found.map_or(buf.len(), |at| at + 1);
            self.inner.consume(used);
            if found.is_some() {
                return Ok(if too_long {
                    Line::TooLong
                } else {
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                    Line::Text(line)
                });
            }
        }
    }

    async fn content_length_body(&mut self, first: &[u8]) -> std::io::Result<Frame> {
        let mut length = parse_length(first);
        // Further headers (Content-Type, …) until the blank line.
        loop {
            match self.line().await? {
                Line::Eof => return Ok(Frame::Eof),
                Line::TooLong => return Ok(Frame::BadHeader("header line too long".into())),
                Line::Text(line) if line.trim_ascii().is_empty() => break,
                Line::Text(line) if is_content_length(line.trim_ascii()) => {
                    length = parse_length(line.trim_ascii());
                }
                Line::Text(_) => {}
            }
        }
        let Some(length) = length else {
            return Ok(Frame::BadHeader("Content-Length is not a number".into()));
        };
        let keep = length <= MAX_FRAME;
        let mut body = Vec::with_capacity(if keep { length } else { 0 });
        let mut left = length;
        while left > 0 {
            let buf = self.inner.fill_buf().await?;
            if buf.is_empty() {
                return Ok(Frame::Eof);
            }
            let n = buf.len().min(left);
            if keep {
                body.extend_from_slice(&buf[..n]);
            }
            self.inner.consume(n);
            left -= n;
        }
        Ok(if keep {
            Frame::Message(body)
        } else {
            Frame::TooLarge
        })
    }
}

enum Line {
    Text(Vec<u8>),
    TooLong,
    Eof,
}

fn is_content_length(line: &[u8]) -> bool {
    const KEY: &[u8] = b"content-length:";
    line.len() >= KEY.len() && line[..KEY.len()].eq_ignore_ascii_case(KEY)
}

fn parse_length(line: &[u8]) -> Option<usize> {
    std::str::from_utf8(&line[b"content-length:".len()..])
        .ok()?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(input: &[u8]) -> Vec<Frame> {
        let mut reader = FrameReader::new(input);
        let mut out = Vec::new();
        loop {
            let frame = reader.next().await.unwrap();
            if frame == Frame::Eof {
                return out;
            }
            out.push(frame);
        }
    }

    #[tokio::test]
    async fn ndjson_and_content_length_mix() {
        let input = b"{\"a\":1}\r\n\n{\"b\":2}\nContent-Length: 7\r\nContent-Type: x\r\n\r\n{\"c\":3}{\"d\":4}\n{\"e\":5}";
        assert_eq!(
            frames(input).await,
            vec![
                Frame::Message(b"{\"a\":1}".to_vec()),
                Frame::Message(b"{\"b\":2}".to_vec()),
                Frame::Message(b"{\"c\":3}".to_vec()),
                Frame::Message(b"{\"d\":4}".to_vec()),
                Frame::Message(b"{\"e\":5}".to_vec()),
            ]
        );
    }

    #[tokio::test]
    async fn oversize_frames_are_skipped_and_reading_goes_on() {
        let mut input = vec![b'x'; MAX_FRAME + 10];
        input.extend_from_slice(b"\n{\"ok\":1}\n");
        input.extend_from_slice(format!("Content-Length: {}\r\n\r\n", MAX_FRAME + 1).as_bytes());
        input.extend(std::iter::repeat_n(b' ', MAX_FRAME + 1));
        input.extend_from_slice(b"{\"ok\":2}\n");
        assert_eq!(
            frames(&input).await,
            vec![
                Frame::TooLarge,
                Frame::Message(b"{\"ok\":1}".to_vec()),
                Frame::TooLarge,
                Frame::Message(b"{\"ok\":2}".to_vec()),
            ]
        );
    }

    #[tokio::test]
    async fn a_line_just_under_the_cap_never_reserves_beyond_it() {
        // Reads of 3000 bytes make a doubling buffer jump from 6.1 MB to 12.3 MB.
        let mut input = vec![b'x'; MAX_FRAME - 1];
        input.push(b'\n');
        let mut reader = FrameReader::new(tokio::io::BufReader::with_capacity(3000, &input[..]));
        let Frame::Message(line) = reader.next().await.unwrap() else {
            panic!("expected the line back");
        };
        assert_eq!(line.len(), MAX_FRAME - 1);
        assert!(
            line.capacity() <= MAX_FRAME,
            "reserved {} bytes",
            line.capacity()
        );
    }

    #[tokio::test]
    async fn bad_content_length() {
        assert_eq!(
            frames(b"Content-Length: abc\r\n\r\n{}\n").await,
            vec![
                Frame::BadHeader("Content-Length is not a number".into()),
                Frame::Message(b"{}".to_vec())
            ]
        );
    }
}
