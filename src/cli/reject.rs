//! `gitward reject ID [--why TEXT]`.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use serde_json::json;

use super::human::{HumanApi, fail};

/// Reject a proposal, optionally saying why.
#[derive(Debug, Args)]
pub struct RejectArgs {
    /// The proposal's previewId.
    id: String,
    /// Why (shown to the agent).
    #[arg(long, value_name = "TEXT")]
    why: Option<String>,
}

impl RejectArgs {
    pub fn run(self) -> ExitCode {
        let api = match HumanApi::find() {
            Ok(api) => api,
            Err(why) => return fail("reject", Err(why)),
        };
        if !crate::gateway::api::is_canonical_preview_id(&self.id) {
            eprintln!("gitward reject: {:?} is not a previewId", self.id);
            return ExitCode::FAILURE;
        }
        let path = format!("/api/proposals/{}/reject", self.id);
        match api.post(&path, &json!({"reason": self.why})) {
            Ok(card) => {
                let _ = writeln!(
                    std::io::stdout(),
                    "{} {}",
                    self.id,
                    card["status"].as_str().unwrap_or("?")
                );
                ExitCode::SUCCESS
            }
            Err(e) => fail("reject", e),
        }
    }
}
