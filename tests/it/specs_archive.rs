//! The archive's promises around the finalization: nothing it cannot finish is started,
//! history is never rewritten, and each answer says what is true.

use serde_json::{Value, json};

use crate::specs::{Ws, call, read, ready_main, state, tick_all, write_artifacts};

const CONFIRM: &str = r#"{"changeName":"one","folderId":"api","confirm":true,"commitMessage":"feat(greeting): say hello"}"#;

fn confirm() -> Value {
    serde_json::from_str(CONFIRM).unwrap()
}

fn archive_calls(ws: &Ws) -> usize {
    ws.calls_log()
        .lines()
        .filter(|l| l.starts_with("archive"))
        .count()
}

#[test]
fn uncommitted_implementation_blocks_the_archive_before_openspec_runs() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    ws.wrap(":");
    let mut server = ws.server();
    state(
        &mut server,
        "create-proposal",
        json!({ "changeName": "one" }),
    );
    let wt = repo.join(".worktrees/one");
    write_artifacts(&ws.fx, &wt, "one", "greeting");
    ws.fx.write(&wt, "hello.sh", "echo hello\n");
    ws.fx
        .write(&wt, "README.md", "# project\n\nRun hello.sh.\n");
    tick_all(&wt, "one");

    let preview = state(
        &mut server,
        "archive-change",
        json!({ "changeName": "one", "folderId": "api" }),
    );
    assert_eq!(preview["status"], "failed", "{preview:#}");
    assert_eq!(preview["archive"]["error"]["code"], "finalization-blocked");
    let check = &preview["finalizationCheck"];
    let uncommitted = check["uncommittedPaths"].as_array().unwrap();
    for p in ["README.md", "hello.sh", "openspec/changes/one/tasks.md"] {
        assert!(uncommitted.contains(&json!(p)), "{p}: {check:#}");
    }
    assert_eq!(check["blockers"][0]["code"], "uncommitted-work");
    assert_eq!(
        check["blockers"][0]["paths"],
        json!(["README.md", "hello.sh"])
    );
    assert!(
        check["blockers"][0]["hint"]
            .as_str()
            .unwrap()
            .contains("proposal/one")
    );

    let refused = state(&mut server, "archive-change", confirm());
    assert_eq!(refused["status"], "failed");
    assert_eq!(refused["archive"]["ok"], false);
    assert_eq!(refused["archive"]["error"]["code"], "finalization-blocked");
    assert_eq!(archive_calls(&ws), 0, "OpenSpec never ran");
    assert!(wt.join("openspec/changes/one").is_dir(), "still active");
    assert_eq!(ws.fx.git(&repo, &["log", "--format=%s"]), "init");

    // The agent commits its implementation on the proposal branch, as apply-change says.
    ws.fx.git(&wt, &["add", "-A"]);
    ws.fx.git(
        &wt,
        &["commit", "-q", "-m", "feat(greeting): add hello script"],
    );
    let done = state(&mut server, "archive-change", confirm());
    assert_eq!(done["status"], "done", "{done:#}");
    assert_eq!(read(&repo.join("hello.sh")), "echo hello\n");
    assert!(read(&repo.join("README.md")).contains("hello.sh"));
    assert!(!wt.exists());
    assert_eq!(ws.fx.git(&repo, &["branch", "--list", "proposal/one"]), "");
    assert_eq!(ws.fx.git(&repo, &["status", "--porcelain"]), "");
}

