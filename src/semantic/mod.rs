//! The local semantic diff engine behind `diff.semantic`, `diff.semanticFallbacks` and the
//! gateway's `POST /v1/mcp/diff/semantic`.
//!
//! git's own line diff decides which lines changed; tree-sitter trees of both sides add
//! what they mean (the enclosing definition, the changed tokens, moved definitions). The
//! honesty rule is per file: a file is answered semantically only when both sides parsed
//! without a single error within budget and every line git reports is represented once,
//! byte for byte; anything else comes back as a text fallback with a specific reason.

pub mod answer;
mod cache;
mod file;
#[cfg(test)]
mod incremental_tests;
pub mod languages;
mod moves;
mod outline;
pub mod parse;
pub mod patch;
mod plan;
mod reuse;
mod source;
mod tokens;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::git::diff::{DiffQuery, Sides};
use crate::git::{Git, GitError, Repo, RepoRelPath};
use crate::progress::Progress;
pub use answer::{Answer, FileAnswer};

/// The engine's name in answers.
pub const ENGINE: &str = "gitward-tree-sitter";
/// No call runs longer; files left when it is spent fall back.
pub const CALL_BUDGET: Duration = Duration::from_secs(2);
/// No single parse of one side runs longer.
pub const PARSE_BUDGET: Duration = Duration::from_millis(300);
/// Files listed per answer at most.
pub const MAX_FILES: usize = 300;
/// The largest raw patch read.
const PATCH_CAP: usize = 32 * 1024 * 1024;
/// Context lines that make every hunk a whole file: more lines than a patch under
/// `PATCH_CAP` can hold, and far from overflowing git's arithmetic.
pub const FULL_CONTEXT: u32 = 100_000_000;

/// What to compare.
#[derive(Debug, Clone, Copy)]
pub struct Query<'a> {
    pub sides: &'a Sides,
    pub path: Option<&'a RepoRelPath>,
    /// Only these paths (the gateway's `paths[]`), when given.
    pub only: Option<&'a [String]>,
}

/// Whether any grammar is compiled in.
pub fn available() -> bool {
    !languages::grammar_versions().is_empty()
}

/// The engine and grammar versions, for answers.
pub fn versions() -> Value {
    let grammars: serde_json::Map<String, Value> = languages::grammar_versions()
        .into_iter()
        .map(|(name, version)| (name.to_owned(), json!(version)))
        .collect();
    json!({ "treeSitter": languages::TREE_SITTER_VERSION, "grammars": grammars })
}

/// The engine's answer as `diff.semantic` data: every fallback file gets the
/// `diff.text` arguments `text_args` gives for its path.
pub fn data(answer: &Answer, text_args: impl Fn(&str) -> Value) -> Value {
    let mut data = json!({
        "supported": true,
        "engine": ENGINE,
        "engineVersions": versions(),
        "files": answer.files,
        "changedFiles": answer.changed_files,
        "filesTruncated": answer.files_truncated,
    });
    if let Some(files) = data["files"].as_array_mut() {
        for file in files.iter_mut() {
            if file["fallbackToText"] == Value::Bool(true) {
                let args = text_args(file["path"].as_str().unwrap_or_default());
                file["textDiffArguments"] = args;
            }
        }
    }
    data
}

/// Forgets every cached tree.
pub fn clear_cache() {
    cache::clear();
}

/// Keeps only the cached trees of blobs `keep` accepts.
pub fn retain_cached(keep: impl Fn(&str) -> bool) {
    cache::retain(keep);
}

/// Runs the engine on one comparison.
pub async fn run(git: &Git<'_>, repo: &Repo, query: Query<'_>) -> Result<Answer, GitError> {
    run_watched(git, repo, query, &Progress::none()).await
}

/// [`run`], telling `progress` how many of the changed files are answered.
pub async fn run_watched(
    git: &Git<'_>,
    repo: &Repo,
    query: Query<'_>,
    progress: &Progress,
) -> Result<Answer, GitError> {
    let deadline = Instant::now() + CALL_BUDGET;
    let diff = DiffQuery {
        sides: query.sides,
        path: query.path,
    };
    let git = git.with_timeout(CALL_BUDGET);
    // Whole sides in the patch spare reading blobs; when that is too much output, the
    // changed lines alone, and the blobs are read.
    let mut out = diff.raw_patch(&git, repo, FULL_CONTEXT, PATCH_CAP).await?;
    if out.truncated {
        out = diff.raw_patch(&git, repo, 0, PATCH_CAP).await?;
    }
    let parsed = if out.truncated {
        Err("diff-too-large: git's patch is over 32 MiB".to_owned())
    } else {
        patch::read(&out.bytes).map_err(|e| format!("unreadable-diff: {}", e.0))
    };
    drop(out);
    let mut files = match parsed {
        Ok(files) => files,
        Err(reason) => return everything_falls_back(&git, repo, diff, query.only, reason).await,
    };
    if let Some(only) = query.only {
        files.retain(|f| only.iter().any(|p| p.as_bytes() == f.path.as_slice()));
    }
    let changed_files = files.len() as u64;
    let truncated = files.len() > MAX_FILES;
    files.truncate(MAX_FILES);
    let worktree = query
        .sides
        .reads_worktree()
        .then(|| repo.worktree.clone())
        .flatten();
    let plan = plan::Plan::new(files);
    let fetched = source::blobs(&git, &plan.to_fetch()).await?;
    let (files, spent) = plan
        .finish(fetched, worktree, deadline, progress)
        .await
        .map_err(|_| GitError::Internal("the semantic engine stopped".into()))?;
    Ok(Answer {
        files,
        changed_files,
        files_truncated: truncated || spent,
    })
}

async fn everything_falls_back(
    git: &Git<'_>,
    repo: &Repo,
    diff: DiffQuery<'_>,
    only: Option<&[String]>,
    reason: String,
) -> Result<Answer, GitError> {
    let mut names = diff.names(git, repo).await?;
    if let Some(only) = only {
        names.retain(|n| only.iter().any(|p| p.as_bytes() == n.as_slice()));
    }
    let changed_files = names.len() as u64;
    let files = names
        .iter()
        .take(MAX_FILES)
        .map(|n| {
            FileAnswer::fallback(
                String::from_utf8_lossy(n).into_owned(),
                None,
                reason.clone(),
            )
        })
        .collect();
    Ok(Answer {
        files,
        changed_files,
        files_truncated: changed_files > MAX_FILES as u64,
    })
}
