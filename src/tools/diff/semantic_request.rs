//! What `diff.semantic` and `diff.semanticFallbacks` share: the checked request, the
//! question to the FluxGit diff engine through the gateway's read-only bridge, and the
//! built-in engine's answer.
//!
//! Without a reachable gateway, or for a repository FluxGit has not registered, both
//! tools answer from the built-in tree-sitter engine (`crate::semantic`); only a binary
//! built without any grammar answers the seed's `supported:false` fallback with the exact
//! arguments for `diff.text`. Nothing here ever derives "semantic" structure from a text
//! patch alone: the engine parses both sides of every file it answers for; the
//! gateway's answer is passed on only when it says `supported: true`, and every file it
//! could not parse keeps its text-fallback record.

use std::marker::PhantomData;
use std::path::Path;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::semantic_data::{SemanticData, TextDiffArguments};
use crate::error::ToolError;
use crate::gateway::addr::GatewayAddr;
use crate::gateway::http;
use crate::git::diff::{DiffQuery, Sides};
use crate::git::{Git, Oid, Repo, RepoRelPath, Rev, repo};
use crate::model::tool_name;
use crate::semantic;
use crate::tools::{CallCtx, Tool};

/// `source` of an answer from the built-in engine.
pub const LOCAL_ENGINE: &str = "local-engine";
/// The seed's wording, verbatim, for a binary built without any grammar.
pub const LOCAL_REASON: &str = "Semantic diff is not available in local sidecar fallback mode.";
const FILE_FALLBACK_REASON: &str = "The semantic engine could not parse this file (unsupported language, binary or unreadable source); use a text diff for it.";
/// Paths sent to the engine at most.
const MAX_GATEWAY_PATHS: usize = 25;
const GATEWAY_TIMEOUT: Duration = Duration::from_secs(10);
const SEMANTIC_ROUTE: &str = "/v1/mcp/diff/semantic";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SemanticInput {
    /// Absolute path of the repository.
    pub repo_path: String,
    /// FluxGit repository id; looked up in FluxGit's registry when omitted.
    #[serde(default)]
    pub repo_id: Option<String>,
    /// Old side, as for diff.text (omitted: the index or working tree).
    #[serde(default)]
    pub base: Option<String>,
    /// New side, as for diff.text (omitted: the working tree).
    #[serde(default)]
    pub head: Option<String>,
    /// Limit to one repository-relative path.
    #[serde(default)]
    pub path: Option<String>,
}

/// The result envelope; `source` says who computed `data`, whose schema is `D`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SemanticOutput<D: JsonSchema> {
    pub tool: &'static str,
    pub read_only: bool,
    /// `local-git` for the fallback, `fluxgit-gateway` when the engine answered.
    pub source: &'static str,
    pub repo_path: String,
    /// Semantic only when `supported` is exactly true. Fallback: `{supported:false,
    /// fallback:"diff.text", reason, textDiffArguments}`. Engine: `{supported:true,
    /// engine, files:[{path, fallbackToText, hunks, reason?, textDiffArguments?}],
    /// changedFiles, filesTruncated}`.
    #[schemars(with = "D")]
    pub data: Value,
    #[serde(skip)]
    shape: PhantomData<D>,
}

/// Checked arguments.
pub(super) struct Request {
    pub(super) repo: std::sync::Arc<Repo>,
    input: SemanticInput,
    base: Option<Oid>,
    head: Option<Oid>,
    path: Option<RepoRelPath>,
}

pub(super) async fn prepare(ctx: &CallCtx, input: SemanticInput) -> Result<Request, ToolError> {
    let base = Rev::parse_opt("base", input.base.as_deref())?;
    let head = Rev::parse_opt("head", input.head.as_deref())?;
    let path = RepoRelPath::parse_opt("path", input.path.as_deref())?;
    if let Some(id) = &input.repo_id
        && (id.is_empty() || id.len() > 256 || id.chars().any(char::is_control))
    {
        return Err(ToolError::invalid(
            "repoId",
            "must be 1–256 characters without control characters",
        ));
    }
    let repo = repo::open(&ctx.config, "repoPath", &input.repo_path, &ctx.cancel).await?;
    let git = Git::new(&repo, &ctx.cancel);
    let resolve = |field: &'static str, rev: Option<Rev>| async move {
        match rev {
            Some(rev) => git.resolve_commit(field, &rev).await.map(Some),
            None => Ok(None),
        }
    };
    let (base, head) = tokio::join!(resolve("base", base), resolve("head", head));
    let (base, head) = (base?, head?);
    Ok(Request {
        repo,
        input,
        base,
        head,
        path,
    })
}

impl Request {
    /// `diff.text` arguments reproducing this request, optionally for another path.
    pub(super) fn text_args(&self, path: Option<&str>) -> Value {
        let mut args = Map::new();
        args.insert("repoPath".into(), json!(self.repo.display()));
        if let Some(base) = &self.input.base {
            args.insert("base".into(), json!(base));
        }
        if let Some(head) = &self.input.head {
            args.insert("head".into(), json!(head));
        }
        if let Some(path) = path.or(self.path.as_ref().map(RepoRelPath::as_str)) {
            args.insert("path".into(), json!(path));
        }
        Value::Object(args)
    }

