//! The built-in semantic diff engine through the real binary: every default language with
//! real changes, each kind of text fallback, the working tree, the gateway route, and an
//! invariant over a generated history (every git line represented once, byte for byte;
//! every file with a syntax error on either side falls back).

mod corpus;
mod history;

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Value, json};

use crate::common::Fixture;
use crate::gateway_support::Gateway;
use crate::tool_snapshot;
use corpus::CASES;

/// Base and head commits of a repository holding every corpus case plus one file of each
/// fallback kind.
fn corpus_repo(fx: &Fixture) -> (std::path::PathBuf, String, String) {
    let repo = fx.init("repo", &[]);
    for case in CASES {
        fx.write(&repo, case.path, case.old);
    }
    fx.write(&repo, "src/broken.rs", "fn ok() -> u8 {\n    1\n}\n");
    fx.write(&repo, "notes.txt", "one\n");
    std::fs::write(repo.join("logo.bin"), b"\0\x01\x02").unwrap();
    let huge: String = (0..80_000).map(|i| format!("fn f{i}() {{}}\n")).collect();
    fx.write(&repo, "src/huge.rs", &huge);
    let base = fx.commit(&repo, "README", "corpus\n", "base");
    for case in CASES {
        fx.write(&repo, case.path, case.new);
    }
    fx.write(
        &repo,
        "src/broken.rs",
        "fn ok() -> u8 {\n    1 +\n}\n\nfn also( {\n",
    );
    fx.write(&repo, "notes.txt", "two\n");
    std::fs::write(repo.join("logo.bin"), b"\0\x01\x03").unwrap();
    fx.write(&repo, "src/huge.rs", &format!("{huge}fn last() {{}}\n"));
    let head = fx.commit(&repo, "README", "corpus, changed\n", "change");
    (repo, base, head)
}

/// Changed lines of one side as (line number, content).
pub type Lines = BTreeSet<(u64, String)>;

/// git's own `-U0` lines for one path: (removed, added) as (line, content) sets.
pub fn git_lines(
    fx: &Fixture,
    repo: &Path,
    base: &str,
    head: Option<&str>,
    path: &str,
) -> (Lines, Lines) {
    let mut args = vec!["diff", "-U0", "--no-color", "-M", base];
    args.extend(head);
    args.extend(["--", path]);
    let patch = fx.git(repo, &args);
    let (mut removed, mut added) = (BTreeSet::new(), BTreeSet::new());
    let (mut old, mut new) = (0, 0);
    for line in patch.lines() {
        if let Some(rest) = line.strip_prefix("@@ -") {
            let (o, rest) = rest.split_once(" +").unwrap();
            let n = rest.split_once(" @@").unwrap().0;
            old = o.split(',').next().unwrap().parse().unwrap();
            new = n.split(',').next().unwrap().parse().unwrap();
        } else if line.starts_with("---") || line.starts_with("+++") {
        } else if let Some(text) = line.strip_prefix('-') {
            removed.insert((old, text.to_owned()));
            old += 1;
        } else if let Some(text) = line.strip_prefix('+') {
            added.insert((new, text.to_owned()));
            new += 1;
        }
    }
    (removed, added)
}

/// The engine's lines for one file, as [`git_lines`] gives them; panics on a duplicate.
pub fn answer_lines(file: &Value) -> (Lines, Lines) {
    let (mut removed, mut added) = (BTreeSet::new(), BTreeSet::new());
    for hunk in file["hunks"].as_array().unwrap() {
        assert!(hunk["header"].is_string(), "{hunk}");
        for line in hunk["lines"].as_array().unwrap() {
            if let Some(n) = line["oldLine"].as_u64() {
                let text = line["oldContent"].as_str().unwrap().to_owned();
                assert!(removed.insert((n, text)), "old line {n} twice: {file}");
            }
            if let Some(n) = line["newLine"].as_u64() {
                let text = line["content"].as_str().unwrap().to_owned();
                assert!(added.insert((n, text)), "new line {n} twice: {file}");
            }
        }
    }
    (removed, added)
}

fn file<'a>(data: &'a Value, path: &str) -> &'a Value {
    data["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("{path} missing from {data}"))
}

