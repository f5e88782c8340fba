//! Best-effort lifecycle events for the host application.
//!
//! When the workspace descriptor names an `mcpEventDir` and a session, `create-proposal`
//! and `create-plan` drop one small JSON file there (`<epochMs>-<random>.json`, written
//! through a temporary file and a rename so a watcher never reads half a file). A failure
//! to write is ignored: the event only helps the host refresh its views.

use serde_json::{Value, json};

use super::workspace::Workspace;

/// Writes `{server, tool, createdAt, sessionId, workspaceId, ...fields}`; never fails.
pub fn emit(ws: &Workspace, tool: &str, fields: Value) {
    let (Some(dir), Some(session)) = (&ws.mcp_event_dir, &ws.session_id) else {
        return;
    };
    let mut event = json!({
        "server": "gitward-specs",
        "tool": tool,
        "createdAt": super::now_iso(),
        "sessionId": session,
        "workspaceId": ws.workspace_id,
    });
    if let (Some(obj), Some(extra)) = (event.as_object_mut(), fields.as_object()) {
        obj.extend(extra.clone());
    }
    let millis = jiff::Timestamp::now().as_millisecond();
    let name = format!("{millis}-{}.json", uuid::Uuid::new_v4().simple());
    let _ = std::fs::create_dir_all(dir).and_then(|()| {
        super::metadata::write_atomic(&dir.join(name), event.to_string().as_bytes())
            .map_err(|e| std::io::Error::other(e.to_string()))
    });
}
