//! The spec workflow tools: `explore`, `create-plan`, `create-proposal`, `apply-change`,
//! `archive-change`.
//!
//! Each answers with one text block, `<tool_instruction>` (the workflow the agent must
//! follow at this step) then `<state>` (pretty JSON), or the bare JSON state when the
//! caller passes `includeInstruction: false`. `structuredContent` is always the state.
//! Bad arguments (unknown fields, a name that is not kebab-case) are `-32602` errors;
//! everything that goes wrong in the workflow itself is reported inside the state, as
//! `{"errors": [...]}` or, for create and archive, a `status: "failed"` state, so the
//! agent keeps the instruction that tells it what to do next.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Value, json};

use super::{Annotations, CallCtx, Tool};
use crate::config::Toolset;
use crate::error::ToolError;
use crate::specs::apply_status::ApplyStatus;
use crate::specs::target::{self, Mode, Owner};
use crate::specs::workspace::Workspace;
use crate::specs::{SpecError, archive, metadata, openspec, scan, tasks};

/// A spec tool's answer: the state, and whether the instruction goes with it.
pub struct SpecReply {
    pub state: Value,
    pub include_instruction: bool,
}

impl SpecReply {
    fn new(state: Value, include: Option<bool>) -> Self {
        SpecReply {
            state,
            include_instruction: include.unwrap_or(true),
        }
    }

    fn errors(errors: Vec<SpecError>, include: Option<bool>) -> Self {
        SpecReply::new(json!({ "errors": errors }), include)
    }

    fn render(&self, instruction: &str) -> String {
        let state = serde_json::to_string_pretty(&self.state).unwrap_or_default();
        if self.include_instruction {
            format!(
                "<tool_instruction>\n{}\n</tool_instruction>\n\n<state>\n{state}\n</state>",
                instruction.trim_end()
            )
        } else {
            state
        }
    }
}

impl Serialize for SpecReply {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.state.serialize(s)
    }
}

impl JsonSchema for SpecReply {
    fn schema_name() -> Cow<'static, str> {
        "SpecState".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "object",
            "description": "The workflow state. Failures appear as `errors: [{type, message, code?, details?}]` or, for create-proposal and archive-change, as `status: \"failed\"` with an `error`.",
        })
    }
}

const WRITE: Annotations = Annotations {
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: false,
};

fn workspace(ctx: &CallCtx) -> Result<Arc<Workspace>, ToolError> {
    ctx.config.workspace.clone().ok_or_else(|| {
        ToolError::unsupported("the spec tools have no workspace (FYLLO_WORKSPACE_JSON, --workspace or --allowed-root)")
    })
}

fn change_name(field: &str, value: &str) -> Result<(), ToolError> {
    crate::specs::check_change_name(value).map_err(|why| ToolError::invalid(field, why))
}

