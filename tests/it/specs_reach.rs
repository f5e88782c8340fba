//! Spec tools act only inside their workspace folder: a worktree the repository
//! registers elsewhere, or an `openspec/` or `.worktrees/` symlink into another project,
//! is neither read nor written.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::specs::{Ws, state, tick_all, write_artifacts};

/// Another project, outside every workspace folder, with a change of its own.
fn other_project(ws: &Ws) -> (PathBuf, PathBuf, String) {
    let other = ws.fx.init("other", &[]);
    ws.fx.commit(&other, "README.md", "# other\n", "init");
    write_artifacts(&ws.fx, &other, "secret-change", "greeting");
    let meta = other.join("openspec/changes/secret-change/.openspec.yaml");
    let content = "schema: spec-driven\ncreated: 2026-01-01\nstatus: draft\n".to_owned();
    std::fs::write(&meta, &content).unwrap();
    std::fs::create_dir_all(other.join("openspec/specs")).unwrap();
    std::fs::create_dir_all(other.join("openspec/changes/archive")).unwrap();
    (other, meta, content)
}

fn codes(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|w| w["code"].as_str().map(str::to_owned))
        .collect()
}

fn assert_not_listed(explored: &Value, other: &Path) {
    let text = explored["activeChanges"].to_string();
    assert!(
        !text.contains("secret-change") && !text.contains(&other.display().to_string()),
        "another project's change was read: {explored:#}"
    );
}

#[test]
fn a_worktree_registered_outside_the_folder_is_neither_read_nor_written() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    let (other, meta, content) = other_project(&ws);
    // A real linked worktree, then its registration pointed at the other project.
    ws.fx.git(&repo, &["worktree", "add", "-q", ".worktrees/x"]);
    std::fs::write(
        repo.join(".git/worktrees/x/gitdir"),
        format!("{}\n", other.join(".git").display()),
    )
    .unwrap();
    let listed = ws.fx.git(&repo, &["worktree", "list", "--porcelain"]);
    assert!(listed.contains(&other.display().to_string()), "{listed}");

    let mut server = ws.server();
    let explored = state(&mut server, "explore", json!({}));
    assert_not_listed(&explored, &other);
    assert!(
        codes(&explored, "warnings").contains(&"MCP_PATH_OUTSIDE_FOLDER".to_owned()),
        "{explored:#}"
    );
    let applied = state(
        &mut server,
        "apply-change",
        json!({ "changeName": "secret-change", "folderId": "api" }),
    );
    assert_eq!(
        codes(&applied, "errors"),
        ["PROPOSAL_NOT_FOUND"],
        "{applied:#}"
    );
    assert_eq!(std::fs::read_to_string(&meta).unwrap(), content);
}

#[test]
fn an_openspec_symlink_to_another_project_is_refused() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    let (other, meta, content) = other_project(&ws);
    std::os::unix::fs::symlink(other.join("openspec"), repo.join("openspec")).unwrap();

    let mut server = ws.server();
    let explored = state(&mut server, "explore", json!({}));
    assert_not_listed(&explored, &other);
    assert!(
        codes(&explored, "warnings").contains(&"MCP_PATH_OUTSIDE_FOLDER".to_owned()),
        "{explored:#}"
    );
    let detail = state(
        &mut server,
        "explore",
        json!({ "changeName": "secret-change" }),
    );
    assert!(detail["currentChange"].is_null(), "{detail:#}");
    for (tool, args) in [
        (
            "apply-change",
            json!({ "changeName": "secret-change", "folderId": "api" }),
        ),
        (
            "archive-change",
            json!({ "changeName": "secret-change", "folderId": "api" }),
        ),
        (
            "create-proposal",
            json!({ "changeName": "fresh", "worktreeMode": "main" }),
        ),
    ] {
        let result = state(&mut server, tool, args);
        let text = result.to_string();
        assert!(
            text.contains("MCP_PATH_OUTSIDE_FOLDER"),
            "{tool}: {result:#}"
        );
    }
    assert_eq!(std::fs::read_to_string(&meta).unwrap(), content);
    assert!(!other.join("openspec/changes/fresh").exists());
}

#[test]
fn a_worktrees_symlink_leading_out_of_the_folder_is_refused() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    let elsewhere = ws.fx.path("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, repo.join(".worktrees")).unwrap();

    let mut server = ws.server();
    let created = state(
        &mut server,
        "create-proposal",
        json!({ "changeName": "fresh" }),
    );
    assert!(
        created.to_string().contains("MCP_PATH_OUTSIDE_FOLDER"),
        "{created:#}"
    );
    assert_eq!(
        std::fs::read_dir(&elsewhere).unwrap().count(),
        0,
        "a worktree was created outside the folder"
    );
}

#[test]
fn archiving_never_syncs_specs_into_another_project() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    let (other, _, _) = other_project(&ws);
    let theirs = other.join("openspec/specs/greeting");
    std::fs::create_dir_all(&theirs).unwrap();
    let spec = "## Purpose\n\nTheirs.\n";
    std::fs::write(theirs.join("spec.md"), spec).unwrap();

    let mut server = ws.server();
    state(
        &mut server,
        "create-proposal",
        json!({ "changeName": "one", "worktreeMode": "main" }),
    );
    write_artifacts(&ws.fx, &repo, "one", "greeting");
    tick_all(&repo, "one");
    std::os::unix::fs::symlink(&theirs, repo.join("openspec/specs/greeting")).unwrap();
    let archived = state(
        &mut server,
        "archive-change",
        json!({ "changeName": "one", "folderId": "api", "confirm": true,
                "commitMessage": "feat(greeting): add a greeting" }),
    );
    assert!(
        archived.to_string().contains("MCP_PATH_OUTSIDE_FOLDER"),
        "{archived:#}"
    );
    assert_eq!(
        std::fs::read_to_string(theirs.join("spec.md")).unwrap(),
        spec
    );
    assert!(
        repo.join("openspec/changes/one").is_dir(),
        "nothing was archived"
    );
}

#[test]
fn a_changes_symlink_inside_a_real_openspec_is_refused() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    let (other, _, _) = other_project(&ws);
    std::fs::create_dir_all(repo.join("openspec")).unwrap();
    std::os::unix::fs::symlink(
        other.join("openspec/changes"),
        repo.join("openspec/changes"),
    )
    .unwrap();

    let mut server = ws.server();
    let explored = state(&mut server, "explore", json!({}));
    assert_not_listed(&explored, &other);
    assert!(
        codes(&explored, "warnings").contains(&"MCP_PATH_OUTSIDE_FOLDER".to_owned()),
        "{explored:#}"
    );
}
