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
    const DESCRIPTION: &'static str = "Semantic diff: git's changed lines grouped under the enclosing definition (header like \"impl Foo > fn alpha\"), modified lines with their changed tokens, and whole definitions that moved or were renamed. Served by the FluxGit gateway when it has registered the repository (source fluxgit-gateway), otherwise by the built-in tree-sitter engine (source local-engine). Per file: a file in an unsupported language, binary, too large, over budget or with any parse error carries fallbackToText:true, a specific reason and the textDiffArguments for diff.text. A result is semantic only when data.supported is exactly true; never infer function- or class-level moves from a text patch.";
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
