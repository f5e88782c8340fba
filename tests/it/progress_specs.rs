//! Progress of the spec tools that take a while: `create-proposal` (a linked worktree,
//! OpenSpec, the artifacts) and a confirmed `archive-change` (OpenSpec's archive, the
//! commit, the merge into main, the clean-up), step by step, each update forward and the
//! last one completing the whole.

use serde_json::{Value, json};

use crate::progress::{call, modern_meta, tool_params};
use crate::specs::{Ws, state, tick_all, write_artifacts};

/// Checks a call's updates against `steps` (what each count of done steps reads): the
/// first says nothing is done, each moves forward, each reads as its count says, and the
/// last is `last` when given.
fn check_steps(updates: &[Value], total: u64, steps: &[(u64, &str)], last: Option<u64>) {
    assert!(!updates.is_empty());
    assert_eq!(updates[0]["progress"], 0, "{updates:?}");
    let mut before = None;
    for u in updates {
        let n = u["progress"].as_u64().unwrap();
        assert!(before.is_none_or(|b| n > b), "not forward: {updates:?}");
        before = Some(n);
        assert_eq!(u["total"], total, "{u}");
        let words = steps.iter().find(|(at, _)| *at == n).map(|(_, w)| *w);
        assert_eq!(u["message"].as_str(), words, "{u}");
    }
    if last.is_some() {
        assert_eq!(before, last, "{updates:?}");
    }
}

#[test]
fn create_proposal_and_archive_change_report_their_steps() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    let mut server = ws.server();
    let create = json!({ "changeName": "add-greeting" });
    let (notes, answer) = call(
        &mut server,
        "c",
        tool_params("create-proposal", &create, modern_meta(Some(json!("cp")))),
    );
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let created = &answer["result"]["structuredContent"];
    assert!(created.get("errors").is_none(), "{created}");
    // Steps done: none (making the worktree), the worktree, the change; the artifacts are
    // the answer itself.
    check_steps(
        &notes,
        3,
        &[
            (0, "create-proposal: preparing the worktree"),
            (1, "create-proposal: creating the change with OpenSpec"),
            (2, "create-proposal: reading the change's artifacts"),
        ],
        None,
    );

    let wt = repo.join(".worktrees/add-greeting");
    write_artifacts(&ws.fx, &wt, "add-greeting", "greeting");
    let meta = wt.join("openspec/changes/add-greeting/.openspec.yaml");
    let text = std::fs::read_to_string(&meta).unwrap();
    std::fs::write(&meta, text.replace("status: creating", "status: draft")).unwrap();
    let apply = json!({ "changeName": "add-greeting", "folderId": "api" });
    state(&mut server, "apply-change", apply.clone());
    tick_all(&wt, "add-greeting");
    ws.fx.write(&wt, "src/app.rs", "fn hello() {}\n");
    ws.fx.git(&wt, &["add", "src/app.rs"]);
    ws.fx.git(&wt, &["commit", "-q", "-m", "feat(app): greet"]);
    assert_eq!(
        state(&mut server, "apply-change", apply)["applyState"],
        "all_done"
    );

    let archive = json!({ "changeName": "add-greeting", "folderId": "api", "confirm": true,
                          "commitMessage": "feat(greeting): greet users on first visit" });
    let (notes, answer) = call(
        &mut server,
        "a",
        tool_params("archive-change", &archive, modern_meta(Some(json!("ac")))),
    );
    assert_eq!(
        answer["result"]["structuredContent"]["status"], "done",
        "{answer}"
    );
    check_steps(
        &notes,
        7,
        &[
            (0, "archive-change: archiving with OpenSpec"),
            (3, "archive-change: archive-metadata done"),
            (4, "archive-change: commit done"),
            (5, "archive-change: merge-to-main done"),
            (6, "archive-change: worktree-remove done"),
            (7, "archive-change: branch-delete done"),
        ],
        Some(7),
    );
    assert!(!wt.exists(), "the worktree is removed");
}
