//! Transport and credential programs a repository names in its own configuration never
//! run on an approved push, whether the gateway runs as the agent's user or as a separate
//! one (the README's hard separation): a planted `remote.<name>.receivepack` would copy
//! the gateway's CLI token, a repository `credential.helper` would receive the password
//! the user's own helper supplied, and `core.askPass`, `core.sshCommand` and an `ext::`
//! URL (allowed by the repository) would each start a program of the repository's
//! choosing. The user's own helper still answers.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::{Fixture, second_user, write_executable};
use crate::op_setup::{remote_refs, with_origin};
use crate::operation_e2e::{Gateway, settle};

#[derive(Clone, Copy, Debug)]
pub enum Setup {
    /// The gateway runs as the agent's own user.
    SameUser,
    /// The gateway runs as `gitward-gw`; the repositories are writable by both.
    SeparateUser,
}

/// A directory both users may write, where planted programs leave their traces.
pub fn loot(fx: &Fixture) -> PathBuf {
    let dir = fx.path("loot");
    std::fs::create_dir_all(&dir).unwrap();
    let status = std::process::Command::new("chmod")
        .args(["1777", "--"])
        .arg(&dir)
        .status()
        .unwrap();
    assert!(status.success());
    dir
}

/// Starts the gateway for `setup`; under a separate user, `shared` become writable by
/// both users and the run directory the gateway's own.
pub fn start(fx: &Fixture, setup: Setup, shared: &[&Path]) -> Gateway {
    start_with_env(fx, setup, shared, &[])
}

/// [`start`] with `env` added to the gateway's environment.
pub fn start_with_env(
    fx: &Fixture,
    setup: Setup,
    shared: &[&Path],
    env: &[(&str, &str)],
) -> Gateway {
    match setup {
        Setup::SameUser => Gateway::start_with_env(fx, &[], env),
        Setup::SeparateUser => {
            let mut config = std::fs::read_to_string(fx.home().join(".gitconfig")).unwrap();
            config.push_str("[safe]\n\tdirectory = *\n");
            std::fs::write(fx.home().join(".gitconfig"), config).unwrap();
            second_user::open_dir(&fx.root());
            for path in shared {
                second_user::share(path);
            }
            second_user::give(&fx.run_dir());
            Gateway::start_prepared(fx, &[], env, second_user::run_as)
        }
    }
}

/// The status a settled proposal ended in (a failure comes back as a tool error).
pub fn status_of(settled: &Value) -> &str {
    settled["status"]
        .as_str()
        .or_else(|| settled["error"]["data"]["status"].as_str())
        .unwrap_or_default()
}

/// Proposes a push of `main` to `remote`, approves it and returns the settled status.
pub fn push(gateway: &Gateway, fx: &Fixture, repo: &Path, remote: &str) -> Value {
    let mut sidecar = gateway.sidecar(fx);
    let proposed = sidecar.call(
        "operation.preview.push",
        json!({"repoPath": repo, "reason": "share main", "remote": remote, "branch": "main"}),
    );
    assert_eq!(proposed["accepted"], true, "{proposed}");
    let id = proposed["previewId"].as_str().unwrap().to_owned();
    gateway.approve(&id);
    settle(&mut sidecar, &id)
}

pub fn plant(path: &Path, body: &str) -> String {
    write_executable(path, &format!("#!/bin/sh\n{body}"));
    path.display().to_string()
}

fn receivepack_case(setup: Setup) {
    let fx = Fixture::new();
    let loot = loot(&fx);
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "one\n", "first");
    let bare = with_origin(&fx, &repo, "origin.git");
    fx.commit(&repo, "b.txt", "two\n", "second");
    let steal = plant(
        &repo.join(".git/steal"),
        &format!(
            "cp \"$FLUXGIT_RUN_DIR/gateway/cli-token\" {0}/stolen-token\n\
             touch {0}/receivepack-ran\nexec git-receive-pack \"$@\"\n",
            loot.display()
        ),
    );
    fx.git(&repo, &["config", "remote.origin.receivepack", &steal]);
    let gateway = start(&fx, setup, &[&repo, &bare]);
    let done = push(&gateway, &fx, &repo, "origin");
    assert_eq!(status_of(&done), "completed", "{setup:?}: {done}");
    assert!(
        !loot.join("receivepack-ran").exists() && !loot.join("stolen-token").exists(),
        "{setup:?}: the repository's receivepack ran on an approved push"
    );
    let tip = fx.git(&repo, &["rev-parse", "main"]);
    assert!(
        remote_refs(&fx, &bare).contains(&format!("refs/heads/main {tip}")),
        "{setup:?}: git's own receive-pack took the push"
    );
}

