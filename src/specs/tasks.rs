//! Checkbox tasks in a change's `tasks.md`, read the way OpenSpec 1.13.2 reads them.
//!
//! OpenSpec counts a line as a task when it is a list item (`-`, `*`, `+`, or `1.` / `1)`
//! with up to nine digits), optionally indented, followed by a checkbox holding at most one
//! non-space marker. Only `x`/`X` means done; any other marker (`~`, empty) is open work.
//! A one-token box directly followed by `(` or `[` is a Markdown link, not a task, unless
//! the box holds only whitespace. Using the same grammar keeps our counts equal to what
//! `openspec list` and `openspec archive` report.
//!
//! ```text
//! line   = ws* marker ws* "[" box "]" ws* text
//! marker = "-" | "*" | "+" | digit{1,9} ("." | ")")
//! box    = ws* [non-ws-non-"]"]? ws*      (not followed by "(" or "[")
//!        | ws+                            (whitespace-only box, always a task)
//! ```

/// Longest `tasks.md` read.
const TASKS_CAP: u64 = 8 * 1024 * 1024;

/// The text of a `tasks.md`: a regular file, not a symlink, at most `TASKS_CAP` bytes.
pub fn read(path: &std::path::Path) -> std::io::Result<String> {
    use crate::safe_file::Refusal;
    use std::io::{Error, ErrorKind};
    let bytes = crate::safe_file::read(path, TASKS_CAP).map_err(|why| match why {
        Refusal::Missing => Error::new(ErrorKind::NotFound, "no such file"),
        other => Error::other(other.to_string()),
    })?;
    String::from_utf8(bytes).map_err(|_| Error::new(ErrorKind::InvalidData, "not UTF-8"))
}

/// One task line.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Task {
    /// 1-based line number in the file.
    pub line: usize,
    /// The text after the checkbox, trimmed.
    pub text: String,
    pub done: bool,
}

/// Every task line of `content`, in document order.
pub fn parse(content: &str) -> Vec<Task> {
    content
        .split('\n')
        .enumerate()
        .filter_map(|(i, line)| {
            parse_line(line).map(|(done, text)| Task {
                line: i + 1,
                text: text.trim().to_owned(),
                done,
            })
        })
        .collect()
}

/// `(completed, total)`.
pub fn progress(tasks: &[Task]) -> (usize, usize) {
    (tasks.iter().filter(|t| t.done).count(), tasks.len())
}

fn parse_line(line: &str) -> Option<(bool, &str)> {
    let rest = line.trim_start();
    let rest = if let Some(r) = rest.strip_prefix(['-', '*', '+']) {
        r
    } else {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if !(1..=9).contains(&digits) {
            return None;
        }
        rest[digits..].strip_prefix(['.', ')'])?
    };
    let rest = rest.trim_start().strip_prefix('[')?;
    let inner = rest.trim_start();
    let leading_ws = rest.len() - inner.len();
    let mut chars = inner.chars();
    let first = chars.next()?;
    let (marker, after) = if first == ']' {
        (None, chars.as_str())
    } else {
        let tail = chars.as_str().trim_start();
        (Some(first), tail.strip_prefix(']')?)
    };
    let link_follows = after.starts_with(['(', '[']);
    if link_follows && !(marker.is_none() && leading_ws > 0) {
        return None;
    }
    let done = matches!(marker, Some('x' | 'X'));
    Some((done, after.trim_start()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openspec_grammar() {
        let text = "# Tasks\n\
            - [ ] 1.1 open\n\
            - [x] 1.2 done\n\
            \x20 * [X] nested done\n\
            3. [~] tilde is open\n\
            4) [] empty is open\n\
            + [ x ] padded done\n\
            - [Doc](./doc.md)\n\
            - [A](https://example.com)\n\
            - [ ](odd) still a task\n\
            - [WIP] not a task\n\
            1234567890. [ ] too many digits\n\
            - [x]tight\r\n\
            plain text [ ] no marker\n";
        let tasks = parse(text);
        let got: Vec<_> = tasks
            .iter()
            .map(|t| (t.line, t.done, t.text.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (2, false, "1.1 open"),
                (3, true, "1.2 done"),
                (4, true, "nested done"),
                (5, false, "tilde is open"),
                (6, false, "empty is open"),
                (7, true, "padded done"),
                (10, false, "(odd) still a task"),
                (13, true, "tight"),
            ]
        );
        assert_eq!(progress(&tasks), (4, 8));
    }

    #[test]
    fn malformed_lines_are_not_tasks() {
        for line in ["-", "- [", "- [x", "- [ab]", "[ ] no bullet", "-[", ""] {
            assert!(parse(line).is_empty(), "{line:?}");
        }
    }
}
