//! The layering of `src/`, checked: data flows transport → tools → git → process → parse →
//! model, and a lower layer never names a higher one.
//!
//! Every `.rs` file under `src/` is read with its comments and literals blanked out; the
//! paths it names (`use` trees, expanded, and every `crate::`/`super::`/`self::` path in
//! code) are resolved to crate paths, and each is held against the rules below, as are a
//! few type names that only the MCP side may know.

use std::path::{Path, PathBuf};

/// A layer (by module path prefix) and what it must never name.
struct Rule {
    layer: &'static [&'static str],
    /// Crate paths (as module path prefixes) the layer may not reach.
    modules: &'static [&'static [&'static str]],
    /// Type names the layer may not mention.
    names: &'static [&'static str],
}

/// What an MCP type is called: the protocol error, the call context, JSON-RPC itself.
const MCP_NAMES: &[&str] = &["ToolError", "CallCtx", "CallOutcome", "JsonRpc"];
/// The modules that know MCP: the tools, the protocol, and the MCP error mapping.
const MCP_MODULES: &[&[&str]] = &[&["tools"], &["transport"], &["error"]];

const RULES: &[Rule] = &[
    Rule {
        layer: &["git"],
        modules: MCP_MODULES,
        names: MCP_NAMES,
    },
    Rule {
        layer: &["process"],
        modules: MCP_MODULES,
        names: MCP_NAMES,
    },
    Rule {
        layer: &["model"],
        modules: MCP_MODULES,
        names: MCP_NAMES,
    },
    Rule {
        layer: &["sink"],
        modules: MCP_MODULES,
        names: MCP_NAMES,
    },
    Rule {
        layer: &["parse"],
        modules: &[
            &["tools"],
            &["transport"],
            &["error"],
            &["process"],
            &["git"],
        ],
        names: MCP_NAMES,
    },
    Rule {
        layer: &["semantic"],
        modules: &[&["tools"], &["transport"], &["error"], &["gateway"]],
        names: MCP_NAMES,
    },
    Rule {
        layer: &["gateway", "server"],
        modules: &[&["tools"], &["transport"]],
        names: &[],
    },
    Rule {
        layer: &["operation"],
        modules: &[&["tools"], &["transport"], &["gateway", "server"]],
        names: &[],
    },
    Rule {
        layer: &["config"],
        modules: &[&["specs"], &["tools"], &["transport"]],
        names: &[],
    },
    Rule {
        layer: &["progress"],
        modules: &[
            &["tools"],
            &["transport"],
            &["error"],
            &["cli"],
            &["specs"],
            &["semantic"],
        ],
        names: MCP_NAMES,
    },
    Rule {
        layer: &["observe"],
        modules: &[&["tools"], &["transport"], &["audit"], &["presence"]],
        names: &[],
    },
    Rule {
        layer: &["audit"],
        modules: &[&["transport"], &["tools"]],
        names: &[],
    },
    Rule {
        layer: &["presence"],
        modules: &[&["transport"]],
        names: &[],
    },
];

#[derive(Debug, PartialEq, Eq)]
struct Violation {
    file: String,
    named: String,
}

/// Blanks comments, string and char literals, keeping lines and offsets.
pub(super) fn code_only(source: &str) -> String {
    scan(source).0
}

/// The code with comments and literals blanked (see [`code_only`]), and the byte range of
/// every string literal, quotes included.
pub(super) fn scan(source: &str) -> (String, Vec<std::ops::Range<usize>>) {
    let b = source.as_bytes();
    let mut out = b.to_vec();
    let mut strings = Vec::new();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            let end = rest
                .iter()
                .position(|c| *c == b'\n')
                .map_or(b.len(), |n| i + n);
            blank(&mut out, i, end);
            i = end;
        } else if rest.starts_with(b"/*") {
            let (mut depth, mut j) = (0usize, i);
            while j < b.len() {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if let Some(end) = raw_string_end(b, i) {
            blank(&mut out, i, end);
            strings.push(i..end);
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(b.len());
            blank(&mut out, i, end);
            strings.push(i..end);
            i = end;
        } else if b[i] == b'\'' {
            // A char literal ('x', '\n', '\u{..}'), else a lifetime or label.
            let close = if rest.get(1) == Some(&b'\\') {
                rest.iter().skip(2).position(|c| *c == b'\'').map(|n| n + 2)
            } else {
                // `'` is ASCII, so the next byte starts a character.
                let width = source[i + 1..].chars().next().map_or(1, char::len_utf8);
                (rest.get(1 + width) == Some(&b'\'')).then_some(1 + width)
            };
            match close {
                Some(n) => {
                    blank(&mut out, i, i + n + 1);
                    i += n + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    (String::from_utf8_lossy(&out).into_owned(), strings)
}

/// The end of a raw string literal (`r"…"`, `r#"…"#`, `br#"…"#`) starting at `i`.
fn raw_string_end(b: &[u8], i: usize) -> Option<usize> {
    if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') {
        return None;
    }
    let mut j = i;
    if b.get(j) == Some(&b'b') {
        j += 1;
    }
    if b.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let hashes = b[j..].iter().take_while(|c| **c == b'#').count();
    j += hashes;
    if b.get(j) != Some(&b'"') {
        return None;
    }
    let closing: Vec<u8> = std::iter::once(b'"')
        .chain(std::iter::repeat_n(b'#', hashes))
        .collect();
    let body = j + 1;
    let at = b[body..]
        .windows(closing.len())
        .position(|w| w == closing.as_slice())?;
    Some(body + at + closing.len())
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    Sep,
    Open,
    Close,
    Comma,
    Star,
}

fn tokens(tree: &str) -> Vec<Token> {
    let b = tree.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Token::Ident(tree[start..i].to_owned()));
            continue;
        }
        match c {
            b':' if b.get(i + 1) == Some(&b':') => {
                out.push(Token::Sep);
                i += 1;
            }
            b'{' => out.push(Token::Open),
            b'}' => out.push(Token::Close),
            b',' => out.push(Token::Comma),
            b'*' => out.push(Token::Star),
            _ => {}
        }
        i += 1;
    }
    out
}

