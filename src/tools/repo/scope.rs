//! `repo.scope`: one subtree of a (mono)repository in one call.
//!
//! Working-tree changes under the path, the commits that touched it, churn over a window
//! (commits and distinct author emails) and who owns it according to CODEOWNERS, matched
//! with GitHub's pattern rules. The git calls run concurrently; every pathspec is literal.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Toolset;
use crate::error::ToolError;
use crate::git::log::{LogQuery, Start};
use crate::git::status::{StatusQuery, Untracked};
use crate::git::{Git, RepoRelPath, head_tree, log, repo};
use crate::model::{Hint, OrigPathText, PathText};
use crate::parse::codeowners;
use crate::parse::status_v2::Kind;
use crate::tools::input::Bounded;
use crate::tools::{Annotations, CallCtx, Local, Tool};

/// Changed paths listed at most (the total is always counted).
const MAX_ENTRIES: usize = 20;
/// Commits counted for churn at most; beyond this the count is a lower bound.
const CHURN_CAP: u64 = 200_000;
/// Largest CODEOWNERS file read.
const CODEOWNERS_CAP: usize = 3 * 1024 * 1024;

/// `repo.scope`: changes, history, churn and owners of one path.
pub struct Scope;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScopeInput {
    /// Absolute path of the repository (any directory inside a working tree works).
    pub repo_path: String,
    #[serde(default)]
    pub repo_id: Option<String>,
    /// Repository-relative directory or file (no `..`, no leading `/` or `:`).
    pub path: String,
    /// How many recent commits touching the path to list.
    #[serde(default)]
    pub recent_commits: Bounded<1, 20, 10>,
    /// Churn window in days.
    #[serde(default)]
    pub churn_days: Bounded<1, 365, 90>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScopeData {
    /// The path, normalised (no trailing `/`).
    pub scope: String,
    /// `directory`, `file` or `missing` (neither in the working tree nor in HEAD).
    pub kind: &'static str,
    /// Null in a bare repository.
    pub working_tree: Option<ScopeChanges>,
    pub recent_commits: Vec<ScopeCommit>,
    pub recent_commits_truncated: bool,
    pub churn: Churn,
    /// Null when the repository has no CODEOWNERS file.
    pub owners: Option<Owners>,
    /// Next steps; each names the tool to call.
    pub hints: Vec<Hint>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScopeChanges {
    /// Changed paths under the scope (true total).
    pub changed: u64,
    pub staged: u64,
    pub unstaged: u64,
    /// `-unormal`: an untracked directory counts once (`dir/`).
    pub untracked: u64,
    pub conflicted: u64,
    pub entries: Vec<ScopeEntry>,
    pub truncated: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScopeEntry {
    pub status: String,
    #[serde(flatten)]
    pub path: PathText,
    /// The source of a rename or copy.
    #[serde(flatten)]
    pub orig_path: Option<OrigPathText>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScopeCommit {
    pub sha: String,
    pub subject: String,
    pub author: String,
    pub author_email: String,
    /// Author time, Unix seconds.
    pub time: i64,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Churn {
    pub days: u64,
    /// Start of the window (committer time), Unix seconds.
    pub since: i64,
    /// Commits touching the path in the window.
    pub commits: u64,
    /// Distinct author emails (case-insensitive) among them.
    pub authors: u64,
    /// True when counting stopped at 200000 commits.
    pub truncated: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Owners {
    /// The CODEOWNERS file used.
    pub source: &'static str,
    /// The last rule covering the path; null when none does.
    pub matched_pattern: Option<String>,
    pub line: Option<usize>,
    /// Empty when no rule matches or the matching rule lists no owners.
    pub owners: Vec<String>,
    /// Always `codeowners-glob`: GitHub's gitignore-style rules, last match wins.
    pub matching: &'static str,
    /// Lines GitHub would reject (`!` negation, `[...]` classes); they are ignored.
    pub skipped_lines: Vec<usize>,
}

impl Tool for Scope {
    type Input = ScopeInput;
    type Output = Local<ScopeData>;

    const NAME: &'static str = "repo.scope";
    const TITLE: &'static str = "Subtree scope";
    const DESCRIPTION: &'static str = "One subtree of a (mono)repository in one call: its working-tree changes, recent commits, churn (commits, authors) over churnDays and its CODEOWNERS owners.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: ScopeInput) -> Result<Self::Output, ToolError> {
        let path = RepoRelPath::parse("path", &input.path)?;
        let repo = repo::open(&ctx.config, "repoPath", &input.repo_path, &ctx.cancel).await?;
        let git = Git::new(&repo, &ctx.cancel);
        let worktree = repo.worktree.clone();
        let days = input.churn_days.get();
        let since = now_secs() - (days as i64) * 86_400;
        let recent = input.recent_commits.usize();

        let changes = async {
            match &worktree {
                Some(_) => changes(&git, &path).await.map(Some),
                None => Ok(None),
            }
        };
        let (changes, head, commits, churn, kind, owners) = tokio::try_join!(
            changes,
            async { Ok::<_, ToolError>(git.head().await?) },
            commits(&git, &path, recent),
            churn(&git, &path, since),
            kind_of(&git, worktree.as_deref(), &path),
            read_codeowners(&git, worktree.as_deref()),
        )?;
        let (commits, more) = if head.is_some() {
            commits
        } else {
            (Vec::new(), false)
        };
        let (commit_count, authors, churn_truncated) =
            if head.is_some() { churn } else { (0, 0, false) };
        let owners = owners.map(|(source, file)| {
            let rule = file.owner_rule(path.as_str(), kind == "directory");
            Owners {
                source,
                matched_pattern: rule.map(|r| r.pattern.clone()),
                line: rule.map(|r| r.line),
                owners: rule.map(|r| r.owners.clone()).unwrap_or_default(),
                matching: "codeowners-glob",
                skipped_lines: file.skipped.iter().map(|(l, _)| *l).collect(),
            }
        });
        let mut hints = Vec::new();
        let mut hint = |tool, reason: String| hints.push(Hint { tool, reason });
        if changes.as_ref().is_some_and(|c| c.changed > 0) {
            hint(
                "diff.text",
                format!("Show the uncommitted changes under \"{}\".", path.as_str()),
            );
        }
        if kind == "missing" {
            hint(
                "repo.status",
                "The path exists neither in the working tree nor in HEAD.".to_owned(),
            );
        }
        if more {
            hint(
                "repo.history",
                format!("Page through older commits touching \"{}\".", path.as_str()),
            );
        }
        let data = ScopeData {
            scope: path.as_str().to_owned(),
            kind,
            working_tree: changes,
            recent_commits: commits,
            recent_commits_truncated: more,
            churn: Churn {
                days,
                since,
                commits: commit_count,
                authors,
                truncated: churn_truncated,
            },
            owners,
            hints,
        };
        Ok(Local::new::<Self>(&repo, data))
    }
}

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

async fn changes(git: &Git<'_>, path: &RepoRelPath) -> Result<ScopeChanges, ToolError> {
    let status = StatusQuery {
        untracked: Some(Untracked::Normal),
        paths: Some(std::slice::from_ref(path)),
        ..StatusQuery::default()
    }
    .read(git, MAX_ENTRIES)
    .await?;
    let c = status.counts;
    Ok(ScopeChanges {
        changed: c.entries - c.ignored,
        staged: c.staged,
        unstaged: c.unstaged,
        untracked: c.untracked,
        conflicted: c.conflicted,
        truncated: status.truncated(),
        entries: status
            .entries
            .into_iter()
            .filter(|e| e.kind != Kind::Ignored)
            .map(|e| ScopeEntry {
                status: String::from_utf8_lossy(&e.xy).into_owned(),
                path: PathText::from_bytes(&e.path),
                orig_path: e.orig_path.as_deref().map(OrigPathText::from_bytes),
            })
            .collect(),
    })
}

async fn commits(
    git: &Git<'_>,
    path: &RepoRelPath,
    n: usize,
) -> Result<(Vec<ScopeCommit>, bool), ToolError> {
    // One more than asked, to know whether older ones exist.
    let paths = std::slice::from_ref(path);
    let query = LogQuery {
        paths,
        ..LogQuery::new(Start::Head, n as u64 + 1)
    };
    let Some(parsed) = query.read(git, n).await? else {
        return Ok((Vec::new(), false));
    };
    let more = parsed.seen > n as u64;
    let commits = parsed
        .commits
        .into_iter()
        .map(|c| ScopeCommit {
            sha: c.oid.to_string(),
            subject: c.subject,
            author: c.author_name,
            author_email: c.author_email,
            time: c.author_time,
        })
        .collect();
    Ok((commits, more))
}

async fn churn(
    git: &Git<'_>,
    path: &RepoRelPath,
    since: i64,
) -> Result<(u64, u64, bool), ToolError> {
    let counted = log::authors_since(git, since, path, CHURN_CAP).await?;
    Ok((counted.commits, counted.distinct(), counted.stopped))
}

/// Whether the path is a directory or a file: on disk, else in HEAD's tree.
async fn kind_of(
    git: &Git<'_>,
    worktree: Option<&std::path::Path>,
    path: &RepoRelPath,
) -> Result<&'static str, ToolError> {
    if let Some(top) = worktree {
        // A symbolic link on the way would lead the lookup (and git) out of the tree.
        let mut dir = top.to_path_buf();
        let parts: Vec<&str> = path.as_str().split('/').collect();
        for part in &parts[..parts.len() - 1] {
            dir.push(part);
            match std::fs::symlink_metadata(&dir) {
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(ToolError::invalid(
                        "path",
                        "must not pass through a symbolic link",
                    ));
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        match std::fs::symlink_metadata(top.join(path.as_str())) {
            Ok(m) if m.is_dir() => return Ok("directory"),
            Ok(_) => return Ok("file"),
            Err(_) => {}
        }
    }
    Ok(match head_tree::object_type(git, path).await?.as_deref() {
        Some("tree") => "directory",
        Some("blob") | Some("commit") => "file",
        _ => "missing",
    })
}

/// The first CODEOWNERS file that exists, parsed: from the working tree, or from HEAD in
/// a bare repository.
async fn read_codeowners(
    git: &Git<'_>,
    worktree: Option<&std::path::Path>,
) -> Result<Option<(&'static str, codeowners::CodeOwners)>, ToolError> {
    for location in codeowners::LOCATIONS {
        let bytes = match worktree {
            Some(top) => {
                let top = top.to_path_buf();
                let read = crate::safe_file::off_thread(git.cancel(), move || {
                    crate::safe_file::read_prefix_in(&top, location, CODEOWNERS_CAP as u64)
                })
                .await?;
                match read {
                    Ok(bytes) => bytes,
                    Err(_) => continue,
                }
            }
            None => match head_tree::blob(git, location, CODEOWNERS_CAP).await? {
                Some((bytes, _)) => bytes,
                None => continue,
            },
        };
        return Ok(Some((
            location,
            codeowners::parse(&String::from_utf8_lossy(&bytes)),
        )));
    }
    Ok(None)
}
