//! Definitions in a tree: the header of the innermost definitions around a line (`impl
//! Foo > fn alpha`), and the list of all definitions for matching moves and renames.

use tree_sitter::Node;

use super::languages::Lang;
use super::parse::Parsed;
use super::patch::Hunk;
use super::reuse::Base;

/// The header of lines outside every definition.
pub const TOP_LEVEL: &str = "(top level)";
/// Longest name shown in a header segment.
const MAX_NAME: usize = 80;

/// One definition in a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    /// Full header path, outermost first.
    pub header: String,
    /// The last segment's kind label and name.
    pub label: &'static str,
    pub name: String,
    /// 1-based first and last line.
    pub first: usize,
    pub last: usize,
    pub start_byte: usize,
    pub end_byte: usize,
    /// Byte range of the name inside the source, and its 1-based line.
    pub name_span: (usize, usize),
    pub name_line: usize,
}

/// The header of 1-based `line`: the definitions enclosing its first non-blank byte.
pub fn header(lang: Lang, parsed: &Parsed, line: usize) -> String {
    let Some((start, end)) = parsed.line_span(line) else {
        return TOP_LEVEL.to_owned();
    };
    let text = &parsed.source[start..end];
    let indent = text
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(0);
    let at = start + indent;
    let root = parsed.tree.root_node();
    let Some(mut node) = root.descendant_for_byte_range(at, at) else {
        return TOP_LEVEL.to_owned();
    };
    let mut segments = Vec::new();
    let mut last_def = None;
    loop {
        // A decorator line belongs to the definition it decorates.
        let target = match node.kind() {
            "decorated_definition" => node.child_by_field_name("definition"),
            _ => Some(node),
        };
        if let Some(target) = target.filter(|t| Some(t.id()) != last_def)
            && let Some((label, name, _, _)) = definition(lang, &parsed.source, target)
        {
            segments.push(format!("{label} {name}"));
            last_def = Some(target.id());
        }
        match node.parent() {
            Some(parent) => node = parent,
            None => break,
        }
    }
    if segments.is_empty() {
        return TOP_LEVEL.to_owned();
    }
    segments.reverse();
    segments.join(" > ")
}

/// Every definition in the tree, in source order (computed once per parsed blob).
pub fn definitions(lang: Lang, parsed: &Parsed) -> &[Definition] {
    parsed.outline.get_or_init(|| walk(lang, parsed, None))
}

/// Every definition of `new`, whose base `old` and git's hunks between them are known:
/// what the changes left alone is copied from the base's list instead of walked again.
pub fn definitions_after<'a>(
    lang: Lang,
    new: &'a Parsed,
    old: &Parsed,
    hunks: &[Hunk],
) -> &'a [Definition] {
    new.outline.get_or_init(|| {
        let base = Base::new(lang, old, hunks, new);
        let defs = walk(lang, new, base.as_ref());
        debug_assert!(
            base.is_none() || defs == walk(lang, new, None),
            "copied definitions differ from a full walk"
        );
        defs
    })
}

/// A definition enclosing the walk's position.
pub(super) struct Open {
    pub start: usize,
    pub end: usize,
    pub header: String,
}

fn walk(lang: Lang, parsed: &Parsed, base: Option<&Base<'_>>) -> Vec<Definition> {
    let mut out = Vec::new();
    // Enclosing definitions, innermost last.
    let mut open: Vec<Open> = Vec::new();
    let mut cursor = parsed.tree.walk();
    'walk: loop {
        let node = cursor.node();
        while open.last().is_some_and(|o| node.start_byte() >= o.end) {
            open.pop();
        }
        let copied = base.is_some_and(|b| b.copy(node, &open, &mut out));
        if !copied {
            if let Some((label, name, span, name_line)) = definition(lang, &parsed.source, node) {
                let header = nested(open.last().map(|o| o.header.as_str()), label, &name);
                out.push(Definition {
                    header: header.clone(),
                    label,
                    name,
                    first: node.start_position().row + 1,
                    last: node.end_position().row + 1,
                    start_byte: node.start_byte(),
                    end_byte: node.end_byte(),
                    name_span: span,
                    name_line,
                });
                open.push(Open {
                    start: node.start_byte(),
                    end: node.end_byte(),
                    header,
                });
            }
            if cursor.goto_first_child() {
                continue;
            }
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    out
}

/// The header of a definition inside the one headed `parent`.
pub(super) fn nested(parent: Option<&str>, label: &str, name: &str) -> String {
    match parent {
        Some(path) => format!("{path} > {label} {name}"),
        None => format!("{label} {name}"),
    }
}

/// The label, name and name span of `node` when it is a definition.
fn definition(
    lang: Lang,
    source: &[u8],
    node: Node<'_>,
) -> Option<(&'static str, String, (usize, usize), usize)> {
    let def = lang.definition_kind(node.kind_id())?;
    let kind = def.node;
    let name_node = node.child_by_field_name(def.name_field)?;
    if kind == "variable_declarator" && !names_a_function(node) {
        return None;
    }
    let mut name = text(source, name_node);
    if kind == "impl_item"
        && let Some(t) = node.child_by_field_name("trait")
    {
        name = format!("{} for {name}", text(source, t));
    }
    if kind == "method_declaration"
        && lang == Lang::Go
        && let Some(r) = node.child_by_field_name("receiver")
    {
        name = format!("{} {name}", text(source, r));
    }
    let span = (name_node.start_byte(), name_node.end_byte());
    Some((def.label, name, span, name_node.start_position().row + 1))
}

/// `const f = () => …` names a function; `const x = 1` is not a definition worth a header.
fn names_a_function(declarator: Node<'_>) -> bool {
    declarator.child_by_field_name("value").is_some_and(|v| {
        matches!(
            v.kind(),
            "arrow_function" | "function_expression" | "function" | "class" | "generator_function"
        )
    })
}

/// A node's text on one line, whitespace runs collapsed, at most [`MAX_NAME`] characters.
fn text(source: &[u8], node: Node<'_>) -> String {
    let raw = String::from_utf8_lossy(&source[node.start_byte()..node.end_byte()]);
    let mut out = String::new();
    for word in raw.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    if out.chars().count() > MAX_NAME {
        out = out.chars().take(MAX_NAME).collect::<String>() + "…";
    }
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::semantic::parse::parse;

    #[test]
    fn headers_name_the_enclosing_definitions() {
        let src = "use x;\nstruct Foo;\nimpl Foo {\n    fn alpha(&self) {\n        let a = 1;\n    }\n}\nimpl Display for Foo {}\n";
        let p = parse(Lang::Rust, src.as_bytes().to_vec(), Duration::from_secs(1)).unwrap();
        let headers: Vec<String> = (1..=8).map(|l| header(Lang::Rust, &p, l)).collect();
        assert_eq!(
            headers,
            [
                "(top level)",
                "struct Foo",
                "impl Foo",
                "impl Foo > fn alpha",
                "impl Foo > fn alpha",
                "impl Foo > fn alpha",
                "impl Foo",
                "impl Display for Foo",
            ]
        );
        let defs: Vec<(String, usize, usize)> = definitions(Lang::Rust, &p)
            .iter()
            .map(|d| (d.header.clone(), d.first, d.last))
            .collect();
        assert_eq!(
            defs,
            [
                ("struct Foo".to_owned(), 2, 2),
                ("impl Foo".to_owned(), 3, 7),
                ("impl Foo > fn alpha".to_owned(), 4, 6),
                ("impl Display for Foo".to_owned(), 8, 8),
            ]
        );
    }
}
