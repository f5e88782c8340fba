//! The policy: each rule kind allowing one case and refusing another, and every way a
//! configured file can be unusable.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::*;

const EXAMPLE: &str = r#"{"version":1,
 "agents":{"claude-code":{"operations":["commit","branch","worktree","patch","plan"],
                          "refs":["refs/heads/agent/*"],
                          "pathConstraints":{"repositories":["/home/me/src"],
                                             "worktrees":["/home/me/src/.worktrees"]}}},
 "default":{"operations":["*"]}}"#;

fn example() -> Policy {
    Policy::parse(Path::new("policy.json"), EXAMPLE).unwrap()
}

struct Ask {
    agent: &'static str,
    operations: Vec<&'static str>,
    refs: Vec<String>,
    repositories: Vec<PathBuf>,
    worktrees: Vec<PathBuf>,
}

fn ask(agent: &'static str, operation: &'static str) -> Ask {
    Ask {
        agent,
        operations: vec![operation],
        refs: vec!["refs/heads/agent/fix".into()],
        repositories: vec![PathBuf::from("/home/me/src/app")],
        worktrees: vec![],
    }
}

impl Ask {
    fn decide(&self, policy: &Policy) -> Decision {
        policy.evaluate(&Request {
            agent_id: self.agent,
            operations: &self.operations,
            refs: &self.refs,
            repositories: &self.repositories,
            worktrees: &self.worktrees,
        })
    }
}

fn denied(decision: Decision) -> Denial {
    match decision {
        Decision::Deny(d) => d,
        Decision::Allow => panic!("expected a denial"),
    }
}

#[test]
fn no_policy_narrows_nothing() {
    let policy = Policy::permissive();
    assert!(policy.is_permissive());
    let mut a = ask("anyone", "reset");
    a.refs = vec!["refs/heads/main".into()];
    a.repositories = vec![PathBuf::from("/anywhere")];
    assert_eq!(a.decide(&policy), Decision::Allow);
}

#[test]
fn operations_allow_the_listed_and_refuse_the_rest() {
    let policy = example();
    assert!(!policy.is_permissive());
    assert_eq!(
        ask("claude-code", "commit").decide(&policy),
        Decision::Allow
    );
    let d = denied(ask("claude-code", "merge").decide(&policy));
    assert_eq!(d.rule, "agents.claude-code.operations");
    assert_eq!((d.kind, d.value.as_str()), (RuleKind::Operations, "merge"));
    // `*` in the default allows every operation to every other agent.
    assert_eq!(ask("codex", "reset").decide(&policy), Decision::Allow);
}

#[test]
fn a_plan_cannot_carry_an_operation_its_agent_may_not_propose() {
    let policy = example();
    let mut a = ask("claude-code", "plan");
    a.operations = vec!["plan", "patch"];
    assert_eq!(a.decide(&policy), Decision::Allow);
    a.operations = vec!["plan", "patch", "reset"];
    let d = denied(a.decide(&policy));
    assert_eq!((d.kind, d.value.as_str()), (RuleKind::Operations, "reset"));
    // Naming no operation at all passes no rule, not even `*`.
    a.operations = vec![];
    assert_eq!(denied(a.decide(&policy)).kind, RuleKind::Operations);
    a.agent = "codex";
    assert_eq!(denied(a.decide(&policy)).kind, RuleKind::Operations);
}

#[test]
fn refs_allow_matching_names_and_refuse_others() {
    let policy = example();
    let mut a = ask("claude-code", "branch");
    assert_eq!(a.decide(&policy), Decision::Allow);
    a.refs = vec!["refs/heads/agent/fix".into(), "refs/heads/main".into()];
    let d = denied(a.decide(&policy));
    assert_eq!(d.rule, "agents.claude-code.refs");
    assert_eq!(d.value, "refs/heads/main");
    a.refs = vec!["refs/heads/agent/deep/fix".into()];
    assert_eq!(denied(a.decide(&policy)).kind, RuleKind::Refs);
    // An operation that moves no ref is not limited by `refs`.
    a.refs = vec![];
    assert_eq!(a.decide(&policy), Decision::Allow);
}

