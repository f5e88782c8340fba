//! Moved and renamed definitions, read from the two trees.
//!
//! Moved: a definition whose name is unique on both sides (an overload is never matched by
//! name alone) that changed parent, or whose place among its siblings changed (it is
//! outside the longest common order of the siblings both sides share). Renamed: a
//! definition whose name line git changed, whose old name is gone and new name is new,
//! with the same text but for the name, matched only when that text is unique.

use std::collections::HashMap;

use super::answer::Move;
use super::languages::Lang;
use super::outline::{Definition, definitions, definitions_after};
use super::parse::Parsed;
use super::patch::FileDiff;

/// Siblings compared per parent at most.
const MAX_SIBLINGS: usize = 2000;

type Key<'a> = (&'static str, &'a str);

pub fn find(lang: Lang, diff: &FileDiff, old: &Parsed, new: &Parsed) -> Vec<Move> {
    let mut removed = vec![false; old.line_count() + 2];
    let mut added = vec![false; new.line_count() + 2];
    for hunk in &diff.hunks {
        mark(&mut removed, hunk.old_start, hunk.removed.len());
        mark(&mut added, hunk.new_start, hunk.added.len());
    }
    let old_defs = definitions(lang, old);
    let new_defs = definitions_after(lang, new, old, &diff.hunks);
    let old_names = names(old_defs);
    let new_names = names(new_defs);
    let count = |names: &HashMap<Key<'_>, usize>, d: &Definition| {
        names.get(&(d.label, d.name.as_str())).copied().unwrap_or(0)
    };
    let mut out = moved(old_defs, old, new_defs, new, &old_names, &new_names);
    let renamed_from: Vec<&Definition> = old_defs
        .iter()
        .filter(|d| {
            name_marked(d, &removed) && count(&new_names, d) == 0 && count(&old_names, d) == 1
        })
        .collect();
    let renamed_to: Vec<&Definition> = new_defs
        .iter()
        .filter(|d| {
            name_marked(d, &added) && count(&old_names, d) == 0 && count(&new_names, d) == 1
        })
        .collect();
    out.extend(pair("renamed", &renamed_from, old, &renamed_to, new, true));
    out.sort_by_key(|m| m.new_lines[0]);
    out
}

fn moved(
    old_defs: &[Definition],
    old: &Parsed,
    new_defs: &[Definition],
    new: &Parsed,
    old_names: &HashMap<Key<'_>, usize>,
    new_names: &HashMap<Key<'_>, usize>,
) -> Vec<Move> {
    let unique = |d: &&Definition| {
        let key = (d.label, d.name.as_str());
        old_names.get(&key) == Some(&1) && new_names.get(&key) == Some(&1)
    };
    let by_key: HashMap<Key<'_>, &Definition> = new_defs
        .iter()
        .filter(unique)
        .map(|d| ((d.label, d.name.as_str()), d))
        .collect();
    // Shared definitions grouped by their parent on the old side, in old order.
    let mut groups: HashMap<&str, Vec<(&Definition, &Definition)>> = HashMap::new();
    let mut out = Vec::new();
    for from in old_defs.iter().filter(unique) {
        let Some(to) = by_key.get(&(from.label, from.name.as_str())) else {
            continue;
        };
        if parent(&from.header) != parent(&to.header) {
            out.push(entry(from, old, to, new));
        } else {
            groups
                .entry(parent(&from.header))
                .or_default()
                .push((from, to));
        }
    }
    for pairs in groups.values() {
        if pairs.len() > MAX_SIBLINGS {
            continue;
        }
        let order: Vec<usize> = pairs.iter().map(|(_, to)| to.start_byte).collect();
        let kept = increasing(&order);
        for (i, (from, to)) in pairs.iter().enumerate() {
            if !kept[i] {
                out.push(entry(from, old, to, new));
            }
        }
    }
    out
}

fn entry(from: &Definition, old: &Parsed, to: &Definition, new: &Parsed) -> Move {
    Move {
        kind: "moved",
        old_header: from.header.clone(),
        new_header: to.header.clone(),
        old_lines: [from.first, from.last],
        new_lines: [to.first, to.last],
        body_changed: Some(body(from, old, false) != body(to, new, false)),
    }
}

fn parent(header: &str) -> &str {
    header.rsplit_once(" > ").map_or("", |(p, _)| p)
}

/// Which entries belong to a longest increasing subsequence (the order both sides share).
fn increasing(values: &[usize]) -> Vec<bool> {
    let n = values.len();
    let mut len = vec![1usize; n];
    let mut prev = vec![usize::MAX; n];
    for i in 0..n {
        for j in 0..i {
            if values[j] < values[i] && len[j] + 1 > len[i] {
                len[i] = len[j] + 1;
                prev[i] = j;
            }
        }
    }
    let mut kept = vec![false; n];
    let mut at = (0..n).max_by_key(|i| (len[*i], usize::MAX - i));
    while let Some(i) = at {
        kept[i] = true;
        at = (prev[i] != usize::MAX).then_some(prev[i]);
    }
    kept
}

/// Pairs definitions whose keys match exactly once on each side.
fn pair(
    kind: &'static str,
    from: &[&Definition],
    old: &Parsed,
    to: &[&Definition],
    new: &Parsed,
    masked: bool,
) -> Vec<Move> {
    let mut left: HashMap<(&str, String), Vec<&Definition>> = HashMap::new();
    for d in from {
        left.entry((d.label, body(d, old, masked)))
            .or_default()
            .push(d);
    }
    let mut right: HashMap<(&str, String), Vec<&Definition>> = HashMap::new();
    for d in to {
        right
            .entry((d.label, body(d, new, masked)))
            .or_default()
            .push(d);
    }
    let mut out = Vec::new();
    for (key, froms) in &left {
        let (Some([to]), [from]) = (right.get(key).map(Vec::as_slice), froms.as_slice()) else {
            continue;
        };
        out.push(Move {
            kind,
            old_header: from.header.clone(),
            new_header: to.header.clone(),
            old_lines: [from.first, from.last],
            new_lines: [to.first, to.last],
            body_changed: None,
        });
    }
    out
}

/// Whether git marked the line holding the definition's name.
fn name_marked(d: &Definition, marked: &[bool]) -> bool {
    marked.get(d.name_line).copied().unwrap_or(false)
}

fn mark(lines: &mut [bool], start: usize, count: usize) {
    for line in start..start + count {
        if let Some(slot) = lines.get_mut(line) {
            *slot = true;
        }
    }
}

fn names(defs: &[Definition]) -> HashMap<Key<'_>, usize> {
    let mut out = HashMap::new();
    for d in defs {
        *out.entry((d.label, d.name.as_str())).or_insert(0) += 1;
    }
    out
}

/// The definition's text with whitespace runs collapsed, its name blanked when `masked`.
fn body(d: &Definition, src: &Parsed, masked: bool) -> String {
    let text = &src.source[d.start_byte..d.end_byte];
    let text = if masked {
        let (s, e) = (d.name_span.0 - d.start_byte, d.name_span.1 - d.start_byte);
        [&text[..s], b"\0", &text[e..]].concat()
    } else {
        text.to_vec()
    };
    String::from_utf8_lossy(&text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}
