//! git's own line diff, read from one `diff --raw -p -z -U0 --full-index` run: the raw
//! records name each file exactly (NUL-separated, never quoted), and the patch that
//! follows, in the same order, says which lines changed. These lines are the ground
//! truth the semantic answer must represent exactly once each.

/// The all-zero id git prints for a side it did not hash (the working tree).
const ZERO: &str = "0000000000000000000000000000000000000000";

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// Status letter: `M`, `A`, `D`, `R`, `C`, `T`, `U`.
    pub status: u8,
    pub old_mode: String,
    pub new_mode: String,
    /// Blob ids; `None` for an absent side or one git did not hash.
    pub old_oid: Option<String>,
    pub new_oid: Option<String>,
    /// The new path (the only one unless renamed or copied).
    pub path: Vec<u8>,
    pub old_path: Vec<u8>,
    pub binary: bool,
    /// git's `-U0` hunks: each a block of changed lines between unchanged ones.
    pub hunks: Vec<Hunk>,
    /// Both sides' whole contents, when the patch holds them (one full-context hunk);
    /// still to be checked against the blob ids before use.
    pub old_text: Option<Vec<u8>>,
    pub new_text: Option<Vec<u8>>,
}

/// One `-U0` hunk: the removed lines from `old_start`, the added ones from `new_start`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: usize,
    pub new_start: usize,
    pub removed: Vec<Vec<u8>>,
    pub added: Vec<Vec<u8>>,
}

/// Output git printed that this reader does not understand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed(pub &'static str);

/// Reads the whole output of `diff --raw -p -z -U0 --full-index`.
pub fn read(out: &[u8]) -> Result<Vec<FileDiff>, Malformed> {
    let (mut files, rest) = raw(out)?;
    let sections = sections(rest);
    let patched: Vec<&mut FileDiff> = files.iter_mut().filter(|f| f.status != b'U').collect();
    if patched.len() != sections.len() {
        return Err(Malformed("raw records and patches do not pair up"));
    }
    for (file, section) in patched.into_iter().zip(sections) {
        section_into(section, file)?;
    }
    Ok(files)
}

fn raw(out: &[u8]) -> Result<(Vec<FileDiff>, &[u8]), Malformed> {
    let mut files = Vec::new();
    let mut fields = out;
    while let Some(rest) = fields.strip_prefix(b":") {
        let (meta, rest) = take_nul(rest)?;
        let meta = std::str::from_utf8(meta).map_err(|_| Malformed("raw record"))?;
        let parts: Vec<&str> = meta.split(' ').collect();
        let [old_mode, new_mode, old_oid, new_oid, status] = parts[..] else {
            return Err(Malformed("raw record"));
        };
        let status = *status.as_bytes().first().ok_or(Malformed("raw status"))?;
        let (first, mut rest) = take_nul(rest)?;
        let (old_path, path) = if matches!(status, b'R' | b'C') {
            let (second, after) = take_nul(rest)?;
            rest = after;
            (first.to_vec(), second.to_vec())
        } else {
            (first.to_vec(), first.to_vec())
        };
        let side =
            |oid: &str, mode: &str| (oid != ZERO && mode != "000000").then(|| oid.to_owned());
        files.push(FileDiff {
            status,
            old_oid: side(old_oid, old_mode),
            new_oid: side(new_oid, new_mode),
            old_mode: old_mode.to_owned(),
            new_mode: new_mode.to_owned(),
            path,
            old_path,
            binary: false,
            hunks: Vec::new(),
            old_text: None,
            new_text: None,
        });
        fields = rest;
    }
    let patch = fields.strip_prefix(b"\0").unwrap_or(fields);
    Ok((files, patch))
}

fn take_nul(bytes: &[u8]) -> Result<(&[u8], &[u8]), Malformed> {
    let at = memchr::memchr(0, bytes).ok_or(Malformed("unterminated raw field"))?;
    Ok((&bytes[..at], &bytes[at + 1..]))
}

/// Splits the patch into one section per `diff --git` header. Content lines always
/// start with ` `, `+`, `-` or `\`, so a header can never be mistaken for one.
fn sections(patch: &[u8]) -> Vec<&[u8]> {
    let mut starts: Vec<usize> = Vec::new();
    let mut at = 0;
    for line in patch.split_inclusive(|b| *b == b'\n') {
        if line.starts_with(b"diff --git ") || line.starts_with(b"diff --cc ") {
            starts.push(at);
        }
        at += line.len();
    }
    starts
        .iter()
        .enumerate()
        .map(|(i, s)| &patch[*s..starts.get(i + 1).copied().unwrap_or(patch.len())])
        .collect()
}

