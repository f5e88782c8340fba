//! The workspace the spec tools may act in: its folders, session and data directory.
//!
//! Inside FylloCode the host hands the server a frozen descriptor in `FYLLO_WORKSPACE_JSON`
//! (over HTTP, a workspace capability carries it). Outside it, `--workspace FILE` supplies
//! the same descriptor from a file. Nothing else makes a workspace. The descriptor is validated strictly
//! once at start and never re-read; the current directory is never a fallback, so a tool
//! can only ever touch a folder the descriptor authorizes.

use std::path::{Component, Path, PathBuf};

use serde::Deserialize;

/// Largest descriptor accepted, in bytes of JSON.
pub const MAX_DESCRIPTOR: usize = 64 * 1024;
/// Most folders one workspace may authorize.
pub const MAX_FOLDERS: usize = 16;

pub use crate::model::workspace::{Folder, Workspace};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawDescriptor {
    version: u32,
    workspace_id: String,
    workspace_kind: String,
    primary_folder_id: String,
    folders: Vec<RawFolder>,
    workspace_data_dir: String,
    #[serde(default)]
    mcp_event_dir: Option<String>,
    #[serde(default)]
    session_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawFolder {
    folder_id: String,
    folder_name: String,
    folder_path: String,
}

impl Workspace {
    /// Parses and validates a descriptor (the value of `FYLLO_WORKSPACE_JSON`).
    pub fn parse(json: &str) -> Result<Workspace, String> {
        if json.len() > MAX_DESCRIPTOR {
            return Err(format!(
                "the workspace descriptor is {} bytes; at most {MAX_DESCRIPTOR} are accepted",
                json.len()
            ));
        }
        let raw: RawDescriptor =
            serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_str(json))
                .map_err(|e| {
                    format!(
                        "the workspace descriptor is invalid at {}: {}",
                        e.path(),
                        e.inner()
                    )
                })?;
        if raw.version != 2 {
            return Err(format!(
                "the workspace descriptor version must be 2, not {}",
                raw.version
            ));
        }
        non_empty("workspaceId", &raw.workspace_id)?;
        non_empty("primaryFolderId", &raw.primary_folder_id)?;
        if !matches!(raw.workspace_kind.as_str(), "folder" | "collection") {
            return Err(format!(
                "workspaceKind must be \"folder\" or \"collection\", not {:?}",
                raw.workspace_kind
            ));
        }
        if raw.folders.is_empty() || raw.folders.len() > MAX_FOLDERS {
            return Err(format!(
                "folders must hold 1 to {MAX_FOLDERS} entries, not {}",
                raw.folders.len()
            ));
        }
        let mut folders = Vec::with_capacity(raw.folders.len());
        for (i, f) in raw.folders.into_iter().enumerate() {
            non_empty(&format!("folders[{i}].folderId"), &f.folder_id)?;
            non_empty(&format!("folders[{i}].folderName"), &f.folder_name)?;
            let folder_path = canonical_abs(&format!("folders[{i}].folderPath"), &f.folder_path)?;
            if folders.iter().any(|o: &Folder| o.folder_id == f.folder_id) {
                return Err(format!("folderId {:?} appears more than once", f.folder_id));
            }
            folders.push(Folder {
                folder_id: f.folder_id,
                folder_name: f.folder_name,
                folder_path,
            });
        }
        if !folders.iter().any(|f| f.folder_id == raw.primary_folder_id) {
            return Err(format!(
                "primaryFolderId {:?} names no folder",
                raw.primary_folder_id
            ));
        }
        if let Some(session) = &raw.session_id {
            non_empty("sessionId", session)?;
            // It names a directory under the data dir, so it must stay one path component.
            if session.contains(['/', '\\'])
                || session == "."
                || session == ".."
                || session.chars().any(char::is_control)
            {
                return Err(format!(
                    "sessionId {session:?} must be usable as one directory name"
                ));
            }
        }
        Ok(Workspace {
            workspace_id: raw.workspace_id,
            workspace_kind: raw.workspace_kind,
            primary_folder_id: raw.primary_folder_id,
            folders,
            workspace_data_dir: canonical_abs("workspaceDataDir", &raw.workspace_data_dir)?,
            mcp_event_dir: raw
                .mcp_event_dir
                .map(|d| canonical_abs("mcpEventDir", &d))
                .transpose()?,
            session_id: raw.session_id,
        })
    }

    pub fn folder(&self, id: &str) -> Option<&Folder> {
        self.folders.iter().find(|f| f.folder_id == id)
    }
}