fn folder_id(value: &Option<String>) -> Result<(), ToolError> {
    match value {
        Some(v) if v.trim().is_empty() => Err(ToolError::invalid("folderId", "must not be empty")),
        _ => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------
// explore

/// `explore`: active changes across the workspace, and one change in detail.
pub struct Explore;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExploreInput {
    /// A change to inspect in detail (its artifacts and where it lives).
    #[serde(default)]
    pub change_name: Option<String>,
    /// Restrict the scan to one authorized folder; omit to cover every folder.
    #[serde(default)]
    pub folder_id: Option<String>,
    /// Include the workflow instruction (default true; keep it on first use).
    #[serde(default)]
    pub include_instruction: Option<bool>,
}

impl Tool for Explore {
    type Input = ExploreInput;
    type Output = SpecReply;
    const NAME: &'static str = "explore";
    const TITLE: &'static str = "Explore specs and changes";
    const DESCRIPTION: &'static str = "Enter exploration mode: read the authorized workspace's active OpenSpec changes (linked worktrees first, then each folder's main worktree) and, with changeName, one change's artifact status and location. Read-only.";
    const TOOLSET: Toolset = Toolset::Specs;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: ExploreInput) -> Result<SpecReply, ToolError> {
        let ws = workspace(&ctx)?;
        if let Some(name) = &input.change_name {
            change_name("changeName", name)?;
        }
        folder_id(&input.folder_id)?;
        let include = input.include_instruction;
        let folders = match &input.folder_id {
            Some(id) => match ws.folder(id) {
                Some(f) => vec![f.clone()],
                None => {
                    return Ok(SpecReply::errors(
                        vec![target::unauthorized(&ws, id)],
                        include,
                    ));
                }
            },
            None => ws.folders.clone(),
        };
        let mut set = tokio::task::JoinSet::new();
        for (i, folder) in folders.into_iter().enumerate() {
            let cancel = ctx.cancel.clone();
            set.spawn(async move { (i, scan_folder(folder, cancel).await) });
        }
        let mut scanned: Vec<(usize, FolderScan)> = Vec::new();
        while let Some(joined) = set.join_next().await {
            scanned.push(joined.map_err(|e| ToolError::internal(e.to_string()))?);
        }
        scanned.sort_by_key(|(i, _)| *i);
        let mut active = Vec::new();
        let mut warnings = Vec::new();
        let mut owners = Vec::new();
        for (_, s) in scanned {
            active.extend(s.changes);
            warnings.extend(s.warnings);
            owners.extend(s.owner);
        }
        let mut state = json!({
            "activeChanges": active,
            "currentChange": null,
            "warnings": warnings,
        });
        let Some(name) = input.change_name else {
            return Ok(SpecReply::new(state, include));
        };
        let failed_scan = warnings
            .iter()
            .any(|w| w["code"] == "PROPOSAL_FOLDER_SCAN_FAILED");
        if input.folder_id.is_none() && failed_scan {
            let err = SpecError::new(
                "ProposalError",
                "PROPOSAL_OWNER_UNVERIFIED",
                "some folders could not be scanned, so the owner of this change is not certain; pass folderId",
            )
            .with(json!({ "changeName": name, "warnings": warnings }));
            state["errors"] = json!([err]);
            return Ok(SpecReply::new(state, include));
        }
        let mut found = Vec::new();
        for owner in &owners {
            match target::find(owner, &name) {
                Ok(Some(t)) => found.push(t),
                Ok(None) => {}
                Err(e) => {
                    state["errors"] = json!([e]);
                    return Ok(SpecReply::new(state, include));
                }
            }
        }
        let target = match found.len() {
            0 => {
                let err = SpecError::new(
                    "ProposalError",
                    "PROPOSAL_NOT_FOUND",
                    format!("no active change named {name:?} in the scanned folders"),
                )
                .with(json!({ "changeName": name }));
                state["errors"] = json!([err]);
                return Ok(SpecReply::new(state, include));
            }
            1 => found.remove(0),
            _ => {
                let candidates: Vec<_> = found.iter().map(|t| &t.proposal_ref).collect();
                let err = SpecError::new(
                    "ProposalError",
                    "PROPOSAL_OWNER_AMBIGUOUS",
                    format!("several folders have a change named {name:?}; pass folderId"),
                )
                .with(json!({ "candidates": candidates }));
                state["errors"] = json!([err]);
                return Ok(SpecReply::new(state, include));
            }
        };
        match status_of(target.path(), &name, &ctx).await {
            Ok(status) => {
                state["currentChange"] = json!({
                    "proposalRef": target.proposal_ref,
                    "worktreeMode": target.worktree_mode,
                    "worktreePath": target.worktree_path,
                    "applyRequires": status["applyRequires"],
                    "artifacts": status["artifacts"].as_array().map(|a| a.iter().map(|x| json!({
                        "id": x["id"], "outputPath": x["outputPath"], "status": x["status"],
                    })).collect::<Vec<_>>()),
                    "schemaName": status["schemaName"],
                });
            }
            Err(e) => state["errors"] = json!([e]),
        }
        Ok(SpecReply::new(state, include))
    }

    fn text_of(output: &SpecReply, _: &Value) -> String {
        output.render(include_str!("../specs/instructions/explore.md"))
    }
}

struct FolderScan {
    owner: Option<Owner>,
    changes: Vec<Value>,
    warnings: Vec<Value>,
}

async fn scan_folder(
    folder: crate::specs::workspace::Folder,
    cancel: crate::process::CancellationToken,
) -> FolderScan {
    let warn = |code: &str, message: String| json!({ "folderId": folder.folder_id, "code": code, "message": message });
    let owner = match target::open(&folder, &cancel).await {
        Ok(owner) => owner,
        Err(e) => {
            return FolderScan {
                owner: None,
                changes: Vec::new(),
                warnings: vec![warn("PROPOSAL_FOLDER_SCAN_FAILED", e.message)],
            };
        }
    };
    let scan_owner = owner.clone();
    let refused: Vec<Value> = owner
        .refused
        .iter()
        .map(|e| {
            json!({
                "folderId": folder.folder_id,
                "code": e.code,
                "message": format!("{}; it is left out", e.message),
            })
        })
        .collect();
    let scanned = tokio::task::spawn_blocking(move || {
        let mut changes: Vec<Value> = Vec::new();
        let mut warnings = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let ours = scan_owner.path.join(".worktrees");
        for (mode, path) in scan_owner.candidates() {
            if mode == Mode::Linked && path.starts_with(&ours) && !path.join("openspec").is_dir() {
                warnings.push((
                    "PROPOSAL_WORKTREE_WITHOUT_OPENSPEC",
                    format!(
                        "linked worktree {} has no openspec/ directory; it holds no change (OpenSpec would otherwise read the main checkout's)",
                        path.display()
                    ),
                ));
                continue;
            }
            match scan::changes(&path) {
                Ok(list) => {
                    for c in list {
                        if !seen.insert(c.name.clone()) {
                            continue;
                        }
                        changes.push(json!({
                            "folderId": scan_owner.folder.folder_id,
                            "folderName": scan_owner.folder.folder_name,
                            "changeId": c.name,
                            "completedTasks": c.completed_tasks,
                            "totalTasks": c.total_tasks,
                            "lastModified": c.last_modified_iso(),
                            "status": c.status(),
                            "worktreePath": path.display().to_string(),
                            "worktreeMode": mode,
                        }));
                    }
                }
                Err(e) => warnings.push((
                    "PROPOSAL_FOLDER_SCAN_FAILED",
                    format!("cannot read the changes of {}: {e}", path.display()),
                )),
            }
        }
        (changes, warnings)
    })
    .await;
    let (changes, raw_warnings) = scanned.unwrap_or_else(|e| {
        (
            Vec::new(),
            vec![("PROPOSAL_FOLDER_SCAN_FAILED", format!("scan failed: {e}"))],
        )
    });
    FolderScan {
        changes,
        warnings: refused
            .into_iter()
            .chain(
                raw_warnings
                    .into_iter()
                    .map(|(code, message)| warn(code, message)),
            )
            .collect(),
        owner: Some(owner),
    }
}

/// `openspec status --change <name> --json` in a target, with a repair hint when the
/// change's metadata is rejected.
async fn status_of(dir: &Path, name: &str, ctx: &CallCtx) -> Result<Value, SpecError> {
    openspec::json(dir, &["status", "--change", name, "--json"], &ctx.cancel)
        .await
        .map_err(|e| metadata_hint(dir, name, e))
}

/// OpenSpec 1.13.2 rejects a `created` that is not `YYYY-MM-DD`; say which line to fix.
fn metadata_hint(dir: &Path, name: &str, err: openspec::CliError) -> SpecError {
    let created_bad = err.message.contains("created must be YYYY-MM-DD");
    let mut out = SpecError::from_cli(err);
    if created_bad {
        let path = dir
            .join("openspec/changes")
            .join(name)
            .join(".openspec.yaml");
        let text = crate::safe_file::read(&path, 1024 * 1024)
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned());
        let line = text.and_then(|t| {
            t.lines()
                .enumerate()
                .find(|(_, l)| l.starts_with("created:"))
                .map(|(i, l)| (i + 1, l.to_owned()))
        });
        out.code = Some("OPENSPEC_METADATA_CREATED_FORMAT".into());
        out.details = Some(Box::new(json!({
            "path": path.display().to_string(),
            "line": line.as_ref().map(|l| l.0),
            "current": line.as_ref().map(|l| l.1.clone()),
            "repair": "replace that line with `created: YYYY-MM-DD` (the date part only); keep the full time as a separate top-level `createdAt:` line",
        })));
    }
    out
}

// ---------------------------------------------------------------------------------------
// create-plan

/// `create-plan`: a session-scoped plan skeleton in the workspace data directory.
pub struct CreatePlan;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreatePlanInput {
    /// One sentence: what the plan aims to achieve.
    pub goal: String,
    /// Kebab-case short identifier, without a date prefix (the tool adds yyyy-MM-dd-).
    pub slug: String,
    /// Include the workflow instruction (default true; keep it on first use).
    #[serde(default)]
    pub include_instruction: Option<bool>,
}

impl Tool for CreatePlan {
    type Input = CreatePlanInput;
    type Output = SpecReply;
    const NAME: &'static str = "create-plan";
    const TITLE: &'static str = "Create a session plan";
    const DESCRIPTION: &'static str = "Create a session-scoped plan for exploratory or architectural work that does not change a behaviour contract. Writes only a template (frontmatter and headings) to <workspaceDataDir>/sessions/<sessionId>/plans/<yyyy-MM-dd-slug>.md; never into a project, never a worktree. Takes no folderId.";
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
        let content = format!(
            "---\nslug: {slug}\ngoal: {}\ncreatedAt: {}\nstatus: draft\n---\n\n# {goal}\n\n## Goal\n\n## Scope\n\n## Constraints\n\n## Trade-offs\n\n## Steps\n\n## Verification\n",
            serde_json::to_string(goal).unwrap_or_default(),
            crate::specs::now_iso(),
        );
        let written = std::fs::create_dir_all(&dir).and_then(|()| {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)?;
            f.write_all(content.as_bytes())?;
            f.sync_all()
        });
        if written.is_ok() {
            crate::specs::events::emit(&ws, Self::NAME, json!({ "planSlug": slug }));
        }
        match written {
            Ok(()) => Ok(SpecReply::new(
                json!({ "planPath": path.display().to_string() }),
                include,
            )),
            Err(e) => {
                let code = match e.kind() {
                    std::io::ErrorKind::AlreadyExists => "EEXIST",
                    std::io::ErrorKind::NotADirectory => "ENOTDIR",
                    std::io::ErrorKind::PermissionDenied => "EACCES",
                    _ => "EIO",
                };
                Ok(SpecReply::errors(
                    vec![
                        SpecError::new(
                            "Error",
                            code,
                            format!("cannot create {}: {e}", path.display()),
                        )
                        .with(json!({ "planPath": path.display().to_string() })),
                    ],
                    include,
                ))
            }
        }
    }

    fn text_of(output: &SpecReply, _: &Value) -> String {
        output.render(include_str!("../specs/instructions/create-plan.md"))
    }
}

