//! A new tree's definitions from its base's: where git's edits and tree-sitter's changed
//! ranges leave a subtree alone, every character in it has the same ancestors in both
//! trees, so the definitions inside it are the base's, moved by the edits before it.

use tree_sitter::Node;

use super::languages::Lang;
use super::outline::{Definition, Open, definitions, nested};
use super::parse::{self, Edit, Parsed};
use super::patch::Hunk;

/// The base tree's definitions and where the new tree differs from it.
pub struct Base<'a> {
    old: &'a Parsed,
    defs: &'a [Definition],
    edits: Vec<Edit>,
    /// New-side byte ranges that changed, sorted, disjoint and not touching.
    dirty: Vec<(usize, usize)>,
}

impl<'a> Base<'a> {
    /// `None` when the hunks do not fit the two sides (the new tree is walked whole).
    pub fn new(lang: Lang, old: &'a Parsed, hunks: &[Hunk], new: &Parsed) -> Option<Base<'a>> {
        let (edited, edits) = parse::edited_to(old, hunks, new)?;
        let mut ranges: Vec<(usize, usize)> = edits
            .iter()
            .map(|e| (e.start, e.new_end.max(e.old_end)))
            .collect();
        ranges.extend(
            edited
                .changed_ranges(&new.tree)
                .map(|r| (r.start_byte, r.end_byte)),
        );
        ranges.sort_unstable();
        let mut dirty: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
        for (start, end) in ranges {
            match dirty.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => dirty.push((start, end)),
            }
        }
        Some(Base {
            old,
            defs: definitions(lang, old),
            edits,
            dirty,
        })
    }

    /// Whether `start..end` neither overlaps nor touches a changed range.
    fn clean(&self, start: usize, end: usize) -> bool {
        let before = self.dirty.partition_point(|(s, _)| *s <= end);
        before == 0 || self.dirty[before - 1].1 < start
    }

    /// When `node` lies clear of every change, appends the definitions inside it, read
    /// from the base, and says so; `open` holds the definitions around it.
    pub fn copy(&self, node: Node<'_>, open: &[Open], out: &mut Vec<Definition>) -> bool {
        let (start, end) = (node.start_byte(), node.end_byte());
        if !self.clean(start, end) {
            return false;
        }
        // Bytes the edits before the node added, less those they removed.
        let (mut grown, mut shrunk) = (0usize, 0usize);
        for edit in self.edits.iter().take_while(|e| e.new_end <= start) {
            grown += edit.new_end - edit.start;
            shrunk += edit.old_end - edit.start;
        }
        let Some(old_start) = (start + shrunk).checked_sub(grown) else {
            return false;
        };
        let old_end = old_start + (end - start);
        let new_row = node.start_position().row;
        let old_row = self.old.row_of(old_start);
        let bytes = |at: usize| at - old_start + start;
        let rows = |row: usize| row + new_row - old_row;
        // Enclosing definitions with the node's very range are the base's too, already
        // listed; they come first in the base's order.
        let mut same = open
            .iter()
            .rev()
            .take_while(|o| o.start == start && o.end == end)
            .count();
        let parent = open.last().map(|o| o.header.as_str());
        let mut inner: Vec<(usize, String)> = Vec::new();
        let first = self.defs.partition_point(|d| d.start_byte < old_start);
        for d in self.defs[first..]
            .iter()
            .take_while(|d| d.start_byte < old_end)
        {
            if d.end_byte > old_end {
                continue;
            }
            if same > 0 && d.start_byte == old_start && d.end_byte == old_end {
                same -= 1;
                continue;
            }
            while inner.last().is_some_and(|(e, _)| d.start_byte >= *e) {
                inner.pop();
            }
            let around = inner.last().map(|(_, h)| h.as_str()).or(parent);
            let header = nested(around, d.label, &d.name);
            out.push(Definition {
                header: header.clone(),
                label: d.label,
                name: d.name.clone(),
                first: rows(d.first - 1) + 1,
                last: rows(d.last - 1) + 1,
                start_byte: bytes(d.start_byte),
                end_byte: bytes(d.end_byte),
                name_span: (bytes(d.name_span.0), bytes(d.name_span.1)),
                name_line: rows(d.name_line - 1) + 1,
            });
            inner.push((d.end_byte, header));
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::semantic::outline::definitions_after;
    use crate::semantic::parse::{parse, parse_from};
    use crate::semantic::patch;

    /// git's `-U0` hunks between two texts, from git itself.
    fn hunks(old: &str, new: &str) -> Vec<Hunk> {
        let mut raw = format!(":100644 100644 {z} {z} M\0f\0\0", z = "0".repeat(40)).into_bytes();
        raw.extend(patch::git_diff_texts(old, new, &["-U0"]));
        patch::read(&raw).unwrap().remove(0).hunks
    }

    #[test]
    fn copied_definitions_equal_a_full_walk() {
        let budget = Duration::from_secs(1);
        let rust = "mod m {\n    fn a() {}\n    impl X {\n        fn b(&self) {\n            fn inner() {}\n        }\n    }\n}\n\nfn c() {\n    1\n}\nstruct S;\n";
        let cases: [(Lang, &str, &str); 5] = [
            (
                Lang::Rust,
                rust,
                &rust.replace("    1\n", "    let x = 2 + 3;\n    x\n"),
            ),
            (
                Lang::Rust,
                rust,
                &format!("// new top\n\n{rust}fn d() {{}}\n"),
            ),
            (Lang::Rust, rust, &rust.replace("impl X", "impl Y for X")),
            (
                Lang::Rust,
                rust,
                &rust
                    .replace("mod m {\n", "mod m {\n    mod n {\n")
                    .replace("\n}\n\nfn c", "\n}\n}\n\nfn c"),
            ),
            (
                Lang::Python,
                "class A:\n    def f(self):\n        def g():\n            pass\n\ndef h():\n    pass\n",
                "import x\n\nclass A:\n    def f(self):\n        pass\n\ndef h():\n    return 1\n",
            ),
        ];
        for (lang, old, new) in cases {
            let base = parse(lang, old.as_bytes().to_vec(), budget).unwrap();
            let hunks = hunks(old, new);
            let next =
                parse_from(lang, new.as_bytes().to_vec(), budget, Some((&base, &hunks))).unwrap();
            assert!(Base::new(lang, &base, &hunks, &next).is_some(), "{new}");
            let fresh = parse(lang, new.as_bytes().to_vec(), budget).unwrap();
            assert_eq!(
                definitions_after(lang, &next, &base, &hunks),
                definitions(lang, &fresh),
                "{old:?} -> {new:?}"
            );
        }
    }
}
