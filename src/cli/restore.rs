//! `gitward restore RESTORE_POINT_ID`: puts a restore point back (itself taking a restore
//! point first, so it can be undone). Like `gitward approve` it needs a terminal and the
//! restore point's confirmation code, which the gateway checks too: a restore rewrites the
//! repository, so it stays a person's act. When the repository moved on since the write,
//! it shows what changed since (refs and files) and restores only once the person
//! confirms: by typing `yes`, or with `--confirm-moved`.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use super::human::{HumanApi, Refused, fail};
use super::pending::printable;

/// Restore a repository to a restore point (needs a terminal; asks for its confirmation code).
#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// The restore point's id (rp_…).
    id: String,
    /// Restore even though the repository moved on since the restore point.
    #[arg(long)]
    confirm_moved: bool,
}

/// An object id shortened for a line; anything else as it is.
fn short(value: &Value) -> String {
    match value.as_str() {
        Some(s) if s.len() >= 40 && s.bytes().all(|b| b.is_ascii_hexdigit()) => s[..10].into(),
        Some(s) => s.to_owned(),
        None => "(none)".into(),
    }
}

/// The changes a restore also undoes, one line each.
pub fn changes_lines(changed: &Value) -> Vec<String> {
    let mut lines = Vec::new();
    for r in changed["refs"].as_array().into_iter().flatten() {
        lines.push(format!(
            "  ref   {}  {} -> {}",
            r["ref"].as_str().unwrap_or("?"),
            short(&r["before"]),
            short(&r["now"])
        ));
    }
    for f in changed["files"].as_array().into_iter().flatten() {
        lines.push(format!(
            "  file  {}  {}",
            f["path"].as_str().unwrap_or("?"),
            f["change"].as_str().unwrap_or("changed")
        ));
    }
    if changed["index"] == true {
        lines.push("  index  the staging area changed".into());
    }
    lines.iter().map(|l| printable(l)).collect()
}

/// A refusal because the repository moved on (409 with what moved), as opposed to one
/// that names files the restore will not overwrite.
fn moved(refused: &Refused) -> bool {
    refused.status == 409 && refused.body["error"]["details"]["moved"].is_array()
}

fn ask(question: &str) -> Option<String> {
    let mut out = std::io::stderr().lock();
    let _ = write!(out, "{question}");
    let _ = out.flush();
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).ok()?;
    Some(line.trim().to_owned())
}

/// The restore point as a few lines of text, for the question.
fn describe(point: &Value) -> String {
    let text = |k: &str| point[k].as_str().unwrap_or("-").to_owned();
    [
        format!("restore point {}", text("id")),
        format!("repository    {}", text("repoPath")),
        format!("taken before  {}", text("operationType")),
        format!("taken at      {}", text("createdAt")),
        format!("HEAD then     {}", short(&point["headBefore"])),
    ]
    .iter()
    .map(|l| printable(l))
    .collect::<Vec<_>>()
    .join("\n")
}

impl RestoreArgs {
    pub fn run(self) -> ExitCode {
        if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
            eprintln!(
                "gitward restore: needs a terminal (a person types the restore point's \
                 confirmation code); use the approval page otherwise"
            );
            return ExitCode::FAILURE;
        }
        let api = match HumanApi::find() {
            Ok(api) => api,
            Err(why) => return fail("restore", Err(why)),
        };
        if !crate::gateway::server::store::is_restore_point_id(&self.id) {
            eprintln!("gitward restore: {:?} is not a restore point id", self.id);
            return ExitCode::FAILURE;
        }
        let point = match api.get(&format!("/api/restore-points/{}", self.id)) {
            Ok(point) => point,
            Err(e) => return fail("restore", e),
        };
        eprintln!("{}", describe(&point));
        let code = point["confirmationCode"].as_str().unwrap_or_default();
        let typed = ask(&format!("Type {code} to restore: "));
        if typed.as_deref() != Some(code) || code.is_empty() {
            eprintln!("gitward restore: not restored (the code did not match)");
            return ExitCode::FAILURE;
        }
        match self.post(&api, code, self.confirm_moved, None) {
            Err(Ok(refused)) if moved(&refused) => self.moved_on(&api, code, &refused),
            other => self.finish(other),
        }
    }

    /// Asks for the restore; `shown` is what moved as the person saw it, so a confirmation
    /// covers exactly that.
    fn post(
        &self,
        api: &HumanApi,
        code: &str,
        confirm: bool,
        shown: Option<&Value>,
    ) -> Result<Value, Result<Refused, String>> {
        let path = format!("/api/restore-points/{}/restore", self.id);
        let mut body = json!({"confirmMoved": confirm, "confirmationCode": code});
        if let Some(shown) = shown {
            body["moved"] = shown.clone();
        }
        // The gateway restores while we wait: a turning line on a terminal says so, and
        // is cleared before anything else is printed.
        let _line = super::progress_line::spinner(format!("restoring {}", self.id));
        api.post(&path, &body)
    }

    /// The repository moved on: show what changed since, then ask (on a terminal) or say
    /// how to confirm.
    fn moved_on(&self, api: &HumanApi, code: &str, refused: &Refused) -> ExitCode {
        eprintln!(
            "gitward restore: the repository moved on since {}; restoring also undoes:",
            self.id
        );
        for line in changes_lines(&refused.body["error"]["details"]["changedSince"]) {
            eprintln!("{line}");
        }
        eprintln!("(the current state is saved first as a new restore point)");
        if ask("Type yes to restore anyway: ").as_deref() != Some("yes") {
            eprintln!("gitward restore: not restored");
            return ExitCode::FAILURE;
        }
        // Moved on again meanwhile: shown again, asked again.
        let shown = &refused.body["error"]["details"]["moved"];
        match self.post(api, code, true, Some(shown)) {
            Err(Ok(refused)) if moved(&refused) => self.moved_on(api, code, &refused),
            other => self.finish(other),
        }
    }

    fn finish(&self, answer: Result<Value, Result<Refused, String>>) -> ExitCode {
        match answer {
            Ok(done) => {
                let undone = changes_lines(&done["changedSince"]);
                if !undone.is_empty() {
                    eprintln!("undid these later changes too:");
                    for line in undone {
                        eprintln!("{line}");
                    }
                }
                let _ = writeln!(
                    std::io::stdout(),
                    "restored {}; undo with: gitward restore {}",
                    self.id,
                    done["restorePointId"].as_str().unwrap_or("?")
                );
                if let Some(note) = done["note"].as_str() {
                    eprintln!("note: {}", printable(note));
                }
                ExitCode::SUCCESS
            }
            Err(e) => fail("restore", e),
        }
    }
}
