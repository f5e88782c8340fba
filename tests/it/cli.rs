//! The command line itself: every verb's help, the version, usage errors (exit 2), and
//! that option spellings and a bare `gitward` behave as documented.

use std::process::Output;

use serde_json::{Value, json};

use crate::audit::{run, stderr};
use crate::common::Fixture;

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn cli_every_verb_has_help_naming_its_flags() {
    let fx = Fixture::new();
    let shared = ["--read-only", "--toolsets", "--allowed-root", "--workspace"];
    let verbs: [(&[&str], &[&str]); 7] = [
        (
            &["--help"],
            &["serve", "call", "tools", "verify-audit", "keygen"],
        ),
        (
            &["help"],
            &["serve", "call", "tools", "verify-audit", "keygen"],
        ),
        (&["serve", "--help"], &[]),
        (&["call", "-h"], &["TOOL", "JSON"]),
        (&["tools", "--help"], &["--json"]),
        (
            &["verify-audit", "--help"],
            &["PATH", "--pubkey", "--require-signed", "--require-unbroken"],
        ),
        (&["keygen", "--help"], &["--out"]),
    ];
    for (args, names) in verbs {
        let out = run(&fx, args, &[], b"");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        let help = stdout(&out);
        let serves = !matches!(args[0], "verify-audit" | "keygen");
        let expected = names.iter().chain(shared.iter().filter(|_| serves));
        for name in expected {
            assert!(
                help.contains(name),
                "{args:?} does not name {name}:\n{help}"
            );
        }
    }
    let help = stdout(&run(&fx, &["keygen", "--help"], &[], b""));
    assert!(!help.contains("--read-only"), "{help}");
}

#[test]
fn cli_version_names_the_program() {
    let fx = Fixture::new();
    for flag in ["--version", "-V"] {
        let out = run(&fx, &[flag], &[], b"");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let expected = format!("gitward {}\n", env!("CARGO_PKG_VERSION"));
        assert_eq!(stdout(&out), expected);
    }
}

#[test]
fn cli_usage_errors_exit_2_and_say_why() {
    let fx = Fixture::new();
    let cases: [(&[&str], &str); 10] = [
        (&["frobnicate"], "frobnicate"),
        // Serve's options before a verb are serve's: the verb is then an extra argument.
        (&["--read-only", "tools"], "tools"),
        (&["serve", "--bogus"], "--bogus"),
        (&["--bogus"], "--bogus"),
        (&["serve", "extra"], "extra"),
        (
            &["tools", "--toolsets", "git,nope"],
            "unknown toolset: nope",
        ),
        (&["tools", "--allowed-root"], "--allowed-root"),
        (&["call"], "TOOL"),
        (&["call", "repo.status", "{"], "not valid JSON"),
        (&["call", "no.such.tool"], "unknown tool: no.such.tool"),
    ];
    for (args, why) in cases {
        let out = run(&fx, args, &[], b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{args:?}: {}", stdout(&out));
        assert!(stderr(&out).contains(why), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn cli_option_spellings_agree_and_the_last_toolsets_wins() {
    let fx = Fixture::new();
    let list = |args: &[&str]| {
        let out = run(&fx, args, &[], b"");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        stdout(&out)
    };
    let git = list(&["tools", "--toolsets", "git"]);
    let ops = list(&["tools", "--toolsets", "ops"]);
    assert!(!git.is_empty() && git != ops, "{git}\n{ops}");
    assert_eq!(list(&["tools", "--toolsets=git"]), git);
    assert_eq!(list(&["tools", "--toolsets=git", "--toolsets", "ops"]), ops);
    let read_only = list(&["tools", "--read-only"]);
    assert!(read_only.contains(" read "), "{read_only}");
    assert!(!read_only.contains(" propose "), "{read_only}");
}

/// `gitward` alone is `gitward serve`, with the same options.
#[test]
fn cli_bare_gitward_serves() {
    let fx = Fixture::new();
    let input = [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": { "name": "cli-tests", "version": "1" } } }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }),
    ]
    .iter()
    .map(|m| format!("{m}\n"))
    .collect::<String>();
    let names = |args: &[&str]| {
        let out = run(&fx, args, &[], input.as_bytes());
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        let list = stdout(&out)
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|m| m["id"] == 2)
            .unwrap();
        list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    // A workspace descriptor makes the spec tools appear; an allowed root alone does not.
    let root = fx.root().display().to_string();
    let ws = fx.workspace_file(&fx.root());
    let bare = names(&["--allowed-root", &root, "--workspace", &ws]);
    assert_eq!(
        names(&[
            "serve",
            &format!("--allowed-root={root}"),
            "--workspace",
            &ws
        ]),
        bare
    );
    let git_only = names(&[]);
    assert!(!git_only.is_empty() && git_only != bare, "{bare:?}");
    assert_eq!(names(&["--allowed-root", &root]), git_only);
    assert_eq!(
        names(&[
            "--toolsets=git,ops",
            "--allowed-root",
            &root,
            "--workspace",
            &ws
        ]),
        git_only
    );
}