// ---------------------------------------------------------------------------------------
// create-proposal

/// `create-proposal`: an OpenSpec change in one owning project.
pub struct CreateProposal;

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

/// The default `openspec/config.yaml`, written only when the project has none. One literal
/// line per YAML line: a `\` continuation would strip the indentation that nests `tasks`
/// under `rules`.
const DEFAULT_CONFIG: &str = concat!(
    "schema: spec-driven\n",
    "\n",
    "# Project context and per-artifact rules for OpenSpec. This file belongs to the project:\n",
    "# edit it freely; gitward never rewrites an existing config.\n",
    "# context: |\n",
    "#   Tech stack, conventions, domain notes.\n",
    "rules:\n",
    "  tasks:\n",
    "    - While writing tasks.md, decide whether the project's guidelines (README, contributor or style documents) need a concrete update task; add one only when the change alters what they say, and never add a placeholder task to evaluate or confirm it.\n",
);

impl Tool for CreateProposal {
    type Input = CreateProposalInput;
    type Output = SpecReply;
    const NAME: &'static str = "create-proposal";
    const TITLE: &'static str = "Create a change proposal";
    const DESCRIPTION: &'static str = "Create an OpenSpec change in one owning project (folderId; required when the workspace has several folders) and return its artifacts with templates and instructions. worktreeMode linked (default) uses .worktrees/<changeName> on branch proposal/<changeName>, checked out by `git worktree add` with the repository's hooks (post-checkout) and smudge filters running as a manual checkout would; main writes in the project's main worktree. One owner per call.";
    const TOOLSET: Toolset = Toolset::Specs;
    const ANNOTATIONS: Annotations = WRITE;

