//! Changed tokens of a modified line: the tree's leaves on each side of the line,
//! compared as sequences, so a string literal or an identifier counts as one token.

use tree_sitter::Node;

use super::parse::Parsed;

/// Tokens compared per line at most; longer lines keep their common ends only.
const MAX_TOKENS: usize = 256;

/// (new-side changed tokens, old-side changed tokens) between two lines.
pub fn changed(
    old: &Parsed,
    old_line: usize,
    new: &Parsed,
    new_line: usize,
) -> (Vec<String>, Vec<String>) {
    let a = leaves(old, old_line);
    let b = leaves(new, new_line);
    let (keep_a, keep_b) = common(&a, &b);
    let pick = |tokens: &[&[u8]], keep: &[bool]| {
        tokens
            .iter()
            .zip(keep)
            .filter(|(_, kept)| !**kept)
            .map(|(t, _)| String::from_utf8_lossy(t).into_owned())
            .collect()
    };
    (pick(&b, &keep_b), pick(&a, &keep_a))
}

/// The text of every leaf overlapping 1-based `line`, clipped to the line.
fn leaves(parsed: &Parsed, line: usize) -> Vec<&[u8]> {
    let Some((start, end)) = parsed.line_span(line) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut stack: Vec<Node<'_>> = vec![parsed.tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.end_byte() <= start || node.start_byte() >= end.max(start + 1) {
            continue;
        }
        if node.child_count() == 0 {
            let (s, e) = (node.start_byte().max(start), node.end_byte().min(end));
            let text = trim(&parsed.source[s..e.max(s)]);
            if !text.is_empty() {
                out.push(text);
            }
            continue;
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    out
}

fn trim(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &bytes[start..end.max(start)]
}

/// Which tokens of each side belong to a longest common subsequence.
fn common(a: &[&[u8]], b: &[&[u8]]) -> (Vec<bool>, Vec<bool>) {
    let mut keep_a = vec![false; a.len()];
    let mut keep_b = vec![false; b.len()];
    // Common ends first: they bound the quadratic part.
    let mut head = 0;
    while head < a.len() && head < b.len() && a[head] == b[head] {
        keep_a[head] = true;
        keep_b[head] = true;
        head += 1;
    }
    let mut tail = 0;
    while tail < a.len() - head
        && tail < b.len() - head
        && a[a.len() - 1 - tail] == b[b.len() - 1 - tail]
    {
        keep_a[a.len() - 1 - tail] = true;
        keep_b[b.len() - 1 - tail] = true;
        tail += 1;
    }
    let (ma, mb) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    if ma.is_empty() || mb.is_empty() || ma.len() > MAX_TOKENS || mb.len() > MAX_TOKENS {
        return (keep_a, keep_b);
    }
    let w = mb.len() + 1;
    let mut table = vec![0u16; (ma.len() + 1) * w];
    for i in (0..ma.len()).rev() {
        for j in (0..mb.len()).rev() {
            table[i * w + j] = if ma[i] == mb[j] {
                table[(i + 1) * w + j + 1] + 1
            } else {
                table[(i + 1) * w + j].max(table[i * w + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < ma.len() && j < mb.len() {
        if ma[i] == mb[j] {
            keep_a[head + i] = true;
            keep_b[head + j] = true;
            i += 1;
            j += 1;
        } else if table[(i + 1) * w + j] >= table[i * w + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    (keep_a, keep_b)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::semantic::languages::Lang;
    use crate::semantic::parse::parse;

    #[test]
    fn only_the_differing_leaves_are_reported() {
        let budget = Duration::from_secs(1);
        let old = parse(
            Lang::Rust,
            b"fn main() {\n    let x = call(\"a b\", 1);\n}\n".to_vec(),
            budget,
        )
        .unwrap();
        let new = parse(
            Lang::Rust,
            b"fn main() {\n    let y = call(\"a b\", 1, 2);\n}\n".to_vec(),
            budget,
        )
        .unwrap();
        let (new_tokens, old_tokens) = changed(&old, 2, &new, 2);
        assert_eq!(new_tokens, ["y", ",", "2"]);
        assert_eq!(old_tokens, ["x"]);
    }
}
