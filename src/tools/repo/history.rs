//! `repo.history`: a page of commits, with a cursor that survives new commits.

mod cursor;

use base64::Engine;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Toolset;
use crate::error::ToolError;
use crate::git::log::{LogQuery, Start};
use crate::git::{Git, Oid, RepoRelPath, Rev, repo};
use crate::model::HistoryCommit;
use crate::parse::log::Log;
use crate::tools::input::Bounded;
use crate::tools::literal_path::glob_warning;
use crate::tools::{Annotations, CallCtx, Local, Tool};

/// `repo.history`: a page of commits, with a cursor that survives new commits.
pub struct History;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HistoryInput {
    /// Absolute path of the repository (a working tree, a directory inside one, or a bare
    /// repository).
    pub repo_path: String,
    /// FluxGit workspace id; accepted for compatibility and not needed locally.
    #[serde(default)]
    pub repo_id: Option<String>,
    /// Commits per page.
    #[serde(default)]
    pub limit: Bounded<1, 200, 50>,
    /// `nextCursor` of the previous page (`ref` is then ignored)
    #[serde(default)]
    pub cursor: Option<String>,
    /// Revision to start from (branch, tag, commit); default HEAD.
    #[serde(default, rename = "ref")]
    pub ref_name: Option<String>,
    /// Base64 of a non-UTF-8 `ref`.
    #[serde(default)]
    pub ref_bytes_b64: Option<String>,
    /// Only commits touching this path (repository-relative; no globs).
    #[serde(default)]
    pub path: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistoryData {
    pub commits: Vec<HistoryCommit>,
    /// Pass as `cursor` for the next page; null at the end of history.
    pub next_cursor: Option<String>,
    /// True when HEAD is a branch with no commits yet (and no `ref` was given).
    pub unborn: bool,
    /// The commit the walk starts from.
    pub start_oid: Option<Oid>,
    /// Commits skipped before this page.
    pub skip: u64,
    pub limit: u64,
    /// Caveats, e.g. a glob in `path` (paths are literal).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Tool for History {
    type Input = HistoryInput;
    type Output = Local<HistoryData>;

    const NAME: &'static str = "repo.history";
    const TITLE: &'static str = "Commit history";
    const DESCRIPTION: &'static str = "Commit history, newest first, from HEAD or ref, optionally only commits touching path; nextCursor pages on. Bare repositories too.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: HistoryInput) -> Result<Self::Output, ToolError> {
        let cursor = input.cursor.as_deref().map(cursor::decode).transpose()?;
        let rev = Rev::parse_opt("ref", input.ref_name.as_deref())?;
        let ref_bytes = match input.ref_bytes_b64.as_deref() {
            Some(_) if rev.is_some() => {
                return Err(ToolError::invalid(
                    "refBytesB64",
                    "give either ref or refBytesB64, not both",
                ));
            }
            Some(b64) => Some(
                base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .map_err(|_| ToolError::invalid("refBytesB64", "must be base64"))?,
            ),
            None => None,
        };
        let path = RepoRelPath::parse_opt("path", input.path.as_deref())?;
        let repo = repo::open(&ctx.config, "repoPath", &input.repo_path, &ctx.cancel).await?;
        let git = Git::new(&repo, &ctx.cancel);
        let limit = input.limit.get();
        // From HEAD without a path filter, the first commit `git log HEAD` prints is HEAD
        // itself, so one git run gives both the page and the commit the cursor builds on.
        if cursor.is_none() && rev.is_none() && ref_bytes.is_none() && path.is_none() {
            let page = LogQuery::new(Start::Head, limit + 1)
                .read(&git, limit as usize)
                .await?;
            if let Some(parsed) = page
                && let Some(start) = parsed.commits.first().map(|c| c.oid.clone())
            {
                return Ok(Local::new::<Self>(
                    &repo,
                    history_data(parsed, start, 0, limit),
                ));
            }
            // An unborn HEAD, or anything unexpected, takes the general path below.
        }
        let (start, skip) = match (cursor, rev) {
            (Some((oid, skip)), _) => {
                let rev = Rev::parse("cursor", oid.as_str())?;
                let oid = git.resolve_commit("cursor", &rev).await.map_err(|_| {
                    ToolError::invalid("cursor", "names a commit this repository does not have")
                })?;
                (Some(oid), skip)
            }
            (None, Some(rev)) => (Some(git.resolve_commit("ref", &rev).await?), 0),
            (None, None) => match &ref_bytes {
                Some(name) => (
                    Some(git.resolve_commit_bytes("refBytesB64", name).await?),
                    0,
                ),
                None => (git.head().await?, 0),
            },
        };
        let Some(start) = start else {
            return Ok(Local::new::<Self>(
                &repo,
                HistoryData {
                    commits: Vec::new(),
                    next_cursor: None,
                    unborn: true,
                    start_oid: None,
                    skip: 0,
                    limit,
                    warnings: Vec::new(),
                },
            ));
        };
        let paths: Vec<RepoRelPath> = path.into_iter().collect();
        let query = LogQuery {
            skip,
            paths: &paths,
            ..LogQuery::new(Start::Commit(&start), limit + 1)
        };
        let parsed = query
            .read(&git, limit as usize)
            .await?
            .ok_or_else(|| ToolError::internal("git log found no start commit"))?;
        let mut data = history_data(parsed, start, skip, limit);
        if let Some(p) = paths
            .first()
            .filter(|_| data.commits.is_empty() && skip == 0)
            && let Some(start) = data.start_oid.as_ref()
        {
            let warning = glob_warning(&git, repo.worktree.as_deref(), &[start], p).await?;
            data.warnings.extend(warning);
        }
        Ok(Local::new::<Self>(&repo, data))
    }
}

fn history_data(parsed: Log, start: Oid, skip: u64, limit: u64) -> HistoryData {
    let more = parsed.seen > limit;
    HistoryData {
        next_cursor: more.then(|| cursor::encode(&start, skip + limit)),
        commits: parsed
            .commits
            .into_iter()
            .map(HistoryCommit::from)
            .collect(),
        unborn: false,
        start_oid: Some(start),
        skip,
        limit,
        warnings: Vec::new(),
    }
}
