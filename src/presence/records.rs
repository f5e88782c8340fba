//! The presence records of other FluxGit MCP servers (`<runDir>/presence/mcp/*.json`).
//!
//! Our own record is skipped, and so are records not updated for 24 hours or whose
//! writer is gone. A record's declared client name maps to an agent kind; when the
//! writer's parent chain reaches a known agent process, the record joins that agent.

use super::finding::{Finding, Outcome, Scope, Source, sanitize_client, sanitize_tool};
use super::kinds::agent_for_client;
use super::own::{self, STALE_MS};
use super::pid_alive;
use super::procscan::Snapshot;

/// Records looked at per call.
const MAX_RECORDS: usize = 256;

pub fn read(scope: &Scope, snap: &Snapshot) -> Outcome {
    let Some(dir) = scope
        .run_dir
        .as_ref()
        .map(|r| r.join("presence").join("mcp"))
    else {
        return Outcome::default();
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Outcome::default();
    };
    let me = std::process::id();
    let mut findings = Vec::new();
    for entry in entries.flatten().take(MAX_RECORDS) {
        if scope.meter.spent() {
            return Outcome {
                findings,
                unavailable: scope.meter.stop_reason(),
            };
        }
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with('.') || !name.ends_with(".json") {
            continue;
        }
        let Some(record) = own::read_record(&entry.path()) else {
            continue;
        };
        scope
            .meter
            .files_read
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if scope.own_session.as_deref() == Some(record.session_id.as_str())
            || record.pid == me
            || scope.now_ms.saturating_sub(record.updated_at_ms) > STALE_MS
            || !pid_alive(record.pid)
        {
            continue;
        }
        let Some(used) = record
            .repositories
            .iter()
            .filter(|r| scope.locate(std::path::Path::new(&r.repo_path)).is_some())
            .max_by_key(|r| r.last_call_at_ms)
        else {
            continue;
        };
        let client = record.client.name.as_deref().and_then(sanitize_client);
        let ancestor = snap.agent_ancestor(record.pid);
        let agent = ancestor
            .map(|(_, a)| a.to_owned())
            .or_else(|| {
                client
                    .as_deref()
                    .and_then(agent_for_client)
                    .map(str::to_owned)
            })
            .or_else(|| client.clone())
            .unwrap_or_else(|| "mcp-client".to_owned());
        // Spawned by the same agent process as we were, or by the same parent: the
        // caller's own session talking to a second server.
        let same_parent = snap
            .parents
            .get(&record.pid)
            .is_some_and(|p| snap.ancestors.first() == Some(p));
        let likely_caller = same_parent
            || ancestor.is_some_and(|(pid, _)| snap.ancestors.contains(&pid))
            || (snap.ancestors.is_empty()
                && client.is_some()
                && client.as_deref() == scope.caller_client.as_deref());
        findings.push(Finding {
            agent,
            source: Some(Source::McpPresence),
            pid: ancestor.map(|(pid, _)| pid),
            session: Some(format!("mcp:{}", record.session_id)),
            worktree: scope.locate(std::path::Path::new(&used.repo_path)),
            last_tool: sanitize_tool(&used.last_tool),
            last_activity_ms: Some(used.last_call_at_ms),
            live: true,
            mcp_client: client,
            likely_caller,
            ..Finding::default()
        });
    }
    Outcome {
        findings,
        unavailable: None,
    }
}
