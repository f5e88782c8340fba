//! `gitward approve ID`: shows the card on the terminal and approves it once the person
//! types the card's confirmation code, which the gateway checks too. It needs a terminal:
//! a script or an agent piping input is refused, so approving stays a person's act.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use super::human::{HumanApi, Refused, fail};
use super::pending::describe;

/// Approve a proposal (needs a terminal; asks for the card's confirmation code).
#[derive(Debug, Args)]
pub struct ApproveArgs {
    /// The proposal's previewId.
    id: String,
}

fn ask(question: &str) -> Option<String> {
    let mut out = std::io::stderr().lock();
    let _ = write!(out, "{question}");
    let _ = out.flush();
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).ok()?;
    Some(line.trim().to_owned())
}

/// How long the terminal waits for git to finish a card's preview.
const PREVIEW_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// The card of `id` once its preview is there (git computes it after the proposal was
/// answered): a person approves what they were shown, as on the page.
fn card_with_preview(api: &HumanApi, id: &str) -> Result<Value, Result<Refused, String>> {
    let path = format!("/api/proposals/{id}");
    let started = std::time::Instant::now();
    let mut told = false;
    loop {
        let card = api.get(&path)?;
        if card["previewPending"] != true || started.elapsed() > PREVIEW_WAIT {
            return Ok(card);
        }
        if !told {
            eprintln!("computing the preview with git…");
            told = true;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

impl ApproveArgs {
    pub fn run(self) -> ExitCode {
        if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
            eprintln!(
                "gitward approve: needs a terminal (a person types the card's confirmation \
                 code); use the approval page otherwise"
            );
            return ExitCode::FAILURE;
        }
        let api = match HumanApi::find() {
            Ok(api) => api,
            Err(why) => return fail("approve", Err(why)),
        };
        if !crate::gateway::api::is_canonical_preview_id(&self.id) {
            eprintln!("gitward approve: {:?} is not a previewId", self.id);
            return ExitCode::FAILURE;
        }
        let card = match card_with_preview(&api, &self.id) {
            Ok(card) => card,
            Err(e) => return fail("approve", e),
        };
        eprintln!("{}", describe(&card));
        if card["status"] != "pending" {
            eprintln!("gitward approve: the proposal is {}", card["status"]);
            return ExitCode::FAILURE;
        }
        let code = card["confirmationCode"].as_str().unwrap_or_default();
        let typed = ask(&format!("Type {code} to approve: "));
        if typed.as_deref() != Some(code) || code.is_empty() {
            eprintln!("gitward approve: not approved (the code did not match)");
            return ExitCode::FAILURE;
        }
        let destructive = card["needsConfirmation"] == true;
        if destructive {
            let typed = ask("This destroys work. Type yes to confirm: ");
            if typed.as_deref() != Some("yes") {
                eprintln!("gitward approve: not approved");
                return ExitCode::FAILURE;
            }
        }
        let path = format!("/api/proposals/{}/approve", self.id);
        // The gateway checks the code again: it is what makes this a terminal's approval.
        let body = json!({"confirmDestructive": destructive, "confirmationCode": code});
        match api.post(&path, &body) {
            Ok(card) => {
                eprintln!("approved; now {}", card["status"].as_str().unwrap_or("?"));
                ExitCode::SUCCESS
            }
            Err(e) => fail("approve", e),
        }
    }
}
