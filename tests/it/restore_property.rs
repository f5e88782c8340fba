//! The restore property: from a random repository state (staged, unstaged, untracked,
//! ignored, intent-to-add, deleted, mode and link changes, names that are not UTF-8, a
//! stash, a merge or rebase stopped on a conflict) a random write is proposed, approved
//! and run by the gateway's executor (real git, a real store), and restoring its restore
//! point gives back the repository as it was, byte for byte: the worktree (ignored files
//! included), the index file, HEAD, every ref and git's state files.
//!
//! CI runs `GITWARD_RESTORE_CASES` cases per test (default 100; two tests); more with
//! `scripts/restore-property.sh`.

use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use gitward::config::Config;
use gitward::gateway::server::executor::Executor;
use gitward::gateway::server::restore;
use gitward::gateway::server::store::Settings;
use jiff::Timestamp;
use proptest::prelude::*;
use proptest::test_runner::{Config as Cases, TestRunner};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::common::Fixture;
use crate::differential_support::{Mode, assert_same, picture};
use crate::exec_ops::Rig;
use crate::exec_restore::open;

/// Tracked files of the template, by index.
const TRACKED: &[&str] = &["t0.txt", "t1.txt", "dir/t2.txt", "exe.sh", "p.txt"];

/// One change to the repository before the write.
#[derive(Debug, Clone)]
enum Change {
    Edit(usize, usize),
    Stage(usize),
    Untracked(usize, usize),
    Ignored(usize),
    IntentToAdd(usize),
    Delete(usize),
    Chmod(usize),
    Link(usize),
    Stash,
    Merge,
    Rebase,
    /// `update-index --skip-worktree` of a tracked file.
    SkipWorktree(usize),
    /// `update-index --split-index`: the entries so far move to a shared index.
    SplitIndex,
}