#[test]
fn a_planted_receivepack_never_runs_on_an_approved_push_as_the_same_user() {
    receivepack_case(Setup::SameUser);
}

#[test]
fn a_planted_receivepack_never_runs_on_an_approved_push_as_a_separate_user() {
    receivepack_case(Setup::SeparateUser);
}

/// A server that answers every request `401` asking for Basic credentials: git fills
/// them from the helpers, tries again, and on the second `401` tells every helper to
/// erase them — password included.
fn unauthorized_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut seen = Vec::new();
            let mut buf = [0u8; 4096];
            while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => seen.extend_from_slice(&buf[..n]),
                }
            }
            let _ = stream.write_all(
                b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"t\"\r\n\
                  Content-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    port
}

fn network_case(setup: Setup) {
    let fx = Fixture::new();
    let loot = loot(&fx);
    let port = unauthorized_server();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "one\n", "first");
    // The user's own helper, for this server only: it supplies the password.
    let user_helper = plant(
        &fx.home().join("user-helper"),
        &format!(
            "echo \"$1\" >> {0}/user-helper.log\n\
             if [ \"$1\" = get ]; then echo username=person; echo password=users-secret; fi\n",
            loot.display()
        ),
    );
    let mut config = std::fs::read_to_string(fx.home().join(".gitconfig")).unwrap();
    config.push_str(&format!(
        "[credential \"http://127.0.0.1:{port}\"]\n\thelper = {user_helper}\n"
    ));
    std::fs::write(fx.home().join(".gitconfig"), config).unwrap();
    // The repository's programs, each leaving a trace (and what it was given).
    let trace = |name: &str| {
        plant(
            &repo.join(format!(".git/{name}")),
            &format!(
                "echo \"$@\" >> {0}/{name}.log\ncat >> {0}/{name}.log\n",
                loot.display()
            ),
        )
    };
    let planted = ["repo-helper", "repo-askpass", "repo-ssh", "repo-ext"];
    let [helper, askpass, ssh, ext] = planted.map(trace);
    for (key, value) in [
        ("credential.helper", helper.as_str()),
        ("core.askPass", &askpass),
        ("core.sshCommand", &ssh),
        ("protocol.ext.allow", "always"),
        ("remote.web.url", &format!("http://127.0.0.1:{port}/r.git")),
        // No helper of the user's answers for this host name: git asks askPass.
        ("remote.ask.url", &format!("http://localhost:{port}/r.git")),
        ("remote.byssh.url", "ssh://git@127.0.0.1:1/r.git"),
        ("remote.byext.url", &format!("ext::{ext}")),
    ] {
        fx.git(&repo, &["config", key, value]);
    }
    let gateway = start(&fx, setup, &[&repo]);
    for remote in ["web", "ask", "byssh", "byext"] {
        let done = push(&gateway, &fx, &repo, remote);
        assert_eq!(status_of(&done), "failed", "{setup:?} {remote}: {done}");
    }
    let ran: Vec<String> = planted
        .iter()
        .filter(|name| loot.join(format!("{name}.log")).exists())
        .map(|name| {
            let log = std::fs::read_to_string(loot.join(format!("{name}.log"))).unwrap();
            format!("{name}: {log:?}")
        })
        .collect();
    assert!(
        ran.is_empty(),
        "{setup:?}: repository programs ran on approved pushes: {ran:?}"
    );
    let user_log = std::fs::read_to_string(loot.join("user-helper.log")).unwrap_or_default();
    assert!(
        user_log.lines().any(|l| l == "get"),
        "{setup:?}: the user's own helper was asked: {user_log:?}"
    );
}

#[test]
fn repository_transport_and_credential_programs_never_run_as_the_same_user() {
    network_case(Setup::SameUser);
}

#[test]
fn repository_transport_and_credential_programs_never_run_as_a_separate_user() {
    network_case(Setup::SeparateUser);
}
