//! Gemini CLI: chats of the project directory named by `projects.json` or the path hash.

use std::collections::HashMap;

use serde::Deserialize;

use super::{MAX_FILES_PER_AGENT, PathArgs, Summary, deadline_outcome, newest_files, summarize};
use crate::presence::finding::{Finding, MAX_FILES, Outcome, Scope, Source};
use crate::presence::fsread;
use crate::presence::procscan::Snapshot;

#[derive(Deserialize)]
struct GeminiProjects {
    projects: HashMap<String, String>,
}

#[derive(Deserialize)]
struct GeminiLine {
    #[serde(rename = "toolCalls")]
    tool_calls: Option<Vec<GeminiToolCall>>,
}

#[derive(Deserialize)]
struct GeminiToolCall {
    name: Option<String>,
    args: Option<PathArgs>,
    status: Option<String>,
}

pub fn gemini(scope: &Scope, _snap: &Snapshot) -> Outcome {
    let Some(root) = scope.home.as_ref().map(|h| h.join(".gemini")) else {
        return Outcome::default();
    };
    let registry =
        fsread::read_small_metered(&root.join("projects.json"), 1024 * 1024, &scope.meter)
            .and_then(|b| serde_json::from_slice::<GeminiProjects>(&b).ok());
    let mut findings = Vec::new();
    for (index, worktree) in scope.worktrees.iter().enumerate() {
        let key = worktree.path.to_string_lossy().into_owned();
        let mut ids: Vec<String> = Vec::new();
        if let Some(slug) = registry.as_ref().and_then(|r| r.projects.get(&key))
            && !slug.contains('/')
            && !slug.starts_with('.')
        {
            ids.push(slug.clone());
        }
        ids.push(sha256_hex(key.as_bytes()));
        for id in ids {
            let chats = root.join("tmp").join(&id).join("chats");
            // The legacy `.json` chat is rewritten whole: its mtime is all we use.
            let files = newest_files(
                scope,
                &chats,
                |n| n.starts_with("session-") && (n.ends_with(".jsonl") || n.ends_with(".json")),
                MAX_FILES_PER_AGENT,
            );
            for (mtime, path) in files {
                if scope.meter.spent() {
                    break;
                }
                let s = summarize(&path, &scope.meter, || {
                    let mut s = Summary::default();
                    if path.extension().is_some_and(|e| e == "jsonl") {
                        fsread::tail_lines(&path, &scope.meter, |line| {
                            if let Ok(rec) = serde_json::from_slice::<GeminiLine>(line) {
                                for call in rec.tool_calls.unwrap_or_default().into_iter().rev() {
                                    s.tool(call.name.as_deref());
                                    s.running |= call.status.as_deref() == Some("executing");
                                    for p in call.args.map(|a| a.paths).unwrap_or_default() {
                                        if s.paths.len() < MAX_FILES * 2 {
                                            s.paths.push((Some(worktree.path.clone()), p));
                                        }
                                    }
                                }
                            }
                            !(s.last_tool.is_some() && s.paths.len() >= MAX_FILES)
                        });
                    }
                    s
                });
                findings.push(Finding {
                    agent: "gemini-cli".into(),
                    source: Some(Source::Session),
                    session: Some(format!("gemini:{}", path.display())),
                    worktree: Some(index),
                    last_tool: s.last_tool.clone(),
                    files: s.files(scope, Some(&worktree.path)),
                    last_activity_ms: Some(mtime),
                    ..Finding::default()
                });
            }
        }
    }
    deadline_outcome(findings, &scope.meter)
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
