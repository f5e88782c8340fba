//! Where a change lives: owner folders, their worktrees, and target resolution.
//!
//! A folder's candidates are its own path (the `main` worktree) and every other registered,
//! present worktree of its repository (`linked`). A change lives in a candidate when
//! `<candidate>/openspec/changes/<changeId>` is a directory. One linked match wins over a
//! main match; two linked matches are ambiguous. Callers never pass a path: targets are
//! only ever computed here from a folder id and a change name.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;

use super::SpecError;
use super::confine;
use super::workspace::{Folder, Workspace};
use crate::config::Config;
use crate::error::ToolError;
use crate::git::{Git, GitError, Repo, repo, worktree};
use crate::process::CancellationToken;

#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ProposalRef {
    pub folder_id: String,
    pub change_id: String,
}

#[derive(Debug, Clone, Copy, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Main,
    Linked,
}

/// A resolved change location.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Target {
    pub proposal_ref: ProposalRef,
    pub worktree_mode: Mode,
    pub worktree_path: String,
}

impl Target {
    pub fn path(&self) -> &Path {
        Path::new(&self.worktree_path)
    }

    pub fn change_dir(&self) -> PathBuf {
        self.path()
            .join("openspec/changes")
            .join(&self.proposal_ref.change_id)
    }
}

/// An authorized folder, opened.
#[derive(Debug, Clone)]
pub struct Owner {
    pub folder: Folder,
    /// Canonical folder path.
    pub path: PathBuf,
    /// The repository when the folder is the top level of a git working tree.
    pub repo: Option<Arc<Repo>>,
    /// Why the folder is treated as a plain directory, when it is.
    pub not_git: Option<String>,
    /// Linked worktrees (canonical, present, inside the folder), in git's order.
    pub linked: Vec<PathBuf>,
    /// The main worktree's OpenSpec directories lead outside the folder: it is no candidate.
    pub main_refused: bool,
    /// Worktrees left out because they, or their OpenSpec directories, lead outside the
    /// folder.
    pub refused: Vec<SpecError>,
}

impl Owner {
    pub fn is_git(&self) -> bool {
        self.repo.is_some()
    }

    /// All candidates, linked first, then main.
    pub fn candidates(&self) -> Vec<(Mode, PathBuf)> {
        self.linked
            .iter()
            .map(|p| (Mode::Linked, p.clone()))
            .chain((!self.main_refused).then(|| (Mode::Main, self.path.clone())))
            .collect()
    }

    /// `path` resolved, if it stays inside the folder.
    pub fn confine(&self, path: &Path) -> Result<PathBuf, SpecError> {
        confine::inside(&self.path, path)
    }

    /// Whether a worktree may be a candidate: it and the OpenSpec directories the tools
    /// and the CLI read in it lead inside the folder.
    fn admit(&self, worktree: &Path) -> Result<(), SpecError> {
        self.confine(worktree)?;
        for rel in ["openspec/changes", "openspec/specs"] {
            self.confine(&worktree.join(rel))?;
        }
        Ok(())
    }

    pub fn target(&self, change: &str, mode: Mode, path: &Path) -> Target {
        Target {
            proposal_ref: ProposalRef {
                folder_id: self.folder.folder_id.clone(),
                change_id: change.to_owned(),
            },
            worktree_mode: mode,
            worktree_path: path.display().to_string(),
        }
    }
}

/// Picks the owner folder: the named one, or the only one.
pub fn pick<'w>(ws: &'w Workspace, folder_id: Option<&str>) -> Result<&'w Folder, SpecError> {
    match folder_id {
        Some(id) => ws.folder(id).ok_or_else(|| unauthorized(ws, id)),
        None if ws.folders.len() == 1 => Ok(&ws.folders[0]),
        None => Err(SpecError::new(
            "WorkspaceError",
            "MCP_WORKSPACE_OWNER_REQUIRED",
            "this workspace authorizes several folders: pass folderId (one of details.folders) to name the owning project",
        )
        .with(json!({
            "workspaceId": ws.workspace_id,
            "folderCount": ws.folders.len(),
            "folders": folder_list(ws),
        }))),
    }
}

pub fn unauthorized(ws: &Workspace, id: &str) -> SpecError {
    SpecError::new(
        "WorkspaceError",
        "MCP_WORKSPACE_FOLDER_UNAUTHORIZED",
        format!("folder {id:?} is not authorized in this workspace"),
    )
    .with(json!({ "workspaceId": ws.workspace_id, "folderId": id, "folders": folder_list(ws) }))
}

/// The authorized folders, so an error that needs a `folderId` says which ones exist.
fn folder_list(ws: &Workspace) -> Vec<serde_json::Value> {
    ws.folders
        .iter()
        .map(|f| json!({ "folderId": f.folder_id, "folderName": f.folder_name, "path": f.folder_path }))
        .collect()
}

