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
    pub hunks: Vec<Hunk>,
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

fn section_into(section: &[u8], file: &mut FileDiff) -> Result<(), Malformed> {
    let mut lines = section.split_inclusive(|b| *b == b'\n').peekable();
    while let Some(line) = lines.next() {
        if line.starts_with(b"Binary files ") || line.starts_with(b"GIT binary patch") {
            file.binary = true;
        }
        if !line.starts_with(b"@@ ") {
            continue;
        }
        let (old_start, removed, new_start, added) = hunk_header(line)?;
        let mut hunk = Hunk {
            old_start,
            new_start,
            removed: Vec::with_capacity(removed),
            added: Vec::with_capacity(added),
        };
        while hunk.removed.len() < removed || hunk.added.len() < added {
            let line = lines.next().ok_or(Malformed("hunk ends early"))?;
            let body = line.strip_suffix(b"\n").unwrap_or(line);
            match body.first() {
                Some(b'-') if hunk.removed.len() < removed => hunk.removed.push(body[1..].to_vec()),
                Some(b'+') if hunk.added.len() < added => hunk.added.push(body[1..].to_vec()),
                Some(b'\\') => {}
                _ => return Err(Malformed("unexpected line in a hunk")),
            }
        }
        while lines.peek().is_some_and(|l| l.starts_with(b"\\")) {
            lines.next();
        }
        file.hunks.push(hunk);
    }
    Ok(())
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

    #[test]
    fn a_short_hunk_is_malformed() {
        let out = b":100644 100644 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb M\0a\0\0diff --git a/a b/a\n@@ -1,2 +1 @@\n-x\n";
        assert!(read(out).is_err());
        assert_eq!(read(b"").unwrap(), Vec::new());
    }
}
