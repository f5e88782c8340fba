//! One line of a reflog file (`logs/HEAD`, `logs/refs/heads/<name>`) as the files ref
//! backend writes it.
//!
//! Grammar (refs/files-backend.c, `log_ref_write_fd`; git-reflog(1)):
//!
//! ```text
//! line     := old SP new SP identity [HT message] LF
//! identity := name SP "<" email ">" SP unix-seconds SP tz
//! ```
//!
//! `old` and `new` are full hex object ids (40 for SHA-1, 64 for SHA-256), the all-zero id
//! when the ref was created or deleted. `name` may be empty and may hold spaces; git
//! strips `<`, `>` and newlines from identities, so the email ends at the first `>` after
//! the first `<`. `tz` is `+hhmm` or `-hhmm`. The tab and message are absent when the
//! update carried no message. Names, emails and messages are bytes in whatever encoding
//! the writer used; they are kept as recorded.

use super::ParseError;
use crate::git::Oid;

/// One recorded ref move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub old: Oid,
    pub new: Oid,
    pub name: Vec<u8>,
    pub email: Vec<u8>,
    /// Seconds since the Unix epoch.
    pub time: i64,
    /// The writer's UTC offset as recorded (`+0200`).
    pub tz: String,
    pub message: Vec<u8>,
}

/// Parses one line without its newline; `offset` is where it starts in the file.
pub fn parse_line(line: &[u8], offset: usize) -> Result<Entry, ParseError> {
    let bad = |at: usize, reason: &str| ParseError::new(offset + at, reason);
    let (head, message) = match line.iter().position(|b| *b == b'\t') {
        Some(tab) => (&line[..tab], line[tab + 1..].to_vec()),
        None => (line, Vec::new()),
    };
    let oid_at = |start: usize| -> Result<(Oid, usize), ParseError> {
        let rest = head.get(start..).unwrap_or_default();
        let len = rest
            .iter()
            .position(|b| *b == b' ')
            .ok_or_else(|| bad(start, "missing space after object id"))?;
        let oid = Oid::from_bytes(&rest[..len]).ok_or_else(|| bad(start, "bad object id"))?;
        Ok((oid, start + len + 1))
    };
    let (old, at) = oid_at(0)?;
    let (new, at) = oid_at(at)?;
    if old.as_str().len() != new.as_str().len() {
        return Err(bad(at, "old and new object ids differ in length"));
    }
    let ident = &head[at..];
    let lt = ident
        .iter()
        .position(|b| *b == b'<')
        .ok_or_else(|| bad(at, "identity has no '<'"))?;
    let gt = ident[lt..]
        .iter()
        .position(|b| *b == b'>')
        .map(|p| lt + p)
        .ok_or_else(|| bad(at + lt, "identity has no '>'"))?;
    let name = match lt {
        0 => Vec::new(),
        _ if ident[lt - 1] == b' ' => ident[..lt - 1].to_vec(),
        _ => return Err(bad(at + lt, "no space before '<'")),
    };
    let email = ident[lt + 1..gt].to_vec();
    let stamp = std::str::from_utf8(&ident[gt + 1..])
        .map_err(|_| bad(at + gt + 1, "timestamp is not ASCII"))?;
    let mut parts = stamp.strip_prefix(' ').unwrap_or("\u{0}").split(' ');
    let (Some(secs), Some(tz), None) = (parts.next(), parts.next(), parts.next()) else {
        return Err(bad(
            at + gt + 1,
            "expected ' <unix-seconds> <tz>' after the email",
        ));
    };
    let time = secs
        .parse::<i64>()
        .ok()
        .filter(|_| secs.bytes().all(|b| b.is_ascii_digit()))
        .ok_or_else(|| bad(at + gt + 2, "bad timestamp"))?;
    let tz_ok = tz.len() == 5
        && matches!(tz.as_bytes()[0], b'+' | b'-')
        && tz.bytes().skip(1).all(|b| b.is_ascii_digit());
    if !tz_ok {
        return Err(bad(at + gt + 2 + secs.len(), "bad time zone"));
    }
    Ok(Entry {
        old,
        new,
        name,
        email,
        time,
        tz: tz.to_owned(),
        message,
    })
}

