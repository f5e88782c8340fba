//! `diff.semantic` and `diff.semanticFallbacks`: semantic diffs come only from the
//! FluxGit diff engine, through the gateway's read-only bridge.
//!
//! Without a reachable gateway, or for a repository FluxGit has not registered, both
//! tools answer the honest local fallback: `supported:false` and the exact arguments for
//! `diff.text`. Nothing here ever derives "semantic" structure from a text patch; the
//! gateway's answer is passed on only when it says `supported: true`, and every file it
//! could not parse keeps its text-fallback record.

use std::marker::PhantomData;
use std::path::Path;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::semantic_data::{FallbacksData, SemanticData, TextDiffArguments};
use super::{Annotations, CallCtx, Tool};
use crate::config::Toolset;
use crate::error::ToolError;
use crate::gateway::addr::GatewayAddr;
use crate::gateway::http;
use crate::git::index_copy::IndexCopy;
use crate::git::{Git, Oid, Repo, RepoRelPath, Rev, repo};

/// The seed's wording, verbatim.
pub const LOCAL_REASON: &str = "Semantic diff is not available in local sidecar fallback mode.";
const FILE_FALLBACK_REASON: &str = "The semantic engine could not parse this file (unsupported language, binary or unreadable source); use a text diff for it.";
/// Paths sent to the engine at most.
const MAX_GATEWAY_PATHS: usize = 25;
/// Local fallback records listed at most.
const MAX_FALLBACKS: usize = 200;
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
struct Request {
    repo: std::sync::Arc<Repo>,
    input: SemanticInput,
    base: Option<Oid>,
    head: Option<Oid>,
    path: Option<RepoRelPath>,
}

async fn prepare(ctx: &CallCtx, input: SemanticInput) -> Result<Request, ToolError> {
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
    fn text_args(&self, path: Option<&str>) -> Value {
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

    fn local(&self) -> Value {
        json!({
            "supported": false,
            "fallback": "diff.text",
            "reason": LOCAL_REASON,
            "textDiffArguments": self.text_args(None),
        })
    }

    /// Changed paths, as `git diff --name-only` lists them for these arguments.
    async fn changed(&self, ctx: &CallCtx, max: usize) -> Result<(Vec<String>, u64), ToolError> {
        let git = Git::new(&self.repo, &ctx.cancel);
        let mut args: Vec<String> = [
            "--literal-pathspecs",
            "diff",
            "--name-only",
            "-z",
            "--no-ext-diff",
            "--no-textconv",
            "--no-color",
        ]
        .map(String::from)
        .to_vec();
        args.extend(self.base.iter().map(Oid::to_string));
        args.extend(self.head.iter().map(Oid::to_string));
        args.push("--".into());
        args.extend(self.path.iter().map(|p| p.as_str().to_owned()));
        let out = if self.head.is_none() {
            // Comparing with the working tree refreshes the index: let git refresh a copy.
            let index = IndexCopy::new(&self.repo).await?;
            git.cmd_on_copy(&index, args)
                .capture(crate::git::DEFAULT_CAP)
                .await?
        } else {
            git.cmd(args).capture(crate::git::DEFAULT_CAP).await?
        };
        let all: Vec<&[u8]> = out
            .sink
            .bytes
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .collect();
        let total = all.len() as u64;
        let kept = all
            .into_iter()
            .take(max)
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect();
        Ok((kept, total))
    }

    /// The engine's answer, when a gateway is configured, the repository registered and
    /// the engine says `supported: true`; `None` means "answer locally".
    async fn gateway(&self, ctx: &CallCtx) -> Option<Value> {
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

fn envelope<T: Tool, D: JsonSchema>(
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

/// `diff.semantic`.
pub struct Semantic;

impl Tool for Semantic {
    type Input = SemanticInput;
    type Output = SemanticOutput<SemanticData>;

    const NAME: &'static str = "diff.semantic";
    const TITLE: &'static str = "Semantic diff";
    const DESCRIPTION: &'static str = "Semantic diff from the FluxGit diff engine when FluxGit is running and has registered the repository (source fluxgit-gateway, supported:true, per-file hunks; files the engine could not parse carry fallbackToText:true, a reason and textDiffArguments). Otherwise supported:false with fallback \"diff.text\" and the exact textDiffArguments to call it with. A result is semantic only when data.supported is exactly true; never infer function- or class-level moves from a text patch.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: SemanticInput) -> Result<Self::Output, ToolError> {
        let req = prepare(&ctx, input).await?;
        Ok(match req.gateway(&ctx).await {
            Some(data) => envelope::<Self, _>(&req.repo, "fluxgit-gateway", data),
            None => envelope::<Self, _>(&req.repo, "local-git", req.local()),
        })
    }
}

/// `diff.semanticFallbacks`.
pub struct Fallbacks;

impl Tool for Fallbacks {
    type Input = SemanticInput;
    type Output = SemanticOutput<FallbacksData>;

    const NAME: &'static str = "diff.semanticFallbacks";
    const TITLE: &'static str = "Semantic diff fallbacks";
    const DESCRIPTION: &'static str = "Which changed paths fall back from semantic to text diff. With FluxGit serving the repository: the engine's real per-file fallback records (supported:true). Without it every changed path falls back (supported:false), each with the textDiffArguments for diff.text.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: SemanticInput) -> Result<Self::Output, ToolError> {
        let req = prepare(&ctx, input).await?;
        if let Some(data) = req.gateway(&ctx).await {
            let files = data["files"].as_array().cloned().unwrap_or_default();
            let fallbacks: Vec<Value> = files
                .iter()
                .filter(|f| f["fallbackToText"] == Value::Bool(true))
                .map(|f| {
                    json!({
                        "path": f["path"],
                        "reason": f["reason"],
                        "textDiffArguments": f["textDiffArguments"],
                    })
                })
                .collect();
            let out = json!({
                "supported": true,
                "engine": data.get("engine").cloned().unwrap_or(Value::Null),
                "fallbacks": fallbacks,
                "analyzedFiles": files.len(),
                "filesTruncated": data.get("filesTruncated").cloned().unwrap_or(json!(false)),
            });
            return Ok(envelope::<Self, _>(&req.repo, "fluxgit-gateway", out));
        }
        let (paths, total) = req.changed(&ctx, MAX_FALLBACKS).await?;
        let fallbacks: Vec<Value> = paths
            .iter()
            .map(|p| {
                json!({
                    "from": "diff.semantic",
                    "to": "diff.text",
                    "supported": false,
                    "reason": LOCAL_REASON,
                    "path": p,
                    "textDiffArguments": req.text_args(Some(p)),
                })
            })
            .collect();
        let out = json!({
            "supported": false,
            "fallback": "diff.text",
            "reason": LOCAL_REASON,
            "fallbacks": fallbacks,
            "changedFiles": total,
            "fallbacksTruncated": total > paths.len() as u64,
        });
        Ok(envelope::<Self, _>(&req.repo, "local-git", out))
    }
}
