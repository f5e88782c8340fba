//! The progress line on a terminal: `gitward call` and `gitward verify-audit` draw it on
//! stderr when stderr is a pseudo terminal, and print the same stdout as without one;
//! with stderr piped, nothing about progress is printed at all.

use std::fs::File;
use std::io::Read;
use std::process::{Command, Output, Stdio};

use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
use serde_json::json;

use crate::common::Fixture;
use crate::gateway_support::command;
use crate::progress::{FILES, REPOS, fleet, large_commit, radar_args, semantic_args};

/// Runs `cmd` with stderr on a fresh pseudo terminal: its output (stdout piped), and
/// everything the terminal showed.
fn with_terminal_stderr(mut cmd: Command) -> (Output, String) {
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let tty = File::options()
        .read(true)
        .write(true)
        .open(name.to_str().unwrap())
        .unwrap();
    // A terminal says what it is; on none that is `dumb`, no line is drawn.
    cmd.env("TERM", "xterm")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(tty);
    let child = cmd.spawn().unwrap();
    // Only the child holds the terminal now: its exit ends the reads below.
    drop(cmd);
    let mut master = File::from(master);
    let screen = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        // EIO once the last holder of the terminal's other side is gone.
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&seen).into_owned()
    });
    let output = child.wait_with_output().unwrap();
    (output, screen.join().unwrap())
}

fn plain(mut cmd: Command) -> Output {
    cmd.stdin(Stdio::null()).output().unwrap()
}

#[test]
fn call_draws_its_progress_on_a_terminal_and_prints_the_same_stdout_either_way() {
    let fx = Fixture::new();
    let large = large_commit(&fx, FILES);
    let args = semantic_args(&large).to_string();
    let call = || command(&fx, &["call", "diff.semantic", &args], &[]);

    let piped = plain(call());
    assert!(piped.status.success(), "{piped:?}");
    assert_eq!(
        String::from_utf8_lossy(&piped.stderr),
        "",
        "nothing extra without a terminal"
    );

    let (on_tty, screen) = with_terminal_stderr(call());
    assert!(on_tty.status.success(), "{screen}");
    assert_eq!(
        String::from_utf8_lossy(&on_tty.stdout),
        String::from_utf8_lossy(&piped.stdout),
        "stdout is the same on a terminal"
    );
    assert!(
        screen.contains(&format!("semantic diff: {FILES} of {FILES} files")),
        "{screen:?}"
    );

    // The radar's line, too; its result carries its own run time, so stdout is not compared.
    let repos = fleet(&fx, REPOS);
    let radar = radar_args(&repos).to_string();
    let (on_tty, screen) =
        with_terminal_stderr(command(&fx, &["call", "fleet.radar", &radar], &[]));
    assert!(on_tty.status.success(), "{screen}");
    assert!(
        screen.contains(&format!("radar: {REPOS} of {REPOS} repositories")),
        "{screen:?}"
    );
    let result: serde_json::Value = serde_json::from_slice(&on_tty.stdout).unwrap();
    assert_eq!(result["data"]["scannedCount"], json!(REPOS), "{result}");
}

#[test]
fn verify_audit_draws_its_progress_on_a_terminal_and_prints_the_same_stdout_either_way() {
    let fx = Fixture::new();
    let repos = fleet(&fx, 3);
    let log = fx.path("audit/mcp.jsonl");
    let log_env = [("FLUXGIT_MCP_AUDIT_LOG", log.to_str().unwrap())];
    for repo in &repos {
        let args = json!({"repoPath": repo}).to_string();
        let out = plain(command(&fx, &["call", "repo.status", &args], &log_env));
        assert!(out.status.success(), "{out:?}");
    }
    let verify = || command(&fx, &["verify-audit", log.to_str().unwrap()], &[]);
    let piped = plain(verify());
    assert!(piped.status.success(), "{piped:?}");
    assert_eq!(String::from_utf8_lossy(&piped.stderr), "");

    let (on_tty, screen) = with_terminal_stderr(verify());
    assert!(on_tty.status.success(), "{screen}");
    assert_eq!(
        on_tty.stdout, piped.stdout,
        "stdout is the same on a terminal"
    );
    assert!(screen.contains("verify-audit: "), "{screen:?}");
}
