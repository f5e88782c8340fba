//! One parse under budgets: a time limit per side, a node limit, and a full account of
//! syntax errors, since a tree with any error never backs a semantic answer.

use std::cell::RefCell;
use std::ops::ControlFlow;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use tree_sitter::{InputEdit, Node, ParseOptions, Parser, Point, Tree};

use super::languages::Lang;
use super::outline::Definition;
use super::patch::Hunk;

/// Nodes one tree may hold; beyond it the file is read as text.
pub const MAX_NODES: usize = 1_500_000;

/// A clean parse: the source, its tree, and where each line starts.
#[derive(Debug)]
pub struct Parsed {
    pub source: Vec<u8>,
    pub tree: Tree,
    starts: Vec<usize>,
    /// The tree's definitions, listed on first use.
    pub(super) outline: OnceLock<Vec<Definition>>,
}

/// Why a side has no usable tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseFailure {
    /// The parse ran past its time budget.
    TooSlow(Duration),
    TooManyNodes(usize),
    /// Syntax errors: how many, and the first one's 1-based line and column.
    Errors {
        count: usize,
        line: usize,
        column: usize,
    },
    /// The grammar is not compiled in, or the runtime refused it.
    NoGrammar,
}

impl ParseFailure {
    /// Whether the same blob would fail the same way again (a timeout may not).
    pub fn is_stable(&self) -> bool {
        !matches!(self, ParseFailure::TooSlow(_))
    }
}

impl Parsed {
    /// Lines in the source (a final line without a newline counts).
    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// The bytes of 1-based `line`, without its newline.
    pub fn line(&self, line: usize) -> Option<&[u8]> {
        let (start, end) = self.line_span(line)?;
        Some(&self.source[start..end])
    }

    /// The 0-based row holding byte `at`.
    pub fn row_of(&self, at: usize) -> usize {
        self.starts.partition_point(|s| *s <= at).saturating_sub(1)
    }

    /// Byte range of 1-based `line`, without its newline.
    pub fn line_span(&self, line: usize) -> Option<(usize, usize)> {
        let start = *self.starts.get(line.checked_sub(1)?)?;
        let end = match self.starts.get(line) {
            Some(next) => next - 1,
            None => self.source.len() - usize::from(self.source.ends_with(b"\n")),
        };
        Some((start, end))
    }
}

/// Parses `source` as `lang`, within `budget` of wall time.
pub fn parse(lang: Lang, source: Vec<u8>, budget: Duration) -> Result<Parsed, ParseFailure> {
    parse_from(lang, source, budget, None)
}

/// Parses `source` as `lang`; given the old side and git's hunks between the two, from
/// the old tree edited by those hunks, so tree-sitter reuses every subtree they leave
/// alone (the tree is the one a fresh parse gives).
pub fn parse_from(
    lang: Lang,
    source: Vec<u8>,
    budget: Duration,
    base: Option<(&Parsed, &[Hunk])>,
) -> Result<Parsed, ParseFailure> {
    let grammar = lang.grammar().ok_or(ParseFailure::NoGrammar)?;
    PARSER.with(|parser| {
        let mut parser = parser.borrow_mut();
        // A parse stopped by its budget leaves state behind that the next one would resume.
        parser.reset();
        parser
            .set_language(&grammar)
            .map_err(|_| ParseFailure::NoGrammar)?;
        parse_with(&mut parser, source, budget, base)
    })
}

thread_local! {
    /// One parser per thread, kept: a new one per parse costs its allocations each time.
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
}

