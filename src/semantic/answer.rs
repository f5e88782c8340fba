//! The engine's answer, in the seed's `diff.semantic` shape.

use serde::Serialize;

/// One call's answer.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    pub files: Vec<FileAnswer>,
    pub changed_files: u64,
    /// True when the call budget ran out or `files` stops short of every changed file.
    pub files_truncated: bool,
}

/// One file: semantic hunks, or a text fallback with its reason.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileAnswer {
    pub path: String,
    /// The old path of a rename or copy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    /// The grammar that parsed both sides.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<&'static str>,
    pub fallback_to_text: bool,
    pub hunks: Vec<Hunk>,
    /// Definitions that moved or were renamed, matched only between clean trees and only
    /// when the match is unique.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub moves: Vec<Move>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl FileAnswer {
    pub fn fallback(path: String, old_path: Option<String>, reason: String) -> FileAnswer {
        FileAnswer {
            path,
            old_path,
            language: None,
            fallback_to_text: true,
            hunks: Vec::new(),
            moves: Vec::new(),
            reason: Some(reason),
        }
    }
}

/// Consecutive changed lines under one enclosing definition.
#[derive(Debug, Serialize)]
pub struct Hunk {
    /// The enclosing definitions, outermost first (`impl Foo > fn alpha`), from the tree.
    pub header: String,
    pub lines: Vec<Line>,
}

/// One changed line; `content` is always the new side's text, `oldContent` the old's.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Line {
    /// `modified`, `added` or `removed`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changed_tokens: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_changed_tokens: Option<Vec<String>>,
}

/// A definition found whole on both sides at different places or under another name.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Move {
    /// `moved` (same name) or `renamed` (same body, new name).
    pub kind: &'static str,
    pub old_header: String,
    pub new_header: String,
    /// First and last line on each side.
    pub old_lines: [usize; 2],
    pub new_lines: [usize; 2],
    /// Moved only: whether the text changed besides its place.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body_changed: Option<bool>,
}