#[test]
fn repositories_compare_whole_path_components() {
    let policy = example();
    let mut a = ask("claude-code", "commit");
    for allowed in ["/home/me/src", "/home/me/src/app", "/home/me/src/a/b"] {
        a.repositories = vec![PathBuf::from(allowed)];
        assert_eq!(a.decide(&policy), Decision::Allow, "{allowed}");
    }
    for refused in [
        "/home/me/src-evil",
        "/home/me/srcx/app",
        "/home/me",
        "/home/me/src/../secret",
        "home/me/src/app",
    ] {
        a.repositories = vec![PathBuf::from(refused)];
        let d = denied(a.decide(&policy));
        assert_eq!(
            d.rule, "agents.claude-code.pathConstraints.repositories",
            "{refused}"
        );
        assert_eq!(d.kind, RuleKind::Repositories);
    }
}

#[test]
fn worktrees_must_be_created_under_the_listed_locations() {
    let policy = example();
    let mut a = ask("claude-code", "worktree");
    a.worktrees = vec![PathBuf::from("/home/me/src/.worktrees/fix")];
    assert_eq!(a.decide(&policy), Decision::Allow);
    a.worktrees = vec![PathBuf::from("/home/me/src/app-fix")];
    let d = denied(a.decide(&policy));
    assert_eq!(
        (d.kind, d.value.as_str()),
        (RuleKind::Worktrees, "/home/me/src/app-fix")
    );
}

#[test]
fn an_agent_without_an_entry_or_a_default_is_refused() {
    let policy = Policy::parse(
        Path::new("p"),
        r#"{"version":1,"agents":{"claude-code":{"operations":["*"]}}}"#,
    )
    .unwrap();
    assert_eq!(ask("claude-code", "reset").decide(&policy), Decision::Allow);
    let d = denied(ask("codex", "commit").decide(&policy));
    assert_eq!((d.kind, d.rule.as_str()), (RuleKind::NoRule, "default"));
    // An empty list refuses everything.
    let closed = Policy::parse(
        Path::new("p"),
        r#"{"version":1,"default":{"operations":[]}}"#,
    )
    .unwrap();
    assert_eq!(
        denied(ask("codex", "branch").decide(&closed)).kind,
        RuleKind::Operations
    );
}

#[test]
fn a_denial_is_ready_for_a_403_body() {
    let d = denied(ask("claude-code", "push").decide(&example()));
    assert_eq!(
        serde_json::to_value(&d).unwrap(),
        json!({"rule": "agents.claude-code.operations", "kind": "operations", "value": "push",
               "message": "the agent policy rule `agents.claude-code.operations` does not allow push"})
    );
}

#[test]
fn prefixes_are_compared_in_canonical_form() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let text = json!({"version": 1, "default": {"operations": ["*"],
        "pathConstraints": {"repositories": [link]}}})
    .to_string();
    let policy = Policy::parse(Path::new("p"), &text).unwrap();
    let mut a = ask("a", "commit");
    a.repositories = vec![real.canonicalize().unwrap().join("repo")];
    assert_eq!(a.decide(&policy), Decision::Allow);
}

fn parse_err(text: &str) -> PolicyError {
    match Policy::parse(Path::new("p.json"), text) {
        Err(e) => e,
        Ok(p) => panic!("accepted {text}: {p:?}"),
    }
}

