//! Claude Code: `~/.claude/sessions/<pid>.json` and the project transcripts.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{
    MAX_DIRS, MAX_FILES_PER_AGENT, Summary, ToolUses, deadline_outcome, newest_files, summarize,
};
use crate::presence::finding::{Finding, MAX_FILES, Outcome, Scope, Source};
use crate::presence::fsread;
use crate::presence::procscan::Snapshot;

#[derive(Deserialize)]
struct ClaudeLine {
    cwd: Option<PathBuf>,
    #[serde(rename = "gitBranch")]
    git_branch: Option<String>,
    message: Option<ClaudeMessage>,
}

#[derive(Deserialize)]
struct ClaudeMessage {
    #[serde(default)]
    content: ToolUses,
}

#[derive(Deserialize)]
struct ClaudeLiveSession {
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
}

/// Claude's project directory name for a path: every character outside `[A-Za-z0-9]`
/// becomes `-`, one for one. Lossy, so only ever computed forward and confirmed against
/// the `cwd` recorded inside.
pub fn claude_dir_name(path: &Path) -> String {
    path.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

pub fn claude(scope: &Scope, snap: &Snapshot) -> Outcome {
    let Some(root) = scope
        .dirs
        .claude_config_dir
        .clone()
        .or_else(|| Some(scope.home.as_ref()?.join(".claude")))
    else {
        return Outcome::default();
    };
    // Live sessions: `sessions/<pid>.json` names the session a running process writes.
    let mut pid_of: HashMap<String, u32> = HashMap::new();
    for pid in snap
        .agents
        .iter()
        .filter(|(_, a)| **a == "claude-code")
        .map(|(p, _)| *p)
    {
        let path = root.join("sessions").join(format!("{pid}.json"));
        if let Some(bytes) = fsread::read_small_metered(&path, 64 * 1024, &scope.meter)
            && let Ok(live) = serde_json::from_slice::<ClaudeLiveSession>(&bytes)
            && let Some(id) = live.session_id
        {
            pid_of.insert(id, pid);
        }
    }
    let projects = root.join("projects");
    let wanted: Vec<String> = scope
        .worktrees
        .iter()
        .map(|w| claude_dir_name(&w.path))
        .collect();
    let Ok(entries) = std::fs::read_dir(&projects) else {
        return Outcome::default();
    };
    // Only names: the repository's own directories and those of its subdirectories.
    let dirs: Vec<PathBuf> = entries
        .flatten()
        .take(100_000)
        .filter(|e| {
            e.file_name().to_str().is_some_and(|n| {
                wanted.iter().any(|w| {
                    n == w
                        || n.strip_prefix(w.as_str())
                            .is_some_and(|r| r.starts_with('-'))
                })
            })
        })
        .map(|e| e.path())
        .take(MAX_DIRS)
        .collect();
    let mut files: Vec<(u64, PathBuf)> = dirs
        .iter()
        .flat_map(|d| newest_files(scope, d, |n| n.ends_with(".jsonl"), MAX_FILES_PER_AGENT))
        .collect();
    files.sort_by_key(|f| std::cmp::Reverse(f.0));
    files.truncate(MAX_FILES_PER_AGENT);

    let mut findings = Vec::new();
    for (mtime, path) in files {
        if scope.meter.spent() {
            break;
        }
        let s = summarize(&path, &scope.meter, || read_transcript(&path, scope));
        let Some(worktree) = s.cwd.as_deref().and_then(|c| scope.locate(c)) else {
            continue;
        };
        let stem = path
            .file_stem()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_owned();
        let pid = pid_of.get(&stem).copied();
        // Sub-agents write their own logs beside the session; while one works, the main
        // transcript can stay untouched. Their mtimes count, their contents are not read.
        let subagents = path.with_file_name(&stem).join("subagents");
        let sub_activity = newest_files(scope, &subagents, |n| n.ends_with(".jsonl"), 1)
            .first()
            .map(|(t, _)| *t);
        findings.push(Finding {
            agent: "claude-code".into(),
            source: Some(Source::Session),
            pid,
            session: Some(format!("claude:{stem}")),
            worktree: Some(worktree),
            branch: s.branch.clone(),
            last_tool: s.last_tool.clone(),
            files: s.files(scope, s.cwd.as_deref()),
            last_activity_ms: Some(sub_activity.map_or(mtime, |t| t.max(mtime))),
            likely_caller: pid.is_some_and(|p| snap.ancestors.contains(&p)),
            ..Finding::default()
        });
    }
    deadline_outcome(findings, &scope.meter)
}

/// What one transcript says: its working directory, branch, last tool and touched paths.
fn read_transcript(path: &Path, scope: &Scope) -> Summary {
    let mut s = Summary::default();
    fsread::tail_lines(path, &scope.meter, |line| {
        let Ok(rec) = serde_json::from_slice::<ClaudeLine>(line) else {
            return true;
        };
        if s.cwd.is_none() {
            s.cwd = rec.cwd.clone();
        }
        if s.branch.is_none() {
            s.branch = rec.git_branch.filter(|b| !b.is_empty() && b != "HEAD");
        }
        for item in rec
            .message
            .map(|m| m.content.0)
            .unwrap_or_default()
            .into_iter()
            .rev()
        {
            s.tool(item.name.as_deref());
            for p in item.input.map(|i| i.paths).unwrap_or_default() {
                if s.paths.len() < MAX_FILES * 2 {
                    s.paths.push((rec.cwd.clone(), p));
                }
            }
        }
        !s.complete()
    });
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_directory_names() {
        assert_eq!(
            claude_dir_name(Path::new("/home/u/my_app.v2/x y")),
            "-home-u-my-app-v2-x-y"
        );
        assert_eq!(claude_dir_name(Path::new("/tmp/café")), "-tmp-caf-");
    }

    #[test]
    fn tool_uses_skip_text_content() {
        let line = r#"{"cwd":"/r","gitBranch":"b","message":{"content":[{"type":"text","text":"SECRET"},{"type":"tool_use","name":"Edit","input":{"file_path":"/r/x","old_string":"SECRET"}}]}}"#;
        let rec: ClaudeLine = serde_json::from_str(line).unwrap();
        let uses = rec.message.unwrap().content.0;
        assert_eq!(uses.len(), 1);
        assert_eq!(uses[0].name.as_deref(), Some("Edit"));
        assert_eq!(uses[0].input.as_ref().unwrap().paths, ["/r/x"]);
        let user: ClaudeLine =
            serde_json::from_str(r#"{"message":{"content":"SECRET prompt"}}"#).unwrap();
        assert!(user.message.unwrap().content.0.is_empty());
    }
}
