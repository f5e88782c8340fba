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
        let (cards, total) = match api.get("/api/proposals?view=pending") {
            Ok(body) => (
                body["cards"].as_array().cloned().unwrap_or_default(),
                body["total"].as_u64(),
            ),
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
        let total = total.unwrap_or(cards.len() as u64);
        if total == 0 {
            let _ = writeln!(out, "no pending proposals");
        } else if total > cards.len() as u64 {
            let _ = writeln!(
                out,
                "{total} pending proposals; the newest {} are listed",
                cards.len()
            );
        } else {
            let _ = writeln!(out, "{total} pending");
        }
        let _ = out.flush();
        ExitCode::SUCCESS
    }
}

/// `text` with control characters shown escaped: what an agent wrote (a reason, a path)
/// must not drive the person's terminal.
pub fn printable(text: &str) -> String {
    let text = crate::model::hidden::reveal(text);
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().collect()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The other agents working in the repository, one line each.
fn other_agents(card: &Value, lines: &mut Vec<String>) {
    let Some(agents) = card["otherAgents"]["agents"].as_array() else {
        return;
    };
    for a in agents {
        let mut line = format!(
            "other agent {} ({})",
            a["agent"].as_str().unwrap_or("?"),
            a["state"].as_str().unwrap_or("?")
        );
        if let Some(branch) = a["branch"].as_str() {
            line.push_str(&format!(" on {branch}"));
        }
        let overlap: Vec<&str> = a["overlappingPaths"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if !overlap.is_empty() {
            line.push_str(&format!(", also touching {}", overlap.join(", ")));
        }
        lines.push(line);
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
    other_agents(card, &mut lines);
    lines
        .iter()
        .map(|l| printable(l))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_terminal_card_shows_invisible_and_direction_characters() {
        let card = json!({
            "previewId": "p", "operationType": "commit", "risk": "low",
            "reason": "tidy \u{202E}gnp.exe", "fields": {"message": "ma\u{200B}in"},
        });
        let text = describe(&card);
        assert!(text.contains("tidy <U+202E>gnp.exe"), "{text}");
        assert!(text.contains("ma<U+200B>in"), "{text}");
        assert!(
            !text.contains('\u{202E}') && !text.contains('\u{200B}'),
            "{text}"
        );
    }

    #[test]
    fn the_terminal_card_names_other_agents_and_never_passes_control_characters() {
        let card = json!({
            "previewId": "p", "operationType": "commit", "risk": "low",
            "reason": "fine\u{1b}[2J\u{1b}]0;title\u{7}",
            "otherAgents": {"agents": [
                {"agent": "claude-code", "state": "working", "branch": "feat",
                 "overlappingPaths": ["src/lib.rs"]},
                {"agent": "cursor", "state": "open", "branch": null, "overlappingPaths": []},
            ]},
        });
        let text = describe(&card);
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{text}"
        );
        assert!(text.contains(r"fine\u{1b}[2J"), "{text}");
        assert!(
            text.contains("other agent claude-code (working) on feat, also touching src/lib.rs"),
            "{text}"
        );
        assert!(text.ends_with("other agent cursor (open)"), "{text}");
    }
}