/// Expands one use tree into its full paths (`a::{b, c::d}` → `a::b`, `a::c::d`).
fn expand(toks: &[Token], pos: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    while let Some(tok) = toks.get(*pos) {
        match tok {
            Token::Ident(word) if word == "as" => {
                *pos += 2;
                break;
            }
            Token::Ident(word) => {
                if word != "self" || path.is_empty() {
                    path.push(word.clone());
                }
                *pos += 1;
            }
            Token::Sep => *pos += 1,
            Token::Star => {
                *pos += 1;
                break;
            }
            Token::Open => {
                *pos += 1;
                loop {
                    expand(toks, pos, &path, out);
                    match toks.get(*pos) {
                        Some(Token::Comma) => *pos += 1,
                        Some(Token::Close) => {
                            *pos += 1;
                            break;
                        }
                        _ => break,
                    }
                    if toks.get(*pos) == Some(&Token::Close) {
                        *pos += 1;
                        break;
                    }
                }
                return;
            }
            Token::Close | Token::Comma => break,
        }
    }
    if !path.is_empty() {
        out.push(path);
    }
}

/// Every path a file names: its `use` trees expanded, and every path elsewhere in code
/// that starts with `crate`, `super` or `self`.
fn named_paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut rest = bytes.to_vec();
    let mut i = 0;
    while let Some(at) = code[i..].find("use") {
        let start = i + at;
        let before = start.checked_sub(1).map(|p| bytes[p]);
        let after = bytes.get(start + 3).copied();
        i = start + 3;
        let word = !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b':')
            && after.is_some_and(|c| c.is_ascii_whitespace() || c == b'{');
        if !word {
            continue;
        }
        let Some(len) = code[i..].find(';') else {
            break;
        };
        let end = i + len;
        let tree = tokens(&code[i..end]);
        let mut pos = 0;
        expand(&tree, &mut pos, &[], &mut out);
        // The tree is read; the scan for paths in code below must not read it again.
        for c in &mut rest[start..end] {
            *c = b' ';
        }
        i = end;
    }
    let toks = tokens(&String::from_utf8_lossy(&rest));
    let mut i = 0;
    while i < toks.len() {
        if let Token::Ident(first) = &toks[i]
            && matches!(first.as_str(), "crate" | "super" | "self")
            && toks.get(i + 1) == Some(&Token::Sep)
            && (i == 0 || toks[i - 1] != Token::Sep)
        {
            let mut path = vec![first.clone()];
            let mut j = i + 1;
            while toks.get(j) == Some(&Token::Sep) {
                match toks.get(j + 1) {
                    Some(Token::Ident(w)) => {
                        path.push(w.clone());
                        j += 2;
                    }
                    _ => break,
                }
            }
            out.push(path);
            i = j;
            continue;
        }
        i += 1;
    }
    out
}

/// The module path of a file under `src/`: `git/repo.rs` → `git::repo`, `git/mod.rs` → `git`.
pub(super) fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs").to_owned();
        if stem != "mod" && stem != "lib" && stem != "main" {
            parts.push(stem);
        }
    }
    parts
}

