//! GitHub Copilot CLI: `~/.copilot/session-state/<id>/`.

use std::path::PathBuf;

use serde::Deserialize;

use super::{MAX_FILES_PER_AGENT, Summary, deadline_outcome, summarize};
use crate::presence::finding::{Finding, Outcome, Scope, Source};
use crate::presence::fsread;
use crate::presence::procscan::Snapshot;

#[derive(Deserialize)]
struct CopilotEvent {
    #[serde(rename = "type")]
    kind: Option<String>,
    data: Option<CopilotData>,
}

#[derive(Deserialize)]
struct CopilotData {
    #[serde(rename = "toolName", alias = "tool_name")]
    tool_name: Option<String>,
}

/// The top-level `key: value` scalars of `workspace.yaml` that map a session: `cwd`,
/// `git_root` and `branch`. Every other line (summaries, names) is skipped.
fn copilot_workspace(text: &str) -> (Vec<PathBuf>, Option<String>) {
    let mut dirs = Vec::new();
    let mut branch = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim().trim_matches(|c| c == '"' || c == '\'');
        match key {
            "cwd" | "git_root" if value.starts_with('/') => dirs.push(PathBuf::from(value)),
            "branch" if !value.is_empty() => branch = Some(value.to_owned()),
            _ => {}
        }
    }
    (dirs, branch)
}

pub fn copilot(scope: &Scope, _snap: &Snapshot) -> Outcome {
    let Some(root) = scope
        .dirs
        .copilot_home
        .clone()
        .or_else(|| Some(scope.home.as_ref()?.join(".copilot")))
    else {
        return Outcome::default();
    };
    let Ok(entries) = std::fs::read_dir(root.join("session-state")) else {
        return Outcome::default();
    };
    // Newest sessions first, by the mtime of their event log.
    let mut sessions: Vec<(u64, PathBuf)> = entries
        .flatten()
        .take(4096)
        .filter_map(|e| {
            let events = e.path().join("events.jsonl");
            let meta = std::fs::symlink_metadata(&events).ok()?;
            let mtime = fsread::meta_mtime_ms(&meta);
            (meta.is_file() && scope.recent(mtime)).then(|| (mtime, e.path()))
        })
        .collect();
    sessions.sort_by_key(|s| std::cmp::Reverse(s.0));
    sessions.truncate(MAX_FILES_PER_AGENT);
    let mut findings = Vec::new();
    for (mtime, dir) in sessions {
        if scope.meter.spent() {
            break;
        }
        let Some(yaml) =
            fsread::read_small_metered(&dir.join("workspace.yaml"), 64 * 1024, &scope.meter)
        else {
            continue;
        };
        let (dirs, branch) = copilot_workspace(&String::from_utf8_lossy(&yaml));
        let Some(worktree) = dirs.iter().find_map(|d| scope.locate(d)) else {
            continue;
        };
        let events = dir.join("events.jsonl");
        let s = summarize(&events, &scope.meter, || {
            let mut s = Summary::default();
            let mut last_kind: Option<String> = None;
            fsread::tail_lines(&events, &scope.meter, |line| {
                let Ok(event) = serde_json::from_slice::<CopilotEvent>(line) else {
                    return true;
                };
                if last_kind.is_none() {
                    last_kind = event.kind.clone();
                }
                if event.kind.as_deref() == Some("tool.execution_start") {
                    s.tool(event.data.and_then(|d| d.tool_name).as_deref());
                }
                s.last_tool.is_none()
            });
            // The newest event says whether a tool runs now or the session ended.
            s.running = last_kind.as_deref() == Some("tool.execution_start");
            s.ended = last_kind.as_deref() == Some("session.shutdown");
            s
        });
        findings.push(Finding {
            agent: "copilot-cli".into(),
            source: Some(Source::Session),
            session: Some(format!("copilot:{}", dir.display())),
            worktree: Some(worktree),
            branch,
            last_tool: s.last_tool.clone(),
            last_activity_ms: Some(mtime),
            busy: s.running && !s.ended && scope.fresh(mtime),
            ..Finding::default()
        });
    }
    deadline_outcome(findings, &scope.meter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copilot_workspace_keys_only() {
        let (dirs, branch) = copilot_workspace(
            "id: abc\ncwd: /src/app\ngit_root: \"/src/app\"\nsummary: secret words\nbranch: feat/x\n  cwd: /nested\n",
        );
        assert_eq!(dirs, [PathBuf::from("/src/app"), PathBuf::from("/src/app")]);
        assert_eq!(branch.as_deref(), Some("feat/x"));
    }
}
