//! Editors with built-in agents (VS Code with Copilot, Cursor, Windsurf).
//!
//! Each editor keeps one `workspaceStorage/<id>/` per opened folder, whose small
//! `workspace.json` names the folder (`{"folder": "file:///…"}`) or the multi-root
//! `.code-workspace` file. Only those names and modification times are read: chat
//! sessions, state databases and Windsurf's encrypted cascades are never opened.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::finding::{Finding, Outcome, Scope, Source};
use super::fsread;
use super::procscan::Snapshot;

/// `workspaceStorage` entries looked at per editor.
const MAX_WORKSPACES: usize = 512;

/// What counts as agent activity in one editor's workspace storage.
enum Signal {
    /// Copilot chat sessions and chat edits of the workspace.
    ChatSessions,
    /// The workspace state database (Cursor keeps its composer state there).
    StateDb,
    /// The global cascade conversations, attributed to the most recent workspace.
    Cascade,
}

struct Editor {
    agent: &'static str,
    /// User data directories under `~/.config` (Linux) or
    /// `~/Library/Application Support` (macOS).
    products: &'static [&'static str],
    signal: Signal,
}

const EDITORS: &[Editor] = &[
    Editor {
        agent: "vscode-copilot",
        products: &["Code", "Code - Insiders", "VSCodium"],
        signal: Signal::ChatSessions,
    },
    Editor {
        agent: "cursor",
        products: &["Cursor"],
        signal: Signal::StateDb,
    },
    Editor {
        agent: "windsurf",
        products: &["Windsurf"],
        signal: Signal::Cascade,
    },
];

#[derive(Deserialize)]
struct WorkspaceJson {
    folder: Option<String>,
    workspace: Option<String>,
}

/// Every VS Code-family user data directory under `home`.
pub fn user_dirs(home: &Path) -> Vec<PathBuf> {
    let base = if cfg!(target_os = "macos") {
        home.join("Library/Application Support")
    } else {
        home.join(".config")
    };
    let mut dirs: Vec<PathBuf> = EDITORS
        .iter()
        .flat_map(|e| e.products.iter())
        .map(|p| base.join(p).join("User"))
        .collect();
    dirs.push(home.join(".vscode-server/data/User"));
    dirs
}

pub fn read(scope: &Scope, snap: &Snapshot) -> Outcome {
    let Some(home) = scope.home.as_ref() else {
        return Outcome::default();
    };
    let base = if cfg!(target_os = "macos") {
        home.join("Library/Application Support")
    } else {
        home.join(".config")
    };
    let mut findings = Vec::new();
    for editor in EDITORS {
        let live = snap.agents.values().any(|a| *a == editor.agent);
        let mut roots: Vec<PathBuf> = editor
            .products
            .iter()
            .map(|p| base.join(p).join("User/workspaceStorage"))
            .collect();
        if matches!(editor.signal, Signal::ChatSessions) {
            roots.push(home.join(".vscode-server/data/User/workspaceStorage"));
        }
        for root in roots {
            if scope.meter.spent() {
                break;
            }
            findings.extend(workspaces(scope, editor, &root, home, live));
        }
    }
    Outcome {
        unavailable: scope.meter.stop_reason(),
        findings,
    }
}

fn workspaces(
    scope: &Scope,
    editor: &Editor,
    root: &Path,
    home: &Path,
    live: bool,
) -> Vec<Finding> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    // (storage dir mtime, storage dir, worktree) for each workspace of the repository;
    // the newest storage dir of all says which window was used last.
    let mut newest_any: Option<(u64, PathBuf)> = None;
    let mut matched: Vec<(PathBuf, usize)> = Vec::new();
    for entry in entries.flatten().take(MAX_WORKSPACES) {
        let dir = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&dir) else {
            continue;
        };
        if !meta.is_dir() {
            continue;
        }
        let mtime = fsread::meta_mtime_ms(&meta);
        if newest_any.as_ref().is_none_or(|(t, _)| mtime > *t) {
            newest_any = Some((mtime, dir.clone()));
        }
        let Some(bytes) =
            fsread::read_small_metered(&dir.join("workspace.json"), 64 * 1024, &scope.meter)
        else {
            continue;
        };
        let Ok(ws) = serde_json::from_slice::<WorkspaceJson>(&bytes) else {
            continue;
        };
        let target = ws.folder.or(ws.workspace).and_then(|u| file_uri_path(&u));
        if let Some(worktree) = target.as_deref().and_then(|p| scope.locate(p)) {
            matched.push((dir, worktree));
        }
    }
    let newest_dir = newest_any.map(|(_, d)| d);
    let mut findings = Vec::new();
    for (dir, worktree) in matched {
        let most_recent_window = newest_dir.as_ref() == Some(&dir);
        let activity = match editor.signal {
            Signal::ChatSessions => newest_mtime(&dir.join("chatSessions"))
                .into_iter()
                .chain(fsread::mtime_ms(&dir.join("chatEditingSessions")))
                .max(),
            Signal::StateDb => ["state.vscdb", "state.vscdb-wal"]
                .iter()
                .filter_map(|f| fsread::mtime_ms(&dir.join(f)))
                .max(),
            Signal::Cascade => most_recent_window
                .then(|| newest_mtime(&home.join(".codeium/windsurf/cascade")))
                .flatten(),
        };
        let open = live && most_recent_window;
        if !open && !activity.is_some_and(|t| scope.recent(t)) {
            continue;
        }
        findings.push(Finding {
            agent: editor.agent.into(),
            source: Some(Source::Editor),
            session: Some(format!("editor:{}", dir.display())),
            worktree: Some(worktree),
            last_activity_ms: activity,
            live: open,
            ..Finding::default()
        });
    }
    findings
}

/// The newest modification time of the regular files directly in `dir`.
fn newest_mtime(dir: &Path) -> Option<u64> {
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .take(4096)
        .filter_map(|e| {
            let meta = std::fs::symlink_metadata(e.path()).ok()?;
            meta.is_file().then(|| fsread::meta_mtime_ms(&meta))
        })
        .max()
}

/// The local path of a `file://` URI (percent-decoded); other schemes and hosts: none.
pub fn file_uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    if out.contains(&0) {
        return None;
    }
    Some(PathBuf::from(OsString::from_vec(out)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris() {
        assert_eq!(
            file_uri_path("file:///home/u/my%20app").as_deref(),
            Some(Path::new("/home/u/my app"))
        );
        assert_eq!(
            file_uri_path("file://localhost/x").as_deref(),
            Some(Path::new("/x"))
        );
        assert_eq!(file_uri_path("vscode-remote://ssh-remote+h/x"), None);
        assert_eq!(file_uri_path("file://server/share"), None);
        assert_eq!(file_uri_path("file:///a%00b"), None);
        assert_eq!(file_uri_path("file:///a%zz"), None);
    }
}
