//! What changed in a repository since a restore point's write, as a person reads it: the
//! refs that moved (HEAD included) and the files whose state changed, from the
//! restore's own comparison of the after-state with the repository now.

use serde::Serialize;
use serde_json::Value;

use crate::operation::Moved;

/// The changes a restore would also undo.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangedSince {
    pub refs: Vec<RefMove>,
    pub files: Vec<FileChange>,
    /// The staging area differs from what the write left.
    pub index: bool,
}

/// A ref (or HEAD) that moved: where the write left it and where it is now (null when
/// absent).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RefMove {
    #[serde(rename = "ref")]
    pub name: String,
    pub before: Value,
    pub now: Value,
}

/// A file whose state changed since the write.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileChange {
    pub path: String,
    /// `new, untracked`, `modified`, `deleted`, `staged`, `changed again`, `back as
    /// committed`, …
    pub change: String,
}

/// Sorts the restore's comparison into refs, files and the index.
pub fn changed_since(moved: &[Moved]) -> ChangedSince {
    let mut out = ChangedSince::default();
    for m in moved {
        let (kind, rest) = m.what.split_once(' ').unwrap_or((m.what.as_str(), ""));
        match kind {
            "head" if rest == "symbolic" => out.refs.push(RefMove {
                name: "HEAD (checked-out branch)".into(),
                before: m.expected.clone(),
                now: m.found.clone(),
            }),
            "head" => out.refs.push(RefMove {
                name: "HEAD".into(),
                before: m.expected.clone(),
                now: m.found.clone(),
            }),
            "refs" => out.refs.push(RefMove {
                name: rest.to_owned(),
                before: m.expected.clone(),
                now: m.found.clone(),
            }),
            "changes" => out.files.push(FileChange {
                path: rest.to_owned(),
                change: file_change(&m.expected, &m.found),
            }),
            "index" => out.index = true,
            _ => out.refs.push(RefMove {
                name: m.what.clone(),
                before: m.expected.clone(),
                now: m.found.clone(),
            }),
        }
    }
    out
}

/// A file's change from its state after the write (`expected`) to now (`found`); each is
/// null (no change against HEAD) or `{status: XY, content}`.
fn file_change(expected: &Value, found: &Value) -> String {
    let status = |v: &Value| v["status"].as_str().map(str::to_owned);
    match (status(expected), status(found)) {
        (None, Some(now)) => status_words(&now).into(),
        (Some(_), None) => "back as committed".into(),
        (Some(before), Some(now)) if before == now => "changed again".into(),
        (Some(_), Some(now)) => format!("now {}", status_words(&now)),
        (None, None) => "changed".into(),
    }
}

/// Porcelain v2 `XY` in words.
fn status_words(xy: &str) -> &'static str {
    let mut chars = xy.chars();
    let (x, y) = (chars.next().unwrap_or('.'), chars.next().unwrap_or('.'));
    match (x, y) {
        ('?', _) => "new, untracked",
        ('u', _) | (_, 'u') => "in conflict",
        ('A', _) => "new, staged",
        ('D', _) | (_, 'D') => "deleted",
        ('.', _) => "modified",
        (_, '.') => "staged",
        _ => "modified and staged",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn moved(what: &str, expected: Value, found: Value) -> Moved {
        Moved {
            what: what.into(),
            expected,
            found,
        }
    }

    #[test]
    fn moves_are_sorted_into_refs_files_and_the_index() {
        let changed = changed_since(&[
            moved("head oid", json!("a"), json!("b")),
            moved(
                "head symbolic",
                json!("refs/heads/main"),
                json!("refs/heads/x"),
            ),
            moved("refs refs/heads/main", json!("a"), json!("b")),
            moved("index", json!("sha256:1"), json!("sha256:2")),
            moved("changes notes.txt", json!(null), json!({"status": "??"})),
            moved("changes a.txt", json!({"status": ".M"}), json!(null)),
            moved(
                "changes b.txt",
                json!({"status": ".M"}),
                json!({"status": ".M"}),
            ),
            moved("changes c.txt", json!(null), json!({"status": "M."})),
            moved(
                "changes d.txt",
                json!({"status": ".M"}),
                json!({"status": ".D"}),
            ),
        ]);
        let refs: Vec<&str> = changed.refs.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            refs,
            ["HEAD", "HEAD (checked-out branch)", "refs/heads/main"]
        );
        assert!(changed.index);
        let files: Vec<(&str, &str)> = changed
            .files
            .iter()
            .map(|f| (f.path.as_str(), f.change.as_str()))
            .collect();
        assert_eq!(
            files,
            [
                ("notes.txt", "new, untracked"),
                ("a.txt", "back as committed"),
                ("b.txt", "changed again"),
                ("c.txt", "staged"),
                ("d.txt", "now deleted"),
            ]
        );
        assert_eq!(
            serde_json::to_value(&changed.refs[0]).unwrap(),
            json!({"ref": "HEAD", "before": "a", "now": "b"})
        );
    }
}
