//! A git operation a write left in the middle: a rebase stopped between two commits (the
//! gateway killed, or stopped past its bound), a merge that never reached its commit.
//!
//! Refs alone do not tell this apart from a write that never ran — mid-rebase the branch
//! is still at its old commit while HEAD is detached somewhere in between — so both
//! reconciliation and an interrupted execution look at git's own state files too, and end
//! the operation one way or the other, never leaving the repository mid-operation:
//!
//! - a rebase with nothing left to replay (every commit applied, only the branch's move
//!   remaining) is completed with `git rebase --continue`: what the person approved;
//! - anything else the write could have started is aborted with `git <kind> --abort`;
//! - an operation this write cannot have started (a cherry-pick during a commit, a rebase
//!   of a branch the intent does not name) is the user's own and is left alone — the
//!   answer says so.

use serde_json::{Value, json};

use crate::git::Repo;
use crate::git::operation::{InProgress, in_progress};
use crate::git::write::GitWrite;
use crate::operation::Intent;
use crate::operation::intent::Expect;
use crate::process::CancellationToken;

/// The git operations an operation type can leave in progress: its own git commands, or
/// its steps' for a plan.
fn may_leave(operation_type: &str) -> &'static [&'static str] {
    match operation_type {
        "rebase" => &["rebase"],
        "merge" => &["merge"],
        "plan" => &["rebase", "merge"],
        _ => &[],
    }
}

/// Reconciliation's way: completes a rebase that has nothing left to replay, aborts
/// anything else this write could have started. What was found in progress and what was
/// done about it, for the result (`inProgress: {operation, action, command?, message?}`);
/// `None` when nothing was in progress.
pub async fn settle(
    repo: &Repo,
    operation_type: &str,
    intent: &Intent,
    cancel: &CancellationToken,
) -> Option<Value> {
    end(repo, operation_type, intent, cancel, true).await
}

/// A stop's way, past its bound: whatever this write started is aborted.
pub async fn abort(
    repo: &Repo,
    operation_type: &str,
    intent: &Intent,
    cancel: &CancellationToken,
) -> Option<Value> {
    end(repo, operation_type, intent, cancel, false).await
}

async fn end(
    repo: &Repo,
    operation_type: &str,
    intent: &Intent,
    cancel: &CancellationToken,
    may_complete: bool,
) -> Option<Value> {
    let git_dir = repo.git_dir.clone();
    let found = tokio::task::spawn_blocking(move || in_progress(&git_dir))
        .await
        .ok()
        .flatten()?;
    let kind = found.kind;
    if !may_leave(operation_type).contains(&kind) || !names_intent(&found, intent) {
        return Some(json!({
            "operation": kind,
            "action": "leftAlone",
            "message": format!("a {kind} is in progress that this {operation_type} did not start; it was left as it is"),
        }));
    }
    let dir = repo.require_worktree().ok()?;
    let w = GitWrite::new(dir, cancel);
    let (action, ran) = if may_complete && kind == "rebase" && nothing_left(repo).await {
        ("completed", Some(w.rebase_continue().await))
    } else {
        ("aborted", w.abort_in_progress(kind).await)
    };
    let mut out = json!({"operation": kind});
    match ran {
        Some(Ok(ran)) if ran.ok() => {
            out["action"] = json!(action);
            out["command"] = json!(ran.command.join(" "));
        }
        Some(Ok(ran)) => {
            out["action"] = json!("stillInProgress");
            out["command"] = json!(ran.command.join(" "));
            out["message"] = json!(ran.combined().trim());
        }
        Some(Err(e)) => {
            out["action"] = json!("stillInProgress");
            out["message"] = json!(e.to_string());
        }
        None => {
            out["action"] = json!("stillInProgress");
            out["message"] = json!(format!("git has no way to abort a {kind}"));
        }
    }
    Some(out)
}

