//! `git diff` patch text, read as a stream with a byte budget.
//!
//! The patch itself is passed through, not interpreted: [`Patch`] keeps its first bytes,
//! then only counts, so memory stays flat however large the diff is. It looks at a few
//! line starts to name binary changes (`diff.c`, `builtin_diff` and combined diffs):
//!
//! ```text
//! binary   := "Binary files " old " and " new " differ" LF
//!           | "Binary files differ" LF         (a combined diff: the `diff --cc` path)
//! old      := "a/" path | "/dev/null"          new := "b/" path | "/dev/null"
//! header   := "diff --git " … | "diff --cc " path | "diff --combined " path
//! rename   := ("rename to " | "copy to ") path
//! ```
//!
//! (the prefixes follow `diff.mnemonicPrefix`, so any one-letter prefix is accepted; a
//! name is C-quoted when it holds control characters, `"`, `\` or, with
//! `core.quotePath`, bytes past ASCII; with `diff.noprefix` the stanza is counted but not
//! named). A name may itself hold `" and b/"`, so the split is chosen with what the
//! headers say: the rename target, else the one split whose two sides name the same path.
//! Counting stops at a byte budget or a time budget, after which totals are lower bounds.

use std::time::{Duration, Instant};

use crate::sink::{Flow, Sink};

const BINARY_PREFIX: &[u8] = b"Binary files ";
const GIT_HEADER: &[u8] = b"diff --git ";
const CC_HEADERS: [&[u8]; 2] = [b"diff --cc ", b"diff --combined "];
const RENAME_TARGETS: [&[u8]; 2] = [b"rename to ", b"copy to "];
/// Line starts that are looked at; everything else is only counted.
const WATCHED: [&[u8]; 6] = [
    BINARY_PREFIX,
    GIT_HEADER,
    CC_HEADERS[0],
    CC_HEADERS[1],
    RENAME_TARGETS[0],
    RENAME_TARGETS[1],
];
/// Longest watched line we look at; longer ones are counted but not named.
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
    /// The current line while it may be a watched one.
    line: Option<Vec<u8>>,
    /// The path of the current combined-diff stanza (`diff --cc`).
    combined: Option<Vec<u8>>,
    /// The rename or copy target of the current stanza.
    target: Option<Vec<u8>>,
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
            combined: None,
            target: None,
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
                let watched = WATCHED.iter().any(|w| {
                    let checked = line.len().min(w.len());
                    line[..checked] == w[..checked]
                });
                if !watched || part.len() > room {
                    self.line = None;
                }
            }
            if ended {
                self.total_lines += 1;
                self.at_line_start = true;
                if let Some(line) = self.line.take() {
                    self.watched_line(&line);
                }
                rest = &rest[part.len() + 1..];
            } else {
                rest = &[];
            }
        }
    }

    fn watched_line(&mut self, line: &[u8]) {
        if line.starts_with(GIT_HEADER) {
            self.combined = None;
            self.target = None;
        } else if let Some(rest) = CC_HEADERS.iter().find_map(|h| line.strip_prefix(*h)) {
            self.combined = Some(name(rest));
            self.target = None;
        } else if let Some(rest) = RENAME_TARGETS.iter().find_map(|h| line.strip_prefix(*h)) {
            self.target = Some(name(rest));
        } else if line == b"Binary files differ" {
            let path = self.combined.clone();
            self.binary(path);
        } else if let Some(body) = line
            .strip_prefix(BINARY_PREFIX)
            .and_then(|b| b.strip_suffix(b" differ"))
        {
            let path = binary_path(body, self.target.as_deref());
            self.binary(path);
        }
    }

    fn binary(&mut self, path: Option<Vec<u8>>) {
        self.binary_total += 1;
        if self.binary_files.len() < self.max_binary
            && let Some(path) = path
        {
            self.binary_files.push(path);
        }
    }

    /// The kept text cut to at most `max_bytes` and `max_lines`, always on a line boundary
    /// (nothing at all when the first line alone is longer), and whether anything was cut.
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
            end = self.kept[..max_bytes]
                .iter()
                .rposition(|b| *b == b'\n')
                .map_or(0, |at| at + 1);
        }
        let cut = end < self.kept.len() || self.stopped || self.total_bytes > end as u64;
        (&self.kept[..end], cut)
    }
}

