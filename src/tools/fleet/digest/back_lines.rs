//! Reading a file's lines from its end, so the newest reflog entries cost the least.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

const CHUNK: usize = 64 * 1024;

/// Lines of a file, last first, read in chunks from the end.
pub(super) struct BackLines {
    file: File,
    /// File offset of `buf[0]`.
    pos: u64,
    /// Unread bytes from `pos` up to the end of the newest line not yet returned.
    buf: Vec<u8>,
    /// True when the byte budget ran out before the start of the file.
    pub(super) stopped: bool,
}

impl BackLines {
    pub(super) fn new(mut file: File) -> std::io::Result<BackLines> {
        let len = file.seek(SeekFrom::End(0))?;
        Ok(BackLines {
            file,
            pos: len,
            buf: Vec::new(),
            stopped: false,
        })
    }

    /// The next older line and its file offset, without its newline.
    pub(super) fn next(&mut self, budget: &mut u64) -> std::io::Result<Option<(u64, Vec<u8>)>> {
        loop {
            if self.buf.last() == Some(&b'\n') {
                // Search for the newline that ends the line before the last one.
                let body = &self.buf[..self.buf.len() - 1];
                if let Some(nl) = body.iter().rposition(|b| *b == b'\n') {
                    let line = body[nl + 1..].to_vec();
                    self.buf.truncate(nl + 1);
                    return Ok(Some((self.pos + nl as u64 + 1, line)));
                }
            } else if let Some(nl) = self.buf.iter().rposition(|b| *b == b'\n') {
                // A last line without its newline.
                let line = self.buf[nl + 1..].to_vec();
                self.buf.truncate(nl + 1);
                return Ok(Some((self.pos + nl as u64 + 1, line)));
            }
            if self.pos == 0 {
                if self.buf.is_empty() {
                    return Ok(None);
                }
                let mut line = std::mem::take(&mut self.buf);
                if line.last() == Some(&b'\n') {
                    line.pop();
                }
                return Ok(Some((0, line)));
            }
            if *budget == 0 {
                self.stopped = true;
                return Ok(None);
            }
            let want = (CHUNK as u64).min(self.pos).min(*budget);
            *budget -= want;
            self.pos -= want;
            self.file.seek(SeekFrom::Start(self.pos))?;
            let mut chunk = vec![0u8; want as usize];
            self.file.read_exact(&mut chunk)?;
            chunk.extend_from_slice(&self.buf);
            self.buf = chunk;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_read_from_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let mut text = String::new();
        for i in 0..5000 {
            text.push_str(&format!("line {i}\n"));
        }
        text.push_str("last without newline");
        std::fs::write(&path, &text).unwrap();
        let mut lines = BackLines::new(File::open(&path).unwrap()).unwrap();
        let mut budget = u64::MAX;
        let mut got = Vec::new();
        while let Some((offset, line)) = lines.next(&mut budget).unwrap() {
            assert!(text.as_bytes()[offset as usize..].starts_with(&line));
            got.push(String::from_utf8(line).unwrap());
        }
        assert_eq!(got.len(), 5001);
        assert_eq!(got[0], "last without newline");
        assert_eq!(got[1], "line 4999");
        assert_eq!(got[5000], "line 0");

        let mut small = 100;
        let mut lines = BackLines::new(File::open(&path).unwrap()).unwrap();
        let mut count = 0;
        while lines.next(&mut small).unwrap().is_some() {
            count += 1;
        }
        assert!(lines.stopped);
        assert!(count < 20);
    }
}