    async fn call(ctx: CallCtx, input: CreateProposalInput) -> Result<SpecReply, ToolError> {
        let ws = workspace(&ctx)?;
        change_name("changeName", &input.change_name)?;
        folder_id(&input.folder_id)?;
        let include = input.include_instruction;
        let name = input.change_name.as_str();
        let folder = match target::pick(&ws, input.folder_id.as_deref()) {
            Ok(f) => f,
            Err(e) => return Ok(SpecReply::errors(vec![e], include)),
        };
        let owner = match target::open(folder, &ctx.cancel).await {
            Ok(o) => o,
            Err(e) => return Ok(SpecReply::errors(vec![e], include)),
        };
        match target::find(&owner, name) {
            Ok(Some(existing)) => {
                return Ok(SpecReply::new(
                    json!({
                        "changeName": name,
                        "status": "failed",
                        "target": existing,
                        "error": {
                            "code": "PROPOSAL_ALREADY_EXISTS",
                            "message": format!("change {name:?} already exists in {}; nothing was changed", existing.worktree_path),
                        },
                    }),
                    include,
                ));
            }
            Ok(None) => {}
            Err(e) => return Ok(SpecReply::errors(vec![e], include)),
        }
        let mut warnings: Vec<String> = Vec::new();
        let mode = input.worktree_mode.unwrap_or_default();
        let (mode, dir) = match (mode, &owner.repo) {
            (WorktreeMode::Main, _) => (Mode::Main, owner.path.clone()),
            (WorktreeMode::Linked, None) => {
                warnings.push(format!(
                    "linked mode needs a git repository; {}; the proposal is created in the main worktree instead",
                    owner.not_git.as_deref().unwrap_or("the folder is not a git repository")
                ));
                (Mode::Main, owner.path.clone())
            }
            (WorktreeMode::Linked, Some(repo)) => {
                match prepare_linked(&owner, repo, name, &ctx, &mut warnings).await {
                    Ok(path) => (Mode::Linked, path),
                    Err(e) => return Ok(SpecReply::errors(vec![e], include)),
                }
            }
        };
        let target = owner.target(name, mode, &dir);
        let written = [
            "openspec/specs",
            "openspec/changes/archive",
            "openspec/config.yaml",
            "openspec/config.yml",
        ]
        .iter()
        .map(|rel| dir.join(rel))
        .chain([target.change_dir().join(".openspec.yaml")]);
        if let Some(e) = written.filter_map(|p| owner.confine(&p).err()).next() {
            return Ok(SpecReply::errors(vec![e], include));
        }
        if let Err(e) = bootstrap(&dir) {
            return Ok(SpecReply::errors(vec![e], include));
        }
        let meta = target.change_dir().join(".openspec.yaml");
        if !meta.exists() {
            match openspec::json(&dir, &["new", "change", name, "--json"], &ctx.cancel).await {
                Ok(v) => {
                    let made = v["change"]["path"].as_str().map(PathBuf::from);
                    let want = target.change_dir();
                    if made.as_deref().and_then(|p| std::fs::canonicalize(p).ok())
                        != std::fs::canonicalize(&want).ok()
                    {
                        return Ok(SpecReply::errors(
                            vec![SpecError::new(
                                "OpenSpecError",
                                "OPENSPEC_ROOT_MISMATCH",
                                format!(
                                    "OpenSpec created the change at {:?}, not {}",
                                    made,
                                    want.display()
                                ),
                            )],
                            include,
                        ));
                    }
                }
                Err(e) => return Ok(SpecReply::errors(vec![SpecError::from_cli(e)], include)),
            }
        }
        if let Err(e) = metadata::mark_created(&meta, &crate::specs::now_iso()) {
            return Ok(SpecReply::errors(vec![SpecError::from_meta(&e)], include));
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
        match artifacts(&dir, name, &ctx).await {
            Ok(extra) => {
                for (k, v) in extra {
                    state[k] = v;
                }
            }
            Err(e) => state["errors"] = json!([e]),
        }
        Ok(SpecReply::new(state, include))
    }

    fn text_of(output: &SpecReply, _: &Value) -> String {
        output.render(include_str!("../specs/instructions/create-proposal.md"))
    }
}

/// Creates or reuses `.worktrees/<name>` on `proposal/<name>`.
async fn prepare_linked(
    owner: &Owner,
    repo: &crate::git::Repo,
    name: &str,
    ctx: &CallCtx,
    warnings: &mut Vec<String>,
) -> Result<PathBuf, SpecError> {
    exclude_worktrees(repo).map_err(|e| {
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
    let ran = crate::git::write::GitWrite::new(&owner.path, &ctx.cancel)
        .run([
            "worktree".into(),
            "add".into(),
            "-b".into(),
            branch.clone(),
            "--".into(),
            path.display().to_string(),
        ])
        .await
        .map_err(|e| {
            SpecError::new(
                "WorkspaceRuntimeError",
                "GIT_WORKTREE_ADD_FAILED",
                e.to_string(),
            )
        })?;
    if !ran.ok() {
        return Err(SpecError::new(
            "WorkspaceRuntimeError",
            "GIT_WORKTREE_ADD_FAILED",
            format!(
                "git worktree add failed: {}",
                ran.stderr
                    .lines()
                    .find(|l| l.starts_with("fatal:") || l.starts_with("error:"))
                    .or_else(|| ran.stderr.lines().next())
                    .unwrap_or_default()
            ),
        )
        .with(json!({ "command": ran.command, "exitCode": ran.code, "stderr": ran.stderr })));
    }
    std::fs::canonicalize(&path).map_err(|e| {
        SpecError::new(
            "WorkspaceRuntimeError",
            "GIT_WORKTREE_ADD_FAILED",
            e.to_string(),
        )
    })
}

/// Adds `.worktrees/` to the repository's `info/exclude`, so proposals never dirty the
/// main worktree's tracked `.gitignore`.
fn exclude_worktrees(repo: &crate::git::Repo) -> std::io::Result<()> {
    let info = repo.common_dir.join("info");
    let file = info.join("exclude");
    let current = match crate::safe_file::read(&file, 1024 * 1024) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(crate::safe_file::Refusal::Missing) => String::new(),
        // Rewriting it would replace what we could not read.
        Err(why) => return Err(std::io::Error::other(format!("{}: {why}", file.display()))),
    };
    if current.lines().any(|l| {
        matches!(
            l.trim(),
            ".worktrees/" | "/.worktrees/" | ".worktrees" | "/.worktrees"
        )
    }) {
        return Ok(());
    }
    std::fs::create_dir_all(&info)?;
    let mut text = current;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(".worktrees/\n");
    metadata::write_atomic(&file, text.as_bytes()).map_err(|e| std::io::Error::other(e.to_string()))
}

/// The minimum OpenSpec layout in `dir`; an existing `config.yaml` is never touched.
fn bootstrap(dir: &Path) -> Result<(), SpecError> {
    let fail = |e: std::io::Error| {
        SpecError::new(
            "WorkspaceError",
            "OPENSPEC_BOOTSTRAP_FAILED",
            format!("cannot prepare openspec/ in {}: {e}", dir.display()),
        )
    };
    std::fs::create_dir_all(dir.join("openspec/specs")).map_err(fail)?;
    std::fs::create_dir_all(dir.join("openspec/changes/archive")).map_err(fail)?;
    let config = dir.join("openspec/config.yaml");
    if !config.exists() && !dir.join("openspec/config.yml").exists() {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&config)
            .map_err(fail)?;
        std::io::Write::write_all(&mut f, DEFAULT_CONFIG.as_bytes()).map_err(fail)?;
    }
    Ok(())
}

/// Status plus every artifact's instructions, fetched concurrently.
async fn artifacts(
    dir: &Path,
    name: &str,
    ctx: &CallCtx,
) -> Result<Vec<(&'static str, Value)>, SpecError> {
    let status = status_of(dir, name, ctx).await?;
    let list: Vec<Value> = status["artifacts"].as_array().cloned().unwrap_or_default();
    let mut set = tokio::task::JoinSet::new();
    for (i, a) in list.iter().enumerate() {
        let id = a["id"].as_str().unwrap_or_default().to_owned();
        let dir = dir.to_owned();
        let name = name.to_owned();
        let cancel = ctx.cancel.clone();
        set.spawn(async move {
            let r = openspec::json(
                &dir,
                &["instructions", &id, "--change", &name, "--json"],
                &cancel,
            )
            .await;
            (i, r)
        });
    }
    let mut merged = list.clone();
    while let Some(joined) = set.join_next().await {
        let (i, r) = joined.map_err(|e| SpecError::new("Error", "INTERNAL", e.to_string()))?;
        let extra = r.map_err(|e| metadata_hint(dir, name, e))?;
        if let (Some(obj), Some(extra)) = (merged[i].as_object_mut(), extra.as_object()) {
            // `context` and `rules` are the project's own guidance from config.yaml.
            for key in [
                "description",
                "instruction",
                "context",
                "rules",
                "template",
                "resolvedOutputPath",
                "existingOutputPaths",
                "dependencies",
                "unlocks",
            ] {
                if let Some(v) = extra.get(key) {
                    obj.insert(key.into(), v.clone());
                }
            }
        }
    }
    let next = merged
        .iter()
        .find(|a| a["status"] == "ready")
        .or_else(|| merged.iter().find(|a| a["status"] != "done"));
    Ok(vec![
        ("schemaName", status["schemaName"].clone()),
        ("applyRequires", status["applyRequires"].clone()),
        (
            "nextArtifact",
            next.map(|a| a["id"].clone()).unwrap_or(Value::Null),
        ),
        (
            "template",
            next.map(|a| a["template"].clone()).unwrap_or(Value::Null),
        ),
        (
            "instruction",
            next.map(|a| a["instruction"].clone())
                .unwrap_or(Value::Null),
        ),
        ("artifacts", Value::Array(merged)),
    ])
}

// ---------------------------------------------------------------------------------------
// apply-change

/// `apply-change`: a change's tasks and context, marking it `applying`.
pub struct ApplyChange;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApplyChangeInput {
    /// The change, from its proposalRef.
    pub change_name: String,
    /// The owning folder, from the proposalRef.
    pub folder_id: String,
    /// Include the workflow instruction (default true; keep it on first use).
    #[serde(default)]
    pub include_instruction: Option<bool>,
}

impl Tool for ApplyChange {
    type Input = ApplyChangeInput;
    type Output = SpecReply;
    const NAME: &'static str = "apply-change";
    const TITLE: &'static str = "Apply a change";
    const DESCRIPTION: &'static str = "Read a change's artifacts and tasks (with line numbers) and start implementing them: returns applyState (ready, blocked, all_done), context files and progress, and sets the change's .openspec.yaml status to applying. Takes folderId and changeName from the proposalRef; never a path.";
    const TOOLSET: Toolset = Toolset::Specs;
    const ANNOTATIONS: Annotations = Annotations {
        read_only: false,
        destructive: false,
        idempotent: true,
        open_world: false,
    };

