//! `gitward restore RESTORE_POINT_ID`: puts a restore point back (itself taking a restore
//! point first, so it can be undone). When the repository moved on since, it says what
//! moved and restores only with `--confirm-moved`.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use serde_json::json;

use super::human::{HumanApi, fail};

/// Restore a repository to a restore point.
#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// The restore point's id (rp_…).
    id: String,
    /// Restore even though the repository moved on since the restore point.
    #[arg(long)]
    confirm_moved: bool,
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
        let path = format!("/api/restore-points/{}/restore", self.id);
        match api.post(&path, &json!({"confirmMoved": self.confirm_moved})) {
            Ok(done) => {
                let _ = writeln!(
                    std::io::stdout(),
                    "restored {}; undo with: gitward restore {}",
                    self.id,
                    done["restorePointId"].as_str().unwrap_or("?")
                );
                ExitCode::SUCCESS
            }
            Err(Ok(refused)) if refused.status == 409 => {
                let moved = &refused.body["error"]["details"]["moved"];
                for m in moved.as_array().into_iter().flatten() {
                    eprintln!("  moved: {}", m["what"].as_str().unwrap_or("?"));
                }
                eprintln!(
                    "gitward restore: the repository moved on since {}; run again with \
                     --confirm-moved to restore anyway",
                    self.id
                );
                ExitCode::FAILURE
            }
            Err(e) => fail("restore", e),
        }
    }
}