#[test]
fn unknown_versions_are_refused() {
    for text in [
        r#"{"version":2,"default":{"operations":["*"]}}"#,
        r#"{"version":0}"#,
        r#"{"version":"1"}"#,
        r#"{"version":1.5}"#,
    ] {
        assert!(
            matches!(parse_err(text), PolicyError::UnknownVersion { .. }),
            "{text}"
        );
    }
    let e = parse_err(r#"{"default":{"operations":["*"]}}"#);
    assert!(
        matches!(e, PolicyError::Malformed { ref at, .. } if at == "version"),
        "{e}"
    );
}

#[test]
fn malformed_files_and_unknown_keys_are_refused_with_where() {
    for (text, where_) in [
        ("", "."),
        ("{", "."),
        ("[]", "version"),
        (r#"{"version":1,"agent":{}}"#, "agent"),
        (
            r#"{"version":1,"default":{"operations":["*"],"ref":["refs/heads/x"]}}"#,
            "default.ref",
        ),
        (r#"{"version":1,"default":{"refs":[]}}"#, "default"),
        (
            r#"{"version":1,"default":{"operations":"*"}}"#,
            "default.operations",
        ),
        (
            r#"{"version":1,"default":{"operations":["*"],"pathConstraints":{"repos":[]}}}"#,
            "default.pathConstraints.repos",
        ),
    ] {
        match parse_err(text) {
            PolicyError::Malformed { at, .. } => assert_eq!(at, where_, "{text}"),
            e => panic!("{text}: {e}"),
        }
    }
}

#[test]
fn rules_that_could_never_mean_what_they_say_are_refused() {
    for (text, where_) in [
        (
            r#"{"version":1,"default":{"operations":["comit"]}}"#,
            "default.operations[0]",
        ),
        (
            r#"{"version":1,"default":{"operations":["*"],"refs":["heads/agent/*"]}}"#,
            "default.refs[0]",
        ),
        (
            r#"{"version":1,"default":{"operations":["*"],"refs":["refs/heads/x","refs/a?"]}}"#,
            "default.refs[1]",
        ),
        (
            r#"{"version":1,"default":{"operations":["*"],"pathConstraints":{"repositories":["src"]}}}"#,
            "default.pathConstraints.repositories[0]",
        ),
        (
            r#"{"version":1,"default":{"operations":["*"],"pathConstraints":{"worktrees":["/a/../b"]}}}"#,
            "default.pathConstraints.worktrees[0]",
        ),
        (
            r#"{"version":1,"agents":{"Claude Code":{"operations":["*"]}}}"#,
            "agents.Claude Code",
        ),
    ] {
        match parse_err(text) {
            PolicyError::Invalid { at, .. } => assert_eq!(at, where_, "{text}"),
            e => panic!("{text}: {e}"),
        }
    }
}

#[test]
fn a_configured_file_that_cannot_be_read_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    assert!(matches!(
        Policy::load(&missing),
        Err(PolicyError::Unreadable { .. })
    ));
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    assert!(matches!(
        Policy::load(&file.join("under-a-file")),
        Err(PolicyError::Unreadable { .. })
    ));
    assert!(matches!(
        Policy::load(dir.path()),
        Err(PolicyError::NotAFile { .. })
    ));
    // A FIFO is refused at once instead of blocking the start.
    let fifo = dir.path().join("fifo");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
    assert!(matches!(
        Policy::load(&fifo),
        Err(PolicyError::NotAFile { .. })
    ));
    let big = dir.path().join("big.json");
    std::fs::write(&big, vec![b' '; 1024 * 1024 + 1]).unwrap();
    assert!(matches!(
        Policy::load(&big),
        Err(PolicyError::NotAFile { .. })
    ));
    let binary = dir.path().join("binary.json");
    std::fs::write(&binary, b"{\"version\":1,\xff}").unwrap();
    assert!(matches!(
        Policy::load(&binary),
        Err(PolicyError::Malformed { .. })
    ));
    let good = dir.path().join("good.json");
    std::fs::write(&good, EXAMPLE).unwrap();
    assert_eq!(Policy::load(&good).unwrap(), example());
    // A symlink to a good file is followed (policies often live in managed dotfiles).
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&good, &link).unwrap();
    assert_eq!(Policy::load(&link).unwrap(), example());
}

#[test]
fn errors_name_the_file() {
    let e = parse_err(r#"{"version":3}"#);
    assert!(e.to_string().contains("p.json"), "{e}");
    assert!(e.to_string().contains("version 3"), "{e}");
}