fn parse_with(
    parser: &mut Parser,
    source: Vec<u8>,
    budget: Duration,
    base: Option<(&Parsed, &[Hunk])>,
) -> Result<Parsed, ParseFailure> {
    let starts = line_starts(&source);
    let edited = base
        .and_then(|(old, hunks)| edited(old, hunks, &source, &starts))
        .map(|(tree, _)| tree);
    let started = Instant::now();
    let mut over = |_: &tree_sitter::ParseState| {
        if started.elapsed() > budget {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let options = ParseOptions::new().progress_callback(&mut over);
    let len = source.len();
    let tree = parser
        .parse_with_options(
            &mut |at: usize, _| if at < len { &source[at..] } else { &[][..] },
            edited.as_ref(),
            Some(options),
        )
        .ok_or(ParseFailure::TooSlow(budget))?;
    let root = tree.root_node();
    let nodes = root.descendant_count();
    if nodes > MAX_NODES {
        return Err(ParseFailure::TooManyNodes(nodes));
    }
    if root.has_error() {
        return Err(errors(root));
    }
    Ok(Parsed {
        source,
        tree,
        starts,
        outline: OnceLock::new(),
    })
}

/// One hunk as a byte edit in new-side positions: `start..old_end` held the removed
/// text, `start..new_end` holds the added text.
#[derive(Debug, Clone, Copy)]
pub struct Edit {
    pub start: usize,
    pub old_end: usize,
    pub new_end: usize,
}

/// The old tree edited by git's hunks into `new`'s positions, and those edits.
pub fn edited_to(old: &Parsed, hunks: &[Hunk], new: &Parsed) -> Option<(Tree, Vec<Edit>)> {
    edited(old, hunks, &new.source, &new.starts)
}

/// The old tree with each hunk applied as an edit, first to last: the text before a hunk
/// is then already the new side's, so its start is a new-side position. `None` (parse
/// afresh) when a hunk does not fit the two sides.
///
/// Each hunk owns the text from its first line to the next hunk's (the first one from the
/// start of the file), on both sides, and its edit is only the bytes between the common
/// head and tail of those two windows: a changed literal edits the literal, not its line,
/// so tree-sitter keeps the tokens around it (whole-line edits make the Python grammar
/// lex far past the change). The windows cover both texts end to end, so the edits
/// describe the change exactly even when a hunk is off.
fn edited(
    old: &Parsed,
    hunks: &[Hunk],
    new: &[u8],
    new_starts: &[usize],
) -> Option<(Tree, Vec<Edit>)> {
    let at = |starts: &[usize], len: usize, line: usize| starts.get(line).copied().unwrap_or(len);
    // 0-based first changed line of each side; a side without lines starts after `*_start`.
    let first = |hunk: &Hunk| {
        (
            hunk.old_start - usize::from(!hunk.removed.is_empty() && hunk.old_start > 0),
            hunk.new_start - usize::from(!hunk.added.is_empty() && hunk.new_start > 0),
        )
    };
    let old_len = old.source.len();
    let mut tree = old.tree.clone();
    let mut edits = Vec::with_capacity(hunks.len());
    let (mut os, mut ns) = (0, 0);
    // No hunks at all still compares the whole texts.
    for i in 0..hunks.len().max(1) {
        let (oe, ne) = match hunks.get(i + 1).map(first) {
            Some((o, n)) => (at(&old.starts, old_len, o), at(new_starts, new.len(), n)),
            None => (old_len, new.len()),
        };
        let (removed, added) = (old.source.get(os..oe)?, new.get(ns..ne)?);
        let head = common_head(removed, added);
        let tail = common_tail(&removed[head..], &added[head..]);
        let (removed, added) = (
            &removed[head..removed.len() - tail],
            &added[head..added.len() - tail],
        );
        if !removed.is_empty() || !added.is_empty() {
            let start = ns + head;
            let row = new_starts
                .partition_point(|s| *s <= start)
                .saturating_sub(1);
            let point = Point::new(row, start - new_starts.get(row).copied().unwrap_or(0));
            tree.edit(&InputEdit {
                start_byte: start,
                old_end_byte: start + removed.len(),
                new_end_byte: start + added.len(),
                start_position: point,
                old_end_position: extent(point, removed),
                new_end_position: extent(point, added),
            });
            edits.push(Edit {
                start,
                old_end: start + removed.len(),
                new_end: start + added.len(),
            });
        }
        (os, ns) = (oe, ne);
    }
    Some((tree, edits))
}

/// Bytes `a` and `b` share from the start.
fn common_head(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    // Whole chunks compare as one `memcmp`; the byte loop only finds the spot inside one.
    while i + CHUNK <= n && a[i..i + CHUNK] == b[i..i + CHUNK] {
        i += CHUNK;
    }
    i + a[i..n]
        .iter()
        .zip(&b[i..n])
        .take_while(|(x, y)| x == y)
        .count()
}

/// Bytes `a` and `b` share at the end.
fn common_tail(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    let mut i = 0;
    while i + CHUNK <= n && a[n - i - CHUNK..n - i] == b[n - i - CHUNK..n - i] {
        i += CHUNK;
    }
    i + a[..n - i]
        .iter()
        .rev()
        .zip(b[..n - i].iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

const CHUNK: usize = 256;

/// Where `text` ends when it starts at `start`.
fn extent(start: Point, text: &[u8]) -> Point {
    let rows = memchr::memchr_iter(b'\n', text).count();
    match memchr::memrchr(b'\n', text) {
        Some(last) => Point::new(start.row + rows, text.len() - last - 1),
        None => Point::new(start.row, start.column + text.len()),
    }
}

fn line_starts(source: &[u8]) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(memchr::memchr_iter(b'\n', source).map(|i| i + 1));
    if starts.last() == Some(&source.len()) && !source.is_empty() {
        starts.pop();
    }
    if source.is_empty() {
        starts.clear();
    }
    starts
}

/// Counts error and missing nodes, visiting only subtrees that hold one.
fn errors(root: Node<'_>) -> ParseFailure {
    let mut count = 0;
    let mut first: Option<(usize, usize)> = None;
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            count += 1;
            let at = node.start_position();
            if first.is_none_or(|f| (at.row, at.column) < f) {
                first = Some((at.row, at.column));
            }
            continue;
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor).filter(Node::has_error));
    }
    let (row, column) = first.unwrap_or((0, 0));
    ParseFailure::Errors {
        count: count.max(1),
        line: row + 1,
        column: column + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUDGET: Duration = Duration::from_millis(300);

    #[test]
    fn lines_are_indexed_without_their_newlines() {
        let p = parse(Lang::Rust, b"fn a() {}\n\nfn b() {}".to_vec(), BUDGET).unwrap();
        assert_eq!(p.line_count(), 3);
        assert_eq!(p.line(1), Some(&b"fn a() {}"[..]));
        assert_eq!(p.line(2), Some(&b""[..]));
        assert_eq!(p.line(3), Some(&b"fn b() {}"[..]));
        assert_eq!(p.line(4), None);
        let p = parse(Lang::Rust, b"fn a() {}\n".to_vec(), BUDGET).unwrap();
        assert_eq!(p.line_count(), 1);
        assert_eq!(p.line(1), Some(&b"fn a() {}"[..]));
    }

    #[test]
    fn syntax_errors_are_counted_with_the_first_position() {
        let failure = parse(Lang::Rust, b"fn a() {}\nfn b( {\n".to_vec(), BUDGET).unwrap_err();
        let ParseFailure::Errors { count, line, .. } = failure else {
            panic!("{failure:?}");
        };
        assert!(count >= 1);
        assert_eq!(line, 2);
    }

    #[test]
    fn a_parse_from_the_old_tree_gives_the_fresh_tree() {
        let old = "fn a() {\n    1\n}\n\nfn b() {}\nfn c() {}";
        let new = "// top\nfn a() {\n    2 + 3\n}\n\nfn c() {}\nfn d() {}\nfn c() {}";
        let mut out = format!(":100644 100644 {z} {z} M\0f.rs\0\0", z = "0".repeat(40));
        out.push_str("diff --git a/f.rs b/f.rs\n--- a/f.rs\n+++ b/f.rs\n");
        out.push_str(&unified(old, new));
        let diff = super::super::patch::read(out.as_bytes()).unwrap().remove(0);
        assert_eq!(diff.new_text.as_deref(), Some(new.as_bytes()));
        let base = parse(Lang::Rust, old.as_bytes().to_vec(), BUDGET).unwrap();
        let again = parse_from(
            Lang::Rust,
            new.as_bytes().to_vec(),
            BUDGET,
            Some((&base, &diff.hunks)),
        )
        .unwrap();
        let fresh = parse(Lang::Rust, new.as_bytes().to_vec(), BUDGET).unwrap();
        let shape = super::super::incremental_tests::shape;
        assert_eq!(shape(&again), shape(&fresh));
        assert!(again.tree.root_node().to_sexp().contains("function_item"));
    }

    /// git's full-context patch between two texts, from git itself.
    fn unified(old: &str, new: &str) -> String {
        let out = crate::semantic::patch::git_diff_texts(old, new, &["-U100000000"]);
        let text = String::from_utf8(out).unwrap();
        text[text.find("@@").unwrap()..].to_owned()
    }

    #[test]
    fn a_spent_budget_stops_the_parse() {
        let big = "fn a() { let x = [1, 2, 3]; }\n"
            .repeat(20_000)
            .into_bytes();
        let failure = parse(Lang::Rust, big, Duration::ZERO).unwrap_err();
        assert_eq!(failure, ParseFailure::TooSlow(Duration::ZERO));
    }
}
