//! The grammars compiled into this binary (one Cargo feature each), how a path picks one,
//! and which of each grammar's nodes are definitions worth naming in a hunk header.

use std::sync::OnceLock;

use tree_sitter::Language;

/// A grammar this binary can parse with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lang {
    Rust,
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    Java,
}

/// One definition kind: the grammar's node kind, the word shown before its name, and the
/// field holding the name.
pub struct DefKind {
    pub node: &'static str,
    pub label: &'static str,
    pub name_field: &'static str,
}

const fn def(node: &'static str, label: &'static str, name_field: &'static str) -> DefKind {
    DefKind {
        node,
        label,
        name_field,
    }
}

const RUST: &[DefKind] = &[
    def("function_item", "fn", "name"),
    def("function_signature_item", "fn", "name"),
    def("impl_item", "impl", "type"),
    def("trait_item", "trait", "name"),
    def("struct_item", "struct", "name"),
    def("enum_item", "enum", "name"),
    def("union_item", "union", "name"),
    def("mod_item", "mod", "name"),
    def("macro_definition", "macro_rules!", "name"),
    def("const_item", "const", "name"),
    def("static_item", "static", "name"),
    def("type_item", "type", "name"),
];
const PYTHON: &[DefKind] = &[
    def("function_definition", "def", "name"),
    def("class_definition", "class", "name"),
];
const JAVASCRIPT: &[DefKind] = &[
    def("function_declaration", "function", "name"),
    def("generator_function_declaration", "function*", "name"),
    def("class_declaration", "class", "name"),
    def("method_definition", "method", "name"),
    def("variable_declarator", "const", "name"),
];
const TYPESCRIPT: &[DefKind] = &[
    def("function_declaration", "function", "name"),
    def("generator_function_declaration", "function*", "name"),
    def("function_signature", "function", "name"),
    def("class_declaration", "class", "name"),
    def("abstract_class_declaration", "class", "name"),
    def("interface_declaration", "interface", "name"),
    def("enum_declaration", "enum", "name"),
    def("type_alias_declaration", "type", "name"),
    def("internal_module", "namespace", "name"),
    def("method_definition", "method", "name"),
    def("method_signature", "method", "name"),
    def("abstract_method_signature", "method", "name"),
    def("variable_declarator", "const", "name"),
];
const GO: &[DefKind] = &[
    def("function_declaration", "func", "name"),
    def("method_declaration", "func", "name"),
    def("type_spec", "type", "name"),
];
const JAVA: &[DefKind] = &[
    def("class_declaration", "class", "name"),
    def("interface_declaration", "interface", "name"),
    def("enum_declaration", "enum", "name"),
    def("record_declaration", "record", "name"),
    def("annotation_type_declaration", "@interface", "name"),
    def("method_declaration", "method", "name"),
    def("constructor_declaration", "constructor", "name"),
];

impl Lang {
    /// The grammar for a path, by its extension; `None` for anything not compiled in.
    pub fn for_path(path: &[u8]) -> Option<Lang> {
        let name = path.rsplit(|b| *b == b'/').next()?;
        let dot = name.iter().rposition(|b| *b == b'.')?;
        let lang = match &name[dot + 1..] {
            b"rs" => Lang::Rust,
            b"py" | b"pyi" => Lang::Python,
            b"js" | b"mjs" | b"cjs" | b"jsx" => Lang::JavaScript,
            b"ts" | b"mts" | b"cts" => Lang::TypeScript,
            b"tsx" => Lang::Tsx,
            b"go" => Lang::Go,
            b"java" => Lang::Java,
            _ => return None,
        };
        lang.grammar().is_some().then_some(lang)
    }