/// The newest `max` entries of a reflog file's tail, newest first.
///
/// `tail` may start in the middle of a line (when only the end of a large file was read);
/// `complete` says whether it is the whole file, so its first line is whole too.
pub fn newest_lines(tail: &[u8], complete: bool, max: usize) -> Result<Vec<Entry>, ParseError> {
    let mut lines: Vec<(usize, &[u8])> = Vec::new();
    let mut start = 0;
    for (i, b) in tail.iter().enumerate() {
        if *b == b'\n' {
            lines.push((start, &tail[start..i]));
            start = i + 1;
        }
    }
    if start < tail.len() {
        return Err(ParseError::new(start, "log ends inside a line"));
    }
    if !complete && !lines.is_empty() {
        lines.remove(0);
    }
    lines
        .iter()
        .rev()
        .filter(|(_, l)| !l.is_empty())
        .take(max)
        .map(|(at, l)| parse_line(l, *at))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captured from `.git/logs/HEAD` (git 2.47): initial commit, amend, checkout -b by
    /// another identity in another zone, commit, reset, and `update-ref` without a message.
    const REAL: &[u8] = b"\
0000000000000000000000000000000000000000 a961c5029e9220cc7ee2d0983050c4c790c3db23 Test Author <author@example.com> 1767225600 +0000\tcommit (initial): first
a961c5029e9220cc7ee2d0983050c4c790c3db23 9fcf1bd868cfa2f289d1d31f704077935ced1202 Test Author <author@example.com> 1767225660 +0000\tcommit (amend): first, amended
9fcf1bd868cfa2f289d1d31f704077935ced1202 9fcf1bd868cfa2f289d1d31f704077935ced1202 J. Random Hacker <jrh@example.org> 1767225720 -0730\tcheckout: moving from main to topic
9fcf1bd868cfa2f289d1d31f704077935ced1202 4f3a614c06acda773c323ef3e208f09782f8b101 Test Author <author@example.com> 1767225780 +0100\tcommit: second
4f3a614c06acda773c323ef3e208f09782f8b101 9fcf1bd868cfa2f289d1d31f704077935ced1202 Test Author <author@example.com> 1767225840 +0000\treset: moving to HEAD~1
9fcf1bd868cfa2f289d1d31f704077935ced1202 4f3a614c06acda773c323ef3e208f09782f8b101 Test Author <author@example.com> 1767225900 +0000
";

    fn parse_all(text: &[u8]) -> Vec<Result<Entry, ParseError>> {
        let mut offset = 0;
        let mut out = Vec::new();
        for line in text.split_inclusive(|b| *b == b'\n') {
            let body = line.strip_suffix(b"\n").unwrap_or(line);
            out.push(parse_line(body, offset));
            offset += line.len();
        }
        out
    }

    #[test]
    fn real_lines() {
        let parsed: Vec<_> = parse_all(REAL)
            .into_iter()
            .map(|e| {
                let e = e.unwrap();
                format!(
                    "{} {} {:?} {:?} {} {} {:?}",
                    e.old.short(),
                    e.new.short(),
                    String::from_utf8_lossy(&e.name),
                    String::from_utf8_lossy(&e.email),
                    e.time,
                    e.tz,
                    String::from_utf8_lossy(&e.message)
                )
            })
            .collect();
        insta::assert_debug_snapshot!(parsed, @r#"
        [
            "0000000 a961c50 \"Test Author\" \"author@example.com\" 1767225600 +0000 \"commit (initial): first\"",
            "a961c50 9fcf1bd \"Test Author\" \"author@example.com\" 1767225660 +0000 \"commit (amend): first, amended\"",
            "9fcf1bd 9fcf1bd \"J. Random Hacker\" \"jrh@example.org\" 1767225720 -0730 \"checkout: moving from main to topic\"",
            "9fcf1bd 4f3a614 \"Test Author\" \"author@example.com\" 1767225780 +0100 \"commit: second\"",
            "4f3a614 9fcf1bd \"Test Author\" \"author@example.com\" 1767225840 +0000 \"reset: moving to HEAD~1\"",
            "9fcf1bd 4f3a614 \"Test Author\" \"author@example.com\" 1767225900 +0000 \"\"",
        ]
        "#);
    }

    #[test]
    fn sha256_and_non_utf8_bytes_are_kept() {
        let old = "1".repeat(64);
        let new = "2".repeat(64);
        let line = [
            format!("{old} {new} Jos").as_bytes(),
            b"\xe9 <j@example.com> 5 +0000\tcommit: caf\xe9",
        ]
        .concat();
        let e = parse_line(&line, 0).unwrap();
        assert_eq!(e.new.as_str(), new);
        assert_eq!(e.name, b"Jos\xe9");
        assert_eq!(e.message, b"commit: caf\xe9");
        assert_eq!(e.time, 5);
    }

    #[test]
    fn malformed() {
        let z = "0".repeat(40);
        let a = "a".repeat(40);
        let cases = [
            String::new(),
            format!("{z} {a}"),
            format!("{z} {} T <t@x> 1 +0000", "b".repeat(64)),
            format!("{z} {a} T t@x> 1 +0000"),
            format!("{z} {a} T <t@x 1 +0000"),
            format!("{z} {a} T <t@x> -1 +0000"),
            format!("{z} {a} T <t@x> 1 0000"),
            format!("{z} {a} T <t@x> 1"),
            format!("{z} {a}T <t@x> 1 +0000"),
            format!("{} {a} T <t@x> 1 +0000", "G".repeat(40)),
        ];
        let errors: Vec<_> = cases
            .iter()
            .map(|c| parse_line(c.as_bytes(), 100).unwrap_err().to_string())
            .collect();
        insta::assert_debug_snapshot!(errors, @r#"
        [
            "unexpected git output at byte 100: missing space after object id",
            "unexpected git output at byte 141: missing space after object id",
            "unexpected git output at byte 206: old and new object ids differ in length",
            "unexpected git output at byte 182: identity has no '<'",
            "unexpected git output at byte 184: identity has no '>'",
            "unexpected git output at byte 190: bad timestamp",
            "unexpected git output at byte 191: bad time zone",
            "unexpected git output at byte 189: expected ' <unix-seconds> <tz>' after the email",
            "unexpected git output at byte 141: bad object id",
            "unexpected git output at byte 100: bad object id",
        ]
        "#);
    }

    #[test]
    fn newest_lines_first_and_a_partial_first_line_dropped() {
        let shown = |entries: Vec<Entry>| -> Vec<String> {
            entries
                .iter()
                .map(|e| format!("{} {}", e.new.short(), String::from_utf8_lossy(&e.message)))
                .collect()
        };
        assert_eq!(
            shown(newest_lines(REAL, true, 2).unwrap()),
            ["4f3a614 ", "9fcf1bd reset: moving to HEAD~1"]
        );
        let all = newest_lines(REAL, true, 10).unwrap();
        assert_eq!(all.len(), 6);
        let cut = newest_lines(&REAL[50..], false, 10).unwrap();
        assert_eq!(cut.len(), 5);
        assert_eq!(
            newest_lines(b"no newline", true, 1)
                .unwrap_err()
                .to_string(),
            "unexpected git output at byte 0: log ends inside a line"
        );
    }
}
