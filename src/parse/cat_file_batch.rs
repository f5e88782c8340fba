//! `git cat-file --batch`: object contents for object ids fed on stdin.
//!
//! Grammar (git-cat-file(1), "BATCH OUTPUT"), for each input line:
//!
//! ```text
//! <oid> SP <type> SP <size> LF <contents> LF
//! <object> SP missing LF
//! <object> SP ambiguous LF
//! ```
//!
//! `<size>` is the exact byte length of `<contents>`, which may hold any byte. [`Batch`]
//! is a process sink: it keeps at most `keep` bytes of each object (and at most `budget`
//! bytes in all) while reading, and drops the rest as it streams past, so a large blob
//! never sits in memory.

use super::ParseError;
use crate::model::Oid;
use crate::sink::{Flow, Sink};

/// Longest header line we accept; real ones are under 100 bytes.
const MAX_HEADER: usize = 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object {
    pub oid: Oid,
    /// `blob`, `tree`, `commit` or `tag`.
    pub kind: String,
    /// The object's full size.
    pub size: u64,
    /// The first bytes of its contents, at most what the cap allowed.
    pub bytes: Vec<u8>,
}

impl Object {
    pub fn truncated(&self) -> bool {
        (self.bytes.len() as u64) < self.size
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    Found(Object),
    /// `missing` or `ambiguous`, with the name as echoed.
    Absent {
        name: String,
        reason: String,
    },
}

#[derive(Debug)]
enum State {
    Header,
    Body { left: u64 },
    Newline,
}

#[derive(Debug)]
pub struct Batch {
    pub answers: Vec<Answer>,
    keep: usize,
    budget: usize,
    state: State,
    header: Vec<u8>,
    offset: usize,
    pub error: Option<ParseError>,
}

impl Batch {
    /// Keeps up to `keep` bytes of each object and `budget` bytes overall.
    pub fn new(keep: usize, budget: usize) -> Self {
        Batch {
            answers: Vec::new(),
            keep,
            budget,
            state: State::Header,
            header: Vec::new(),
            offset: 0,
            error: None,
        }
    }

    /// The answers, or the first error; `complete` says git ran to the end.
    pub fn finish(self, complete: bool) -> Result<Vec<Answer>, ParseError> {
        if let Some(err) = self.error {
            return Err(err);
        }
        if complete && (!matches!(self.state, State::Header) || !self.header.is_empty()) {
            return Err(ParseError::new(self.offset, "output ends inside an object"));
        }
        Ok(self.answers)
    }

    /// Parses a complete buffer in one go.
    pub fn parse_all(keep: usize, budget: usize, bytes: &[u8]) -> Result<Vec<Answer>, ParseError> {
        let mut batch = Batch::new(keep, budget);
        batch.accept(bytes);
        batch.finish(true)
    }

    fn header(&mut self, start: usize) -> Result<(), ParseError> {
        let line = std::str::from_utf8(&self.header)
            .map_err(|_| ParseError::new(start, "object header is not ASCII"))?;
        let fields: Vec<&str> = line.split(' ').collect();
        match fields.as_slice() {
            [name, reason @ ("missing" | "ambiguous")] => {
                self.answers.push(Answer::Absent {
                    name: (*name).to_owned(),
                    reason: (*reason).to_owned(),
                });
                self.state = State::Header;
            }
            [oid, kind @ ("blob" | "tree" | "commit" | "tag"), size] => {
                let oid = Oid::parse(oid)
                    .ok_or_else(|| ParseError::new(start, format!("bad object id {oid:?}")))?;
                let size: u64 = size
                    .parse()
                    .map_err(|_| ParseError::new(start, format!("bad object size {size:?}")))?;
                self.answers.push(Answer::Found(Object {
                    oid,
                    kind: (*kind).to_owned(),
                    size,
                    bytes: Vec::new(),
                }));
                self.state = if size == 0 {
                    State::Newline
                } else {
                    State::Body { left: size }
                };
            }
            _ => {
                return Err(ParseError::new(
                    start,
                    format!("unexpected object header {line:?}"),
                ));
            }
        }
        self.header.clear();
        Ok(())
    }

