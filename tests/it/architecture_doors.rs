//! The doors of `src/`, checked: git command lines are built only in `git/`, the
//! environment is read only in `config`, and the configuration is built only there.
//!
//! Each `.rs` file under `src/` is read without its test code (`#[cfg(test)]` items and
//! the files they pull in). Outside `git/`, the process door (its only argv is the
//! `git --version` probe) and `specs/openspec.rs` (the OpenSpec CLI), a file must not call
//! the git runner nor hold a string literal that is a command-line option or the name of
//! a git plumbing command (`specs/openspec_install.rs`, which installs the CLI with npm, is
//! the one more home of an argv): an argv built elsewhere would have to spell one of them.

use std::ops::Range;
use std::path::{Path, PathBuf};

use super::architecture::{rust_files, scan};

/// Where argv may be built, as path prefixes under `src/`.
/// `specs/openspec_install.rs` holds the argv of the one npm call (`gitward setup openspec`).
const ARGV_HOMES: &[&str] = &[
    "git/",
    "process/",
    "specs/openspec.rs",
    "specs/openspec_install.rs",
];

/// The ways into the git runner: `Git::cmd`, `cmd_as_user`, the index-copy variants, and
/// the process door's program itself.
const RUNNER_CALLS: &[&str] = &[
    ".cmd(",
    ".cmd_as_user(",
    ".cmd_on_copy(",
    ".cmd_on_copy_as_user(",
    "::cmd(",
    "::cmd_as_user(",
    "::cmd_on_copy(",
    "::cmd_on_copy_as_user(",
    "Program::Git",
];

/// Git commands whose names mean nothing else here. Porcelain words (`status`, `merge`,
/// `commit`) are also operation names and JSON keys; an argv holding one still spells an
/// option or a plumbing name beside it.
const PLUMBING: &[&str] = &[
    "rev-list",
    "rev-parse",
    "ls-files",
    "ls-tree",
    "ls-remote",
    "for-each-ref",
    "show-ref",
    "symbolic-ref",
    "update-ref",
    "update-index",
    "read-tree",
    "write-tree",
    "commit-tree",
    "mktree",
    "hash-object",
    "cat-file",
    "diff-tree",
    "diff-index",
    "diff-files",
    "merge-tree",
    "merge-base",
    "check-ignore",
    "check-attr",
    "check-ref-format",
    "count-objects",
    "name-rev",
];

/// Option-like literals that are no argv, each with its file.
const NOT_ARGV: &[(&str, &str)] = &[
    // SQLite's companion files, named by suffix.
    ("gateway/server/store/file.rs", "-wal"),
    ("gateway/server/store/file.rs", "-shm"),
    ("gateway/server/store/file.rs", "-journal"),
    ("presence/stores/mod.rs", "-wal"),
    // Another program's command line, read to recognise `python -m <agent>`.
    ("presence/procscan.rs", "-m"),
    // `repo.branchStack` reports which walk counted ahead/behind.
    ("tools/repo/branch_stack.rs", "for-each-ref"),
    ("tools/repo/branch_stack.rs", "rev-list"),
    // `gitward audit export`'s own options, named in its usage errors.
    ("cli/audit_export.rs", "--since"),
    ("cli/audit_export.rs", "--until"),
];

/// The one reader of the process environment, and the one place that passes it on.
const ENV_READERS: &[&str] = &["config.rs", "process/env.rs"];
const ENV_READS: &[&str] = &["env::var(", "env::var_os(", "env::vars(", "env::vars_os("];

