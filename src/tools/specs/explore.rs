//! `explore`: active changes across the workspace, and one change in detail.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::status::status_of;
use super::{SpecReply, change_name, folder_id, workspace};
use std::sync::Arc;

use crate::config::{Config, Toolset};
use crate::error::ToolError;
use crate::process::CancellationToken;
use crate::specs::target::{self, Mode, Owner, Target};
use crate::specs::workspace::Folder;
use crate::specs::{SpecError, inventory, scan};
use crate::tools::{Annotations, CallCtx, Tool};

/// `explore`: active changes across the workspace, and one change in detail.
pub struct Explore;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExploreInput {
    /// A change to inspect in detail.
    #[serde(default, alias = "changeId")]
    pub change_name: Option<String>,
    /// One folder only (default: all).
    #[serde(default)]
    pub folder_id: Option<String>,
    /// Default true; keep it on first use.
    #[serde(default)]
    pub include_instruction: Option<bool>,
}

impl Tool for Explore {
    type Input = ExploreInput;
    type Output = SpecReply;
    const NAME: &'static str = "explore";
    const TITLE: &'static str = "Explore specs and changes";
    const DESCRIPTION: &'static str = "Exploration mode: the workspace's folders and specs, its active changes and, with changeName, one change's artifacts and location. Read-only.";
    const TOOLSET: Toolset = Toolset::Specs;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: ExploreInput) -> Result<SpecReply, ToolError> {
        let ws = workspace(&ctx)?;
        if let Some(name) = &input.change_name {
            change_name("changeName", name)?;
        }
        folder_id(input.folder_id.as_deref())?;
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
        let scanned = scan_all(&ctx.config, folders, &ctx.cancel).await?;
        let mut state = json!({
            "workspace": {
                "workspaceId": ws.workspace_id,
                "workspaceKind": ws.workspace_kind,
                "folders": scanned.folders,
            },
            "activeChanges": scanned.changes,
            "currentChange": null,
            "warnings": scanned.warnings,
        });
        let Some(name) = input.change_name else {
            return Ok(SpecReply::new(state, include));
        };
        let failed_scan = scanned
            .warnings
            .iter()
            .any(|w| w["code"] == "PROPOSAL_FOLDER_SCAN_FAILED");
        let found = if input.folder_id.is_none() && failed_scan {
            Err(SpecError::new(
                "ProposalError",
                "PROPOSAL_OWNER_UNVERIFIED",
                "some folders could not be scanned, so the owner of this change is not certain; pass folderId",
            )
            .with(json!({ "changeName": name, "warnings": scanned.warnings })))
        } else {
            the_one_target(&scanned.owners, &name)
        };
        match found {
            Ok(target) => match status_of(target.path(), &name, &ctx.cancel).await {
                Ok(status) => state["currentChange"] = current_change(&target, &status),
                Err(e) => state["errors"] = json!([e]),
            },
            Err(e) => state["errors"] = json!([e]),
        }
        Ok(SpecReply::new(state, include))
    }

    fn text_of(output: &SpecReply) -> Option<String> {
        Some(output.render(include_str!("../../specs/instructions/explore.md")))
    }
}

/// Every scanned folder's changes and warnings, in folder order.
#[derive(Default)]
struct Scanned {
    owners: Vec<Owner>,
    folders: Vec<Value>,
    changes: Vec<Value>,
    warnings: Vec<Value>,
}

async fn scan_all(
    config: &Arc<Config>,
    folders: Vec<Folder>,
    cancel: &CancellationToken,
) -> Result<Scanned, ToolError> {
    let mut set = tokio::task::JoinSet::new();
    for (i, folder) in folders.into_iter().enumerate() {
        let (config, cancel) = (Arc::clone(config), cancel.clone());
        set.spawn(async move { (i, scan_folder(&config, folder, cancel).await) });
    }
    let mut each: Vec<(usize, FolderScan)> = Vec::new();
    while let Some(joined) = set.join_next().await {
        each.push(joined.map_err(|e| ToolError::internal(e.to_string()))?);
    }
    each.sort_by_key(|(i, _)| *i);
    let mut all = Scanned::default();
    for (_, s) in each {
        all.folders.push(s.folder);
        all.changes.extend(s.changes);
        all.warnings.extend(s.warnings);
        all.owners.extend(s.owner);
    }
    Ok(all)
}

