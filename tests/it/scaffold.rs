//! Checks on the test suite itself: every test file is compiled, and every served tool
//! has an integration test named after it.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use crate::common::registry;
use crate::specs::Ws;

/// The `mod` lines of a Rust source file.
fn declared_modules(source: &str) -> BTreeSet<String> {
    source
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let rest = line
                .strip_prefix("pub mod ")
                .or_else(|| line.strip_prefix("mod "))?;
            Some(rest.strip_suffix(';')?.trim().to_owned())
        })
        .collect()
}

/// The `.rs` files in `dir` by module name (`main.rs` and `mod.rs` excluded).
fn module_files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|entry| {
            let name = entry.unwrap().file_name().into_string().ok()?;
            let module = name.strip_suffix(".rs")?;
            (module != "main" && module != "mod").then(|| module.to_owned())
        })
        .collect()
}

/// A file cargo does not compile is a test that silently never runs.
#[test]
fn no_forgotten_test_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    for (dir, parent) in [
        (root.clone(), root.join("main.rs")),
        (root.join("common"), root.join("common.rs")),
    ] {
        let declared = declared_modules(&std::fs::read_to_string(&parent).unwrap());
        let forgotten: Vec<_> = module_files(&dir).difference(&declared).cloned().collect();
        assert!(
            forgotten.is_empty(),
            "{} has files it does not declare as `mod`: {forgotten:?}",
            parent.display()
        );
    }
}

/// `repo.conflictPreflight` → `repo_conflict_preflight`, `create-plan` → `create_plan`.
pub fn snake(tool: &str) -> String {
    let mut out = String::new();
    for ch in tool.chars() {
        match ch {
            '.' | '-' => out.push('_'),
            c if c.is_ascii_uppercase() => {
                out.push('_');
                out.push(c.to_ascii_lowercase());
            }
            c => out.push(c),
        }
    }
    out
}

/// Every test of this binary, as libtest lists them (`module::name`).
fn test_paths() -> Vec<String> {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args(["--list", "--format=terse"])
        .output()
        .unwrap();
    assert!(out.status.success(), "listing the tests failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .map(str::to_owned)
        .collect()
}

/// The tool a test is named after: the longest tool whose snake name, followed by `_` or
/// nothing, begins the test's function name or its whole path read with `::` as `_` (so
/// `repo_status::bad_input` belongs to `repo.status`, and `diff_semantic_fallbacks_…` to
/// `diff.semanticFallbacks`, not `diff.semantic`).
fn owner<'a>(test: &str, tools: &'a [(String, String)]) -> Option<&'a str> {
    let name = test.rsplit("::").next().unwrap_or(test);
    let path = test.replace("::", "_");
    let begins = |text: &str, snake: &str| {
        text.strip_prefix(snake)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('_'))
    };
    tools
        .iter()
        .filter(|(_, snake)| begins(name, snake) || begins(&path, snake))
        .max_by_key(|(_, snake)| snake.len())
        .map(|(name, _)| name.as_str())
}

#[test]
fn every_served_tool_has_a_test_named_after_it() {
    // A workspace, so the spec tools are served too.
    let mut ws = Ws::new();
    ws.repo("api");
    let mut server = ws.server();
    let tools: Vec<(String, String)> = registry::served_tools(&mut server)
        .iter()
        .map(|t| {
            let name = t["name"].as_str().unwrap().to_owned();
            let snake = snake(&name);
            (name, snake)
        })
        .collect();
    assert!(tools.len() >= 24, "{tools:?}");
    let covered: BTreeSet<&str> = test_paths()
        .iter()
        .filter_map(|test| owner(test, &tools))
        .collect();
    let missing: Vec<_> = tools
        .iter()
        .filter(|(name, _)| !covered.contains(name.as_str()))
        .map(|(name, snake)| format!("{name} (a test named `{snake}_…`)"))
        .collect();
    assert!(missing.is_empty(), "tools without a test: {missing:?}");
}

#[test]
fn snake_names_follow_the_tool_names() {
    assert_eq!(snake("repo.conflictPreflight"), "repo_conflict_preflight");
    assert_eq!(snake("create-plan"), "create_plan");
    assert_eq!(snake("gitward"), "gitward");
    let tools = [
        ("diff.semantic".to_owned(), "diff_semantic".to_owned()),
        (
            "diff.semanticFallbacks".to_owned(),
            "diff_semantic_fallbacks".to_owned(),
        ),
    ];
    assert_eq!(
        owner("diff_semantic_fallbacks_local", &tools),
        Some("diff.semanticFallbacks")
    );
    assert_eq!(owner("diff_semantic_local", &tools), Some("diff.semantic"));
    assert_eq!(owner("diff_semanticx", &tools), None);
    assert_eq!(
        owner("semantic::diff_semantic_local", &tools),
        Some("diff.semantic")
    );
    assert_eq!(
        owner("diff_semantic::bad_input", &tools),
        Some("diff.semantic")
    );
    assert_eq!(owner("brief::diff_semanticx", &tools), None);
}
