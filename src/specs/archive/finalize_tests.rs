//! Tests of archive finalization's pure parts: git's messages read, paths sorted into ours and others.

use super::*;
use std::path::PathBuf;

#[test]
fn staged_paths_under_ours_are_ours() {
    let ours = ["openspec/specs/auth".to_owned(), "a".to_owned()];
    let staged = [
        "openspec/specs/auth/spec.md",
        "openspec/specs/authz/x",
        "a",
        "ab",
        "b",
    ]
    .map(String::from)
    .to_vec();
    assert_eq!(others(staged, &ours), ["openspec/specs/authz/x", "ab", "b"]);
}

#[test]
fn gits_refusals_are_read_by_their_words() {
    assert!(not_fast_forward(
        "fatal: Not possible to fast-forward, aborting."
    ));
    assert!(not_fast_forward("hint: ... non-fast-forward"));
    assert!(!not_fast_forward(
        "fatal: refusing to merge unrelated histories"
    ));
    assert!(rebase_conflict(
        "CONFLICT (content): Merge conflict in a.txt"
    ));
    assert!(rebase_conflict("error: could not apply 1234abc... x"));
    assert!(!rebase_conflict("fatal: invalid upstream 'main'"));
}

#[test]
fn the_first_line_prefers_stderr() {
    let ran = |stdout: &str, stderr: &str| Ran {
        command: Vec::new(),
        cwd: PathBuf::new(),
        code: Some(1),
        stdout: stdout.into(),
        stderr: stderr.into(),
    };
    assert_eq!(first_line(&ran("out", "\n  err line \nmore")), "err line");
    assert_eq!(first_line(&ran("out\n", " \n")), "out");
    assert_eq!(first_line(&ran("", "")), "git failed");
}
