//! `git diff` patch text, read as a stream with a byte budget.
//!
//! The patch itself is passed through, not interpreted: [`Patch`] keeps its first bytes,
//! then only counts, so memory stays flat however large the diff is. It looks at line
//! starts for one thing, git's stanza for a binary change (`diff.c`, `builtin_diff`):
//!
//! ```text
//! binary := "Binary files " old " and " new " differ" LF
//! old    := "a/" path | "/dev/null"          new := "b/" path | "/dev/null"
//! ```
//!
//! (the prefixes follow `diff.mnemonicPrefix`, so any one-letter prefix is accepted; a
//! side is C-quoted when its name holds control characters, `"` or `\`; with
//! `diff.noprefix` the stanza is counted but not named). Counting stops at a byte budget or a time budget, after which totals are
//! lower bounds.

use std::time::{Duration, Instant};

use crate::process::{Flow, Sink};

const BINARY_PREFIX: &[u8] = b"Binary files ";
/// Longest binary stanza we look at; longer ones are counted but not named.
const BINARY_LINE_CAP: usize = 8 * 1024;

/// Keeps up to `keep` bytes of patch text and counts everything up to a budget.
#[derive(Debug)]
pub struct Patch {
    /// The first bytes of the patch (one byte more than the caller keeps, so the cut can
    /// tell whether the kept part ended on a line boundary).
    pub kept: Vec<u8>,
    keep: usize,
    /// Bytes and newlines seen so far.
    pub total_bytes: u64,
    pub total_lines: u64,
    /// True when counting stopped before git finished.
    pub stopped: bool,
    /// Paths from `Binary files … differ` lines, at most `max_binary`.
    pub binary_files: Vec<Vec<u8>>,
    pub binary_total: u64,
    max_binary: usize,
    count_budget: u64,
    started: Instant,
    time_budget: Duration,
    at_line_start: bool,
    /// The current line while it may be a binary stanza.
    line: Option<Vec<u8>>,
}

impl Patch {
    pub fn new(keep: usize, count_budget: u64, time_budget: Duration) -> Self {
        Patch {
            kept: Vec::new(),
            keep,
            total_bytes: 0,
            total_lines: 0,
            stopped: false,
            binary_files: Vec::new(),
            binary_total: 0,
            max_binary: 1000,
            count_budget,
            started: Instant::now(),
            time_budget,
            at_line_start: true,
            line: None,
        }
    }

    fn scan(&mut self, chunk: &[u8]) {
        let mut rest = chunk;
        while !rest.is_empty() {
            if self.at_line_start {
                self.line = Some(Vec::new());
                self.at_line_start = false;
            }
            let (part, ended) = match rest.iter().position(|b| *b == b'\n') {
                Some(at) => (&rest[..at], true),
                None => (rest, false),
            };
            if let Some(line) = self.line.as_mut() {
                let room = BINARY_LINE_CAP.saturating_sub(line.len());
                line.extend_from_slice(&part[..part.len().min(room)]);
                let checked = line.len().min(BINARY_PREFIX.len());
                if line[..checked] != BINARY_PREFIX[..checked] || part.len() > room {
                    self.line = None;
                }
            }
            if ended {
                self.total_lines += 1;
                self.at_line_start = true;
                if let Some(line) = self.line.take() {
                    self.binary_line(&line);
                }
                rest = &rest[part.len() + 1..];
            } else {
                rest = &[];
            }
        }
    }

    fn binary_line(&mut self, line: &[u8]) {
        let Some(body) = line
            .strip_prefix(BINARY_PREFIX)
            .and_then(|b| b.strip_suffix(b" differ"))
        else {
            return;
        };
        self.binary_total += 1;
        if self.binary_files.len() >= self.max_binary {
            return;
        }
        if let Some(path) = binary_path(body) {
            self.binary_files.push(path);
        }
    }