    fn step(&mut self, mut chunk: &[u8]) -> Result<(), ParseError> {
        while !chunk.is_empty() {
            match self.state {
                State::Header => {
                    let nl = chunk.iter().position(|b| *b == b'\n');
                    let take = nl.unwrap_or(chunk.len());
                    if self.header.len() + take > MAX_HEADER {
                        // Where the header starts, not where the chunk that overflowed it
                        // does: the offset must not depend on how git's output arrived.
                        let start = self.offset - self.header.len();
                        return Err(ParseError::new(start, "object header too long"));
                    }
                    self.header.extend_from_slice(&chunk[..take]);
                    match nl {
                        Some(nl) => {
                            let start = self.offset - (self.header.len() - take);
                            self.offset += nl + 1;
                            chunk = &chunk[nl + 1..];
                            self.header(start)?;
                        }
                        None => {
                            self.offset += take;
                            chunk = &[];
                        }
                    }
                }
                State::Body { left } => {
                    let n = chunk.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                    if let Some(Answer::Found(obj)) = self.answers.last_mut() {
                        let room = self.keep.saturating_sub(obj.bytes.len()).min(self.budget);
                        let kept = n.min(room);
                        obj.bytes.extend_from_slice(&chunk[..kept]);
                        self.budget -= kept;
                    }
                    self.offset += n;
                    chunk = &chunk[n..];
                    let left = left - n as u64;
                    self.state = if left == 0 {
                        State::Newline
                    } else {
                        State::Body { left }
                    };
                }
                State::Newline => {
                    if chunk[0] != b'\n' {
                        return Err(ParseError::new(
                            self.offset,
                            "object contents not followed by a newline",
                        ));
                    }
                    self.offset += 1;
                    chunk = &chunk[1..];
                    self.state = State::Header;
                }
            }
        }
        Ok(())
    }
}

impl Sink for Batch {
    fn accept(&mut self, chunk: &[u8]) -> Flow {
        if self.error.is_some() {
            return Flow::Enough;
        }
        match self.step(chunk) {
            Ok(()) => Flow::More,
            Err(err) => {
                self.error = Some(err);
                Flow::Enough
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real output for a text blob, a blob with a NUL, an unknown id and an empty blob.
    const OUT: &[u8] = b"01e79c32a8c99c557f0757da7cb6d65b3414466d blob 6\n1\n2\n3\n\n\
5b2c3d9a9d0d4e53b06a0ae2b9b23bb4d2d14e5e blob 4\nA\0B\n\n\
0000000000000000000000000000000000000001 missing\n\
e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 blob 0\n\n";

    fn show(answers: &[Answer]) -> Vec<String> {
        answers
            .iter()
            .map(|a| match a {
                Answer::Found(o) => format!(
                    "{} {} {} {:?} truncated={}",
                    o.oid.short(),
                    o.kind,
                    o.size,
                    String::from_utf8_lossy(&o.bytes),
                    o.truncated()
                ),
                Answer::Absent { name, reason } => format!("{name} {reason}"),
            })
            .collect()
    }

    #[test]
    fn objects_whole_and_capped() {
        insta::assert_debug_snapshot!(show(&Batch::parse_all(100, 1000, OUT).unwrap()), @r#"
        [
            "01e79c3 blob 6 \"1\\n2\\n3\\n\" truncated=false",
            "5b2c3d9 blob 4 \"A\\0B\\n\" truncated=false",
            "0000000000000000000000000000000000000001 missing",
            "e69de29 blob 0 \"\" truncated=false",
        ]
        "#);
        insta::assert_debug_snapshot!(show(&Batch::parse_all(2, 3, OUT).unwrap()), @r#"
        [
            "01e79c3 blob 6 \"1\\n\" truncated=true",
            "5b2c3d9 blob 4 \"A\" truncated=true",
            "0000000000000000000000000000000000000001 missing",
            "e69de29 blob 0 \"\" truncated=false",
        ]
        "#);
    }

    #[test]
    fn byte_by_byte_feeding_gives_the_same_answers() {
        let mut batch = Batch::new(100, 1000);
        for b in OUT {
            assert_eq!(batch.accept(std::slice::from_ref(b)), Flow::More);
        }
        assert_eq!(
            batch.finish(true).unwrap(),
            Batch::parse_all(100, 1000, OUT).unwrap()
        );
    }

    #[test]
    fn a_long_header_is_reported_at_its_start_however_it_arrives() {
        let mut long = b"abc missing\n".to_vec();
        long.resize(12 + MAX_HEADER + 10, b'2');
        let whole = Batch::parse_all(10, 10, &long).unwrap_err();
        let mut batch = Batch::new(10, 10);
        for b in &long {
            if batch.accept(std::slice::from_ref(b)) == Flow::Enough {
                break;
            }
        }
        assert_eq!(batch.finish(false).unwrap_err(), whole);
        assert_eq!(whole.offset, 12);
    }

    #[test]
    fn malformed_output_is_an_error() {
        for bad in [
            &b"xyz blob 3\nabc\n"[..],
            b"01e79c32a8c99c557f0757da7cb6d65b3414466d blob x\n",
            b"01e79c32a8c99c557f0757da7cb6d65b3414466d blob 3\nabcX",
            b"01e79c32a8c99c557f0757da7cb6d65b3414466d blob 3\nab",
            b"01e79c32a8c99c557f0757da7cb6d65b3414466d weird 3\nabc\n",
        ] {
            assert!(Batch::parse_all(10, 10, bad).is_err(), "{bad:?}");
        }
    }
}