#[test]
fn every_default_language_answers_semantically_and_the_rest_falls_back() {
    let fx = Fixture::new();
    let (repo, base, head) = corpus_repo(&fx);
    let args = json!({ "repoPath": repo, "base": base, "head": head });
    let mut server = fx.server(&[], &[]);
    let result = tool_snapshot!(
        "diff_semantic_engine",
        fx,
        server,
        "diff.semantic",
        args.clone()
    );
    assert_eq!(result["source"], "local-engine");
    let data = &result["data"];
    assert_eq!(data["supported"], true);
    assert_eq!(data["changedFiles"], 11);
    assert_eq!(data["filesTruncated"], false);
    for case in CASES {
        let f = file(data, case.path);
        assert_eq!(f["fallbackToText"], false, "{f}");
        assert_eq!(
            answer_lines(f),
            git_lines(&fx, &repo, &base, Some(&head), case.path)
        );
        let moves = f["moves"].as_array().unwrap();
        let kinds: Vec<(&str, &str)> = moves
            .iter()
            .map(|m| {
                (
                    m["kind"].as_str().unwrap(),
                    m["newHeader"].as_str().unwrap(),
                )
            })
            .collect();
        assert!(
            kinds
                .iter()
                .any(|(k, h)| *k == "moved" && h.contains("helper")),
            "{kinds:?}"
        );
        assert!(
            kinds
                .iter()
                .any(|(k, h)| *k == "renamed" && h.to_lowercase().contains("new")),
            "{kinds:?}"
        );
        // An overloaded name is never matched by name alone.
        assert!(!kinds.iter().any(|(_, h)| h.contains("run")), "{kinds:?}");
    }
    // A body change pairs the two lines and names only the changed token.
    let python = file(data, "app/counter.py");
    let alpha = python["hunks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["header"] == "class Counter > def alpha")
        .unwrap();
    assert_eq!(alpha["lines"][0]["type"], "modified");
    assert_eq!(alpha["lines"][0]["changedTokens"], json!(["2"]));
    assert_eq!(alpha["lines"][0]["oldChangedTokens"], json!(["1"]));
    let reasons = [
        ("README", "unsupported-language: "),
        ("src/broken.rs", "parse-error: "),
        ("logo.bin", "binary: "),
        ("notes.txt", "unsupported-language: "),
        ("src/huge.rs", "too-large: "),
    ];
    for (path, reason) in reasons {
        let f = file(data, path);
        assert_eq!(f["fallbackToText"], true, "{f}");
        assert!(f["reason"].as_str().unwrap().starts_with(reason), "{f}");
        assert_eq!(f["hunks"], json!([]));
        assert_eq!(
            f["textDiffArguments"],
            json!({ "repoPath": repo, "base": base, "head": head, "path": path })
        );
    }
    assert!(
        file(data, "src/broken.rs")["reason"]
            .as_str()
            .unwrap()
            .contains("(new side), first at 2:")
    );

    // The fallbacks tool lists exactly those files, with the same reasons.
    let fallbacks = server.call("diff.semanticFallbacks", args);
    assert_eq!(fallbacks["data"]["supported"], true);
    let listed: BTreeSet<(String, String)> = fallbacks["data"]["fallbacks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_owned(),
                f["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected: BTreeSet<(String, String)> = reasons
        .iter()
        .map(|(p, _)| {
            (
                p.to_string(),
                file(data, p)["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(listed, expected);
}

#[test]
fn the_working_tree_is_read_from_disk() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "lib.py", "def f():\n    return 1\n", "base");
    fx.write(&repo, "lib.py", "def f():\n    return 2\n");
    let result = fx.call("diff.semantic", json!({ "repoPath": repo }));
    let f = file(&result["data"], "lib.py");
    assert_eq!(f["fallbackToText"], false, "{result}");
    assert_eq!(
        f["hunks"],
        json!([{ "header": "def f", "lines": [{ "type": "modified", "oldLine": 2, "newLine": 2,
            "content": "    return 2", "oldContent": "    return 1",
            "changedTokens": ["2"], "oldChangedTokens": ["1"] }] }])
    );
    // A syntax error in the working tree falls back.
    fx.write(&repo, "lib.py", "def f(:\n    return 2\n");
    let result = fx.call("diff.semantic", json!({ "repoPath": repo }));
    let f = file(&result["data"], "lib.py");
    assert_eq!(f["fallbackToText"], true, "{result}");
    assert!(
        f["reason"].as_str().unwrap().starts_with("parse-error: "),
        "{f}"
    );
}

#[test]
fn the_gateway_route_serves_the_same_engine() {
    let fx = Fixture::new();
    let (repo, base, head) = corpus_repo(&fx);
    let gw = Gateway::start(&fx, &[], &[]);
    let body = json!({ "repoId": "r", "repoPath": repo, "baseRef": base, "headRef": head,
        "paths": ["src/counter.rs", "logo.bin"] });
    let answer = gw.post_handshake("/v1/mcp/diff/semantic", &body);
    assert_eq!(answer.status, 200, "{answer:?}");
    let served = answer.json();
    let direct = fx.call(
        "diff.semantic",
        json!({ "repoPath": repo, "base": base, "head": head, "path": "src/counter.rs" }),
    );
    let data = &served["data"];
    assert_eq!(data["supported"], true);
    assert_eq!(data["changedFiles"], 2);
    assert_eq!(
        file(data, "src/counter.rs"),
        file(&direct["data"], "src/counter.rs")
    );
    assert_eq!(file(data, "logo.bin")["fallbackToText"], true);

    let bad = gw.post_handshake(
        "/v1/mcp/diff/semantic",
        &json!({ "repoPath": repo, "paths": ["../x"] }),
    );
    assert_eq!(bad.status, 422, "{bad:?}");
    let outside = gw.post_handshake("/v1/mcp/diff/semantic", &json!({ "repoPath": "/" }));
    assert_eq!(outside.status, 422, "{outside:?}");
}