    async fn call(ctx: CallCtx, input: ApplyChangeInput) -> Result<SpecReply, ToolError> {
        let ws = workspace(&ctx)?;
        change_name("changeName", &input.change_name)?;
        folder_id(&Some(input.folder_id.clone()))?;
        let include = input.include_instruction;
        let name = input.change_name.as_str();
        let fail = |e: SpecError| Ok(SpecReply::errors(vec![e], include));
        let Some(folder) = ws.folder(&input.folder_id) else {
            return fail(target::unauthorized(&ws, &input.folder_id));
        };
        let owner = match target::open(folder, &ctx.cancel).await {
            Ok(o) => o,
            Err(e) => return fail(e),
        };
        let target = match target::resolve(&owner, name) {
            Ok(t) => t,
            Err(e) => return fail(e),
        };
        let tasks_path = target.change_dir().join("tasks.md");
        let meta = target.change_dir().join(".openspec.yaml");
        if let Some(e) = [&tasks_path, &meta]
            .into_iter()
            .find_map(|p| owner.confine(p).err())
        {
            return Ok(SpecReply::new(
                json!({ "target": target, "errors": [e] }),
                include,
            ));
        }
        let task_list = match crate::specs::tasks::read(&tasks_path) {
            Ok(text) => tasks::parse(&text),
            Err(e) => {
                let code = if e.kind() == std::io::ErrorKind::NotFound {
                    "ENOENT"
                } else {
                    "EIO"
                };
                return Ok(SpecReply::new(
                    json!({
                        "target": target,
                        "errors": [SpecError::new("Error", code, format!("cannot read {}: {e}", tasks_path.display()))],
                    }),
                    include,
                ));
            }
        };
        // The metadata must be editable before anything else reads or writes it.
        if let Err(e) = metadata::read_status(&meta) {
            return Ok(SpecReply::new(
                json!({ "target": target, "errors": [SpecError::from_meta(&e)] }),
                include,
            ));
        }
        // Everything needed from OpenSpec is checked before the status is written, so an
        // unexpected reply leaves the change exactly as it was.
        let status = match status_of(target.path(), name, &ctx)
            .await
            .and_then(|reply| ApplyStatus::parse(&reply))
        {
            Ok(s) => s,
            Err(e) => {
                return Ok(SpecReply::new(
                    json!({ "target": target, "errors": [e] }),
                    include,
                ));
            }
        };
        if let Err(e) = metadata::set_status(&meta, metadata::Status::Applying) {
            return Ok(SpecReply::new(
                json!({ "target": target, "errors": [SpecError::from_meta(&e)] }),
                include,
            ));
        }
        let missing = status.missing();
        let (complete, total) = tasks::progress(&task_list);
        let apply_state = if !missing.is_empty() {
            "blocked"
        } else if complete == total {
            "all_done"
        } else {
            "ready"
        };
        let context = status.context.unwrap_or_default();
        Ok(SpecReply::new(
            json!({
                "target": target,
                "changeName": name,
                "schemaName": status.schema_name,
                "applyState": apply_state,
                "missingArtifacts": missing,
                "contextFiles": context,
                "tasksPath": tasks_path.display().to_string(),
                "tasks": task_list,
                "progress": { "total": total, "complete": complete, "remaining": total.saturating_sub(complete) },
            }),
            include,
        ))
    }

