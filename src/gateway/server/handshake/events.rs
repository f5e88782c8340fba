//! The shapes the read bridge answers in: restore points as the seed's `flux.*` results,
//! and safety-timeline events built from restore points and one ref's reflog (HEAD's
//! unless the caller names another).
//!
//! Pure functions of what the store and git returned, so every field is decided here,
//! once. Nothing names a file of the gateway (its store, its run directory): a restore
//! point is reached by its id, and restoring is a person's action on the page or with
//! `gitward restore`, never an agent's.

use jiff::Timestamp;
use serde_json::{Map, Value, json};

use crate::gateway::server::store::RestorePoint;
use crate::git::reflog::Entry;

/// Said on every restore point and event: an agent reads, a person restores.
pub const APPROVAL_MESSAGE: &str = "Restoring is a person's decision: open the gitward gateway page (History → Restore) or run `gitward restore <restorePointId>`. An agent can read restore points but never restore one.";

/// Event id prefixes.
pub const RESTORE_EVENT: &str = "restore:";
pub const REFLOG_EVENT: &str = "reflog:";

/// What HEAD is now, for a restore point's `metadata`.
#[derive(Debug, Clone, Default)]
pub struct Current {
    pub branch_ref: Option<String>,
    pub head: Option<String>,
}

/// The last path component of a repository, for labels.
pub fn repo_label(repo_path: &str) -> String {
    std::path::Path::new(repo_path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| repo_path.to_owned())
}

fn iso(at: Timestamp) -> String {
    at.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// Each captured ref with its value before and, once the write finished, after.
fn refs_of(captured: &Value) -> Value {
    let after = captured.pointer("/after/refs");
    let mut out = Map::new();
    if let Some(refs) = captured["refs"].as_object() {
        for (name, before) in refs {
            let after = after.and_then(|a| a.get(name)).cloned();
            out.insert(
                name.clone(),
                json!({"before": before, "after": after.unwrap_or(Value::Null)}),
            );
        }
    }
    Value::Object(out)
}

/// One restore point as `flux.restorePointDetails` returns it (the seed's
/// `{before, after, operation, canUndo, canRedo, approvalRequired, approvalMessage,
/// metadata}`); `current` fills the `current*` metadata when known.
pub fn restore_point(point: &RestorePoint, current: Option<&Current>) -> Value {
    let c = &point.captured;
    let after = c.get("after").filter(|a| !a.is_null());
    let state: Vec<String> = c["state"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let mut metadata = json!({
        "createdAt": iso(point.created_at),
        "previewId": point.preview_id,
        "branchRef": c["head"]["symbolic"],
        "beforeRef": c["head"]["symbolic"].as_str().or(c["head"]["oid"].as_str()),
        "afterRef": after.and_then(|a| a["head"]["symbolic"].as_str().or(a["head"]["oid"].as_str())),
        "refs": refs_of(c),
        "indexCaptured": c["index"]["blob"].is_string(),
        "worktreeCaptured": c["worktree"]["commit"].is_string(),
        "inProgressState": state,
        "skipped": point.skipped,
    });
    if let Some(current) = current {
        metadata["currentBranchRef"] = json!(current.branch_ref);
        metadata["currentHead"] = json!(current.head);
    }
    json!({
        "restorePointId": point.id,
        "repoLabel": repo_label(&point.repo_path),
        "operation": point.operation_type.as_deref().unwrap_or("restore"),
        "before": c["head"]["oid"],
        "after": after.map(|a| a["head"]["oid"].clone()).unwrap_or(Value::Null),
        "canUndo": c["refs"].is_object(),
        "canRedo": false,
        "approvalRequired": true,
        "approvalMessage": APPROVAL_MESSAGE,
        "metadata": metadata,
    })
}

fn short(oid: Option<&str>) -> &str {
    oid.map(|o| &o[..o.len().min(12)]).unwrap_or("(none)")
}

/// A restore point as a timeline event.
pub fn restore_event(point: &RestorePoint) -> Value {
    let c = &point.captured;
    let operation = point.operation_type.as_deref().unwrap_or("restore");
    let before = c["head"]["oid"].as_str();
    let after = c.pointer("/after/head/oid").and_then(Value::as_str);
    let skipped = point.skipped.as_array().map_or(0, Vec::len);
    let mut summary = format!(
        "Restore point {} taken before `{operation}`: HEAD {} → {}",
        point.id,
        short(before),
        short(after)
    );
    if skipped > 0 {
        summary.push_str(&format!(
            "; {skipped} file(s) were too large or too many to keep"
        ));
    }
    json!({
        "id": format!("{RESTORE_EVENT}{}", point.id),
        "repoLabel": repo_label(&point.repo_path),
        "source": "restore_point",
        "kind": operation,
        "severity": "warning",
        "title": format!("Restore point before {operation}"),
        "summary": summary,
        "occurredAtUnix": point.created_at.as_second(),
        "headBefore": before,
        "headAfter": after,
        "restorePointId": point.id,
        "actions": [
            {"kind": "inspect", "tool": "flux.restorePointDetails",
             "arguments": {"repoPath": point.repo_path, "restorePointId": point.id}},
            {"kind": "restore", "approvalRequired": true, "label": APPROVAL_MESSAGE},
        ],
        "approvalRequired": true,
        "networkFetchPerformed": false,
    })
}

/// What a reflog message says happened: its leading verb (`commit`, `reset`, `rebase`,
/// `checkout`, …), lower case.
fn reflog_kind(message: &str) -> String {
    let head = message.split(':').next().unwrap_or_default();
    let word = head.split_whitespace().next().unwrap_or("move");
    let kind: String = word
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect::<String>()
        .to_ascii_lowercase();
    if kind.is_empty() { "move".into() } else { kind }
}

/// Moves that can leave commits behind deserve a look.
fn reflog_severity(kind: &str, message: &str) -> &'static str {
    let rewrote = matches!(kind, "reset" | "rebase" | "filter-branch")
        || message.starts_with("commit (amend)");
    if rewrote { "warning" } else { "info" }
}

/// The message trimmed for a summary.
fn clipped(message: &str) -> String {
    let trimmed = message.trim();
    match trimmed.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &trimmed[..at]),
        None => trimmed.to_owned(),
    }
}

