//! Where the spec tools find the OpenSpec CLI: never a program the project itself ships.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::common::{Fixture, Server, copy_executable, gitward_bin, write_executable};

/// A copy of the binary in a directory without a pinned install beside it, so only the
/// environment and the working directory could supply the CLI.
fn lone_binary(fx: &Fixture) -> PathBuf {
    let dir = fx.path("bin");
    let copy = dir.join("gitward");
    copy_executable(&gitward_bin(), &copy);
    copy
}

fn explore(fx: &Fixture, bin: &Path, cwd: &Path, desc: &str, path: &str) -> Value {
    let mut cmd = Command::new(bin);
    cmd.current_dir(cwd);
    let mut server = Server::start_cmd(fx, cmd, &[("FYLLO_WORKSPACE_JSON", desc), ("PATH", path)]);
    let reply = server.request(
        "tools/call",
        json!({ "name": "explore", "arguments": { "changeName": "one", "includeInstruction": false } }),
    );
    reply["result"]["structuredContent"].clone()
}

#[test]
fn a_project_cannot_supply_its_own_openspec() {
    let fx = Fixture::new();
    let repo = fx.init("proj", &[]);
    fx.commit(&repo, "README.md", "# project\n", "init");
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("node_modules/.bin/openspec");
    let made = Command::new(&real)
        .args(["new", "change", "one"])
        .current_dir(&repo)
        .env("CI", "1")
        .env("OPENSPEC_TELEMETRY", "0")
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");

    // The project's own `openspec`, in its node_modules and in a bin directory of its own.
    let marker = fx.path("canary-ran");
    let canary = format!("#!/bin/sh\necho \"$0\" >> '{}'\n", marker.display());
    write_executable(&repo.join("node_modules/.bin/openspec"), &canary);
    write_executable(&repo.join("tools/openspec"), &canary);

    let desc = json!({
        "version": 2, "workspaceId": "ws-1", "workspaceKind": "folder",
        "primaryFolderId": "proj",
        "folders": [{ "folderId": "proj", "folderName": "proj", "folderPath": repo }],
        "workspaceDataDir": fx.path("data"),
    })
    .to_string();
    let bin = lone_binary(&fx);
    let system = std::env::var("PATH").unwrap_or_default();

    // Started inside the project, with relative and in-project PATH entries first.
    let hostile_path = format!(
        "node_modules/.bin:tools:{}:{}:{system}",
        repo.join("node_modules/.bin").display(),
        repo.join("tools").display()
    );
    let state = explore(&fx, &bin, &repo, &desc, &hostile_path);
    assert!(
        !marker.exists(),
        "the project's openspec ran: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
    assert!(state.is_object(), "{state}");

    // An absolute PATH entry outside the workspace is still honoured.
    let outside = fx.path("outside-bin");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&real, outside.join("openspec")).unwrap();
    let good_path = format!("node_modules/.bin:{}:{system}", outside.display());
    let state = explore(&fx, &bin, &repo, &desc, &good_path);
    assert!(!marker.exists());
    assert!(state.get("errors").is_none(), "{state:#}");
    assert_eq!(
        state["currentChange"]["proposalRef"]["changeId"], "one",
        "{state:#}"
    );
}
