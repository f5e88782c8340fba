//! `commit.details`: one commit's metadata, full message and changed files.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Toolset;
use crate::error::ToolError;
use crate::git::log::{LogQuery, Start};
use crate::git::{Git, Rev, diff_tree, repo};
use crate::model::{HistoryCommit, OrigPathText, PathText};
use crate::parse::diff_tree::{Change, Stat};
use crate::tools::input::Bounded;
use crate::tools::{Annotations, CallCtx, Local, Tool};

/// Longest commit message returned.
const MESSAGE_CAP: usize = 1024 * 1024;

/// `commit.details`: one commit's metadata, full message and changed files.
pub struct Details;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DetailsInput {
    /// Absolute path of the repository (a working tree, a directory inside one, or a bare
    /// repository).
    pub repo_path: String,
    /// FluxGit workspace id; accepted for compatibility and not needed locally.
    #[serde(default)]
    pub repo_id: Option<String>,
    /// The commit: an id (full or abbreviated), branch, tag or expression like `HEAD~2`.
    pub commit: String,
    /// Most files listed; `filesTotal` and `stats` always cover every file.
    #[serde(default)]
    pub max_files: Bounded<1, 10000, 1000>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DetailsData {
    pub commit: CommitInfo,
    /// What the files are compared with: `parent`, `root` (no parent: everything is
    /// added) or `first-parent` (a merge).
    pub diff_against: &'static str,
    pub files: Vec<ChangedFile>,
    pub files_truncated: bool,
    pub files_total: u64,
    pub stats: DiffStats,
    pub max_files: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommitInfo {
    /// The same fields as each commit of `repo.history`.
    #[serde(flatten)]
    pub summary: HistoryCommit,
    /// The whole commit message exactly as git stores it, less its final newline.
    pub message: String,
    /// True when the message is longer than 1 MiB and was cut.
    pub message_truncated: bool,
    /// True when the message was not valid UTF-8 and is shown lossily.
    pub message_lossy: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangedFile {
    /// Git's letter: `A`, `C`, `D`, `M`, `R`, `T`, `U` or `X`.
    pub status: String,
    /// `added`, `copied`, `deleted`, `modified`, `renamed`, `typechange`, `unmerged` or
    /// `unknown`.
    pub kind: &'static str,
    #[serde(flatten)]
    pub path: PathText,
    /// The source of a rename or copy.
    #[serde(flatten)]
    pub orig_path: Option<OrigPathText>,
    /// Similarity score of a rename or copy (0–100).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<u8>,
    /// Lines added and removed; null for binary files.
    pub insertions: Option<u64>,
    pub deletions: Option<u64>,
    pub binary: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiffStats {
    pub files: u64,
    pub insertions: u64,
    pub deletions: u64,
    pub binary_files: u64,
}

fn kind_of(status: u8) -> &'static str {
    match status {
        b'A' => "added",
        b'C' => "copied",
        b'D' => "deleted",
        b'M' => "modified",
        b'R' => "renamed",
        b'T' => "typechange",
        b'U' => "unmerged",
        _ => "unknown",
    }
}

fn changed_file(change: Change, stat: Option<&Stat>) -> ChangedFile {
    // Both listings come from the same diff in the same order; the paths are compared
    // anyway so a mismatch shows as missing counts, never as wrong ones.
    let stat = stat.filter(|s| s.path == change.path && s.orig_path == change.orig_path);
    let lines = stat.and_then(|s| s.lines);
    ChangedFile {
        status: char::from(change.status).to_string(),
        kind: kind_of(change.status),
        path: PathText::from_bytes(&change.path),
        orig_path: change.orig_path.as_deref().map(OrigPathText::from_bytes),
        similarity: change.orig_path.as_ref().and(change.score),
        insertions: lines.map(|(a, _)| a),
        deletions: lines.map(|(_, d)| d),
        binary: stat.is_some_and(|s| s.lines.is_none()),
    }
}

/// The message as stored from `git log --format=%B` output: that is the message verbatim
/// plus one line terminator, so exactly the terminator and the message's own final newline
/// go; trailing spaces or blank lines a message was committed with stay, as git keeps them.
fn stored_message(printed: &[u8], truncated: bool) -> &[u8] {
    if truncated {
        return printed;
    }
    let body = printed.strip_suffix(b"\n").unwrap_or(printed);
    body.strip_suffix(b"\n").unwrap_or(body)
}

impl Tool for Details {
    type Input = DetailsInput;
    type Output = Local<DetailsData>;

    const NAME: &'static str = "commit.details";
    const TITLE: &'static str = "Commit details";
    const DESCRIPTION: &'static str = "One commit: parents, author, committer, full message and changed files with line counts (a merge against its first parent). Bare repositories too.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: DetailsInput) -> Result<Self::Output, ToolError> {
        let rev = Rev::parse("commit", &input.commit)?;
        let repo = repo::open(&ctx.config, "repoPath", &input.repo_path, &ctx.cancel).await?;
        let git = Git::new(&repo, &ctx.cancel);
        let oid = git.resolve_commit("commit", &rev).await?;
        let max = input.max_files.usize();

        let mut parsed = LogQuery::new(Start::Commit(&oid), 1)
            .read(&git, 1)
            .await?
            .ok_or_else(|| ToolError::internal("git log printed no commit"))?;
        let commit = parsed
            .commits
            .pop()
            .ok_or_else(|| ToolError::internal("git log printed no commit"))?;
        let (changes, raw_message) = tokio::try_join!(
            diff_tree::commit_changes(&git, &oid, &commit.parents, max),
            crate::git::log::message(&git, &oid, MESSAGE_CAP),
        )?;
        let diff_against = changes.against.name();
        let (names, stats) = (changes.names, changes.stats);

        let files: Vec<ChangedFile> = names
            .changes
            .into_iter()
            .enumerate()
            .map(|(i, change)| changed_file(change, stats.stats.get(i)))
            .collect();
        let commit_lossy = commit.lossy;
        let message_truncated = raw_message.truncated;
        let (message, message_lossy) =
            crate::model::lossy(stored_message(&raw_message.bytes, message_truncated));
        let data = DetailsData {
            commit: CommitInfo {
                summary: HistoryCommit::from(commit),
                message,
                message_truncated,
                message_lossy: message_lossy || commit_lossy,
            },
            diff_against,
            files_truncated: names.total > files.len() as u64,
            files_total: names.total,
            files,
            stats: DiffStats {
                files: stats.files,
                insertions: stats.insertions,
                deletions: stats.deletions,
                binary_files: stats.binary,
            },
            max_files: max as u64,
        };
        Ok(Local::new::<Self>(&repo, data))
    }
}

#[cfg(test)]
mod tests {
    use super::stored_message;

    #[test]
    fn stored_message_keeps_trailing_whitespace() {
        assert_eq!(stored_message(b"one\n\n", false), b"one");
        assert_eq!(stored_message(b"one  \n\n", false), b"one  ");
        assert_eq!(stored_message(b"one\n\n\n\n", false), b"one\n\n");
        assert_eq!(stored_message(b"no newline\n", false), b"no newline");
        assert_eq!(stored_message(b"cut\n", true), b"cut\n");
    }
}