/// A named path as a crate path, or `None` for an external crate or a local name.
fn resolve(module: &[String], path: &[String]) -> Option<Vec<String>> {
    let (first, rest) = path.split_first()?;
    let mut base: Vec<String> = match first.as_str() {
        "crate" => Vec::new(),
        "self" => module.to_vec(),
        "super" => module[..module.len().checked_sub(1)?].to_vec(),
        _ => return None,
    };
    let mut rest = rest;
    while let Some((next, tail)) = rest.split_first() {
        if next != "super" {
            break;
        }
        base.pop()?;
        rest = tail;
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

fn starts_with(path: &[String], prefix: &[&str]) -> bool {
    path.len() >= prefix.len() && path.iter().zip(prefix).all(|(a, b)| a == b)
}

/// The violations of one file, `rel` being its path under `src/`.
fn check_source(rel: &Path, source: &str) -> Vec<Violation> {
    let module = module_of(rel);
    let code = code_only(source);
    let rules: Vec<&Rule> = RULES
        .iter()
        .filter(|r| starts_with(&module, r.layer))
        .collect();
    let mut found = Vec::new();
    if rules.is_empty() {
        return found;
    }
    let file = rel.display().to_string();
    for path in named_paths(&code) {
        let Some(target) = resolve(&module, &path) else {
            continue;
        };
        if rules
            .iter()
            .any(|r| r.modules.iter().any(|m| starts_with(&target, m)))
        {
            found.push(Violation {
                file: file.clone(),
                named: format!("crate::{}", target.join("::")),
            });
        }
    }
    for tok in tokens(&code) {
        if let Token::Ident(word) = tok
            && rules.iter().any(|r| r.names.contains(&word.as_str()))
        {
            found.push(Violation {
                file: file.clone(),
                named: word,
            });
        }
    }
    found
}

pub(super) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_layer_names_a_layer_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let rel: Vec<PathBuf> = files
        .iter()
        .map(|f| f.strip_prefix(&src).unwrap().to_path_buf())
        .collect();
    // The walk must reach the layers it guards, or the check proves nothing.
    for must in [
        "parse/status_v2.rs",
        "git/mod.rs",
        "process/capture.rs",
        "model/oid.rs",
    ] {
        assert!(rel.iter().any(|r| r == Path::new(must)), "{must} not found");
    }
    let violations: Vec<Violation> = files
        .iter()
        .zip(&rel)
        .flat_map(|(file, rel)| check_source(rel, &std::fs::read_to_string(file).unwrap()))
        .collect();
    assert!(violations.is_empty(), "{violations:#?}");
}

#[test]
fn a_planted_import_is_caught() {
    let check = |file: &str, source: &str| -> Vec<String> {
        check_source(Path::new(file), source)
            .into_iter()
            .map(|v| v.named)
            .collect()
    };
    assert_eq!(
        check("parse/x.rs", "use crate::process::Flow;"),
        ["crate::process::Flow"]
    );
    assert_eq!(
        check(
            "parse/x.rs",
            "use crate::{model::Oid, git::{self, Rev as R}};"
        ),
        ["crate::git", "crate::git::Rev"]
    );
    assert_eq!(
        check(
            "git/status.rs",
            "fn f() { let e = super::super::transport::x(); }"
        ),
        ["crate::transport::x"]
    );
    assert_eq!(
        check(
            "git/mod.rs",
            "pub use self::args::Oid; fn f() -> ToolError {}"
        ),
        ["ToolError"]
    );
    assert_eq!(
        check("process/mod.rs", "fn f(c: crate::tools::CallCtx) {}"),
        ["crate::tools::CallCtx", "CallCtx"]
    );
    assert_eq!(
        check(
            "gateway/server/store.rs",
            "use crate::tools::Tool;\nuse crate::gateway::api::X;"
        ),
        ["crate::tools::Tool"]
    );
    assert_eq!(
        check(
            "operation/merge.rs",
            "use crate::gateway::server::store::Store;\nuse crate::gateway::api;"
        ),
        ["crate::gateway::server::store::Store"]
    );
    assert_eq!(
        check("config.rs", "use crate::specs::workspace::Workspace;"),
        ["crate::specs::workspace::Workspace"]
    );
}

#[test]
fn comments_literals_and_lookalikes_are_not_imports() {
    let clean = |file: &str, source: &str| check_source(Path::new(file), source).is_empty();
    assert!(clean(
        "parse/x.rs",
        "// use crate::process::Flow;\n/* crate::git::Oid */ fn f() {}"
    ));
    assert!(clean(
        "parse/x.rs",
        "/// Like `crate::git::Git::cmd`.\nconst A: &str = \"crate::git\";"
    ));
    assert!(clean(
        "parse/x.rs",
        "const B: &str = r#\"use crate::process;\"#; const C: char = '\"';"
    ));
    assert!(clean(
        "parse/x.rs",
        "fn f<'a>(x: &'a str) -> crate::sink::Flow { todo!() }"
    ));
    assert!(clean(
        "parse/x.rs",
        "use crate::model::Oid; use crate::sink::{Flow, Sink};"
    ));
    assert!(clean(
        "git/x.rs",
        "struct ToolErrorish; use std::process::Command;"
    ));
    assert!(clean(
        "tools/x.rs",
        "use crate::transport::Server; fn f() -> ToolError {}"
    ));
    assert!(clean("gateway/api.rs", "use crate::tools::Tool;"));
}

#[test]
fn relative_paths_resolve_against_the_file() {
    let module = module_of(Path::new("git/status.rs"));
    assert_eq!(module, ["git", "status"]);
    assert_eq!(module_of(Path::new("git/mod.rs")), ["git"]);
    let path = |p: &str| p.split("::").map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(
        resolve(&module, &path("super::Git")),
        Some(path("git::Git"))
    );
    assert_eq!(
        resolve(&module, &path("super::super::tools")),
        Some(path("tools"))
    );
    assert_eq!(
        resolve(&module, &path("self::x")),
        Some(path("git::status::x"))
    );
    assert_eq!(resolve(&module, &path("serde::Serialize")), None);
}
