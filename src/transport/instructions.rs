//! The server `instructions`, written from the tools this configuration serves.
//!
//! Built from [`tools::visible`], the same list `tools/list` shows, so the text can never
//! send a model to a tool that toolsets, `--read-only` or a missing workspace left out;
//! and each tool is named as that list names it.

use crate::config::{Config, Toolset};
use crate::model::tool_name;
use crate::tools::{self, ToolDef};

/// The tool a model should call first for a repository, when it is served.
const FIRST_CALL: &str = "repo.brief";

/// Where a proposal's outcome is read.
const STATUS: &str = "operation.status";

pub fn instructions(config: &Config) -> String {
    tool_name::prose(&written(config)).into_owned()
}

/// The instructions with each tool named by its identity.
fn written(config: &Config) -> String {
    let served: Vec<&ToolDef> = tools::visible(config).collect();
    let git: Vec<&str> = served
        .iter()
        .filter(|t| t.toolset == Toolset::Git)
        .map(|t| t.name)
        .collect();
    let specs: Vec<&str> = served
        .iter()
        .filter(|t| t.toolset == Toolset::Specs)
        .map(|t| t.name)
        .collect();
    // Proposals write nothing themselves: a person decides, the gateway writes.
    let proposing: Vec<&str> = served
        .iter()
        .filter(|t| t.toolset == Toolset::Ops && !t.annotations.read_only)
        .map(|t| t.name)
        .collect();
    let writing: Vec<&str> = served
        .iter()
        .filter(|t| t.toolset != Toolset::Ops && !t.annotations.read_only)
        .map(|t| t.name)
        .collect();

    let mut parts = Vec::new();
    if served.is_empty() {
        parts.push("gitward serves no tools with this configuration.".to_owned());
        return parts.join(" ");
    }
    if !git.is_empty() {
        parts.push(
            "gitward gives structured, bounded context from local Git repositories; its Git tools only read."
                .to_owned(),
        );
        if git.contains(&FIRST_CALL) {
            parts.push(format!(
                "Start with {FIRST_CALL} for a repository: it names the next tool to call."
            ));
        }
        parts.push(
            "repoPath is an absolute path (any directory inside a working tree; bare repositories where a tool says so); other path arguments are relative to the repository. repoId, a FluxGit workspace id, is accepted for compatibility and not needed locally."
                .to_owned(),
        );
        // What the tool descriptions leave out because it holds for all of them.
        parts.push(
            "Lists are capped by a max* argument: a *Truncated flag marks the cut, and totals count everything. Nothing is fetched: remote state is what the local refs hold. The restore-point and safety tools read the approval gateway's records: without a gateway they answer 10001 with an upgradeHint, and 10002 when an id names nothing in the repository; restoring is a person's action on the gateway page."
                .to_owned(),
        );
    }
    if !specs.is_empty() {
        parts.push(format!(
            "The OpenSpec change workflow runs through {}; each answer begins with the instruction for its step (includeInstruction: false leaves it out; keep it on first use).",
            specs.join(", ")
        ));
    }
    if !proposing.is_empty() {
        parts.push(format!(
            "{} only propose: a person approves or rejects each proposal in the approval gateway, which then carries it out. An accepted proposal is not a done change; poll {STATUS} until it is completed before reporting a Git outcome. Each proposal takes reason, in plain words for the approver, and optionally idempotencyKey, only to retry the same intent (it resolves to that proposal); a new intent goes without one.",
            proposing.join(", ")
        ));
    }
    parts.push(if writing.is_empty() && proposing.is_empty() {
        "Every tool served here is read-only.".to_owned()
    } else if writing.is_empty() {
        "Every other tool served here is read-only.".to_owned()
    } else {
        format!(
            "{} may write files; every other tool only reads.",
            writing.join(", ")
        )
    });
    parts.join(" ")
}