    pub fn name(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Python => "python",
            Lang::JavaScript => "javascript",
            Lang::TypeScript => "typescript",
            Lang::Tsx => "tsx",
            Lang::Go => "go",
            Lang::Java => "java",
        }
    }

    /// The grammar, when its feature is compiled in.
    pub fn grammar(self) -> Option<Language> {
        match self {
            #[cfg(feature = "lang-rust")]
            Lang::Rust => Some(tree_sitter_rust::LANGUAGE.into()),
            #[cfg(feature = "lang-python")]
            Lang::Python => Some(tree_sitter_python::LANGUAGE.into()),
            #[cfg(feature = "lang-javascript")]
            Lang::JavaScript => Some(tree_sitter_javascript::LANGUAGE.into()),
            #[cfg(feature = "lang-typescript")]
            Lang::TypeScript => Some(tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into()),
            #[cfg(feature = "lang-typescript")]
            Lang::Tsx => Some(tree_sitter_typescript::LANGUAGE_TSX.into()),
            #[cfg(feature = "lang-go")]
            Lang::Go => Some(tree_sitter_go::LANGUAGE.into()),
            #[cfg(feature = "lang-java")]
            Lang::Java => Some(tree_sitter_java::LANGUAGE.into()),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// The definition kind of the grammar's node kind `id`, if it is one. Every node of
    /// every tree is asked, so the answer is a table lookup by id, never a name compared.
    pub fn definition_kind(self, id: u16) -> Option<&'static DefKind> {
        static TABLES: [OnceLock<Vec<Option<u8>>>; 7] = [const { OnceLock::new() }; 7];
        let table = TABLES[self as usize].get_or_init(|| self.kind_table());
        let at = (*table.get(usize::from(id))?)?;
        self.definitions().get(usize::from(at))
    }

    /// For each node kind id of the grammar, the index of its definition kind. Ids are
    /// looked up by name, so every id a grammar gives one name (aliases) maps alike.
    fn kind_table(self) -> Vec<Option<u8>> {
        let Some(grammar) = self.grammar() else {
            return Vec::new();
        };
        let defs = self.definitions();
        (0..grammar.node_kind_count())
            .map(|id| {
                let name = u16::try_from(id)
                    .ok()
                    .and_then(|id| grammar.node_kind_for_id(id))?;
                let at = defs.iter().position(|d| d.node == name)?;
                u8::try_from(at).ok()
            })
            .collect()
    }

    pub fn definitions(self) -> &'static [DefKind] {
        match self {
            Lang::Rust => RUST,
            Lang::Python => PYTHON,
            Lang::JavaScript => JAVASCRIPT,
            Lang::TypeScript | Lang::Tsx => TYPESCRIPT,
            Lang::Go => GO,
            Lang::Java => JAVA,
        }
    }
}

/// The crate versions of the compiled-in grammars, as `Cargo.lock` pins them (a test
/// keeps the two in step), keyed by language.
pub fn grammar_versions() -> Vec<(&'static str, &'static str)> {
    let all: [(Lang, &str, &str); 7] = [
        (Lang::Rust, "rust", "0.24.2"),
        (Lang::Python, "python", "0.25.0"),
        (Lang::JavaScript, "javascript", "0.25.0"),
        (Lang::TypeScript, "typescript", "0.23.2"),
        (Lang::Tsx, "tsx", "0.23.2"),
        (Lang::Go, "go", "0.25.0"),
        (Lang::Java, "java", "0.23.5"),
    ];
    all.into_iter()
        .filter(|(lang, _, _)| lang.grammar().is_some())
        .map(|(_, name, version)| (name, version))
        .collect()
}

/// The tree-sitter runtime's crate version.
pub const TREE_SITTER_VERSION: &str = "0.26.13";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_match_the_lock_file() {
        let lock = include_str!("../../Cargo.lock");
        let pinned = |krate: &str| {
            let at = lock.find(&format!("name = \"{krate}\"\n")).unwrap();
            let rest = &lock[at..];
            let v = rest.split('"').nth(3).unwrap();
            v.to_owned()
        };
        assert_eq!(pinned("tree-sitter"), TREE_SITTER_VERSION);
        for (name, version) in grammar_versions() {
            let krate = match name {
                "tsx" => "tree-sitter-typescript".to_owned(),
                other => format!("tree-sitter-{other}"),
            };
            assert_eq!(pinned(&krate), version, "{krate}");
        }
    }

    #[test]
    fn paths_pick_grammars_by_extension() {
        let picks: Vec<_> = [
            "a/b.rs", "x.py", "m.mjs", "t.tsx", "t.ts", "g.go", "J.java", "a.c", "rs", "a.rs/b",
        ]
        .iter()
        .map(|p| Lang::for_path(p.as_bytes()).map(Lang::name))
        .collect();
        assert_eq!(
            picks,
            [
                Some("rust"),
                Some("python"),
                Some("javascript"),
                Some("tsx"),
                Some("typescript"),
                Some("go"),
                Some("java"),
                None,
                None,
                None
            ]
        );
    }
}
