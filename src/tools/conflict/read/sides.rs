//! One side (base, ours or theirs) of a conflicted file, from the object git stores.

use base64::Engine;
use schemars::JsonSchema;
use serde::Serialize;

use crate::git::Oid;
use crate::parse::cat_file_batch::Object;
use crate::parse::ls_files_unmerged::GITLINK;

/// Bytes of a blob looked at to decide whether it is binary (git's own heuristic).
pub(super) const BINARY_SNIFF: usize = 8000;

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SideContent {
    pub sha: String,
    /// Octal file mode (`100644`, `100755`, `120000` symlink, `160000` submodule).
    pub mode: String,
    /// Full size in bytes; absent for a submodule commit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    pub binary: bool,
    /// True when content was cut at `maxBytesPerSide` (or the overall budget).
    pub truncated: bool,
    /// UTF-8 content; absent when binary or not UTF-8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Base64 of the raw content when it is not UTF-8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_base64: Option<String>,
    /// `"non-utf8"` when the content is given as base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<&'static str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub submodule: bool,
}

pub(super) fn side_content(
    mode: u32,
    oid: &Oid,
    object: Option<&Object>,
    per_side: usize,
) -> SideContent {
    let mut side = SideContent {
        sha: oid.to_string(),
        mode: format!("{mode:06o}"),
        size: None,
        binary: false,
        truncated: false,
        content: None,
        content_base64: None,
        encoding: None,
        submodule: mode == GITLINK,
    };
    let Some(object) = object else {
        return side;
    };
    side.size = Some(object.size);
    let sniff = &object.bytes[..object.bytes.len().min(BINARY_SNIFF)];
    if sniff.contains(&0) {
        side.binary = true;
        return side;
    }
    let mut kept = &object.bytes[..object.bytes.len().min(per_side)];
    side.truncated = (kept.len() as u64) < object.size;
    match std::str::from_utf8(kept) {
        Ok(text) => side.content = Some(text.to_owned()),
        // A cut through the middle of a character: drop the partial character.
        Err(e) if side.truncated && e.error_len().is_none() => {
            kept = &kept[..e.valid_up_to()];
            side.content = Some(String::from_utf8_lossy(kept).into_owned());
        }
        Err(_) => {
            side.content_base64 = Some(base64::engine::general_purpose::STANDARD.encode(kept));
            side.encoding = Some("non-utf8");
        }
    }
    side
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blob(bytes: &[u8], size: u64) -> (Oid, Object) {
        let oid = Oid::parse(&"a".repeat(40)).unwrap();
        let object = Object {
            oid: oid.clone(),
            kind: "blob".into(),
            size,
            bytes: bytes.to_vec(),
        };
        (oid, object)
    }

    #[test]
    fn text_is_cut_at_the_cap_without_a_partial_character() {
        let (oid, object) = blob("héllo".as_bytes(), 6);
        let side = side_content(0o100644, &oid, Some(&object), 2);
        assert_eq!(side.content.as_deref(), Some("h"));
        assert!(side.truncated);
        assert_eq!((side.mode.as_str(), side.size), ("100644", Some(6)));
    }

    #[test]
    fn binary_and_non_utf8_sides() {
        let (oid, object) = blob(b"a\0b", 3);
        let side = side_content(0o100644, &oid, Some(&object), 100);
        assert!(side.binary && side.content.is_none() && side.content_base64.is_none());
        let (oid, object) = blob(b"\xff\xfe", 2);
        let side = side_content(0o100644, &oid, Some(&object), 100);
        assert_eq!(side.content_base64.as_deref(), Some("//4="));
        assert_eq!(side.encoding, Some("non-utf8"));
        assert!(!side.truncated);
    }

    #[test]
    fn a_submodule_side_has_no_content() {
        let (oid, _) = blob(b"", 0);
        let side = side_content(GITLINK, &oid, None, 100);
        assert!(side.submodule);
        assert_eq!((side.mode.as_str(), side.size), ("160000", None));
    }
}