fn non_empty(field: &str, value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        Err(format!("{field} must be a non-empty string"))
    } else {
        Ok(())
    }
}

/// Requires an absolute path already in normal form (no `.`, `..`, doubled or trailing
/// separators), as the host writes it.
fn canonical_abs(field: &str, value: &str) -> Result<PathBuf, String> {
    let path = Path::new(value);
    if !path.is_absolute() {
        return Err(format!("{field} must be an absolute path: {value:?}"));
    }
    if value.chars().any(char::is_control) {
        return Err(format!("{field} must not contain control characters"));
    }
    let normal: PathBuf = path.components().collect();
    let clean = path
        .components()
        .all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
    if !clean || normal.as_os_str() != path.as_os_str() {
        return Err(format!(
            "{field} must be a canonical absolute path (no `.`, `..` or extra separators): {value:?}"
        ));
    }
    Ok(normal)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn descriptor(folders: &str) -> String {
        format!(
            r#"{{"version":2,"workspaceId":"ws","workspaceKind":"collection","primaryFolderId":"a","folders":[{folders}],"workspaceDataDir":"/data/ws","sessionId":"s1"}}"#
        )
    }

    #[test]
    fn accepts_a_valid_descriptor() {
        let ws = Workspace::parse(&descriptor(
            r#"{"folderId":"a","folderName":"api","folderPath":"/src/api"},{"folderId":"b","folderName":"web","folderPath":"/src/web"}"#,
        ))
        .unwrap();
        assert_eq!(ws.folders.len(), 2);
        assert_eq!(
            ws.folder("b").unwrap().folder_path,
            PathBuf::from("/src/web")
        );
        assert_eq!(ws.session_id.as_deref(), Some("s1"));
    }

    #[test]
    fn rejects_what_the_host_would_never_send() {
        let a = r#"{"folderId":"a","folderName":"api","folderPath":"/src/api"}"#;
        let cases = [
            descriptor(&format!("{a},{a}")),
            descriptor(r#"{"folderId":"a","folderName":"api","folderPath":"src/api"}"#),
            descriptor(r#"{"folderId":"a","folderName":"api","folderPath":"/src/../etc"}"#),
            descriptor(r#"{"folderId":"a","folderName":"api","folderPath":"/src/api/"}"#),
            descriptor(r#"{"folderId":"a","folderName":"","folderPath":"/src/api"}"#),
            descriptor(r#"{"folderId":"a","folderName":"api","folderPath":"/src/api","x":1}"#),
            descriptor(r#"{"folderId":"b","folderName":"api","folderPath":"/src/api"}"#),
            descriptor(""),
            descriptor(&vec![a; 17].join(",")),
            descriptor(a).replace("\"version\":2", "\"version\":1"),
            descriptor(a).replace("collection", "team"),
            descriptor(a).replace("\"s1\"", "\"../s1\""),
            descriptor(a).replace(
                "\"sessionId\":\"s1\"",
                "\"sessionId\":\"s1\",\"extra\":true",
            ),
            format!("{} {}", descriptor(a), " ".repeat(MAX_DESCRIPTOR)),
            "not json".into(),
        ];
        for case in cases {
            assert!(Workspace::parse(&case).is_err(), "accepted: {case:.200}");
        }
    }
}