    /// The kept text cut to at most `max_bytes` and `max_lines`, on a line boundary when
    /// one exists, else on a UTF-8 character boundary; and whether anything was cut.
    pub fn cut(&self, max_bytes: usize, max_lines: Option<u64>) -> (&[u8], bool) {
        let mut end = self.kept.len();
        if let Some(max) = max_lines {
            if let Some(at) = self
                .kept
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .nth(max.saturating_sub(1) as usize)
                .map(|(i, _)| i + 1)
            {
                end = end.min(at);
            }
        }
        if end > max_bytes {
            end = match self.kept[..max_bytes].iter().rposition(|b| *b == b'\n') {
                Some(at) => at + 1,
                None => utf8_floor(&self.kept[..max_bytes]),
            };
        }
        let cut = end < self.kept.len() || self.stopped || self.total_bytes > end as u64;
        (&self.kept[..end], cut)
    }
}

/// The largest prefix length of `bytes` that does not split a UTF-8 sequence.
fn utf8_floor(bytes: &[u8]) -> usize {
    let mut end = bytes.len();
    // A sequence is at most four bytes: step back over continuation bytes to its lead.
    for back in 1..=3.min(bytes.len()) {
        let b = bytes[bytes.len() - back];
        if b & 0xC0 == 0x80 {
            continue;
        }
        let width = match b {
            0x00..=0x7F => 1,
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        if width > back {
            end = bytes.len() - back;
        }
        break;
    }
    end
}

/// The path of a binary stanza: the new side unless it is `/dev/null`.
fn binary_path(body: &[u8]) -> Option<Vec<u8>> {
    // Paths may themselves contain " and "; the split that leaves two well-formed sides
    // is the one git wrote.
    let mut from = 0;
    while let Some(at) = find(&body[from..], b" and ").map(|i| i + from) {
        if let (Some(old), Some(new)) = (side(&body[..at]), side(&body[at + 5..])) {
            return new.or(old);
        }
        from = at + 1;
    }
    None
}

/// One side of a binary stanza: `/dev/null` (`Some(None)`), a prefixed path, or a
/// C-quoted prefixed path (git quotes names with control characters, `"` or `\`).
fn side(text: &[u8]) -> Option<Option<Vec<u8>>> {
    if text == b"/dev/null" {
        return Some(None);
    }
    let path = if text.first() == Some(&b'"') {
        unquote(text)?
    } else {
        text.to_vec()
    };
    prefixed(&path).then(|| Some(path[2..].to_vec()))
}

fn prefixed(side: &[u8]) -> bool {
    matches!(side, [p, b'/', _, ..] if p.is_ascii_lowercase())
}

/// Undoes git's C-style quoting (`quote_c_style`): the whole text must be one quoted
/// string.
fn unquote(text: &[u8]) -> Option<Vec<u8>> {
    let inner = text.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    let mut out = Vec::with_capacity(inner.len());
    let mut bytes = inner.iter().copied();
    while let Some(b) = bytes.next() {
        match b {
            b'"' => return None,
            b'\\' => {
                let escaped = match bytes.next()? {
                    b'a' => 0x07,
                    b'b' => 0x08,
                    b't' => b'\t',
                    b'n' => b'\n',
                    b'v' => 0x0b,
                    b'f' => 0x0c,
                    b'r' => b'\r',
                    b'"' => b'"',
                    b'\\' => b'\\',
                    d @ b'0'..=b'3' => {
                        let mut value = u32::from(d - b'0');
                        for _ in 0..2 {
                            let next = bytes.next()?;
                            if !(b'0'..=b'7').contains(&next) {
                                return None;
                            }
                            value = value * 8 + u32::from(next - b'0');
                        }
                        value as u8
                    }
                    _ => return None,
                };
                out.push(escaped);
            }
            other => out.push(other),
        }
    }
    Some(out)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

impl Sink for Patch {
    fn accept(&mut self, chunk: &[u8]) -> Flow {
        let room = (self.keep + 1).saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&chunk[..chunk.len().min(room)]);
        self.total_bytes += chunk.len() as u64;
        self.scan(chunk);
        let past_kept = self.kept.len() > self.keep;
        if past_kept
            && (self.total_bytes >= self.count_budget || self.started.elapsed() > self.time_budget)
        {
            self.stopped = true;
            return Flow::Enough;
        }
        Flow::More
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captured from `git diff --no-color --no-ext-diff --no-textconv -M HEAD~1 HEAD`
    /// (git 2.47, `core.quotePath=false`): a rename, a binary change, a non-UTF-8 name.
    const REAL: &[u8] = b"diff --git a/a.txt b/b c.txt\nsimilarity index 100%\nrename from a.txt\n\
rename to b c.txt\ndiff --git a/bin.dat b/bin.dat\nindex d5d0b8b..5d9eba2 100644\n\
Binary files a/bin.dat and b/bin.dat differ\ndiff --git a/caf\xe9.txt b/caf\xe9.txt\n\
new file mode 100644\nindex 0000000..8ba3a16\n--- /dev/null\n+++ b/caf\xe9.txt\n@@ -0,0 +1 @@\n+n\n\
diff --git a/gone and done.bin b/gone and done.bin\ndeleted file mode 100644\n\
Binary files a/gone and done.bin and /dev/null differ\n";

    fn feed(patch: &mut Patch, bytes: &[u8], step: usize) {
        for chunk in bytes.chunks(step) {
            if patch.accept(chunk) == Flow::Enough {
                break;
            }
        }
    }

    #[test]
    fn real_output_in_any_chunking() {
        for step in [1, 3, 7, 64, 4096] {
            let mut patch = Patch::new(1 << 20, u64::MAX, Duration::from_secs(60));
            feed(&mut patch, REAL, step);
            assert_eq!(patch.total_bytes, REAL.len() as u64);
            assert_eq!(patch.total_lines, 17);
            let names: Vec<_> = patch
                .binary_files
                .iter()
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .collect();
            assert_eq!(names, ["bin.dat", "gone and done.bin"], "step {step}");
            let (text, cut) = patch.cut(1 << 20, None);
            assert_eq!((text, cut), (REAL, false));
        }
    }

    #[test]
    fn cuts_on_lines_then_characters() {
        let mut patch = Patch::new(40, u64::MAX, Duration::from_secs(60));
        feed(&mut patch, REAL, 5);
        assert_eq!(patch.total_bytes, REAL.len() as u64, "counting goes on");
        let (text, cut) = patch.cut(40, None);
        assert!(cut);
        assert_eq!(text, b"diff --git a/a.txt b/b c.txt\n");
        let (text, _) = patch.cut(40, Some(1));
        assert_eq!(text, b"diff --git a/a.txt b/b c.txt\n");

        let giant = "é".repeat(50);
        let mut patch = Patch::new(9, u64::MAX, Duration::from_secs(60));
        feed(&mut patch, giant.as_bytes(), 4);
        let (text, cut) = patch.cut(9, None);
        assert!(cut);
        assert_eq!(text, "éééé".as_bytes());
    }

    #[test]
    fn counting_stops_at_the_budget() {
        let mut patch = Patch::new(10, 100, Duration::from_secs(60));
        let line = [b'x'; 63];
        let accepted = (1..=10)
            .find(|_| patch.accept(&line) == Flow::Enough)
            .expect("stops");
        assert_eq!(accepted, 2);
        assert!(patch.stopped);
        assert_eq!(patch.total_bytes, 126);
        assert!(patch.kept.len() <= 11);
    }

    #[test]
    fn quoted_binary_names() {
        let mut patch = Patch::new(1000, u64::MAX, Duration::from_secs(60));
        feed(
            &mut patch,
            b"Binary files /dev/null and \"b/tab\\there\\303\\251.bin\" differ\n\
Binary files \"a/q\\\"uote\" and /dev/null differ\n\
Binary files a/x and \"b/bad\\q\" differ\n",
            7,
        );
        assert_eq!(
            patch.binary_files,
            [b"tab\there\xc3\xa9.bin".to_vec(), b"q\"uote".to_vec()]
        );
        assert_eq!(patch.binary_total, 3);
    }

    #[test]
    fn malformed_binary_lines_are_counted_not_named() {
        let mut patch = Patch::new(100, u64::MAX, Duration::from_secs(60));
        feed(&mut patch, b"Binary files differ\nBinary files x\n", 2);
        assert!(patch.binary_files.is_empty());
        assert_eq!(patch.total_lines, 2);
    }
}
