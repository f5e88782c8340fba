//! `diff.semantic`: a semantic diff from the FluxGit diff engine when it serves the
//! repository, otherwise the local answer that points at `diff.text`.

use super::semantic_data::SemanticData;
use super::semantic_request::{LOCAL_ENGINE, SemanticInput, SemanticOutput, envelope, prepare};
use crate::config::Toolset;
use crate::error::ToolError;
use crate::tools::{Annotations, CallCtx, Tool};

/// `diff.semantic`.
pub struct Semantic;

impl Tool for Semantic {
    type Input = SemanticInput;
    type Output = SemanticOutput<SemanticData>;

    const NAME: &'static str = "diff.semantic";
    const TITLE: &'static str = "Semantic diff";
    const DESCRIPTION: &'static str = "Semantic diff: changed lines under their enclosing definitions, changed tokens, moved or renamed definitions. Only data.supported:true is semantic: never infer moves from a text patch.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: SemanticInput) -> Result<Self::Output, ToolError> {
        let req = prepare(&ctx, input).await?;
        if let Some(data) = req.gateway(&ctx).await {
            return Ok(envelope::<Self, _>(&req.repo, "fluxgit-gateway", data));
        }
        Ok(match req.engine(&ctx).await? {
            Some(data) => envelope::<Self, _>(&req.repo, LOCAL_ENGINE, data),
            None => envelope::<Self, _>(&req.repo, "local-git", req.local()),
        })
    }
}
