//! The workspace the spec tools may act in, as validated at start (`specs::workspace`
//! parses and checks it). It lives here so the configuration can hold it without
//! depending on the spec workflow.

use std::path::PathBuf;

/// A validated, frozen workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    pub workspace_id: String,
    pub workspace_kind: String,
    pub primary_folder_id: String,
    /// In authorization order.
    pub folders: Vec<Folder>,
    pub workspace_data_dir: PathBuf,
    pub mcp_event_dir: Option<PathBuf>,
    pub session_id: Option<String>,
}

/// One authorized project folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folder {
    pub folder_id: String,
    pub folder_name: String,
    pub folder_path: PathBuf,
}
