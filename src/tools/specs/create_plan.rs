//! `create-plan`: a session-scoped plan skeleton in the workspace data directory.

use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{SpecReply, WRITE, workspace};
use crate::config::Toolset;
use crate::error::ToolError;
use crate::specs::SpecError;
use crate::tools::{Annotations, CallCtx, Tool};

/// `create-plan`: a session-scoped plan skeleton in the workspace data directory.
pub struct CreatePlan;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreatePlanInput {
    /// One sentence: what the plan aims to achieve.
    pub goal: String,
    /// Kebab-case, no date prefix (the tool adds one).
    pub slug: String,
    /// Default true; keep it on first use.
    #[serde(default)]
    pub include_instruction: Option<bool>,
}

impl Tool for CreatePlan {
    type Input = CreatePlanInput;
    type Output = SpecReply;
    const NAME: &'static str = "create-plan";
    const TITLE: &'static str = "Create a session plan";
    const DESCRIPTION: &'static str = "Create a session-scoped plan (a template) for exploratory or architectural work that changes no behaviour contract; never written into a project.";
    const TOOLSET: Toolset = Toolset::Specs;
    const ANNOTATIONS: Annotations = WRITE;

    async fn call(ctx: CallCtx, input: CreatePlanInput) -> Result<SpecReply, ToolError> {
        let ws = workspace(&ctx)?;
        let goal = input.goal.trim();
        if goal.is_empty() || goal.contains(['\n', '\r']) {
            return Err(ToolError::invalid(
                "goal",
                "must be one non-empty sentence on one line",
            ));
        }
        crate::specs::check_change_name(&input.slug).map_err(|why| {
            ToolError::invalid(
                "slug",
                why.replace("must be kebab-case", "must be a kebab-case fragment"),
            )
        })?;
        let include = input.include_instruction;
        let Some(session) = &ws.session_id else {
            return Ok(SpecReply::errors(
                vec![SpecError::new(
                    "WorkspaceError",
                    "MCP_WORKSPACE_SESSION_REQUIRED",
                    "the workspace descriptor has no sessionId; plans belong to a session",
                )],
                include,
            ));
        };
        let slug = format!("{}-{}", crate::specs::local_date(), input.slug);
        let dir = ws
            .workspace_data_dir
            .join("sessions")
            .join(session)
            .join("plans");
        let path = dir.join(format!("{slug}.md"));
        let content = plan_text(&slug, goal, &crate::specs::now_iso());
        let written = write_new(&dir, &path, &content);
        if written.is_ok() {
            crate::specs::events::emit(&ws, Self::NAME, json!({ "planSlug": slug }));
        }
        match written {
            Ok(()) => Ok(SpecReply::new(
                json!({ "planPath": path.display().to_string() }),
                include,
            )),
            Err(e) => {
                let exists = e.kind() == std::io::ErrorKind::AlreadyExists;
                let next = if exists {
                    "A plan with this slug already exists today and was left as it is: read it at planPath and continue it, or call create-plan again with another slug."
                } else {
                    "Tell the user the plan file could not be created (see the message); nothing else was written."
                };
                Ok(SpecReply::errors(
                    vec![
                        SpecError::new(
                            "Error",
                            io_code(e.kind()),
                            format!("cannot create {}: {e}", path.display()),
                        )
                        .with(json!({ "planPath": path.display().to_string(), "nextStep": next })),
                    ],
                    include,
                ))
            }
        }
    }

    fn text_of(output: &SpecReply) -> Option<String> {
        Some(output.render(include_str!("../../specs/instructions/create-plan.md")))
    }
}

/// The plan skeleton: frontmatter and the headings the instruction asks the agent to fill.
fn plan_text(slug: &str, goal: &str, created_at: &str) -> String {
    format!(
        "---\nslug: {slug}\ngoal: {}\ncreatedAt: {created_at}\nstatus: draft\n---\n\n# {goal}\n\n## Goal\n\n## Scope\n\n## Constraints\n\n## Trade-offs\n\n## Steps\n\n## Verification\n",
        serde_json::to_string(goal).unwrap_or_default(),
    )
}

/// Writes a new file, never replacing one: a plan of the same day and slug stays intact.
fn write_new(dir: &Path, path: &Path, content: &str) -> std::io::Result<()> {
    use std::io::Write;
    std::fs::create_dir_all(dir)?;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    f.write_all(content.as_bytes())?;
    f.sync_all()
}

/// The errno-style code a failed plan write reports.
fn io_code(kind: std::io::ErrorKind) -> &'static str {
    match kind {
        std::io::ErrorKind::AlreadyExists => "EEXIST",
        std::io::ErrorKind::NotADirectory => "ENOTDIR",
        std::io::ErrorKind::PermissionDenied => "EACCES",
        _ => "EIO",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_goal_is_quoted_in_the_frontmatter_and_plain_in_the_title() {
        let text = plan_text("2024-01-02-x", "Say \"hi\": now", "2024-01-02T03:04:05Z");
        assert!(text.starts_with(
            "---\nslug: 2024-01-02-x\ngoal: \"Say \\\"hi\\\": now\"\ncreatedAt: 2024-01-02T03:04:05Z\nstatus: draft\n---\n\n# Say \"hi\": now\n"
        ));
        assert!(text.ends_with("## Steps\n\n## Verification\n"));
    }

    #[test]
    fn an_existing_plan_is_never_replaced() {
        let dir = tempfile::tempdir().expect("temp dir");
        let plans = dir.path().join("a/plans");
        let path = plans.join("p.md");
        write_new(&plans, &path, "first").expect("written");
        let again = write_new(&plans, &path, "second").expect_err("refused");
        assert_eq!(io_code(again.kind()), "EEXIST");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "first");
    }
}