/// One changed block being read: the lines each side numbers before it, then its lines.
struct Block {
    old_before: usize,
    new_before: usize,
    removed: Vec<Vec<u8>>,
    added: Vec<Vec<u8>>,
}

impl Block {
    fn new(old_before: usize, new_before: usize) -> Block {
        Block {
            old_before,
            new_before,
            removed: Vec::new(),
            added: Vec::new(),
        }
    }

    /// The block as git's `-U0` prints it: a side without lines starts at the line
    /// before the change.
    fn into_hunk(self) -> Option<Hunk> {
        if self.removed.is_empty() && self.added.is_empty() {
            return None;
        }
        Some(Hunk {
            old_start: self.old_before + usize::from(!self.removed.is_empty()),
            new_start: self.new_before + usize::from(!self.added.is_empty()),
            removed: self.removed,
            added: self.added,
        })
    }
}

/// Which sides the last line read belongs to, for git's "no newline" marker.
#[derive(Clone, Copy)]
enum Last {
    None,
    Both,
    Old,
    New,
}

fn section_into(section: &[u8], file: &mut FileDiff) -> Result<(), Malformed> {
    let mut lines = section.split_inclusive(|b| *b == b'\n').peekable();
    let (mut old_text, mut new_text) = (Vec::new(), Vec::new());
    let mut whole = true;
    let mut seen = 0;
    while let Some(line) = lines.next() {
        if line.starts_with(b"Binary files ") || line.starts_with(b"GIT binary patch") {
            file.binary = true;
        }
        if !line.starts_with(b"@@ ") {
            continue;
        }
        let (old_start, old_count, new_start, new_count) = hunk_header(line)?;
        seen += 1;
        // Only one hunk from the first line holds a whole side (a full-context patch).
        whole &= seen == 1 && old_start <= 1 && new_start <= 1;
        let mut old_at = old_start - usize::from(old_count > 0 && old_start > 0);
        let mut new_at = new_start - usize::from(new_count > 0 && new_start > 0);
        let (end_old, end_new) = (old_at + old_count, new_at + new_count);
        let mut block = Block::new(old_at, new_at);
        let mut last = Last::None;
        while old_at < end_old
            || new_at < end_new
            || lines.peek().is_some_and(|l| l.starts_with(b"\\"))
        {
            let line = lines.next().ok_or(Malformed("hunk ends early"))?;
            let body = line.strip_suffix(b"\n").unwrap_or(line);
            match body.first() {
                Some(b' ') if old_at < end_old && new_at < end_new => {
                    file.hunks.extend(
                        std::mem::replace(&mut block, Block::new(old_at + 1, new_at + 1))
                            .into_hunk(),
                    );
                    old_at += 1;
                    new_at += 1;
                    push_line(&mut old_text, &body[1..]);
                    push_line(&mut new_text, &body[1..]);
                    last = Last::Both;
                }
                Some(b'-') if old_at < end_old => {
                    old_at += 1;
                    block.removed.push(body[1..].to_vec());
                    push_line(&mut old_text, &body[1..]);
                    last = Last::Old;
                }
                Some(b'+') if new_at < end_new => {
                    new_at += 1;
                    block.added.push(body[1..].to_vec());
                    push_line(&mut new_text, &body[1..]);
                    last = Last::New;
                }
                Some(b'\\') => {
                    if matches!(last, Last::Both | Last::Old) {
                        old_text.pop();
                    }
                    if matches!(last, Last::Both | Last::New) {
                        new_text.pop();
                    }
                    last = Last::None;
                }
                _ => return Err(Malformed("unexpected line in a hunk")),
            }
        }
        file.hunks.extend(block.into_hunk());
    }
    if whole && seen == 1 {
        file.old_text = Some(old_text);
        file.new_text = Some(new_text);
    }
    Ok(())
}

fn push_line(text: &mut Vec<u8>, line: &[u8]) {
    text.extend_from_slice(line);
    text.push(b'\n');
}

