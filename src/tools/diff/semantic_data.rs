//! The shapes of `diff.semantic` and `diff.semanticFallbacks` results.
//!
//! The engine's answer is passed on as it came (fields it adds included), so these types
//! do two jobs: they give each tool's `data` a real output schema, and the gateway answer
//! is checked against them before it is passed on, so a result always matches the schema
//! it advertises. Objects stay open: the engine may add fields.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `diff.semantic` `data`. Semantic only when `supported` is exactly true.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SemanticData {
    /// True only when the FluxGit diff engine analysed the change.
    pub supported: bool,
    /// Fallback only: `diff.text`, the tool to call instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// Fallback only: why there is no semantic diff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Fallback only: the exact `diff.text` arguments for the same change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_diff_arguments: Option<TextDiffArguments>,
    /// Engine only: which engine answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// Engine only: one entry per analysed file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<SemanticFile>>,
    /// Engine only: how many files changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_files: Option<u64>,
    /// Engine only: true when `files` does not list every changed file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files_truncated: Option<bool>,
}

/// `diff.text` arguments reproducing a request.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TextDiffArguments {
    pub repo_path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// One file of the engine's answer.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SemanticFile {
    pub path: String,
    /// True when the engine could not parse this file; `reason` and `textDiffArguments`
    /// then say how to read it as text.
    pub fallback_to_text: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hunks: Option<Vec<SemanticHunk>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_diff_arguments: Option<TextDiffArguments>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SemanticHunk {
    /// The enclosing construct (a function, a class).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<Vec<SemanticLine>>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SemanticLine {
    /// `added`, `removed`, `modified`, `context`, … as the engine says.
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_line: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_line: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_tokens: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_changed_tokens: Option<Vec<String>>,
}

/// `diff.semanticFallbacks` `data`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FallbacksData {
    /// True when the engine answered; its `fallbacks` are then its real per-file records.
    pub supported: bool,
    /// Engine only (null when it did not name itself).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<Option<String>>,
    /// Local only: `diff.text`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// Local only: why every path falls back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub fallbacks: Vec<FallbackRecord>,
    /// Engine only: how many files the engine analysed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub analyzed_files: Option<u64>,
    /// Engine only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_truncated: Option<bool>,
    /// Local only: how many paths changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changed_files: Option<u64>,
    /// Local only: true when `fallbacks` does not list every changed path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallbacks_truncated: Option<bool>,
}

/// A path read as text instead of semantically.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FallbackRecord {
    /// Local only: `diff.semantic`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Local only: `diff.text`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// Local only: false.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub supported: Option<bool>,
    pub path: String,
    pub reason: String,
    pub text_diff_arguments: TextDiffArguments,
}
