//! MCP protocol versions and how each shapes our results.
//!
//! Two eras are served by one process. The legacy era (2024-11-05 … 2025-11-25) opens
//! with `initialize`; the modern era (2026-07-28) is stateless: every request carries its
//! version and client capabilities in `_meta`, and every result says `resultType`.

use serde_json::{Map, Value, json};

use crate::model::tool_name;
use crate::tools::ToolDef;

/// Keys of the modern per-request `_meta` envelope.
pub mod meta {
    pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
}

/// A protocol version we serve, oldest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Version {
    V2024_11_05,
    V2025_03_26,
    V2025_06_18,
    V2025_11_25,
    V2026_07_28,
}

impl Version {
    pub const ALL: [Version; 5] = [
        Version::V2024_11_05,
        Version::V2025_03_26,
        Version::V2025_06_18,
        Version::V2025_11_25,
        Version::V2026_07_28,
    ];
    pub const LATEST_LEGACY: Version = Version::V2025_11_25;

    pub fn parse(text: &str) -> Option<Version> {
        Version::ALL.into_iter().find(|v| v.as_str() == text)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Version::V2024_11_05 => "2024-11-05",
            Version::V2025_03_26 => "2025-03-26",
            Version::V2025_06_18 => "2025-06-18",
            Version::V2025_11_25 => "2025-11-25",
            Version::V2026_07_28 => "2026-07-28",
        }
    }

    pub fn is_modern(self) -> bool {
        self >= Version::V2026_07_28
    }

    /// Tool annotations arrived in 2025-03-26.
    pub fn has_annotations(self) -> bool {
        self >= Version::V2025_03_26
    }

    /// `title`, `outputSchema` and `structuredContent` arrived in 2025-06-18.
    pub fn has_structured_output(self) -> bool {
        self >= Version::V2025_06_18
    }

    /// A progress notification's `message` arrived in 2025-03-26.
    pub fn has_progress_message(self) -> bool {
        self >= Version::V2025_03_26
    }

    pub fn supported() -> Vec<&'static str> {
        Version::ALL.iter().map(|v| v.as_str()).collect()
    }

    /// The versions a request may name in its `_meta`: the modern ones only, since a
    /// legacy version is reached through `initialize`.
    pub fn supported_in_meta() -> Vec<&'static str> {
        Version::ALL
            .iter()
            .filter(|v| v.is_modern())
            .map(|v| v.as_str())
            .collect()
    }
}

/// How long a client may cache `server/discover` and `tools/list`: the tool set only
/// changes with start-up flags.
pub const TTL_MS: u64 = 300_000;

pub fn server_info() -> Value {
    json!({ "name": "gitward", "version": env!("CARGO_PKG_VERSION") })
}

pub fn capabilities() -> Value {
    json!({ "tools": { "listChanged": false }, "logging": {} })
}

/// A tool as `tools/list` shows it in `version`.
pub fn tool_descriptor(tool: &ToolDef, version: Version) -> Value {
    let mut obj = Map::new();
    obj.insert("name".into(), tool_name::served(tool.name).into());
    if version.has_structured_output() {
        obj.insert("title".into(), tool.title.into());
    }
    obj.insert(
        "description".into(),
        tool_name::prose(tool.description).into(),
    );
    obj.insert("inputSchema".into(), tool.input_schema().clone());
    if version.has_structured_output() {
        obj.insert("outputSchema".into(), tool.output_schema().clone());
    }
    if version.has_annotations() {
        obj.insert("annotations".into(), tool.annotations.to_json());
    }
    Value::Object(obj)
}

/// A `tools/call` result in `version`.
///
/// A failed call carries its payload `{tool, readOnly, error}` as the compact JSON text
/// only. `structuredContent` must match the tool's `outputSchema`, and the TypeScript SDK
/// (and every client built on it) validates it even when `isError` is set, so an error
/// object there would replace our message with a validation failure. Widening every
/// output schema to admit the error shape instead would make each one a union that hosts
/// turn into types and prompts. Clients read error text from `content` anyway.
pub fn call_result(text: String, structured: Value, is_error: bool, version: Version) -> Value {
    let mut obj = Map::new();
    obj.insert("content".into(), json!([{ "type": "text", "text": text }]));
    if version.has_structured_output() && !is_error {
        obj.insert("structuredContent".into(), structured);
    }
    obj.insert("isError".into(), is_error.into());
    Value::Object(obj)
}

/// Adds what every modern result carries.
/// Whether a request carries the 2026-07-28 envelope.
pub fn has_modern_meta(params: &Map<String, Value>) -> bool {
    params
        .get("_meta")
        .and_then(Value::as_object)
        .is_some_and(|m| m.contains_key(meta::PROTOCOL_VERSION))
}

pub fn modern_result(mut result: Value) -> Value {
    if let Some(obj) = result.as_object_mut() {
        obj.insert("resultType".into(), "complete".into());
        let meta = obj
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(meta::SERVER_INFO.into(), server_info());
        }
    }
    result
}