/// `@@ -a[,b] +c[,d] @@…` → (a, b, c, d); a missing count means one line.
fn hunk_header(line: &[u8]) -> Result<(usize, usize, usize, usize), Malformed> {
    let bad = Malformed("hunk header");
    let text = std::str::from_utf8(line).map_err(|_| Malformed("hunk header"))?;
    let mut parts = text.split(' ').skip(1);
    let range = |part: Option<&str>, sign: char| -> Option<(usize, usize)> {
        let spec = part?.strip_prefix(sign)?;
        match spec.split_once(',') {
            Some((start, count)) => Some((start.parse().ok()?, count.parse().ok()?)),
            None => Some((spec.parse().ok()?, 1)),
        }
    };
    let (a, b) = range(parts.next(), '-').ok_or(bad.clone())?;
    let (c, d) = range(parts.next(), '+').ok_or(bad)?;
    Ok((a, b, c, d))
}

/// git's own `diff --no-index` of two texts with `args`, for the engine's tests.
#[cfg(test)]
pub(crate) fn git_diff_texts(old: &str, new: &str, args: &[&str]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::write(&a, old).unwrap();
    std::fs::write(&b, new).unwrap();
    #[allow(clippy::disallowed_methods)]
    let out = std::process::Command::new("git")
        .args(["diff", "--no-index", "--no-color"])
        .args(args)
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    out.stdout
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_records_pair_with_their_patches() {
        let out = b":100644 100644 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 0000000000000000000000000000000000000000 M\0src/a b.rs\0:100644 100644 bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb cccccccccccccccccccccccccccccccccccccccc R090\0old.py\0new.py\0\0\
diff --git a/src/a b.rs b/src/a b.rs\nindex x..y 100644\n--- a/src/a b.rs\n+++ b/src/a b.rs\n@@ -2 +2,2 @@ fn main\n-let x = 1;\n+let x = 2;\n+-- y\n@@ -9,0 +11 @@\n+z\n\\ No newline at end of file\n\
diff --git a/old.py b/new.py\nsimilarity index 90%\nrename from old.py\nrename to new.py\n@@ -1 +1 @@\n-a\n+b\n";
        let files = read(out).unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].path, b"src/a b.rs");
        assert_eq!(files[0].new_oid, None);
        assert_eq!(files[0].hunks.len(), 2);
        assert_eq!(
            files[0].hunks[0].added,
            [b"let x = 2;".to_vec(), b"-- y".to_vec()]
        );
        assert_eq!(files[0].hunks[1].old_start, 9);
        assert_eq!(files[0].hunks[1].added, [b"z".to_vec()]);
        assert_eq!(files[1].old_path, b"old.py");
        assert_eq!(files[1].path, b"new.py");
        assert_eq!(files[1].status, b'R');
    }

    /// git's own patch of one file between two texts, as the engine asks for it.
    fn patch(old: &str, new: &str, context: &str) -> Vec<u8> {
        let z = "0".repeat(40);
        let mut raw = format!(":100644 100644 {z} {z} M\0f\0\0").into_bytes();
        raw.extend(git_diff_texts(old, new, &["--full-index", context]));
        raw
    }

    #[test]
    fn a_full_context_patch_gives_the_zero_context_hunks_and_both_sides() {
        let cases = [
            ("a\nb\nc\nd\ne\n", "a\nB\nc\nd\ne\nf\n"),
            ("a\nb\nc\n", "x\na\nc\ny\nz\n"),
            ("a\nb\nc", "a\nb\nc\n"),
            ("a\nb\nc\n", "a\nb\nC"),
            ("keep\nx", "keep\ny"),
            ("", "new\nfile\n"),
            ("old\nfile\n", ""),
            ("1\n2\n3\n4\n5\n6\n7\n", "1\n3\n4\n4\n5\n7\n8\n"),
        ];
        for (old, new) in cases {
            let full = read(&patch(old, new, "-U100000000")).unwrap().remove(0);
            let zero = read(&patch(old, new, "-U0")).unwrap().remove(0);
            assert_eq!(full.hunks, zero.hunks, "{old:?} -> {new:?}");
            assert_eq!(full.old_text.as_deref(), Some(old.as_bytes()), "{old:?}");
            assert_eq!(full.new_text.as_deref(), Some(new.as_bytes()), "{new:?}");
        }
    }

    #[test]
    fn a_short_hunk_is_malformed() {
        let out = b":100644 100644 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb M\0a\0\0diff --git a/a b/a\n@@ -1,2 +1 @@\n-x\n";
        assert!(read(out).is_err());
        assert_eq!(read(b"").unwrap(), Vec::new());
    }
}
