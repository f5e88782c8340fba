//! One file's semantic hunks: git's changed lines, each checked byte for byte against the
//! parsed blob it came from, paired into modified lines where a hunk removes and adds,
//! and grouped under the definitions the trees put around them.

use super::answer::{FileAnswer, Hunk, Line};
use super::languages::Lang;
use super::moves;
use super::outline;
use super::parse::Parsed;
use super::patch::FileDiff;
use super::tokens;

/// The parsed sides of a file; a missing side is an added or deleted file.
pub struct Sides<'a> {
    pub old: Option<&'a Parsed>,
    pub new: Option<&'a Parsed>,
}

/// Lines per hunk side aligned by header at most; past it nothing is paired.
const MAX_ALIGN: usize = 400;

/// A changed line and the header of the definition around it.
struct Record {
    kind: &'static str,
    header: String,
    old: Option<(usize, String)>,
    new: Option<(usize, String)>,
}

/// The semantic answer for `diff`, or the reason it must fall back to text.
pub fn analyze(lang: Lang, diff: &FileDiff, sides: &Sides<'_>) -> Result<FileAnswer, String> {
    let mut records = Vec::new();
    for hunk in &diff.hunks {
        let old = lines(sides.old, "old", hunk.old_start, &hunk.removed)?;
        let new = lines(sides.new, "new", hunk.new_start, &hunk.added)?;
        let header = |tree: Option<&Parsed>, n: usize| match tree {
            Some(tree) => outline::header(lang, tree, n),
            None => outline::TOP_LEVEL.to_owned(),
        };
        let old: Vec<(String, (usize, String))> = old
            .into_iter()
            .map(|l| (header(sides.old, l.0), l))
            .collect();
        let new: Vec<(String, (usize, String))> = new
            .into_iter()
            .map(|l| (header(sides.new, l.0), l))
            .collect();
        align(old, new, &mut records);
    }
    let mut hunks: Vec<Hunk> = Vec::new();
    for record in records {
        let header = record.header.clone();
        let line = line(record, sides);
        match hunks.last_mut() {
            Some(last) if last.header == header => last.lines.push(line),
            _ => hunks.push(Hunk {
                header,
                lines: vec![line],
            }),
        }
    }
    let moves = match (sides.old, sides.new) {
        (Some(old), Some(new)) => moves::find(lang, diff, old, new),
        _ => Vec::new(),
    };
    Ok(FileAnswer {
        path: String::new(),
        old_path: None,
        language: Some(lang.name()),
        fallback_to_text: false,
        hunks,
        moves,
        reason: None,
    })
}

/// Pairs a hunk's removed and added lines into modified lines only where both sit in the
/// same definition (a longest common subsequence of their headers); the rest stay
/// removed or added, in git's order.
fn align(
    old: Vec<(String, (usize, String))>,
    new: Vec<(String, (usize, String))>,
    out: &mut Vec<Record>,
) {
    let (n, m) = (old.len(), new.len());
    if n > MAX_ALIGN || m > MAX_ALIGN {
        out.extend(old.into_iter().map(|(header, o)| Record {
            kind: "removed",
            header,
            old: Some(o),
            new: None,
        }));
        out.extend(new.into_iter().map(|(header, n)| Record {
            kind: "added",
            header,
            old: None,
            new: Some(n),
        }));
        return;
    }
    let mut table = vec![0u32; (n + 1) * (m + 1)];
    let w = m + 1;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            table[i * w + j] = if old[i].0 == new[j].0 {
                table[(i + 1) * w + j + 1] + 1
            } else {
                table[(i + 1) * w + j].max(table[i * w + j + 1])
            };
        }
    }
    let mut old = old.into_iter().peekable();
    let mut new = new.into_iter().peekable();
    let (mut i, mut j) = (0, 0);
    while old.peek().is_some() || new.peek().is_some() {
        let both = match (old.peek(), new.peek()) {
            (Some(o), Some(n)) => o.0 == n.0 && table[i * w + j] > 0,
            _ => false,
        };
        if both && table[i * w + j] == table[(i + 1) * w + j + 1] + 1 {
            let (Some((header, o)), Some((_, n))) = (old.next(), new.next()) else {
                break;
            };
            out.push(Record {
                kind: "modified",
                header,
                old: Some(o),
                new: Some(n),
            });
            i += 1;
            j += 1;
        } else if old.peek().is_some()
            && (new.peek().is_none() || table[(i + 1) * w + j] >= table[i * w + j + 1])
        {
            let Some((header, o)) = old.next() else { break };
            out.push(Record {
                kind: "removed",
                header,
                old: Some(o),
                new: None,
            });
            i += 1;
        } else {
            let Some((header, n)) = new.next() else { break };
            out.push(Record {
                kind: "added",
                header,
                old: None,
                new: Some(n),
            });
            j += 1;
        }
    }
}

/// git's lines of one side, numbered from `start`, each equal to the parsed source's line.
fn lines(
    parsed: Option<&Parsed>,
    side: &str,
    start: usize,
    texts: &[Vec<u8>],
) -> Result<Vec<(usize, String)>, String> {
    if texts.is_empty() {
        return Ok(Vec::new());
    }
    let parsed = parsed.ok_or_else(|| {
        format!("line-mismatch: git shows {side}-side lines for a side that does not exist")
    })?;
    texts
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let number = start + i;
            if parsed.line(number) != Some(text.as_slice()) {
                return Err(format!(
                    "line-mismatch: git's line {number} ({side} side) differs from the parsed contents"
                ));
            }
            let text = String::from_utf8(text.clone())
                .map_err(|_| format!("not-utf8: line {number} ({side} side) is not valid UTF-8"))?;
            Ok((number, text))
        })
        .collect()
}

fn line(record: Record, sides: &Sides<'_>) -> Line {
    let tokens = match (&record.old, &record.new, sides.old, sides.new) {
        (Some((o, _)), Some((n, _)), Some(old), Some(new)) => {
            Some(tokens::changed(old, *o, new, *n))
        }
        _ => None,
    };
    let (changed_tokens, old_changed_tokens) = match tokens {
        Some((new, old)) => (Some(new), Some(old)),
        None => (None, None),
    };
    let (old_line, old_content) = record.old.map_or((None, None), |(n, t)| (Some(n), Some(t)));
    let (new_line, content) = record.new.map_or((None, None), |(n, t)| (Some(n), Some(t)));
    Line {
        kind: record.kind,
        old_line,
        new_line,
        content,
        old_content,
        changed_tokens,
        old_changed_tokens,
    }
}
