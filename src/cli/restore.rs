//! `gitward restore RESTORE_POINT_ID`: puts a restore point back (itself taking a restore
//! point first, so it can be undone). When the repository moved on since the write, it
//! shows what changed since (refs and files) and restores only once the person confirms:
//! by typing `yes` on a terminal, or with `--confirm-moved`.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use super::human::{HumanApi, Refused, fail};
use super::pending::printable;

/// Restore a repository to a restore point.
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

fn ask(question: &str) -> Option<String> {
    let mut out = std::io::stderr().lock();
    let _ = write!(out, "{question}");
    let _ = out.flush();
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).ok()?;
    Some(line.trim().to_owned())
}

impl RestoreArgs {
    pub fn run(self) -> ExitCode {
        let api = match HumanApi::find() {
            Ok(api) => api,
            Err(why) => return fail("restore", Err(why)),
        };
        if !crate::gateway::server::store::is_restore_point_id(&self.id) {
            eprintln!("gitward restore: {:?} is not a restore point id", self.id);
            return ExitCode::FAILURE;
        }
        match self.post(&api, self.confirm_moved, None) {
            Err(Ok(refused)) if refused.status == 409 => self.moved_on(&api, &refused),
            other => self.finish(other),
        }
    }

    /// Asks for the restore; `shown` is what moved as the person saw it, so a confirmation
    /// covers exactly that.
    fn post(
        &self,
        api: &HumanApi,
        confirm: bool,
        shown: Option<&Value>,
    ) -> Result<Value, Result<Refused, String>> {
        let path = format!("/api/restore-points/{}/restore", self.id);
        let mut body = json!({"confirmMoved": confirm});
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
    fn moved_on(&self, api: &HumanApi, refused: &Refused) -> ExitCode {
        eprintln!(
            "gitward restore: the repository moved on since {}; restoring also undoes:",
            self.id
        );
        for line in changes_lines(&refused.body["error"]["details"]["changedSince"]) {
            eprintln!("{line}");
        }
        eprintln!("(the current state is saved first as a new restore point)");
        if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
            eprintln!(
                "gitward restore: not restored; run again with --confirm-moved to restore anyway"
            );
            return ExitCode::FAILURE;
        }
        if ask("Type yes to restore anyway: ").as_deref() != Some("yes") {
            eprintln!("gitward restore: not restored");
            return ExitCode::FAILURE;
        }
        // Moved on again meanwhile: shown again, asked again.
        let shown = &refused.body["error"]["details"]["moved"];
        match self.post(api, true, Some(shown)) {
            Err(Ok(refused)) if refused.status == 409 => self.moved_on(api, &refused),
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
                ExitCode::SUCCESS
            }
            Err(e) => fail("restore", e),
        }
    }
}