#[test]
fn a_dirty_main_in_the_merges_way_is_named_before_anything_is_archived() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    let mut server = ws.server();
    state(
        &mut server,
        "create-proposal",
        json!({ "changeName": "one" }),
    );
    let wt = repo.join(".worktrees/one");
    write_artifacts(&ws.fx, &wt, "one", "greeting");
    tick_all(&wt, "one");
    ws.fx.write(&wt, "hello.sh", "echo hello\n");
    ws.fx.git(&wt, &["add", "hello.sh"]);
    ws.fx.git(
        &wt,
        &["commit", "-q", "-m", "feat(greeting): add hello script"],
    );
    // Main has not moved: an unrelated uncommitted file is no obstacle to the
    // fast-forward, so it does not block.
    ws.fx.write(&repo, "notes.txt", "mine\n");
    let preview = state(
        &mut server,
        "archive-change",
        json!({ "changeName": "one", "folderId": "api" }),
    );
    assert_eq!(preview["status"], "done", "{preview:#}");
    assert_eq!(preview["finalizationCheck"]["blockers"], json!([]));
    // A file the merge would overwrite does.
    ws.fx.write(&repo, "hello.sh", "echo mine\n");
    let refused = state(&mut server, "archive-change", confirm());
    assert_eq!(refused["status"], "failed", "{refused:#}");
    let blocker = &refused["finalizationCheck"]["blockers"][0];
    assert_eq!(blocker["code"], "main-dirty");
    assert_eq!(blocker["paths"], json!(["hello.sh"]));
    assert!(wt.join("openspec/changes/one").is_dir(), "not archived");
    assert_eq!(read(&repo.join("hello.sh")), "echo mine\n");

    // Main moves on: now any uncommitted path in main blocks, since the proposal must
    // be rebased first and that needs clean trees.
    std::fs::remove_file(repo.join("hello.sh")).unwrap();
    ws.fx.write(&repo, "other.txt", "x\n");
    ws.fx.git(&repo, &["add", "other.txt"]);
    ws.fx.git(&repo, &["commit", "-q", "-m", "main moves on"]);
    let moved = state(
        &mut server,
        "archive-change",
        json!({ "changeName": "one", "folderId": "api" }),
    );
    let blocker = &moved["finalizationCheck"]["blockers"][0];
    assert_eq!(blocker["code"], "main-dirty", "{moved:#}");
    assert_eq!(blocker["paths"], json!(["notes.txt"]));
    assert!(blocker["message"].as_str().unwrap().contains("moved on"));

    std::fs::remove_file(repo.join("notes.txt")).unwrap();
    let done = state(&mut server, "archive-change", confirm());
    assert_eq!(done["status"], "done", "{done:#}");
    assert_eq!(read(&repo.join("hello.sh")), "echo hello\n");
}

#[test]
fn a_historical_archive_is_never_rewritten_and_a_finished_one_says_so() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    ws.wrap(":");
    let old = "openspec/changes/archive/2024-01-02-old";
    let meta = "schema: spec-driven\ncreated: 2024-01-01\nstatus: applying\n";
    ws.fx
        .commit(&repo, &format!("{old}/.openspec.yaml"), meta, "history");
    ws.fx
        .write(&repo, &format!("{old}/tasks.md"), "- [x] 1.1 done\n");
    ws.fx.git(&repo, &["add", "-A"]);
    ws.fx.git(&repo, &["commit", "-q", "-m", "history tasks"]);
    // Someone else's uncommitted OpenSpec config.
    ws.fx
        .write(&repo, "openspec/config.yaml", "schema: spec-driven\n");
    let head = ws.fx.git(&repo, &["rev-parse", "HEAD"]);
    let mut server = ws.server();
    for args in [
        json!({ "changeName": "old", "folderId": "api" }),
        json!({ "changeName": "old", "folderId": "api", "confirm": true, "commitMessage": "feat(old): again" }),
    ] {
        let answer = state(&mut server, "archive-change", args);
        let e = &answer["errors"][0];
        assert_eq!(e["code"], "PROPOSAL_ALREADY_ARCHIVED", "{answer:#}");
        assert_eq!(e["details"]["archivePath"], json!(repo.join(old)));
    }
    assert_eq!(read(&repo.join(old).join(".openspec.yaml")), meta);
    assert_eq!(ws.fx.git(&repo, &["rev-parse", "HEAD"]), head);
    assert_eq!(
        ws.fx.git(&repo, &["status", "--porcelain"]),
        "?? openspec/config.yaml"
    );
    assert_eq!(archive_calls(&ws), 0);
}

