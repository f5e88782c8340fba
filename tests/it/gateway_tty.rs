//! `gitward approve ID` and `gitward restore` on a real terminal: the CLI runs on a pseudo
//! terminal, the test reads the card and its prompt off the terminal and types the
//! confirmation code, as a person would. Without a terminal, approving is refused.

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
use serde_json::{Value, json};

use super::common::Fixture;
use super::gateway_support::{Gateway, command, dirty_repo, preview_id};

/// A CLI run on a pseudo terminal: what it printed so far, and a keyboard.
pub struct Terminal {
    keyboard: File,
    output: Receiver<Vec<u8>>,
    seen: String,
    child: Child,
}

impl Terminal {
    pub fn start(fixture: &Fixture, args: &[&str]) -> Terminal {
        let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
        grantpt(&master).unwrap();
        unlockpt(&master).unwrap();
        let name = ptsname(&master, Vec::new()).unwrap();
        let tty = || {
            File::options()
                .read(true)
                .write(true)
                .open(name.to_str().unwrap())
                .unwrap()
        };
        let mut cmd = command(fixture, args, &[]);
        cmd.stdin(tty()).stdout(tty()).stderr(tty());
        // A terminal that draws, as a person's does (progress lines stay off on `dumb`).
        cmd.env("TERM", "xterm");
        // A process group of its own, as a shell starts a job.
        cmd.process_group(0);
        let child = cmd.spawn().unwrap();
        // Only the child holds the terminal now: its exit ends the reads below.
        drop(cmd);
        let master = File::from(master);
        let keyboard = master.try_clone().unwrap();
        let (tx, output) = channel();
        std::thread::spawn(move || {
            let mut master = master;
            let mut buf = [0u8; 4096];
            // EIO once the last holder of the terminal's other side is gone.
            while let Ok(n) = master.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        Terminal {
            keyboard,
            output,
            seen: String::new(),
            child,
        }
    }

    /// Reads until the screen shows `needle` (a bound on the CLI, not a timing assertion).
    pub fn expect(&mut self, needle: &str) -> &str {
        while !self.seen.contains(needle) {
            match self.output.recv_timeout(Duration::from_secs(60)) {
                Ok(bytes) => self.seen.push_str(&String::from_utf8_lossy(&bytes)),
                Err(e) => panic!("{e}: never showed {needle:?}; showed {:?}", self.seen),
            }
        }
        &self.seen
    }

    pub fn type_line(&mut self, text: &str) {
        self.keyboard
            .write_all(format!("{text}\n").as_bytes())
            .unwrap();
    }

    /// Waits for the CLI to end; its exit and everything it showed.
    pub fn finish(mut self) -> (ExitStatus, String) {
        let status = self.child.wait().unwrap();
        while let Ok(bytes) = self.output.recv_timeout(Duration::from_secs(60)) {
            self.seen.push_str(&String::from_utf8_lossy(&bytes));
        }
        (status, self.seen)
    }
}

fn status(gw: &Gateway, id: &str) -> Value {
    gw.get_handshake(&format!("/v1/mcp/operation/status/{id}"))
        .json()
}

fn wait_for_end(gw: &Gateway, id: &str) -> Value {
    for _ in 0..2400 {
        let record = status(gw, id);
        if record["status"] == "completed" || record["status"] == "failed" {
            return record;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("{id} did not finish");
}

/// The code `approve` or `restore` asks for, from its prompt `Type CODE to …: `.
pub fn prompted_code(screen: &str) -> String {
    let at = screen.rfind("Type ").unwrap() + "Type ".len();
    screen[at..].split_whitespace().next().unwrap().to_owned()
}

#[test]
fn approve_on_a_terminal_takes_the_typed_code_and_refuses_without_one() {
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    let gw = Gateway::start(&fixture, &[], &[]);
    let id = preview_id(&gw.propose_commit(&repo, "claude-code", None));
    let before = fixture.git(&repo, &["rev-parse", "HEAD"]);

    // No terminal: refused, clearly, and nothing decided.
    let out = command(&fixture, &["approve", &id], &[])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!out.status.success());
    assert!(err.contains("needs a terminal"), "{err}");
    assert_eq!(status(&gw, &id)["status"], "pending");

    // A wrong code on the terminal: not approved.
    let mut term = Terminal::start(&fixture, &["approve", &id]);
    let code = prompted_code(term.expect("to approve: "));
    term.type_line("nope");
    let (exit, screen) = term.finish();
    assert!(!exit.success(), "{screen}");
    assert!(screen.contains("the code did not match"), "{screen}");
    assert_eq!(status(&gw, &id)["status"], "pending");

    // The card on the terminal, then the right code: approved, and the commit lands.
    let mut term = Terminal::start(&fixture, &["approve", &id]);
    let screen = term.expect("to approve: ").to_owned();
    assert!(screen.contains(&format!("proposal   {id}")), "{screen}");
    assert!(screen.contains("operation  commit (risk low)"), "{screen}");
    assert!(screen.contains("modified a.txt (+2 -1)"), "{screen}");
    assert_eq!(prompted_code(&screen), code, "the card's code is stable");
    term.type_line(&code);
    let (exit, screen) = term.finish();
    assert!(exit.success(), "{screen}");
    assert!(screen.contains("approved; now"), "{screen}");

    let record = wait_for_end(&gw, &id);
    assert_eq!(record["status"], "completed", "{record}");
    assert_eq!(record["decidedBy"], json!({"channel": "tty"}));
    let sha = record["result"]["commitSha"].as_str().unwrap();
    assert_eq!(fixture.git(&repo, &["rev-parse", "HEAD"]), sha);
    assert_eq!(fixture.git(&repo, &["rev-parse", "HEAD~1"]), before);
    assert_eq!(fixture.git(&repo, &["status", "--porcelain"]), "");

    // Approving again: refused, it is no longer pending.
    let mut term = Terminal::start(&fixture, &["approve", &id]);
    term.expect("proposal");
    let (exit, screen) = term.finish();
    assert!(
        !exit.success() && screen.contains("the proposal is"),
        "{screen}"
    );

    // Undo on the terminal after more work: the changes are shown, `yes` confirms them.
    let rp = record["result"]["restorePointId"].as_str().unwrap();
    std::fs::write(repo.join("notes.txt"), "mine\n").unwrap();
    let mut term = Terminal::start(&fixture, &["restore", rp]);
    let screen = term.expect("to restore: ").to_owned();
    assert!(screen.contains(&format!("restore point {rp}")), "{screen}");
    term.type_line(&prompted_code(&screen));
    let screen = term.expect("Type yes to restore anyway: ").to_owned();
    assert!(
        screen.contains("file  notes.txt  new, untracked"),
        "{screen}"
    );
    term.type_line("yes");
    let (exit, screen) = term.finish();
    assert!(exit.success(), "{screen}");
    assert!(screen.contains(&format!("restored {rp}")), "{screen}");
    // While the gateway restores, the terminal shows a progress line naming the point.
    assert!(screen.contains(&format!("restoring {rp}")), "{screen}");
    assert_eq!(fixture.git(&repo, &["rev-parse", "HEAD"]), before);
    assert!(!repo.join("notes.txt").exists());
}

/// The CLI's bearer token and a POST with it that claims the terminal channel.
fn tty_post(fixture: &Fixture, gw: &Gateway, path: &str, body: &Value) -> (u16, Value) {
    let token = std::fs::read_to_string(fixture.run_dir().join("gateway/cli-token")).unwrap();
    let bearer = format!("Bearer {}", token.trim());
    let answer = gw.ui_post_raw(
        path,
        &[("Authorization", &bearer), ("X-Gitward-Channel", "tty")],
        body,
    );
    (answer.status, answer.json())
}

fn tty_get(fixture: &Fixture, gw: &Gateway, path: &str) -> Value {
    let token = std::fs::read_to_string(fixture.run_dir().join("gateway/cli-token")).unwrap();
    let bearer = format!("Bearer {}", token.trim());
    gw.ui_get_raw(path, &[("Authorization", &bearer)]).json()
}

#[test]
fn the_gateway_demands_the_terminals_code_for_approvals_and_restores() {
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    let gw = Gateway::start(&fixture, &[], &[]);
    let id = preview_id(&gw.propose_commit(&repo, "claude-code", None));
    let before = fixture.git(&repo, &["rev-parse", "HEAD"]);
    let card_path = format!("/api/proposals/{id}");
    let mut card = tty_get(&fixture, &gw, &card_path);
    for _ in 0..600 {
        if card["previewPending"] != true {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        card = tty_get(&fixture, &gw, &card_path);
    }

    // The CLI's token and the channel header, but no code typed: nothing is approved.
    let approve = format!("{card_path}/approve");
    let (status_code, body) = tty_post(
        &fixture,
        &gw,
        &approve,
        &json!({"confirmDestructive": false}),
    );
    assert_eq!(status_code, 403, "{body}");
    assert_eq!(body["error"]["code"], "confirmationCodeRequired", "{body}");
    let wrong = json!({"confirmDestructive": false, "confirmationCode": "AAAAAA"});
    let (status_code, body) = tty_post(&fixture, &gw, &approve, &wrong);
    assert_eq!(status_code, 403, "{body}");
    assert_eq!(body["error"]["code"], "confirmationCodeWrong", "{body}");
    assert_eq!(status(&gw, &id)["status"], "pending");
    assert_eq!(status(&gw, &id)["decidedBy"], Value::Null);

    // With the card's code the terminal's approval is what the ledger says it is.
    let code = card["confirmationCode"].as_str().unwrap();
    let right = json!({"confirmDestructive": false, "confirmationCode": code});
    let (status_code, body) = tty_post(&fixture, &gw, &approve, &right);
    assert_eq!(status_code, 200, "{body}");
    let record = wait_for_end(&gw, &id);
    assert_eq!(record["status"], "completed", "{record}");
    assert_eq!(record["decidedBy"], json!({"channel": "tty"}));
    let written = fixture.git(&repo, &["rev-parse", "HEAD"]);
    assert_ne!(written, before);

    // A restore asks the same: no terminal, no restore; no code, no restore.
    let rp = record["result"]["restorePointId"].as_str().unwrap();
    let out = command(&fixture, &["restore", rp], &[])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("needs a terminal"), "{err}");
    let restore = format!("/api/restore-points/{rp}/restore");
    let (status_code, body) = tty_post(&fixture, &gw, &restore, &json!({"confirmMoved": true}));
    assert_eq!(status_code, 403, "{body}");
    assert_eq!(body["error"]["code"], "confirmationCodeRequired", "{body}");
    let approvals_code = json!({"confirmMoved": true, "confirmationCode": code});
    let (status_code, body) = tty_post(&fixture, &gw, &restore, &approvals_code);
    assert_eq!(status_code, 403, "another subject's code: {body}");
    assert_eq!(fixture.git(&repo, &["rev-parse", "HEAD"]), written);

    // On a terminal, typing the restore point's code restores.
    let mut term = Terminal::start(&fixture, &["restore", rp]);
    let screen = term.expect("to restore: ").to_owned();
    assert!(screen.contains(&format!("restore point {rp}")), "{screen}");
    let typed = prompted_code(&screen);
    assert_ne!(typed, code);
    term.type_line(&typed);
    let (exit, screen) = term.finish();
    assert!(exit.success(), "{screen}");
    assert_eq!(fixture.git(&repo, &["rev-parse", "HEAD"]), before);
}
