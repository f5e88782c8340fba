//! Diff tools: `diff.text` (a bounded unified patch), `diff.semantic` and
//! `diff.semanticFallbacks` (the FluxGit diff engine, or an honest local fallback).

pub mod semantic;
pub mod semantic_data;
pub mod semantic_fallbacks;
mod semantic_request;
pub mod text;