/// Entry `n` (0 = newest) of the reflog of `name` (`HEAD` unless asked otherwise) as a
/// timeline event; `headBefore`/`headAfter` are that ref's ids before and after.
pub fn reflog_event(repo_path: &str, name: &str, n: usize, entry: &Entry) -> Value {
    let kind = reflog_kind(&entry.message);
    let old = entry
        .old
        .as_ref()
        .map(|o| o.as_str().to_owned())
        .filter(|o| o.bytes().any(|b| b != b'0'));
    let new = entry.new.as_str();
    let mut actions = vec![json!({"kind": "inspect", "tool": "repo.reflog",
        "arguments": {"repoPath": repo_path, "refName": name, "limit": (n + 1).clamp(1, 100)}})];
    if let Some(old) = &old {
        actions.push(json!({"kind": "inspectBefore", "tool": "commit.details",
            "arguments": {"repoPath": repo_path, "commit": old}}));
    }
    json!({
        "id": format!("{REFLOG_EVENT}{name}@{{{n}}}"),
        "repoLabel": repo_label(repo_path),
        "source": "reflog",
        "kind": kind,
        "severity": reflog_severity(&kind, &entry.message),
        "title": format!("{name} {kind}"),
        "summary": clipped(&entry.message),
        "occurredAtUnix": entry.time,
        "headBefore": old,
        "headAfter": new,
        "actions": actions,
        "approvalRequired": true,
        "networkFetchPerformed": false,
    })
}

/// The reflog entry behind an event, for `safety.eventDetails`.
pub fn reflog_entry(name: &str, n: usize, entry: &Entry) -> Value {
    json!({
        "selector": format!("{name}@{{{n}}}"),
        "old": entry.old.as_ref().map(|o| o.as_str()),
        "oldInferred": entry.old_inferred,
        "new": entry.new.as_str(),
        "identity": {"name": entry.name, "email": entry.email},
        "occurredAtUnix": entry.time,
        "timezone": entry.tz,
        "message": entry.message,
    })
}

/// `reflog:<ref>@{n}` → the ref name (checked like a `refName`) and `n`.
pub fn reflog_index(event_id: &str) -> Option<(String, usize)> {
    let (name, n) = event_id
        .strip_prefix(REFLOG_EVENT)?
        .strip_suffix('}')?
        .rsplit_once("@{")?;
    crate::git::args::check_ref_name("eventId", name).ok()?;
    if n.is_empty() || n.len() > 4 || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((name.to_owned(), n.parse().ok()?))
}

/// Newest first; at one second a reflog move sorts before the restore point taken just
/// before it.
pub fn merge_newest_first(mut events: Vec<Value>, limit: usize) -> (Vec<Value>, bool) {
    events.sort_by_key(|e| {
        let at = e["occurredAtUnix"].as_i64().unwrap_or(0);
        let restore = e["source"] == "restore_point";
        (std::cmp::Reverse(at), restore)
    });
    let more = events.len() > limit;
    events.truncate(limit);
    (events, more)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reflog_ids_round_trip_and_reject_anything_else() {
        assert_eq!(reflog_index("reflog:HEAD@{0}"), Some(("HEAD".into(), 0)));
        assert_eq!(reflog_index("reflog:HEAD@{42}"), Some(("HEAD".into(), 42)));
        assert_eq!(
            reflog_index("reflog:refs/heads/main@{1}"),
            Some(("refs/heads/main".into(), 1))
        );
        for bad in [
            "reflog:HEAD@{}",
            "reflog:HEAD@{-1}",
            "reflog:HEAD@{1}x",
            "reflog:--all@{1}",
            "reflog:@{1}",
            "reflog:a..b@{1}",
            "reflog:HEAD@{1}@{2}",
            "reflog:HEAD@{99999}",
            "restore:rp_x",
            "reflog:HEAD@{1 }",
        ] {
            assert_eq!(reflog_index(bad), None, "{bad}");
        }
    }

    #[test]
    fn kinds_and_severities_come_from_the_message() {
        for (message, kind, severity) in [
            ("commit (initial): first", "commit", "info"),
            ("commit (amend): fix", "commit", "warning"),
            ("reset: moving to HEAD~1", "reset", "warning"),
            (
                "rebase (finish): returning to refs/heads/x",
                "rebase",
                "warning",
            ),
            ("checkout: moving from a to b", "checkout", "info"),
            ("", "move", "info"),
        ] {
            let k = reflog_kind(message);
            assert_eq!(k, kind, "{message}");
            assert_eq!(reflog_severity(&k, message), severity, "{message}");
        }
    }

    #[test]
    fn ties_put_the_move_before_its_restore_point() {
        let events = vec![
            json!({"id": "a", "source": "restore_point", "occurredAtUnix": 10}),
            json!({"id": "b", "source": "reflog", "occurredAtUnix": 10}),
            json!({"id": "c", "source": "reflog", "occurredAtUnix": 11}),
            json!({"id": "d", "source": "reflog", "occurredAtUnix": 1}),
        ];
        let (events, more) = merge_newest_first(events, 3);
        let ids: Vec<_> = events.iter().map(|e| e["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["c", "b", "a"]);
        assert!(more);
    }
}