    fn text_of(output: &SpecReply, _: &Value) -> String {
        output.render(include_str!("../specs/instructions/apply-change.md"))
    }
}

// ---------------------------------------------------------------------------------------
// archive-change

/// `archive-change`: preview, archive with OpenSpec, then commit, merge and clean up.
pub struct ArchiveChange;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArchiveChangeInput {
    /// The change, from its proposalRef.
    pub change_name: String,
    /// The owning folder, from the proposalRef.
    pub folder_id: String,
    /// False (default) previews and writes nothing; true archives and finalizes.
    #[serde(default)]
    pub confirm: Option<bool>,
    /// Required with confirm: first line `type(scope): summary`, describing the work.
    #[serde(default)]
    pub commit_message: Option<String>,
    /// Include the workflow instruction (default true; keep it on first use).
    #[serde(default)]
    pub include_instruction: Option<bool>,
}

impl Tool for ArchiveChange {
    type Input = ArchiveChangeInput;
    type Output = SpecReply;
    const NAME: &'static str = "archive-change";
    const TITLE: &'static str = "Archive a change";
    const DESCRIPTION: &'static str = "Archive a change: preview by default (conflicts, incomplete tasks, delta specs; nothing written). With confirm and a commitMessage `type(scope): summary`, runs the OpenSpec archive (spec sync included), marks it archived, commits only the archive's paths, fast-forwards proposal/<changeName> into main, removes the linked worktree and deletes the branch; every git step is reported, with a recovery plan when one fails. A second call after a partial success resumes without re-running OpenSpec.";
    const TOOLSET: Toolset = Toolset::Specs;
    const ANNOTATIONS: Annotations = Annotations {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: false,
    };

    async fn call(ctx: CallCtx, input: ArchiveChangeInput) -> Result<SpecReply, ToolError> {
        let ws = workspace(&ctx)?;
        change_name("changeName", &input.change_name)?;
        folder_id(&Some(input.folder_id.clone()))?;
        let include = input.include_instruction;
        let Some(folder) = ws.folder(&input.folder_id) else {
            return Ok(SpecReply::errors(
                vec![target::unauthorized(&ws, &input.folder_id)],
                include,
            ));
        };
        let owner = match target::open(folder, &ctx.cancel).await {
            Ok(o) => o,
            Err(e) => return Ok(SpecReply::errors(vec![e], include)),
        };
        let request = archive::Request {
            change: input.change_name,
            confirm: input.confirm.unwrap_or(false),
            commit_message: input.commit_message,
        };
        let state = archive::run(&owner, &request, &ctx.cancel).await;
        Ok(SpecReply::new(state, include))
    }

    fn text_of(output: &SpecReply, _: &Value) -> String {
        output.render(include_str!("../specs/instructions/archive-change.md"))
    }
}
