//! The names tools are served under.
//!
//! A tool's one identity is the seed's dotted name (`repo.brief`): the audit ledger,
//! presence, the agent policy and the docs use it. Several hosts refuse a tool list with
//! a name outside `^[a-zA-Z0-9_-]{1,64}$` (withholding every tool) or rewrite such names,
//! so by default tools are listed under their safe name, the dotted one with each dot an
//! underscore (`repo_brief`, `operation_preview_merge`). `--tool-names seed` lists the
//! dotted names instead. A call by either name reaches the tool, whatever is listed.
//!
//! Whatever names a tool *to the model* (instructions, descriptions, hints, `nextAction`,
//! error texts) names it as listed: a model can only call what it was shown.
//!
//! This module knows names, not tools: the registry checks that every tool it serves
//! has a name of the shape this module renames, and resolves calls by either name.
//!
//! The style is process-wide, set once at start like the process runner's settings:
//! every conversation of one server is served the same list.

use std::borrow::Cow;
use std::sync::OnceLock;

use serde::Serializer;

/// Which names `tools/list` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Style {
    /// Names every host accepts: `repo_brief`.
    #[default]
    Safe,
    /// The seed's dotted names: `repo.brief`.
    Seed,
}

impl Style {
    pub fn parse(text: &str) -> Option<Style> {
        match text.trim() {
            "safe" => Some(Style::Safe),
            "seed" => Some(Style::Seed),
            _ => None,
        }
    }
}

static STYLE: OnceLock<Style> = OnceLock::new();

/// Sets the style of this process; the first setting holds.
pub fn configure(style: Style) {
    let _ = STYLE.set(style);
}

/// The style of this process ([`Style::Safe`] until configured).
pub fn style() -> Style {
    STYLE.get().copied().unwrap_or_default()
}

/// The safe name of a dotted one: every character outside `[A-Za-z0-9_-]` becomes `_`.
pub fn safe_of(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The groups a dotted tool name starts with; prose names a tool by `<group>.<rest>`.
/// (`tools` checks that every tool's name starts with one of them.)
pub const GROUPS: [&str; 11] = [
    "agents",
    "commit",
    "conflict",
    "diff",
    "fleet",
    "flux",
    "operation",
    "repo",
    "safety",
    "submodule",
    "worktree",
];

/// Whether `name` has the shape of a dotted tool name: a group, a dot, a name.
fn is_dotted_tool(name: &str) -> bool {
    name.split_once('.').is_some_and(|(group, rest)| {
        GROUPS.contains(&group)
            && rest.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
            && rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
    })
}

/// The name `tool` (an identity) is served under in `style`.
pub fn served_in(style: Style, tool: &str) -> Cow<'_, str> {
    match style {
        Style::Safe if is_dotted_tool(tool) => Cow::Owned(safe_of(tool)),
        _ => Cow::Borrowed(tool),
    }
}

/// The name `tool` (an identity) is served under in this process.
pub fn served(tool: &str) -> Cow<'_, str> {
    served_in(style(), tool)
}

/// `text` with every tool it names named as served in `style`.
///
/// A name counts where it stands alone: not inside a longer word, a path (`src/diff.text`)
/// or a file name; a sentence's full stop after it is not part of it.
pub fn prose_in(style: Style, text: &str) -> Cow<'_, str> {
    if style == Style::Seed || !text.contains('.') {
        return Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.';
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if !word(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && word(bytes[i]) {
            i += 1;
        }
        let mut end = i;
        while end > start && bytes[end - 1] == b'.' {
            end -= 1;
        }
        let before = start.checked_sub(1).map(|p| bytes[p]);
        let in_path =
            matches!(before, Some(b'/' | b'\\')) || matches!(bytes.get(i), Some(b'/' | b'\\'));
        let candidate = &text[start..end];
        if in_path || !candidate.contains('.') {
            continue;
        }
        if is_dotted_tool(candidate) {
            out.push_str(&text[copied..start]);
            out.push_str(&served_in(style, candidate));
            copied = end;
        }
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// [`prose_in`] in this process's style.
pub fn prose(text: &str) -> Cow<'_, str> {
    prose_in(style(), text)
}

/// Serializes a field that names a tool to call as that tool is served.
pub fn serialize_served<S: Serializer, T: AsRef<str>>(tool: &T, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&served(tool.as_ref()))
}

/// Serializes an optional field that names a tool to call as that tool is served.
pub fn serialize_served_opt<S: Serializer, T: AsRef<str>>(
    tool: &Option<T>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match tool {
        Some(tool) => s.serialize_str(&served(tool.as_ref())),
        None => s.serialize_none(),
    }
}

/// Serializes text written for the model with the tools it names named as served.
pub fn serialize_prose<S: Serializer, T: AsRef<str>>(text: &T, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&prose(text.as_ref()))
}

/// [`serialize_prose`] for optional text.
pub fn serialize_prose_opt<S: Serializer, T: AsRef<str>>(
    text: &Option<T>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match text {
        Some(text) => s.serialize_str(&prose(text.as_ref())),
        None => s.serialize_none(),
    }
}

/// Every string in `value` written for the model, tools named as served (error data).
pub fn prose_value(value: &mut serde_json::Value) {
    if style() == Style::Seed {
        return;
    }
    match value {
        serde_json::Value::String(text) => {
            if let Cow::Owned(new) = prose(text) {
                *text = new;
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(prose_value),
        serde_json::Value::Object(obj) => obj.values_mut().for_each(prose_value),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATTERN_OK: fn(&str) -> bool = |name| {
        (1..=64).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };

    #[test]
    fn safe_names_replace_the_dots() {
        assert_eq!(
            served_in(Style::Safe, "operation.preview.branch-delete"),
            "operation_preview_branch-delete"
        );
        assert_eq!(served_in(Style::Safe, "repo.brief"), "repo_brief");
        assert_eq!(served_in(Style::Seed, "repo.brief"), "repo.brief");
        // The spec tools' names are served as they are.
        assert_eq!(served_in(Style::Safe, "create-proposal"), "create-proposal");
        assert!(PATTERN_OK(&served_in(
            Style::Safe,
            "diff.semanticFallbacks"
        )));
    }

    #[test]
    fn prose_renames_whole_tool_names_only() {
        let safe = |t| prose_in(Style::Safe, t).into_owned();
        assert_eq!(
            safe("Propose it with operation.preview.merge."),
            "Propose it with operation_preview_merge."
        );
        assert_eq!(
            safe("(flux.restorePoints or safety.timeline for this repoPath)"),
            "(flux_restorePoints or safety_timeline for this repoPath)"
        );
        assert_eq!(
            safe("see src/diff.text and diff.text/x"),
            "see src/diff.text and diff.text/x"
        );
        assert_eq!(
            safe("xrepo.status and repos.status"),
            "xrepo.status and repos.status"
        );
        assert_eq!(safe("nothing here."), "nothing here.");
        assert_eq!(prose_in(Style::Seed, "Use repo.brief."), "Use repo.brief.");
    }
}