    pub(super) fn local(&self) -> Value {
        json!({
            "supported": false,
            "fallback": tool_name::served("diff.text"),
            "reason": LOCAL_REASON,
            "textDiffArguments": self.text_args(None),
        })
    }

    /// What `git diff` compares for these arguments.
    fn sides(&self) -> Sides {
        match (&self.base, &self.head) {
            (Some(base), Some(head)) => Sides::Trees(base.clone(), head.clone()),
            (Some(one), None) | (None, Some(one)) => Sides::RevToWorktree(one.clone()),
            (None, None) => Sides::IndexToWorktree,
        }
    }

    /// The local engine's answer (`None` when no grammar is compiled in), each fallback
    /// file with its `diff.text` arguments.
    pub(super) async fn engine(&self, ctx: &CallCtx) -> Result<Option<Value>, ToolError> {
        if !semantic::available() {
            return Ok(None);
        }
        let git = Git::new(&self.repo, &ctx.cancel);
        let sides = self.sides();
        let query = semantic::Query {
            sides: &sides,
            path: self.path.as_ref(),
            only: None,
        };
        let answer = semantic::run_watched(&git, &self.repo, query, &ctx.progress).await?;
        Ok(Some(semantic::data(&answer, |p| self.text_args(Some(p)))))
    }

    /// Changed paths, as `git diff --name-only` lists them for these arguments.
    pub(super) async fn changed(
        &self,
        ctx: &CallCtx,
        max: usize,
    ) -> Result<(Vec<String>, u64), ToolError> {
        let git = Git::new(&self.repo, &ctx.cancel);
        let sides = self.sides();
        let query = DiffQuery {
            sides: &sides,
            path: self.path.as_ref(),
        };
        let all = query.names(&git, &self.repo).await?;
        let total = all.len() as u64;
        let kept = all
            .iter()
            .take(max)
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect();
        Ok((kept, total))
    }

    /// The engine's answer, when a gateway is configured, the repository registered and
    /// the engine says `supported: true`; `None` means "answer locally".
    pub(super) async fn gateway(&self, ctx: &CallCtx) -> Option<Value> {
        let addr = GatewayAddr::parse(ctx.config.gateway_addr.as_deref()?).ok()?;
        let repo_id = match &self.input.repo_id {
            Some(id) => id.clone(),
            None => registered_id(ctx.config.run_dir.as_deref()?, &self.repo.path)?,
        };
        let (paths, _) = self.changed(ctx, MAX_GATEWAY_PATHS).await.ok()?;
        let body = json!({
            "repoId": repo_id,
            "repoPath": self.repo.display(),
            "baseRef": self.input.base,
            "headRef": self.input.head,
            "paths": paths,
        });
        let answer = http::post_json(&addr, SEMANTIC_ROUTE, &body, GATEWAY_TIMEOUT)
            .await
            .ok()?;
        let mut data = match answer.get("data") {
            Some(Value::Object(_)) => answer["data"].clone(),
            _ => answer,
        };
        if data.get("supported") != Some(&Value::Bool(true)) {
            return None;
        }
        // Per-file honesty: a file the engine did not parse must say so and carry the
        // arguments for its text diff.
        let files = data.get_mut("files")?.as_array_mut()?;
        for file in files.iter_mut() {
            let file = file.as_object_mut()?;
            let path = file.get("path")?.as_str()?.to_owned();
            if file.get("fallbackToText") == Some(&Value::Bool(true)) {
                if !file.get("reason").is_some_and(Value::is_string) {
                    file.insert("reason".into(), json!(FILE_FALLBACK_REASON));
                }
                let usable = file.get("textDiffArguments").is_some_and(|a| {
                    serde_json::from_value::<TextDiffArguments>(a.clone()).is_ok()
                });
                if !usable {
                    file.insert("textDiffArguments".into(), self.text_args(Some(&path)));
                }
            }
        }
        // Passed on only in the shape the output schema promises; anything else is
        // answered locally rather than breaking clients that validate results.
        serde_json::from_value::<SemanticData>(data.clone()).ok()?;
        Some(data)
    }
}

/// The id FluxGit registered for `repo`: `<runDir>/repos/<id>.path` holds its path.
fn registered_id(run_dir: &Path, repo: &Path) -> Option<String> {
    crate::registry::entries(run_dir)
        .into_iter()
        .find(|r| std::fs::canonicalize(&r.path).is_ok_and(|p| p == repo))
        .map(|r| r.id)
}

pub(super) fn envelope<T: Tool, D: JsonSchema>(
    repo: &Repo,
    source: &'static str,
    data: Value,
) -> SemanticOutput<D> {
    SemanticOutput {
        tool: T::NAME,
        read_only: true,
        source,
        repo_path: repo.display(),
        data,
        shape: PhantomData,
    }
}
