//! `diff.text`: a unified patch as `git diff` prints it, bounded.

use std::time::Duration;

use base64::Engine;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Toolset;
use crate::error::ToolError;
use crate::git::diff::{DiffQuery, Sides};
use crate::git::{Git, Oid, RepoRelPath, Rev, repo};
use crate::model::PathText;
use crate::parse::patch::Patch;
use crate::tools::input::Bounded;
use crate::tools::literal_path::glob_warning;
use crate::tools::{Annotations, CallCtx, Local, Tool};

/// Past the kept text, bytes are still counted up to this much so `totalBytes` is exact
/// for any diff a person could read; beyond it the total is a lower bound.
const COUNT_BUDGET: u64 = 256 * 1024 * 1024;
/// Counting also stops after this long, so a huge diff cannot hold the call.
const COUNT_TIME: Duration = Duration::from_secs(20);
/// Deadline for git itself: generous, because producing a large diff takes time.
const DIFF_TIMEOUT: Duration = Duration::from_secs(30);

/// `diff.text`: a standard patch, bounded.
pub struct DiffText;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DiffTextInput {
    /// Absolute path of the repository (a working tree or a directory inside one; a bare
    /// repository when both `base` and `head` are given).
    pub repo_path: String,
    /// FluxGit workspace id; accepted for compatibility and not needed locally.
    #[serde(default)]
    pub repo_id: Option<String>,
    /// Old side; alone, against the working tree (or the index with `staged`)
    #[serde(default)]
    pub base: Option<String>,
    /// New side; alone it acts like `base`, as `git diff <rev>` does
    #[serde(default)]
    pub head: Option<String>,
    /// Only changes under this path (repository-relative; no globs).
    #[serde(default)]
    pub path: Option<String>,
    /// Use the index (`git diff --cached`): against HEAD, or the one revision given
    #[serde(default)]
    pub staged: bool,
    /// Most bytes of patch text, cut on a line boundary
    #[serde(default)]
    pub max_bytes: Bounded<1, 1_048_576, 65_536>,
    /// Most lines of patch text (applied before `maxBytes`).
    #[serde(default)]
    pub max_lines: Option<Bounded<1, 100_000_000, 100_000_000>>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiffTextData {
    /// Always `text`: a unified patch as `git diff` prints it.
    pub format: &'static str,
    /// What was compared: `tree-to-tree`, `revision-to-worktree`, `revision-to-index`,
    /// `index-to-worktree` or `head-to-index`.
    pub compared: &'static str,
    pub base: Option<String>,
    pub head: Option<String>,
    /// The revisions as resolved, in the order compared.
    pub base_oid: Option<Oid>,
    pub head_oid: Option<Oid>,
    pub path: Option<String>,
    pub staged: bool,
    /// The patch exactly as `git diff` prints it with the repository's configuration
    /// (paths quoted per `core.quotePath`).
    pub diff: String,
    /// Base64 of the returned patch bytes, present only when `lossy`: the exact patch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff_base64: Option<String>,
    /// True when `diff` is not the whole patch.
    pub truncated: bool,
    /// True when the patch held bytes that are not UTF-8 (shown as U+FFFD in `diff`;
    /// `diffBase64` then carries the exact bytes).
    pub lossy: bool,
    /// Size of the whole patch in bytes; a lower bound when `totalBytesExact` is false.
    pub total_bytes: u64,
    pub total_bytes_exact: bool,
    /// Lines of the whole patch; a lower bound when `totalBytesExact` is false.
    pub total_lines: u64,
    /// Bytes of `diff` as git printed them.
    pub returned_bytes: u64,
    pub max_bytes: u64,
    pub max_lines: Option<u64>,
    /// Files git reported as `Binary files … differ`.
    pub binary_files: Vec<PathText>,
    pub binary_files_total: u64,
    pub binary_files_truncated: bool,
    /// Caveats, e.g. a glob in `path` (paths are literal).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Tool for DiffText {
    type Input = DiffTextInput;
    type Output = Local<DiffTextData>;

    const NAME: &'static str = "diff.text";
    const TITLE: &'static str = "Text diff";
    const DESCRIPTION: &'static str = "A unified patch as `git diff` prints it (no external diff or textconv): base to head, a revision or the index against the working tree, or staged.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: DiffTextInput) -> Result<Self::Output, ToolError> {
        let base = Rev::parse_opt("base", input.base.as_deref())?;
        let head = Rev::parse_opt("head", input.head.as_deref())?;
        let path = RepoRelPath::parse_opt("path", input.path.as_deref())?;
        if base.is_some() && head.is_some() && input.staged {
            return Err(ToolError::invalid(
                "staged",
                "compares with the index, so it cannot be combined with both base and head",
            ));
        }
        let repo = repo::open(&ctx.config, "repoPath", &input.repo_path, &ctx.cancel).await?;
        let git = Git::new(&repo, &ctx.cancel).with_timeout(DIFF_TIMEOUT);

        let (compared, sides) = match (&base, &head) {
            (Some(b), Some(h)) => {
                let (b, h) =
                    tokio::try_join!(git.resolve_commit("base", b), git.resolve_commit("head", h))?;
                ("tree-to-tree", Sides::Trees(b, h))
            }
            (Some(one), None) | (None, Some(one)) => {
                let field = if base.is_some() { "base" } else { "head" };
                repo.require_worktree()?;
                let oid = git.resolve_commit(field, one).await?;
                if input.staged {
                    ("revision-to-index", Sides::RevToIndex(oid))
                } else {
                    ("revision-to-worktree", Sides::RevToWorktree(oid))
                }
            }
            (None, None) => {
                repo.require_worktree()?;
                if input.staged {
                    ("head-to-index", Sides::HeadToIndex)
                } else {
                    ("index-to-worktree", Sides::IndexToWorktree)
                }
            }
        };
        let (base_oid, head_oid) = sides.revisions();
        let (base_oid, head_oid) = (base_oid.cloned(), head_oid.cloned());
        let max_bytes = input.max_bytes.usize();
        let max_lines = input.max_lines.map(|l| l.get());
        let query = DiffQuery {
            sides: &sides,
            path: path.as_ref(),
        };
        let patch = query
            .patch(&git, &repo, Patch::new(max_bytes, COUNT_BUDGET, COUNT_TIME))
            .await?;
        let mut warnings = Vec::new();
        if let Some(p) = path.as_ref().filter(|_| patch.total_bytes == 0) {
            let commits: Vec<&Oid> = base_oid.iter().chain(head_oid.iter()).collect();
            warnings.extend(glob_warning(&git, repo.worktree.as_deref(), &commits, p).await?);
        }
        let (text, truncated) = patch.cut(max_bytes, max_lines);
        let (diff, lossy) = crate::model::lossy(text);
        let diff_base64 = lossy.then(|| base64::engine::general_purpose::STANDARD.encode(text));
        let data = DiffTextData {
            format: "text",
            compared,
            base: input.base,
            head: input.head,
            base_oid,
            head_oid,
            path: path.map(|p| p.as_str().to_owned()),
            staged: input.staged,
            returned_bytes: text.len() as u64,
            diff,
            diff_base64,
            truncated,
            lossy,
            total_bytes: patch.total_bytes,
            total_bytes_exact: !patch.stopped,
            total_lines: patch.total_lines,
            max_bytes: max_bytes as u64,
            max_lines,
            binary_files_truncated: patch.binary_total > patch.binary_files.len() as u64,
            binary_files_total: patch.binary_total,
            binary_files: patch
                .binary_files
                .iter()
                .map(|p| PathText::from_bytes(p))
                .collect(),
            warnings,
        };
        Ok(Local::new::<Self>(&repo, data))
    }
}