#[test]
fn unconfirmed_output_after_openspec_moved_the_change_does_not_claim_nothing_happened() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    // The real archive runs, but its reply is replaced by one without a confirmation.
    ws.wrap("\"$REAL\" \"$@\" > /dev/null; echo '{}'; exit 0");
    let mut server = ws.server();
    ready_main(&mut ws, &mut server, &repo, "one");
    ws.fx.git(&repo, &["add", "-A"]);
    ws.fx.git(&repo, &["commit", "-q", "-m", "wip"]);
    let failed = state(&mut server, "archive-change", confirm());
    let e = &failed["archive"]["error"];
    assert_eq!(e["code"], "openspec-archive-not-confirmed", "{failed:#}");
    let hint = e["retryHint"].as_str().unwrap();
    assert!(!hint.starts_with("Nothing was written"), "{hint}");
    assert!(hint.contains("did move the change"), "{hint}");
    assert!(!repo.join("openspec/changes/one").exists());
}

#[test]
fn a_quoted_timestamp_is_unquoted_by_the_next_status_write() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    let mut server = ws.server();
    ready_main(&mut ws, &mut server, &repo, "one");
    let path = repo.join("openspec/changes/one/.openspec.yaml");
    let text = read(&path);
    let at = text
        .lines()
        .find_map(|l| l.strip_prefix("createdAt: "))
        .unwrap()
        .to_owned();
    std::fs::write(
        &path,
        text.replace(&format!("createdAt: {at}"), &format!("createdAt: \"{at}\"")),
    )
    .unwrap();
    let applied = state(
        &mut server,
        "apply-change",
        json!({ "changeName": "one", "folderId": "api" }),
    );
    assert_eq!(applied["applyState"], "all_done", "{applied:#}");
    let after = read(&path);
    assert!(after.contains(&format!("\ncreatedAt: {at}\n")), "{after}");
    assert!(after.contains("\nstatus: applying\n"), "{after}");
}

#[test]
fn the_proposal_refs_change_id_is_accepted_for_change_name() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    let mut server = ws.server();
    ready_main(&mut ws, &mut server, &repo, "one");
    for tool in ["apply-change", "archive-change", "explore"] {
        let (answer, _, is_error) = call(
            &mut server,
            tool,
            json!({ "changeId": "one", "folderId": "api" }),
        );
        assert!(!is_error, "{tool}: {answer}");
        assert_eq!(answer["errors"], Value::Null, "{tool}: {answer:#}");
    }
    let (both, _, is_error) = call(
        &mut server,
        "apply-change",
        json!({ "changeId": "one", "changeName": "one", "folderId": "api" }),
    );
    assert!(is_error, "one field, named once: {both}");
}

#[test]
fn a_repeated_plan_slug_says_what_to_do() {
    let mut ws = Ws::new();
    ws.repo("api");
    let mut server = ws.server();
    let args = json!({ "goal": "Look around", "slug": "look" });
    let first = state(&mut server, "create-plan", args.clone());
    let again = state(&mut server, "create-plan", args);
    let e = &again["errors"][0];
    assert_eq!(e["code"], "EEXIST");
    assert_eq!(e["details"]["planPath"], first["planPath"]);
    assert!(
        e["details"]["nextStep"]
            .as_str()
            .unwrap()
            .contains("another slug")
    );
}

#[test]
fn include_instruction_carries_its_first_use_rule_in_every_schema() {
    let mut ws = Ws::new();
    ws.repo("api");
    let mut server = ws.server();
    let list = server.request("tools/list", json!({}));
    let spec_tools: Vec<&Value> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| {
            t["inputSchema"]["properties"]
                .get("includeInstruction")
                .is_some()
        })
        .collect();
    assert_eq!(spec_tools.len(), 5);
    for t in spec_tools {
        let text = &t["inputSchema"]["properties"]["includeInstruction"]["description"];
        assert!(
            text.as_str().is_some_and(|d| d.contains("first use")),
            "{}: {text}",
            t["name"]
        );
    }
}
