//! The repository's own programs on approved writes — hooks (in `.git/hooks` and in a
//! `core.hooksPath`), a filter driver, the signing program — for each write type, under
//! the same user and under a separate gateway user: the card lists every program the
//! write may run and the result and the audit entry record them; what ran is always among
//! what the card listed; and where another user can change them (the separate-user setup,
//! the repository writable by both) the write is refused with an error naming them and
//! nothing of theirs runs.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::Fixture;
use crate::op_setup::with_origin;
use crate::op_support::card;
use crate::operation_e2e::{Gateway, settle};
use crate::trust_transport::{Setup, loot, plant, start_with_env, status_of};

/// The hooks planted, each leaving a file of its name in the loot directory.
const HOOKS: &[&str] = &[
    "pre-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "reference-transaction",
    "pre-push",
    "post-checkout",
];

/// A repository with every kind of program planted: hooks, a clean filter on `*.txt`
/// and commit signing through a repository `gpg.program` (disabled again below when the
/// case wants a write that can complete).
fn planted(fx: &Fixture, loot: &Path, hooks_path: bool) -> std::path::PathBuf {
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "one\n", "first");
    let hooks = if hooks_path {
        let dir = repo.join("tracked-hooks");
        fx.git(&repo, &["config", "core.hooksPath", "tracked-hooks"]);
        dir
    } else {
        repo.join(".git/hooks")
    };
    for hook in HOOKS {
        plant(
            &hooks.join(hook),
            &format!("touch {}/{hook}\n", loot.display()),
        );
    }
    let filter = plant(
        &repo.join(".git/clean-filter"),
        &format!("touch {}/evil.clean\nexec cat\n", loot.display()),
    );
    fx.write(&repo, ".git/info/attributes", "*.txt filter=evil\n");
    fx.git(&repo, &["config", "filter.evil.clean", &filter]);
    repo
}

/// What ran: the loot directory's entries.
fn ran(loot: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(loot)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

fn listed(card: &Value) -> Vec<String> {
    card["preview"]["programs"]
        .as_array()
        .unwrap_or_else(|| panic!("the card lists no programs: {card}"))
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect()
}

fn propose(gateway: &Gateway, fx: &Fixture, kind: &str, args: Value) -> (String, Value) {
    let mut sidecar = gateway.sidecar(fx);
    let proposed = sidecar.call(&format!("operation.preview.{kind}"), args);
    assert_eq!(proposed["accepted"], true, "{proposed}");
    let id = proposed["previewId"].as_str().unwrap().to_owned();
    let shown = card(gateway, &id);
    (id, shown)
}

fn case(setup: Setup, kind: &str, hooks_path: bool) {
    let fx = Fixture::new();
    let loot = loot(&fx);
    let repo = planted(&fx, &loot, hooks_path);
    let bare = with_origin(&fx, &repo, "origin.git");
    fx.commit(&repo, "b.md", "b\n", "second");
    // Signing through a program of the repository's: it leaves its trace and answers as
    // gpg does (the signature on stdout, the status line git looks for on stderr).
    let gpg = plant(
        &repo.join(".git/fake-gpg"),
        &format!(
            "touch {}/openpgp\ncat >/dev/null\n\
             printf -- '-----BEGIN PGP SIGNATURE-----\\nx\\n-----END PGP SIGNATURE-----\\n'\n\
             printf '\\n[GNUPG:] SIG_CREATED D 1 8 00 0 X\\n' >&2\n",
            loot.display()
        ),
    );
    fx.git(&repo, &["config", "gpg.program", &gpg]);
    fx.git(&repo, &["config", "commit.gpgSign", "true"]);
    fx.write(&repo, "a.txt", "one\ntwo\n");
    for entry in std::fs::read_dir(&loot).unwrap() {
        std::fs::remove_file(entry.unwrap().path()).unwrap();
    }
    let ledger = fx.path("audit/mcp.jsonl");
    std::fs::create_dir_all(ledger.parent().unwrap()).unwrap();
    let ledger_env = ledger.display().to_string();
    let env = [("FLUXGIT_MCP_AUDIT_LOG", ledger_env.as_str())];
    let audit_dir = ledger.parent().unwrap().to_path_buf();
    let gateway = start_with_env(&fx, setup, &[&repo, &bare, &audit_dir], &env);
    let args = match kind {
        "commit" => json!({"repoPath": repo, "reason": "planted programs",
                           "message": "Second line", "paths": ["a.txt"]}),
        "push" => json!({"repoPath": repo, "reason": "planted programs", "branch": "main"}),
        "branch" => json!({"repoPath": repo, "reason": "planted programs", "name": "agent/x"}),
        other => panic!("no arguments for {other}"),
    };
    let head = fx.git(&repo, &["rev-parse", "HEAD"]);
    let (id, shown) = propose(&gateway, &fx, kind, args);
    let names = listed(&shown);
    let mut sidecar = gateway.sidecar(&fx);
    gateway.approve(&id);
    let done = settle(&mut sidecar, &id);
    let what = format!("{setup:?} {kind} hooksPath={hooks_path}");
    match setup {
        Setup::SameUser => {
            assert_eq!(status_of(&done), "completed", "{what}: {done}");
            for hook in HOOKS {
                assert!(names.iter().any(|n| n == hook), "{what}: {names:?}");
            }
            assert!(names.iter().any(|n| n == "evil.clean"), "{what}: {names:?}");
            let ran = ran(&loot);
            assert!(!ran.is_empty(), "{what}: nothing planted ran");
            for program in &ran {
                assert!(
                    names.contains(program),
                    "{what}: {program} ran but the card listed {names:?}"
                );
            }
            let recorded = &done["data"]["result"]["programs"];
            assert_eq!(recorded, &shown["preview"]["programs"], "{what}: {done}");
            // The ledger is appended after the status settles: wait for the entry.
            let mut entry = None;
            for _ in 0..200 {
                let text = std::fs::read_to_string(&ledger).unwrap_or_default();
                entry = text
                    .lines()
                    .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                    .find(|e| e["previewId"] == json!(id) && e["to"] == "completed");
                if entry.is_some() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            let entry = entry.unwrap_or_else(|| panic!("{what}: no completion entry"));
            assert_eq!(entry["programs"], *recorded, "{what}: {entry}");
        }
        Setup::SeparateUser => {
            assert!(
                shown["preview"]["programsRefused"]
                    .as_str()
                    .is_some_and(|w| w.contains("pre-commit")),
                "{what}: {shown}"
            );
            assert_eq!(status_of(&done), "failed", "{what}: {done}");
            let message = done.to_string();
            assert!(
                message.contains("another user") && message.contains("evil.clean"),
                "{what}: {message}"
            );
            assert_eq!(ran(&loot), Vec::<String>::new(), "{what}");
            assert_eq!(fx.git(&repo, &["rev-parse", "HEAD"]), head, "{what}");
        }
    }
}

#[test]
fn planted_programs_are_listed_and_only_they_run_as_the_same_user() {
    for kind in ["commit", "push", "branch"] {
        case(Setup::SameUser, kind, false);
    }
    case(Setup::SameUser, "commit", true);
}

#[test]
fn planted_programs_another_user_can_change_never_run_as_a_separate_user() {
    for kind in ["commit", "push", "branch"] {
        case(Setup::SeparateUser, kind, false);
    }
    case(Setup::SeparateUser, "commit", true);
}
