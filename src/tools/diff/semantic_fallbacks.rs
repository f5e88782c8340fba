//! `diff.semanticFallbacks`: which changed paths fall back from semantic to text diff.

use serde_json::{Value, json};

use super::semantic_data::FallbacksData;
use super::semantic_request::{
    LOCAL_ENGINE, LOCAL_REASON, SemanticInput, SemanticOutput, envelope, prepare,
};
use crate::config::Toolset;
use crate::error::ToolError;
use crate::model::tool_name;
use crate::tools::{Annotations, CallCtx, Tool};

/// Local fallback records listed at most.
const MAX_FALLBACKS: usize = 200;

/// `diff.semanticFallbacks`.
pub struct Fallbacks;

impl Tool for Fallbacks {
    type Input = SemanticInput;
    type Output = SemanticOutput<FallbacksData>;

    const NAME: &'static str = "diff.semanticFallbacks";
    const TITLE: &'static str = "Semantic diff fallbacks";
    const DESCRIPTION: &'static str = "Which changed paths fall back from semantic to text diff, each with its specific reason and the arguments for diff.text.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: SemanticInput) -> Result<Self::Output, ToolError> {
        let req = prepare(&ctx, input).await?;
        let (source, answer) = match req.gateway(&ctx).await {
            Some(data) => ("fluxgit-gateway", Some(data)),
            None => (LOCAL_ENGINE, req.engine(&ctx).await?),
        };
        if let Some(data) = answer {
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
            return Ok(envelope::<Self, _>(&req.repo, source, out));
        }
        let (paths, total) = req.changed(&ctx, MAX_FALLBACKS).await?;
        let fallbacks: Vec<Value> = paths
            .iter()
            .map(|p| {
                json!({
                    "from": tool_name::served("diff.semantic"),
                    "to": tool_name::served("diff.text"),
                    "supported": false,
                    "reason": LOCAL_REASON,
                    "path": p,
                    "textDiffArguments": req.text_args(Some(p)),
                })
            })
            .collect();
        let out = json!({
            "supported": false,
            "fallback": tool_name::served("diff.text"),
            "reason": LOCAL_REASON,
            "fallbacks": fallbacks,
            "changedFiles": total,
            "fallbacksTruncated": total > paths.len() as u64,
        });
        Ok(envelope::<Self, _>(&req.repo, "local-git", out))
    }
}
