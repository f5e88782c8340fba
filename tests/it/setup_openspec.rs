//! Where the spec tools find the OpenSpec CLI when gitward came without it (`cargo
//! install`, `uvx`): the error names the one command that installs it, and the place
//! that command installs to is searched. The binary runs from a copy outside the checkout,
//! as an installed one does, so the checkout's own `node_modules` is not next to it.
//! `scripts/test-install` runs `gitward setup openspec` itself (with npm).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::common::{Fixture, Server, gitward_bin};
use crate::specs::state;

/// A copy of the binary in its own directory of the fixture, as an install leaves it.
fn installed_copy(fx: &Fixture) -> PathBuf {
    let bin = fx.path("install/bin/gitward");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::fs::copy(gitward_bin(), &bin).unwrap();
    bin
}

/// The checkout's pinned OpenSpec install (`scripts/setup`).
fn checkout_node_modules() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("node_modules");
    assert!(
        dir.join(".bin/openspec").exists(),
        "run scripts/setup first: {} has no OpenSpec CLI",
        dir.display()
    );
    dir
}

/// A PATH that holds git and node and nothing else: a directory of links to them.
fn git_and_node(fx: &Fixture) -> String {
    let dir = fx.path("path-bin");
    std::fs::create_dir_all(&dir).unwrap();
    for program in ["git", "node"] {
        std::os::unix::fs::symlink(which(program), dir.join(program)).unwrap();
    }
    dir.display().to_string()
}

fn which(program: &str) -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{program} is not on PATH"))
}

fn server(fx: &Fixture, bin: &Path, repo: &Path) -> Server {
    let mut cmd = Command::new(bin);
    cmd.args(["--workspace", &fx.workspace_file(repo)]);
    Server::start_cmd(fx, cmd, &[("PATH", &git_and_node(fx))])
}

fn propose(server: &mut Server) -> Value {
    state(
        server,
        "create-proposal",
        json!({ "changeName": "add-install", "worktreeMode": "main" }),
    )
}

#[test]
fn a_missing_cli_names_the_setup_command() {
    let fx = Fixture::new();
    let repo = fx.init("api", &[]);
    fx.commit(&repo, "README.md", "# api\n", "init");
    let bin = installed_copy(&fx);
    let failed = propose(&mut server(&fx, &bin, &repo));
    let error = &failed["errors"][0];
    assert_eq!(error["code"], "OPENSPEC_NOT_FOUND", "{failed:#}");
    let message = error["message"].as_str().unwrap();
    let data_cli = fx
        .home()
        .join(".local/share/gitward/openspec/1.13.2/node_modules/.bin/openspec");
    assert!(
        message.starts_with(
            "the OpenSpec CLI was not found; run `gitward setup openspec` to install OpenSpec 1.13.2"
        ),
        "{message}"
    );
    assert!(
        message.contains(&data_cli.display().to_string()),
        "{message}"
    );
    assert!(!repo.join("openspec/changes/add-install").exists());
}

#[test]
fn the_cli_in_the_data_directory_is_found() {
    let fx = Fixture::new();
    let repo = fx.init("api", &[]);
    fx.commit(&repo, "README.md", "# api\n", "init");
    let bin = installed_copy(&fx);
    // What `gitward setup openspec` leaves: an npm prefix holding the pinned release.
    let prefix = fx.home().join(".local/share/gitward/openspec/1.13.2");
    std::fs::create_dir_all(&prefix).unwrap();
    std::os::unix::fs::symlink(checkout_node_modules(), prefix.join("node_modules")).unwrap();
    let created = propose(&mut server(&fx, &bin, &repo));
    assert!(created.get("errors").is_none(), "{created:#}");
    assert_eq!(created["target"]["proposalRef"]["changeId"], "add-install");
    assert!(repo.join("openspec/changes/add-install").is_dir());
}

#[test]
fn setup_without_npm_says_what_to_install() {
    let fx = Fixture::new();
    let bin = installed_copy(&fx);
    let out = Command::new(&bin)
        .args(["setup", "openspec"])
        .env_clear()
        .env("HOME", fx.home())
        .env("PATH", git_and_node(&fx))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("npm was not found") && stderr.contains("Node.js 20.19"),
        "{stderr}"
    );
    assert!(!fx.home().join(".local/share/gitward/openspec").exists());
}