/// The single folder that has an active change `name`, or why there is none.
fn the_one_target(owners: &[Owner], name: &str) -> Result<Target, SpecError> {
    let mut found = Vec::new();
    for owner in owners {
        if let Some(t) = target::find(owner, name)? {
            found.push(t);
        }
    }
    match found.len() {
        0 => Err(SpecError::new(
            "ProposalError",
            "PROPOSAL_NOT_FOUND",
            format!("no active change named {name:?} in the scanned folders"),
        )
        .with(json!({ "changeName": name }))),
        1 => Ok(found.remove(0)),
        _ => {
            let candidates: Vec<_> = found.iter().map(|t| &t.proposal_ref).collect();
            Err(SpecError::new(
                "ProposalError",
                "PROPOSAL_OWNER_AMBIGUOUS",
                format!("several folders have a change named {name:?}; pass folderId"),
            )
            .with(json!({ "candidates": candidates })))
        }
    }
}

/// The `currentChange` entry: where the change lives and its artifacts' state.
fn current_change(target: &Target, status: &Value) -> Value {
    json!({
        "proposalRef": target.proposal_ref,
        "worktreeMode": target.worktree_mode,
        "worktreePath": target.worktree_path,
        "applyRequires": status["applyRequires"],
        "artifacts": artifact_summary(status),
        "schemaName": status["schemaName"],
        "planningHome": status["planningHome"],
    })
}

/// Each artifact of an `openspec status` reply, reduced to its id, path and state.
fn artifact_summary(status: &Value) -> Option<Vec<Value>> {
    status["artifacts"].as_array().map(|a| {
        a.iter()
            .map(|x| json!({ "id": x["id"], "outputPath": x["outputPath"], "status": x["status"] }))
            .collect()
    })
}

struct FolderScan {
    owner: Option<Owner>,
    /// The folder as the workspace lists it: where it is, what it holds, its specs.
    folder: Value,
    changes: Vec<Value>,
    warnings: Vec<Value>,
}

async fn scan_folder(config: &Config, folder: Folder, cancel: CancellationToken) -> FolderScan {
    let warn = |code: &str, message: String| json!({ "folderId": folder.folder_id, "code": code, "message": message });
    let owner = match target::open(config, &folder, &cancel).await {
        Ok(owner) => owner,
        Err(e) => {
            return FolderScan {
                folder: json!({
                    "folderId": folder.folder_id,
                    "folderName": folder.folder_name,
                    "path": folder.folder_path,
                    "git": null,
                    "openspec": null,
                    "specs": [],
                }),
                owner: None,
                changes: Vec::new(),
                warnings: vec![warn("PROPOSAL_FOLDER_SCAN_FAILED", e.message)],
            };
        }
    };
    let main = (!owner.main_refused).then(|| owner.path.clone());
    let summary = tokio::task::spawn_blocking(move || {
        main.map(|dir| (dir.join("openspec").is_dir(), inventory::specs(&dir)))
    })
    .await
    .ok()
    .flatten();
    let folder_entry = json!({
        "folderId": folder.folder_id,
        "folderName": folder.folder_name,
        "path": owner.path,
        "git": owner.is_git(),
        "openspec": summary.as_ref().map(|s| s.0),
        "specs": summary.map(|s| s.1).unwrap_or_default(),
    });
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
    let scanned = tokio::task::spawn_blocking(move || scan_candidates(&scan_owner)).await;
    let (changes, raw_warnings) = scanned.unwrap_or_else(|e| {
        (
            Vec::new(),
            vec![("PROPOSAL_FOLDER_SCAN_FAILED", format!("scan failed: {e}"))],
        )
    });
    FolderScan {
        folder: folder_entry,
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

type Warning = (&'static str, String);

/// The active changes of every worktree of one folder, linked worktrees first; a change
/// name already seen in an earlier worktree is not listed again.
fn scan_candidates(owner: &Owner) -> (Vec<Value>, Vec<Warning>) {
    let mut changes: Vec<Value> = Vec::new();
    let mut warnings = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let ours = owner.path.join(".worktrees");
    for (mode, path) in owner.candidates() {
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
                        "folderId": owner.folder.folder_id,
                        "folderName": owner.folder.folder_name,
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artifacts_keep_only_id_path_and_state() {
        let status = json!({
            "artifacts": [
                { "id": "proposal", "outputPath": "proposal.md", "status": "done", "extra": 1 },
                { "id": "tasks", "outputPath": "tasks.md", "status": "blocked", "missingDeps": ["specs"] },
            ],
        });
        assert_eq!(
            artifact_summary(&status),
            Some(vec![
                json!({ "id": "proposal", "outputPath": "proposal.md", "status": "done" }),
                json!({ "id": "tasks", "outputPath": "tasks.md", "status": "blocked" }),
            ])
        );
        assert_eq!(artifact_summary(&json!({})), None);
    }

    #[test]
    fn no_owner_means_not_found() {
        let err = the_one_target(&[], "add-auth").expect_err("not found");
        assert_eq!(err.code.as_deref(), Some("PROPOSAL_NOT_FOUND"));
    }
}