/// The write proposed.
#[derive(Debug, Clone)]
enum Write {
    CommitAll,
    CommitIndex,
    Branch,
    Reset(&'static str),
    Discard,
    Patch(bool),
    Merge(&'static str),
    Rebase,
    Plan,
}

const CONTENTS: &[&[u8]] = &[b"changed\n", b"crlf\r\nline\r\n", b"\0\x01binary\xff", b""];

fn untracked_name(n: usize) -> PathBuf {
    let names: [&[u8]; 4] = [
        b"u.txt",
        b"new dir/u\xc3\xbc.txt",
        b"caf\xe9.txt",
        b"sp ace.txt",
    ];
    PathBuf::from(std::ffi::OsStr::from_bytes(names[n % names.len()]))
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        3 => (0..TRACKED.len(), 0..CONTENTS.len()).prop_map(|(i, v)| Change::Edit(i, v)),
        2 => (0..TRACKED.len()).prop_map(Change::Stage),
        2 => (0..4usize, 0..CONTENTS.len()).prop_map(|(n, v)| Change::Untracked(n, v)),
        2 => (0..2usize).prop_map(Change::Ignored),
        1 => (0..2usize).prop_map(Change::IntentToAdd),
        1 => (0..TRACKED.len()).prop_map(Change::Delete),
        1 => (0..TRACKED.len()).prop_map(Change::Chmod),
        1 => (0..TRACKED.len()).prop_map(Change::Link),
        1 => Just(Change::Stash),
        1 => Just(Change::Merge),
        1 => Just(Change::Rebase),
        1 => (0..TRACKED.len()).prop_map(Change::SkipWorktree),
        1 => Just(Change::SplitIndex),
    ]
}

fn write() -> impl Strategy<Value = Write> {
    prop_oneof![
        Just(Write::CommitAll),
        Just(Write::CommitIndex),
        Just(Write::Branch),
        prop_oneof![Just("soft"), Just("mixed"), Just("hard")].prop_map(Write::Reset),
        Just(Write::Discard),
        any::<bool>().prop_map(Write::Patch),
        prop_oneof![Just("merge"), Just("squash"), Just("rebase")].prop_map(Write::Merge),
        Just(Write::Rebase),
        Just(Write::Plan),
    ]
}

/// A patch of `p.txt` as the template has it.
const PATCH: &str =
    "diff --git a/p.txt b/p.txt\n--- a/p.txt\n+++ b/p.txt\n@@ -1 +1,2 @@\n patch me\n+patched\n";

/// The repository every case starts from, built once per test binary.
fn template() -> &'static (Fixture, PathBuf) {
    static TEMPLATE: OnceLock<(Fixture, PathBuf)> = OnceLock::new();
    TEMPLATE.get_or_init(|| {
        let fx = Fixture::new();
        let repo = fx.init("template", &[]);
        for (i, path) in TRACKED.iter().enumerate() {
            let text = if *path == "p.txt" {
                "patch me\n".to_owned()
            } else {
                format!("file {i}\n")
            };
            fx.write(&repo, path, &text);
        }
        fx.write(&repo, ".gitignore", "*.env\nign/\n");
        fx.write(&repo, "c.txt", "base\n");
        std::os::unix::fs::symlink("t0.txt", repo.join("lnk")).unwrap();
        fx.git(&repo, &["update-index", "--chmod=+x", "--add", "exe.sh"]);
        fx.git(&repo, &["add", "-A"]);
        fx.git(&repo, &["commit", "-q", "-m", "base"]);
        std::fs::set_permissions(
            repo.join("exe.sh"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        fx.commit(&repo, "c.txt", "main\n", "main c");
        fx.git(&repo, &["switch", "-q", "-c", "other", "HEAD~1"]);
        fx.commit(&repo, "c.txt", "other\n", "other c");
        fx.git(&repo, &["switch", "-q", "-c", "clean", "main"]);
        fx.commit(&repo, "clean.txt", "clean\n", "clean work");
        // `clean` tracks the files main ignores: checking it out overwrites them.
        fx.write(&repo, "secret.env", "tracked on clean\n");
        fx.write(&repo, "ign/deep.txt", "tracked on clean\n");
        fx.git(&repo, &["add", "-f", "secret.env", "ign/deep.txt"]);
        fx.git(&repo, &["commit", "-q", "-m", "clean tracks ignored names"]);
        fx.git(&repo, &["switch", "-q", "main"]);
        (fx, repo)
    })
}

/// A rig (store, executor) whose repository is a copy of the template.
fn rig() -> Rig {
    let fx = Fixture::new();
    let repo = fx.path("repo");
    let ok = std::process::Command::new("cp")
        .arg("-a")
        .arg(&template().1)
        .arg(&repo)
        .status()
        .unwrap();
    assert!(ok.success());
    let db = fx.path("gw/gateway.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    std::fs::set_permissions(
        db.parent().unwrap(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let config = Config {
        allowed_roots: vec![fx.root()],
        ..Config::default()
    };
    let exec = Executor::new(&db, Settings::default(), Arc::new(config));
    Rig {
        fx,
        repo,
        db,
        exec,
        cancel: CancellationToken::new(),
    }
}

/// Applies `change`; git refusing one (nothing to stash, a merge already running) is part
/// of the state space, not a failure.
fn apply(rig: &Rig, change: &Change) {
    let repo = &rig.repo;
    let git = |args: &[&str]| {
        let _ = rig.fx.git_output(repo, args);
    };
    match change {
        Change::Edit(i, v) => {
            let path = repo.join(TRACKED[*i]);
            if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_symlink()) {
                std::fs::remove_file(&path).unwrap();
            }
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, CONTENTS[*v]).unwrap();
        }
        Change::Stage(i) => git(&["add", "-A", "--", TRACKED[*i]]),
        Change::Untracked(n, v) => {
            let path = repo.join(untracked_name(*n));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, CONTENTS[*v]).unwrap();
        }
        Change::Ignored(n) => {
            rig.fx
                .write(repo, ["secret.env", "ign/deep.txt"][*n], "ignored bytes\n")
        }
        Change::IntentToAdd(n) => {
            let name = format!("ita{n}.txt");
            rig.fx.write(repo, &name, "intent\n");
            git(&["add", "-N", "--", &name]);
        }
        Change::Delete(i) => {
            let _ = std::fs::remove_file(repo.join(TRACKED[*i]));
        }
        Change::Chmod(i) => {
            use std::os::unix::fs::PermissionsExt;
            let path = repo.join(TRACKED[*i]);
            if let Ok(meta) = std::fs::symlink_metadata(&path)
                && meta.is_file()
            {
                let mode = meta.permissions().mode() ^ 0o111;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            }
        }
        Change::Link(i) => {
            let path = repo.join(TRACKED[*i]);
            let _ = std::fs::remove_file(&path);
            std::os::unix::fs::symlink("c.txt", path).unwrap();
        }
        Change::Stash => git(&["stash", "push", "-q"]),
        Change::Merge => git(&["merge", "-q", "other"]),
        Change::Rebase => git(&["rebase", "-q", "other"]),
        Change::SkipWorktree(i) => git(&["update-index", "--skip-worktree", "--", TRACKED[*i]]),
        Change::SplitIndex => git(&["update-index", "--split-index"]),
    }
}

fn fields(write: &Write) -> (&'static str, Value) {
    match write {
        Write::CommitAll => ("commit", json!({"message": "all", "stageAll": true})),
        Write::CommitIndex => ("commit", json!({"message": "index"})),
        Write::Branch => ("branch", json!({"name": "b-new", "startPoint": "clean"})),
        Write::Reset(mode) => ("reset", json!({"targetRef": "HEAD~1", "mode": mode})),
        Write::Discard => ("discard", json!({"paths": ["t0.txt", "u.txt", "dir"]})),
        Write::Patch(index) => (
            "patch",
            json!({"patchContent": PATCH, "applyToIndex": index}),
        ),
        Write::Merge(strategy) => (
            "merge",
            json!({"sourceRef": "clean", "targetRef": "main", "strategy": strategy}),
        ),
        Write::Rebase => ("rebase", json!({"ontoRef": "clean"})),
        Write::Plan => (
            "plan",
            json!({"steps": [
                {"operationType": "patch", "patchContent": PATCH, "applyToIndex": true},
                {"operationType": "reset", "targetRef": "clean", "mode": "mixed"},
            ]}),
        ),
    }
}

/// One case: the state, the write, its restore; panics on any difference.
fn case(changes: &[Change], write: &Write) {
    let rig = rig();
    for change in changes {
        apply(&rig, change);
    }
    let before = picture(&rig.fx, &rig.repo, Mode::Exact);
    let (kind, fields) = fields(write);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let Ok(id) = rig.propose(kind, fields).await else {
            // Refused when proposed: nothing may have changed.
            assert_same(
                "a refused proposal",
                &before,
                &picture(&rig.fx, &rig.repo, Mode::Exact),
            );
            return;
        };
        rig.approve(&id);
        let record = rig.run(&id).await;
        let result = record.result.as_ref().expect("a result");
        let Some(rp) = result.restore_point_id.as_deref() else {
            assert_same(
                "a write that took no restore point",
                &before,
                &picture(&rig.fx, &rig.repo, Mode::Exact),
            );
            return;
        };
        let mut store = rig.store();
        let point = store.restore_point(rp).unwrap().expect("the point");
        let repo = open(&rig).await;
        restore::restore_in(
            &mut store,
            &repo,
            &point,
            false,
            &rig.cancel,
            Timestamp::now(),
        )
        .await
        .unwrap_or_else(|e| panic!("{kind} ({:?}): restore refused: {e:?}", record.status));
        assert_same(
            &format!(
                "{kind} ({:?}): before (-) against restored (+)",
                record.status
            ),
            &before,
            &picture(&rig.fx, &rig.repo, Mode::Exact),
        );
    });
}

/// Cases per test: `GITWARD_RESTORE_CASES`, else 100.
fn cases() -> u32 {
    std::env::var("GITWARD_RESTORE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100)
}

fn check(strategy: impl Strategy<Value = (Vec<Change>, Write)>) {
    let config = Cases {
        cases: cases(),
        failure_persistence: None,
        ..Cases::default()
    };
    let mut runner = TestRunner::new(config);
    let outcome = runner.run(&strategy, |(changes, write)| {
        case(&changes, &write);
        Ok(())
    });
    if let Err(e) = outcome {
        panic!("{e}");
    }
}

#[test]
fn restoring_any_write_from_a_working_state_gives_back_every_byte() {
    check((prop::collection::vec(change(), 0..8), write()));
}

#[test]
fn restoring_any_write_from_an_operation_in_progress_gives_back_every_byte() {
    let stopped = prop_oneof![
        Just(Change::Merge),
        Just(Change::Rebase),
        Just(Change::Stash)
    ];
    let state = (stopped, prop::collection::vec(change(), 0..5)).prop_map(|(first, rest)| {
        let mut all = vec![first];
        all.extend(rest);
        all
    });
    check((state, write()));
}