/// After a restore that followed a refused abort: putting back the restore point also puts
/// back git's own state files, so the operation may have ended there (a killed checkout can
/// leave files the abort refuses to overwrite). The answer then says how it ended instead
/// of "still in progress".
pub async fn after_restore(repo: &Repo, settled: &mut Value, point: &str) {
    if settled["action"] != "stillInProgress" {
        return;
    }
    let git_dir = repo.git_dir.clone();
    let still = tokio::task::spawn_blocking(move || in_progress(&git_dir))
        .await
        .ok()
        .flatten();
    if still.is_some() {
        return;
    }
    let kind = settled["operation"]
        .as_str()
        .unwrap_or("operation")
        .to_owned();
    let refused = settled["message"]
        .as_str()
        .unwrap_or("it refused")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    settled["action"] = json!("aborted");
    settled["message"] = json!(format!(
        "`git {kind} --abort` refused ({refused}); putting back restore point {point} ended the {kind}"
    ));
}

/// One sentence on what was done about a git operation found in progress.
pub fn said(settled: &Value) -> Option<String> {
    let kind = settled["operation"].as_str()?;
    let command = settled["command"].as_str().unwrap_or_default();
    Some(match settled["action"].as_str()? {
        "aborted" => match settled["message"].as_str() {
            Some(how) => format!("a {kind} was in progress and was aborted: {how}"),
            None => format!("a {kind} was in progress and was aborted (`{command}`)"),
        },
        "completed" => format!("a {kind} had replayed everything and was completed (`{command}`)"),
        "leftAlone" => settled["message"].as_str()?.to_owned(),
        _ => format!(
            "a {kind} is still in progress: {}",
            settled["message"]
                .as_str()
                .unwrap_or("it could not be ended")
        ),
    })
}

/// A rebase must be of a branch the intent names (or of the detached HEAD it names).
fn names_intent(found: &InProgress, intent: &Intent) -> bool {
    if found.kind != "rebase" {
        return true;
    }
    match &found.branch {
        Some(branch) => {
            let full = format!("refs/heads/{branch}");
            [&full, branch]
                .iter()
                .any(|b| intent.pre.contains_key(*b) || intent.post.contains_key(*b))
        }
        None => matches!(intent.pre.get("HEAD"), Some(Expect::Detached { .. })),
    }
}

/// True when a rebase has replayed every commit: its to-do list holds no command and no
/// path is unmerged. Only then does `--continue` finish it without replaying anything.
async fn nothing_left(repo: &Repo) -> bool {
    let dir = repo.git_dir.clone();
    let todo = tokio::task::spawn_blocking(move || {
        ["rebase-merge/git-rebase-todo", "rebase-merge/done"]
            .map(|f| crate::safe_file::read_prefix_in(&dir, f, 1 << 20).ok())
    })
    .await;
    let Ok([Some(todo), Some(done)]) = todo else {
        return false;
    };
    let commands = |bytes: &[u8]| {
        String::from_utf8_lossy(bytes)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .count()
    };
    if commands(&todo) > 0 || commands(&done) == 0 {
        return false;
    }
    // An unmerged path means the last pick stopped on a conflict: not finished.
    let cancel = CancellationToken::new();
    let git = crate::git::Git::new(repo, &cancel);
    matches!(crate::git::ls_files::unmerged(&git, 1).await, Ok(s) if s.unmerged_total == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_abort_ended_by_the_restore_says_how_and_a_plain_one_names_its_command() {
        let plain =
            json!({"operation": "rebase", "action": "aborted", "command": "git rebase --abort"});
        assert_eq!(
            said(&plain).unwrap(),
            "a rebase was in progress and was aborted (`git rebase --abort`)"
        );
        let by_restore = json!({
            "operation": "rebase",
            "action": "aborted",
            "command": "git rebase --abort",
            "message": "`git rebase --abort` refused (error: f would be overwritten); putting back restore point rp_1 ended the rebase",
        });
        let text = said(&by_restore).unwrap();
        assert!(text.contains("refused") && text.contains("rp_1"), "{text}");
        let still = json!({"operation": "merge", "action": "stillInProgress", "message": "no"});
        assert_eq!(said(&still).unwrap(), "a merge is still in progress: no");
    }
}
