//! `diff.semantic`: a semantic diff from the FluxGit diff engine when it serves the
//! repository, otherwise the local answer that points at `diff.text`.

use super::semantic_data::SemanticData;
use super::semantic_request::{SemanticInput, SemanticOutput, envelope, prepare};
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
