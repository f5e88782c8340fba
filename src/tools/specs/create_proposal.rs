//! `create-proposal`: an OpenSpec change in one owning project.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::artifacts::artifacts;
use super::layout::{bootstrap, exclude_worktrees};
use super::{SpecReply, WRITE, change_name, folder_id, workspace};
use crate::config::Toolset;
use crate::error::ToolError;
use crate::git::write::{GitWrite, Ran, Write};
use crate::process::CancellationToken;
use crate::specs::target::{self, Mode, Owner, Target};
use crate::specs::{SpecError, metadata, openspec};
use crate::tools::{Annotations, CallCtx, Tool};

/// `create-proposal`: an OpenSpec change in one owning project.
pub struct CreateProposal;

/// The steps of a call: the worktree, the change, its artifacts; each report counts
/// those done.
const STEPS: u64 = 3;

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum WorktreeMode {
    /// A linked worktree `.worktrees/<changeName>` on branch `proposal/<changeName>`.
    #[default]
    Linked,
    /// The owning project's main worktree.
    Main,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateProposalInput {
    /// Kebab-case change name, without a date prefix.
    pub change_name: String,
    /// The owning project; required when the workspace has several folders.
    #[serde(default)]
    pub folder_id: Option<String>,
    /// `linked` (default) or `main`.
    #[serde(default)]
    pub worktree_mode: Option<WorktreeMode>,
    /// Include the workflow instruction (default true; keep it on first use).
    #[serde(default)]
    pub include_instruction: Option<bool>,
}

impl Tool for CreateProposal {
    type Input = CreateProposalInput;
    type Output = SpecReply;
    const NAME: &'static str = "create-proposal";
    const TITLE: &'static str = "Create a change proposal";
    const DESCRIPTION: &'static str = "Create an OpenSpec change in one owning project and return its artifacts with templates and instructions; worktreeMode linked (default) works in .worktrees/<changeName>.";
    const TOOLSET: Toolset = Toolset::Specs;
    const ANNOTATIONS: Annotations = WRITE;

    async fn call(ctx: CallCtx, input: CreateProposalInput) -> Result<SpecReply, ToolError> {
        let ws = workspace(&ctx)?;
        change_name("changeName", &input.change_name)?;
        folder_id(input.folder_id.as_deref())?;
        let include = input.include_instruction;
        let name = input.change_name.as_str();
        let folder = match target::pick(&ws, input.folder_id.as_deref()) {
            Ok(f) => f,
            Err(e) => return Ok(SpecReply::errors(vec![e], include)),
        };
        let owner = match target::open(&ctx.config, folder, &ctx.cancel).await {
            Ok(o) => o,
            Err(e) => return Ok(SpecReply::errors(vec![e], include)),
        };
        match target::find(&owner, name) {
            Ok(Some(existing)) => {
                return Ok(SpecReply::new(already_exists(name, &existing), include));
            }
            Ok(None) => {}
            Err(e) => return Ok(SpecReply::errors(vec![e], include)),
        }
        let mut warnings: Vec<String> = Vec::new();
        let mode = input.worktree_mode.unwrap_or_default();
        let step = |n: u64, what: &str| {
            ctx.progress
                .report(n, Some(STEPS), || format!("create-proposal: {what}"));
        };
        step(0, "preparing the worktree");
        let (mode, dir) = match place(&owner, mode, name, &ctx.cancel, &mut warnings).await {
            Ok(placed) => placed,
            Err(e) => return Ok(SpecReply::errors(vec![e], include)),
        };
        let target = owner.target(name, mode, &dir);
        step(1, "creating the change with OpenSpec");
        if let Err(e) = create_change(&owner, &target, &dir, name, &ctx.cancel).await {
            return Ok(SpecReply::errors(vec![e], include));
        }
        crate::specs::events::emit(
            &ws,
            Self::NAME,
            json!({
                "proposalRef": target.proposal_ref,
                "worktreeMode": target.worktree_mode,
                "worktreePath": target.worktree_path,
            }),
        );
        let mut state = json!({
            "changeName": name,
            "target": target,
            "warnings": warnings,
        });
        step(2, "reading the change's artifacts");
        match artifacts(&dir, name, &ctx.cancel).await {
            Ok(extra) => {
                for (k, v) in extra {
                    state[k] = v;
                }
            }
            Err(e) => state["errors"] = json!([e]),
        }
        Ok(SpecReply::new(state, include))
    }

    fn text_of(output: &SpecReply) -> Option<String> {
        Some(output.render(include_str!("../../specs/instructions/create-proposal.md")))
    }
}

fn already_exists(name: &str, existing: &Target) -> Value {
    json!({
        "changeName": name,
        "status": "failed",
        "target": existing,
        "error": {
            "code": "PROPOSAL_ALREADY_EXISTS",
            "message": format!("change {name:?} already exists in {}; nothing was changed", existing.worktree_path),
        },
    })
}

/// Where the change is written: the main worktree, or a linked one prepared for it. A
/// folder that is no git repository falls back to main, with a warning.
async fn place(
    owner: &Owner,
    mode: WorktreeMode,
    name: &str,
    cancel: &CancellationToken,
    warnings: &mut Vec<String>,
) -> Result<(Mode, PathBuf), SpecError> {
    match (mode, &owner.repo) {
        (WorktreeMode::Main, _) => Ok((Mode::Main, owner.path.clone())),
        (WorktreeMode::Linked, None) => {
            warnings.push(format!(
                "linked mode needs a git repository; {}; the proposal is created in the main worktree instead",
                owner.not_git.as_deref().unwrap_or("the folder is not a git repository")
            ));
            Ok((Mode::Main, owner.path.clone()))
        }
        (WorktreeMode::Linked, Some(repo)) => {
            let path = prepare_linked(owner, &repo.common_dir, name, cancel, warnings).await?;
            Ok((Mode::Linked, path))
        }
    }
}

/// The OpenSpec layout and the change itself (unless its metadata is already there),
/// then the change marked created. Every place written must lead inside the folder.
async fn create_change(
    owner: &Owner,
    target: &Target,
    dir: &Path,
    name: &str,
    cancel: &CancellationToken,
) -> Result<(), SpecError> {
    let meta = target.change_dir().join(".openspec.yaml");
    let written = [
        "openspec/specs",
        "openspec/changes/archive",
        "openspec/config.yaml",
        "openspec/config.yml",
    ]
    .iter()
    .map(|rel| dir.join(rel))
    .chain([meta.clone()]);
    if let Some(e) = written.filter_map(|p| owner.confine(&p).err()).next() {
        return Err(e);
    }
    bootstrap(dir)?;
    if !meta.exists() {
        let v = openspec::new_change(dir, name, cancel)
            .await
            .map_err(SpecError::from_cli)?;
        let made = v["change"]["path"].as_str().map(PathBuf::from);
        let want = target.change_dir();
        if made.as_deref().and_then(|p| std::fs::canonicalize(p).ok())
            != std::fs::canonicalize(&want).ok()
        {
            return Err(SpecError::new(
                "OpenSpecError",
                "OPENSPEC_ROOT_MISMATCH",
                format!(
                    "OpenSpec created the change at {:?}, not {}",
                    made,
                    want.display()
                ),
            ));
        }
    }
    metadata::mark_created(&meta, &crate::specs::now_iso()).map_err(|e| SpecError::from_meta(&e))
}

/// Creates or reuses `.worktrees/<name>` on `proposal/<name>`.
async fn prepare_linked(
    owner: &Owner,
    common_dir: &Path,
    name: &str,
    cancel: &CancellationToken,
    warnings: &mut Vec<String>,
) -> Result<PathBuf, SpecError> {
    exclude_worktrees(common_dir).map_err(|e| {
        SpecError::new(
            "WorkspaceError",
            "WORKSPACE_EXCLUDE_FAILED",
            format!("cannot add .worktrees/ to .git/info/exclude: {e}"),
        )
    })?;
    let path = owner.path.join(".worktrees").join(name);
    owner.confine(&path)?;
    if path.exists() {
        let canonical = std::fs::canonicalize(&path).unwrap_or(path.clone());
        if !owner.linked.contains(&canonical) {
            return Err(SpecError::new(
                "WorkspaceError",
                "MCP_WORKTREE_NOT_REGISTERED",
                format!(
                    "{} exists but is not a registered worktree of this repository",
                    path.display()
                ),
            )
            .with(json!({ "worktreePath": path.display().to_string() })));
        }
        warnings.push(format!(
            "linked workspace already exists and will be reused: {}",
            canonical.display()
        ));
        return Ok(canonical);
    }
    let branch = format!("proposal/{name}");
    let add_failed = |message: String| {
        SpecError::new("WorkspaceRuntimeError", "GIT_WORKTREE_ADD_FAILED", message)
    };
    let ran = GitWrite::new(&owner.path, cancel)
        .exec(Write::WorktreeAdd {
            branch: &branch,
            path: &path,
        })
        .await
        .map_err(|e| add_failed(e.to_string()))?;
    if !ran.ok() {
        return Err(
            add_failed(format!("git worktree add failed: {}", fatal_line(&ran))).with(
                json!({ "command": ran.command, "exitCode": ran.code, "stderr": ran.stderr }),
            ),
        );
    }
    std::fs::canonicalize(&path).map_err(|e| add_failed(e.to_string()))
}

/// git's own reason: its first `fatal:`/`error:` line, else its first line.
fn fatal_line(ran: &Ran) -> &str {
    ran.stderr
        .lines()
        .find(|l| l.starts_with("fatal:") || l.starts_with("error:"))
        .or_else(|| ran.stderr.lines().next())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_is_gits_fatal_line() {
        let ran = |stderr: &str| Ran {
            command: Vec::new(),
            cwd: PathBuf::new(),
            code: Some(128),
            stderr: stderr.into(),
            stdout: String::new(),
        };
        assert_eq!(
            fatal_line(&ran(
                "Preparing worktree\nfatal: a branch named 'x' already exists\n"
            )),
            "fatal: a branch named 'x' already exists"
        );
        assert_eq!(fatal_line(&ran("hook said no\nmore")), "hook said no");
        assert_eq!(fatal_line(&ran("")), "");
    }

    #[test]
    fn the_worktree_mode_defaults_to_linked() {
        assert_eq!(WorktreeMode::default(), WorktreeMode::Linked);
        let mode: WorktreeMode = serde_json::from_value(json!("main")).expect("parses");
        assert_eq!(mode, WorktreeMode::Main);
    }
}