/// Whether `text` is a command-line option (`-z`, `--end-of-options`, `--format=…`, `--`).
fn option_like(text: &str) -> bool {
    let Some(rest) = text.strip_prefix('-') else {
        return false;
    };
    let rest = rest.strip_prefix('-').unwrap_or(rest);
    if text == "--" {
        return true;
    }
    let name = rest.split_once('=').map_or(rest, |(name, _)| name);
    name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// A string literal's text between its quotes, escapes left as written.
fn literal_text(source: &str, span: &Range<usize>) -> String {
    let lit = &source[span.clone()];
    let open = lit.find('"').map_or(0, |i| i + 1);
    let close = lit.rfind('"').unwrap_or(lit.len()).max(open);
    lit[open..close].to_owned()
}

/// The byte ranges of `#[cfg(test)]` items in `code` (comments and literals blanked), and
/// the names of test modules kept in their own files (`#[cfg(test)] mod tests;`).
fn test_items(code: &str) -> (Vec<Range<usize>>, Vec<String>) {
    const ATTR: &str = "#[cfg(test)]";
    let b = code.as_bytes();
    let (mut ranges, mut files) = (Vec::new(), Vec::new());
    let mut from = 0;
    while let Some(at) = code[from..].find(ATTR) {
        let start = from + at;
        let mut i = start + ATTR.len();
        let Some(stop) = code[i..].find(['{', ';']).map(|n| i + n) else {
            break;
        };
        let item = code[i..stop].trim();
        if b[stop] == b';' {
            if let Some(name) = item.rsplit(|c: char| c.is_whitespace()).next()
                && item.split_whitespace().any(|w| w == "mod")
            {
                files.push(name.to_owned());
            }
            i = stop + 1;
        } else {
            let mut depth = 0usize;
            i = stop;
            while i < b.len() {
                match b[i] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            i = (i + 1).min(b.len());
        }
        ranges.push(start..i);
        from = i;
    }
    (ranges, files)
}

/// Where the files of a module's children live: `a/b.rs` → `a/b/`, `a/mod.rs` → `a/`.
fn children_dir(rel: &Path) -> PathBuf {
    let parent = rel.parent().unwrap_or(Path::new("")).to_path_buf();
    match rel.file_stem().and_then(|s| s.to_str()) {
        Some("mod" | "lib" | "main") | None => parent,
        Some(stem) => parent.join(stem),
    }
}

/// One file's breaches; `rel` is its path under `src/` with `/` separators.
fn check_source(rel: &str, source: &str) -> Vec<String> {
    let (code, strings) = scan(source);
    let (tests, _) = test_items(&code);
    let in_tests = |at: usize| tests.iter().any(|r| r.contains(&at));
    let mut found = Vec::new();
    let argv_home = ARGV_HOMES.iter().any(|h| rel.starts_with(h));
    let mut calls: Vec<&str> = Vec::new();
    if !argv_home {
        calls.extend(RUNNER_CALLS);
    }
    if !ENV_READERS.contains(&rel) {
        calls.extend(ENV_READS);
    }
    if rel != "config.rs" {
        calls.push("Config::default(");
    }
    for call in calls {
        for (at, _) in code.match_indices(call) {
            let word_start = !call.starts_with(|c: char| c.is_ascii_alphabetic())
                || !code[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
            if word_start && !in_tests(at) {
                found.push(format!("{rel}: calls {call}"));
            }
        }
    }
    if argv_home {
        return found;
    }
    for span in strings.iter().filter(|s| !in_tests(s.start)) {
        let text = literal_text(source, span);
        let allowed = NOT_ARGV.contains(&(rel, text.as_str()))
            || (rel.starts_with("parse/") && text.starts_with("--format="));
        if !allowed && (option_like(&text) || PLUMBING.contains(&text.as_str())) {
            found.push(format!("{rel}: spells {text:?}"));
        }
    }
    found
}

#[test]
fn git_argv_env_and_config_have_one_home_each() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let rel = |f: &Path| f.strip_prefix(&src).unwrap().to_path_buf();
    // Files that only tests compile, found from the `#[cfg(test)] mod x;` lines naming them.
    let mut test_files: Vec<PathBuf> = Vec::new();
    for file in &files {
        let (_, names) = test_items(&scan(&std::fs::read_to_string(file).unwrap()).0);
        let dir = children_dir(&rel(file));
        test_files.extend(names.iter().map(|n| dir.join(n)));
    }
    assert!(
        test_files
            .iter()
            .any(|t| t == Path::new("gateway/server/store/tests_file")),
        "{test_files:?}"
    );
    let mut checked = 0;
    let mut found = Vec::new();
    for file in &files {
        let rel = rel(file);
        let stem = rel.with_extension("");
        if test_files.iter().any(|t| stem == *t || rel.starts_with(t)) {
            continue;
        }
        let name = rel.to_string_lossy().replace('\\', "/");
        found.extend(check_source(&name, &std::fs::read_to_string(file).unwrap()));
        checked += 1;
    }
    // The walk must reach the code it guards, or the check proves nothing.
    assert!(checked > 100, "only {checked} files checked");
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn a_planted_argv_is_caught() {
    let op = |source: &str| check_source("operation/x.rs", source);
    assert_eq!(
        op("async fn f(git: &Git<'_>) { git\n    .cmd([\"status\"]).capture(1).await; }"),
        ["operation/x.rs: calls .cmd("]
    );
    assert_eq!(
        op("fn f() { let a = [\"rev-list\", x]; }"),
        ["operation/x.rs: spells \"rev-list\""]
    );
    assert_eq!(
        op("fn f() { v.push(\"--index\"); v.push(\"--\"); v.push(\"-z\"); }"),
        [
            "operation/x.rs: spells \"--index\"",
            "operation/x.rs: spells \"--\"",
            "operation/x.rs: spells \"-z\""
        ]
    );
    assert_eq!(
        check_source(
            "gateway/x.rs",
            "fn f() { let i = Invocation::new(Program::Git); }"
        ),
        ["gateway/x.rs: calls Program::Git"]
    );
    assert_eq!(
        check_source("tools/x.rs", "const F: &str = \"--format=%H\";"),
        ["tools/x.rs: spells \"--format=%H\""]
    );
    assert_eq!(
        check_source("cli/x.rs", "fn f() { std::env::var_os(\"X\"); }"),
        ["cli/x.rs: calls env::var_os("]
    );
    assert_eq!(
        check_source("specs/x.rs", "fn f() -> Config { Config::default() }"),
        ["specs/x.rs: calls Config::default("]
    );
}

#[test]
fn argv_homes_tests_and_prose_pass() {
    let clean = |file: &str, source: &str| check_source(file, source).is_empty();
    assert!(clean(
        "git/x.rs",
        "fn f() { git.cmd([\"rev-list\", \"--count\", \"--\"]); }"
    ));
    assert!(clean(
        "specs/openspec.rs",
        "fn f() { run(&[\"list\", \"--json\"]); }"
    ));
    assert!(clean(
        "parse/x.rs",
        "pub const FORMAT: &str = \"--format=%H\";"
    ));
    assert!(clean(
        "operation/x.rs",
        "fn f() {}\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() { g(\"--force\", \"-x\"); git.cmd([]); }\n}\nfn g() {}"
    ));
    assert!(clean(
        "operation/x.rs",
        "// git.cmd([\"--x\"])\nfn f() { m(\"pass --force to git\", \"- item\", \"-\", \"a-b\"); }"
    ));
    assert!(clean("process/env.rs", "fn f() { std::env::vars_os(); }"));
    assert!(clean(
        "config.rs",
        "fn f() { std::env::var_os(\"X\"); Config::default(); }"
    ));
    assert!(clean(
        "operation/x.rs",
        "fn f() { store.run(|s| s.cmd_x()); }"
    ));
}

#[test]
fn test_items_and_their_files_are_found() {
    let code = "fn a() {}\n#[cfg(test)]\nmod tests;\n#[cfg(test)]\n#[allow(x)]\nmod more { fn b() { {} } }\nfn c() {}";
    let (ranges, files) = test_items(code);
    assert_eq!(files, ["tests"]);
    assert_eq!(ranges.len(), 2);
    assert!(code[ranges[1].clone()].ends_with("{} } }"));
    assert_eq!(
        children_dir(Path::new("gateway/server/store.rs")),
        Path::new("gateway/server/store")
    );
    assert_eq!(
        children_dir(Path::new("gateway/server/ui/mod.rs")),
        Path::new("gateway/server/ui")
    );
}
