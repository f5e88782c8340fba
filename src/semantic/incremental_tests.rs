//! A new side parsed from the old side's tree is the tree a fresh parse gives, on the
//! engine's corpus of every default language and on edits that stress the reuse: a
//! changed literal, a comment line, a duplicated statement, a line that breaks the
//! syntax, and hunks that do not even describe the change.

use std::time::Duration;

use tree_sitter::TreeCursor;

use super::languages::Lang;
use super::parse::{ParseFailure, Parsed, edited_to, parse, parse_from};
use super::patch::{self, Hunk};

#[path = "../../tests/it/semantic_engine/corpus.rs"]
mod corpus;

const BUDGET: Duration = Duration::from_secs(2);

/// git's own `-U0` hunks between two texts.
fn hunks(old: &str, new: &str) -> Vec<Hunk> {
    let mut raw = format!(":100644 100644 {z} {z} M\0f\0\0", z = "0".repeat(40)).into_bytes();
    raw.extend(patch::git_diff_texts(old, new, &["-U0"]));
    patch::read(&raw).unwrap().remove(0).hunks
}

/// Every node as kind, byte range and start and end points, in tree order.
pub(super) fn shape(parsed: &Parsed) -> Vec<String> {
    fn collect(cursor: &mut TreeCursor<'_>, out: &mut Vec<String>) {
        let node = cursor.node();
        out.push(format!(
            "{} {:?} {:?} {:?}",
            node.kind(),
            node.byte_range(),
            node.start_position(),
            node.end_position()
        ));
        if cursor.goto_first_child() {
            loop {
                collect(cursor, out);
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
            cursor.goto_parent();
        }
    }
    let mut out = Vec::new();
    collect(&mut parsed.tree.walk(), &mut out);
    out
}

fn outcome(result: &Result<Parsed, ParseFailure>) -> Result<Vec<String>, ParseFailure> {
    result.as_ref().map(shape).map_err(Clone::clone)
}

/// The same text with a comment line before the line holding `at`, indented like it.
fn with_comment(text: &str, lang: Lang, at: &str) -> String {
    let mark = if lang == Lang::Python { "#" } else { "//" };
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        if line.contains(at) {
            let indent: String = line.chars().take_while(|c| c.is_whitespace()).collect();
            out.push_str(&format!("{indent}{mark} a note\n"));
        }
        out.push_str(line);
    }
    out
}

/// The same text with the line holding `at` twice.
fn with_twice(text: &str, at: &str) -> String {
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        out.push_str(line);
        if line.contains(at) {
            out.push_str(line);
        }
    }
    out
}

#[test]
fn a_parse_from_the_old_tree_is_a_fresh_parse_in_every_language() {
    for case in corpus::CASES {
        let lang = Lang::for_path(case.path.as_bytes()).unwrap();
        let old = case.old;
        let news = [
            case.new.to_owned(),
            old.replace("x + 40", "x + 41"),
            old.replace("40", "4000"),
            with_comment(old, lang, "x + 40"),
            with_twice(old, "x + 40"),
            with_twice(old, "doubled"),
            format!("{old}\n))) ((( @@@ ;\n"),
            old.replace("x + 40", "x + (40"),
            String::new(),
        ];
        let base = parse(lang, old.as_bytes().to_vec(), BUDGET).unwrap();
        for new in &news {
            let fresh = outcome(&parse(lang, new.as_bytes().to_vec(), BUDGET));
            let right = hunks(old, new);
            // Hunks of another change, and none at all: the edits still follow the texts.
            let wrong = hunks(old, case.new);
            for hunks in [&right[..], &wrong[..], &[]] {
                let again = parse_from(lang, new.as_bytes().to_vec(), BUDGET, Some((&base, hunks)));
                assert_eq!(outcome(&again), fresh, "{} -> {new:?}", case.path);
            }
        }
    }
}

#[test]
fn a_changed_literal_edits_only_its_bytes() {
    let old = "fn a() {\n    let x = 404;\n}\n\nfn b() {}\n";
    let new = "fn a() {\n    let x = 414;\n}\n\nfn b() {}\n// end\n";
    let base = parse(Lang::Rust, old.as_bytes().to_vec(), BUDGET).unwrap();
    let next = parse(Lang::Rust, new.as_bytes().to_vec(), BUDGET).unwrap();
    let (_, edits) = edited_to(&base, &hunks(old, new), &next).unwrap();
    let spans: Vec<(usize, usize, usize)> = edits
        .iter()
        .map(|e| (e.start, e.old_end, e.new_end))
        .collect();
    let at = new.find("14").unwrap();
    assert_eq!(
        spans,
        [(at, at + 1, at + 1), (old.len(), old.len(), new.len())]
    );
}