/// Opens a folder: canonical path, repository, linked worktrees.
pub async fn open(
    config: &Config,
    folder: &Folder,
    cancel: &CancellationToken,
) -> Result<Owner, SpecError> {
    let path = std::fs::canonicalize(&folder.folder_path)
        .ok()
        .filter(|p| p.is_dir())
        .ok_or_else(|| {
            SpecError::new(
                "WorkspaceError",
                "MCP_WORKSPACE_FOLDER_UNAVAILABLE",
                format!(
                    "folder {} does not exist or is not a directory",
                    folder.folder_path.display()
                ),
            )
            .with(json!({ "folderId": folder.folder_id }))
        })?;
    let mut owner = Owner {
        folder: folder.clone(),
        path: path.clone(),
        repo: None,
        not_git: None,
        linked: Vec::new(),
        main_refused: false,
        refused: Vec::new(),
    };
    if let Err(e) = owner.admit(&path) {
        owner.main_refused = true;
        owner.refused.push(e);
    }
    // The workspace descriptor authorizes the folder; the allowed roots still bound where
    // its repository (git directory, common directory, alternates) may lead.
    let open = repo::open(config, "folderPath", &path.to_string_lossy(), cancel).await;
    let repo = match open {
        Ok(repo) if repo.worktree.as_deref() == Some(path.as_path()) => repo,
        Ok(repo) => {
            owner.not_git = Some(format!(
                "the folder is not the top level of a git working tree (the repository is {})",
                repo.display()
            ));
            return Ok(owner);
        }
        Err(GitError::Invalid { reason, .. }) if reason.contains("not inside a git repository") => {
            owner.not_git = Some("the folder is not a git repository".into());
            return Ok(owner);
        }
        Err(e) => {
            return Err(SpecError::new(
                "ProposalError",
                "PROPOSAL_REPOSITORY_INVALID",
                format!(
                    "the folder must be a readable git repository: {}",
                    ToolError::from(e).message
                ),
            )
            .with(json!({ "folderId": folder.folder_id })));
        }
    };
    for linked in linked_worktrees(&repo, &path, cancel).await? {
        // A registered worktree can be any directory; only those inside the folder count.
        match owner.admit(&linked) {
            Ok(_) => owner.linked.push(linked),
            Err(e) => owner.refused.push(e),
        }
    }
    owner.repo = Some(repo);
    Ok(owner)
}

/// Registered, present, non-bare worktrees other than `main`, canonical.
pub async fn linked_worktrees(
    repo: &Repo,
    main: &Path,
    cancel: &CancellationToken,
) -> Result<Vec<PathBuf>, SpecError> {
    let list = worktree::list(&Git::new(repo, cancel), usize::MAX)
        .await
        .map_err(|e| {
            SpecError::new(
                "WorkspaceError",
                "MCP_WORKTREE_LIST_FAILED",
                format!("git worktree list failed: {}", ToolError::from(e).message),
            )
        })?;
    let mut out = Vec::new();
    for wt in list.worktrees {
        if wt.bare || wt.prunable.is_some() {
            continue;
        }
        let Ok(canonical) = std::fs::canonicalize(std::ffi::OsStr::from_bytes(&wt.path)) else {
            continue;
        };
        if canonical != main && !out.contains(&canonical) {
            out.push(canonical);
        }
    }
    Ok(out)
}

/// Finds the change in the owner's candidates; `None` when no candidate holds it.
pub fn find(owner: &Owner, change: &str) -> Result<Option<Target>, SpecError> {
    // A change directory that leads outside the folder is refused, not skipped: the
    // caller named this change.
    let has = |p: &Path| -> Result<bool, SpecError> {
        let dir = p.join("openspec/changes").join(change);
        if !dir.is_dir() {
            return Ok(false);
        }
        owner.confine(&dir).map(|_| true)
    };
    let mut linked: Vec<&PathBuf> = Vec::new();
    for p in &owner.linked {
        if has(p)? {
            linked.push(p);
        }
    }
    match linked.as_slice() {
        [one] => return Ok(Some(owner.target(change, Mode::Linked, one))),
        [] => {}
        many => {
            let mut paths: Vec<String> = many.iter().map(|p| p.display().to_string()).collect();
            paths.sort();
            return Err(SpecError::new(
                "ProposalError",
                "PROPOSAL_LOCATION_AMBIGUOUS",
                format!("change {change:?} exists in several linked worktrees"),
            )
            .with(json!({ "candidates": paths })));
        }
    }
    Ok(has(&owner.path)?.then(|| owner.target(change, Mode::Main, &owner.path)))
}

/// Like [`find`], but a missing change is an error.
pub fn resolve(owner: &Owner, change: &str) -> Result<Target, SpecError> {
    find(owner, change)?.ok_or_else(|| not_found(&owner.folder.folder_id, change))
}

pub fn not_found(folder_id: &str, change: &str) -> SpecError {
    SpecError::new(
        "ProposalError",
        "PROPOSAL_NOT_FOUND",
        format!("no active change {change:?} in folder {folder_id:?}"),
    )
    .with(json!({ "folderId": folder_id, "changeId": change }))
}
