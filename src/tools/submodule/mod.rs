//! Submodule tools: `submodule.status`.

pub mod status;