/// One side of a binary stanza: a path, or `None` for `/dev/null`.
type Side = Option<Vec<u8>>;

/// A path as a header line gives it: C-quoted or as is.
fn name(text: &[u8]) -> Vec<u8> {
    if text.first() == Some(&b'"') {
        unquote(text).unwrap_or_else(|| text.to_vec())
    } else {
        text.to_vec()
    }
}

/// The path of a binary stanza: the new side unless it is `/dev/null`. `target` is the
/// stanza's rename or copy target, if any.
fn binary_path(body: &[u8], target: Option<&[u8]>) -> Option<Vec<u8>> {
    // Every split at " and " that leaves two well-formed sides; names may hold " and ".
    let splits: Vec<(Side, Side)> = (0..body.len())
        .filter(|at| body[*at..].starts_with(b" and "))
        .filter_map(|at| Some((side(&body[..at])?, side(&body[at + 5..])?)))
        .collect();
    let pick = |(old, new): &(Side, Side)| new.clone().or(old.clone());
    // A side that is /dev/null cannot be part of a name.
    if let Some(found) = splits.iter().find(|(o, n)| o.is_none() || n.is_none()) {
        return pick(found);
    }
    if let Some(target) = target
        && let Some(found) = splits.iter().find(|(_, n)| n.as_deref() == Some(target))
    {
        return pick(found);
    }
    // Without a rename both sides name the same path.
    if let Some(found) = splits.iter().find(|(o, n)| o == n) {
        return pick(found);
    }
    splits.first().and_then(pick)
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

        // A first line longer than the budget leaves nothing rather than half a line.
        let giant = "é".repeat(50);
        let mut patch = Patch::new(9, u64::MAX, Duration::from_secs(60));
        feed(&mut patch, giant.as_bytes(), 4);
        let (text, cut) = patch.cut(9, None);
        assert!(cut);
        assert_eq!(text, b"");
        let mut patch = Patch::new(40, u64::MAX, Duration::from_secs(60));
        feed(&mut patch, REAL, 3);
        assert_eq!(patch.cut(10, None), (&b""[..], true));
    }

    #[test]
    fn names_holding_and_b_slash() {
        // Captured from `git diff --cached -M` (git 2.47): `d and b/e` deleted, `p and b/q`
        // modified, `x and b/y` renamed to `x and b/z`, all with binary contents.
        let out = b"diff --git a/d and b/e b/d and b/e\ndeleted file mode 100644\n\
index 20b5be9..0000000\nBinary files a/d and b/e and /dev/null differ\n\
diff --git a/p and b/q b/p and b/q\nindex 20b5be9..e85e8e7 100644\n\
Binary files a/p and b/q and b/p and b/q differ\n\
diff --git a/x and b/y b/x and b/z\nsimilarity index 99%\nrename from x and b/y\n\
rename to x and b/z\nindex b131c58..bc76780 100644\n\
Binary files a/x and b/y and b/x and b/z differ\n";
        for step in [1, 5, 4096] {
            let mut patch = Patch::new(1 << 20, u64::MAX, Duration::from_secs(60));
            feed(&mut patch, out, step);
            assert_eq!(
                patch.binary_files,
                [
                    b"d and b/e".to_vec(),
                    b"p and b/q".to_vec(),
                    b"x and b/z".to_vec()
                ],
                "step {step}"
            );
        }
    }

    #[test]
    fn binary_files_in_a_combined_diff() {
        // The first and last stanzas are captured from `git diff` during a conflicted merge
        // (git 2.47); the middle one has the same shape with a C-quoted name.
        let out = b"diff --cc bin.dat
index 0d84b84,5db9557..0000000
Binary files differ
\
diff --cc \"q\\303\\251.bin\"
index 1,2..0
Binary files differ
\
diff --cc t
index 28ce6a8,13e7564..0000000
--- a/t
+++ b/t
@@@ -1,1 -1,1 +1,5 @@@
";
        let mut patch = Patch::new(1 << 20, u64::MAX, Duration::from_secs(60));
        feed(&mut patch, out, 3);
        assert_eq!(
            patch.binary_files,
            [b"bin.dat".to_vec(), "qé.bin".as_bytes().to_vec()]
        );
        assert_eq!(patch.binary_total, 2);
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
