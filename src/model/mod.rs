//! Result types and newtypes shared by several modules.

pub mod hidden;
pub mod oid;
pub mod tool_name;
pub mod workspace;

pub use oid::Oid;

mod commit;
mod hint;
mod identity;

pub use commit::HistoryCommit;
pub use hint::Hint;
pub use identity::Identity;

use base64::Engine;
use schemars::JsonSchema;
use serde::Serialize;

/// A path exactly as git stored it: text for display, plus the raw bytes (base64) when
/// they are not valid UTF-8, so nothing is lost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PathText {
    /// The path as UTF-8; invalid bytes are shown as U+FFFD when `pathEncoding` is set.
    pub path: String,
    /// Base64 of the raw path bytes, present only when they are not valid UTF-8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_bytes_b64: Option<String>,
    /// `"non-utf8"` when `path` is a lossy rendering.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_encoding: Option<&'static str>,
}

impl PathText {
    pub fn from_bytes(bytes: &[u8]) -> PathText {
        match std::str::from_utf8(bytes) {
            Ok(text) => PathText {
                path: text.to_owned(),
                path_bytes_b64: None,
                path_encoding: None,
            },
            Err(_) => PathText {
                path: String::from_utf8_lossy(bytes).into_owned(),
                path_bytes_b64: Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
                path_encoding: Some("non-utf8"),
            },
        }
    }
}

/// A name git keeps as bytes (a branch need not be UTF-8): the text for display and, only
/// when the bytes are not valid UTF-8 (the text then shows U+FFFD), their base64, so the
/// name is never lost. Output types put the base64 in a `<field>BytesB64` sibling.
pub fn name_text(bytes: &[u8]) -> (String, Option<String>) {
    match std::str::from_utf8(bytes) {
        Ok(text) => (text.to_owned(), None),
        Err(_) => (
            String::from_utf8_lossy(bytes).into_owned(),
            Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
        ),
    }
}

/// [`name_text`] of an optional name, split into the two output fields.
pub fn opt_name_text(bytes: Option<&[u8]>) -> (Option<String>, Option<String>) {
    match bytes.map(name_text) {
        Some((text, raw)) => (Some(text), raw),
        None => (None, None),
    }
}

/// The source of a rename or copy, in the same form as [`PathText`] beside it: `origPath`
/// is a string, with the raw bytes next to it when they are not valid UTF-8.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrigPathText {
    /// The source path of a rename or copy, as UTF-8; invalid bytes are shown as U+FFFD
    /// when `origPathEncoding` is set.
    pub orig_path: String,
    /// Base64 of the raw source path bytes, present only when they are not valid UTF-8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub orig_path_bytes_b64: Option<String>,
    /// `"non-utf8"` when `origPath` is a lossy rendering.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub orig_path_encoding: Option<&'static str>,
}

impl OrigPathText {
    pub fn from_bytes(bytes: &[u8]) -> OrigPathText {
        let PathText {
            path,
            path_bytes_b64,
            path_encoding,
        } = PathText::from_bytes(bytes);
        OrigPathText {
            orig_path: path,
            orig_path_bytes_b64: path_bytes_b64,
            orig_path_encoding: path_encoding,
        }
    }
}

/// Text that may not be UTF-8 (a commit subject in a legacy encoding, say): lossy text and,
/// only when lossy, the raw bytes.
pub fn lossy(bytes: &[u8]) -> (String, bool) {
    match std::str::from_utf8(bytes) {
        Ok(text) => (text.to_owned(), false),
        Err(_) => (String::from_utf8_lossy(bytes).into_owned(), true),
    }
}

/// `bytes` read in the character encoding git names `encoding` (a commit's `encoding`
/// header), when it is one decoded here: UTF-8 and ISO-8859-1 (Latin-1) under their usual
/// names. `None` for any other encoding, or bytes not valid in it.
pub fn decode_as(encoding: &str, bytes: &[u8]) -> Option<String> {
    let name = encoding.to_ascii_lowercase().replace(['_', ' '], "-");
    match name.as_str() {
        "utf-8" | "utf8" => std::str::from_utf8(bytes).ok().map(str::to_owned),
        "iso-8859-1" | "iso8859-1" | "latin1" | "latin-1" | "l1" | "cp819" | "ibm819" => {
            Some(bytes.iter().map(|b| char::from(*b)).collect())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_is_decoded_by_its_names() {
        assert_eq!(decode_as("ISO-8859-1", b"caf\xe9").as_deref(), Some("café"));
        assert_eq!(decode_as("latin1", b"\xfc").as_deref(), Some("ü"));
        assert_eq!(decode_as("Shift_JIS", b"\x82\xa0"), None);
        assert_eq!(decode_as("UTF-8", b"\xe9"), None);
    }

    #[test]
    fn non_utf8_paths_keep_their_bytes() {
        let p = PathText::from_bytes(b"caf\xe9.txt");
        assert_eq!(p.path, "caf\u{fffd}.txt");
        assert_eq!(p.path_bytes_b64.as_deref(), Some("Y2Fm6S50eHQ="));
        assert_eq!(p.path_encoding, Some("non-utf8"));
        let q = PathText::from_bytes("ü ñ\nx".as_bytes());
        assert_eq!(q.path, "ü ñ\nx");
        assert!(q.path_bytes_b64.is_none());
    }
}
