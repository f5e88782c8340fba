//! `gitward pending`: the approval queue, one line per proposal.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use serde_json::Value;

use super::human::{HumanApi, age, fail};

/// List the proposals waiting for a decision: id, agent, operation, repository, age.
#[derive(Debug, Args)]
pub struct PendingArgs {}

impl PendingArgs {
    pub fn run(self) -> ExitCode {
        let api = match HumanApi::find() {
            Ok(api) => api,
            Err(why) => return fail("pending", Err(why)),
        };
        let cards = match api.get("/api/proposals?view=pending") {
            Ok(body) => body["cards"].as_array().cloned().unwrap_or_default(),
            Err(e) => return fail("pending", e),
        };
        let mut out = std::io::stdout().lock();
        for card in &cards {
            let text = |k: &str| card[k].as_str().unwrap_or("-").to_owned();
            let _ = writeln!(
                out,
                "{}  {}  {}  {}  {}",
                text("previewId"),
                text("agentId"),
                text("operationType"),
                card["repoPath"].as_str().unwrap_or("-"),
                age(card["createdAt"].as_str().unwrap_or_default()),
            );
        }
        if cards.is_empty() {
            let _ = writeln!(out, "no pending proposals");
        }
        let _ = out.flush();
        ExitCode::SUCCESS
    }
}

/// The card as a few lines of text, for `approve`.
pub fn describe(card: &Value) -> String {
    let text = |k: &str| card[k].as_str().unwrap_or("-").to_owned();
    let mut lines = vec![
        format!("proposal   {}", text("previewId")),
        format!(
            "operation  {} (risk {})",
            text("operationType"),
            text("risk")
        ),
        format!("agent      {}", text("agentId")),
        format!("repository {}", text("repoPath")),
        format!("reason     {}", text("reason")),
        format!("expires    {}", text("expiresAt")),
    ];
    if let Some(fields) = card["fields"].as_object() {
        for (k, v) in fields {
            lines.push(format!("  {k}: {v}"));
        }
    }
    if let Some(files) = card["preview"]["files"].as_array() {
        for f in files {
            lines.push(format!(
                "  {} {} (+{} -{})",
                f["status"].as_str().unwrap_or("?"),
                f["path"].as_str().unwrap_or("?"),
                f["additions"],
                f["deletions"]
            ));
        }
    }
    lines.join("\n")
}
