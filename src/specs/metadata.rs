//! Lifecycle writes to a change's `.openspec.yaml`.
//!
//! Only the value of the one top-level `status` key is ever replaced; every other byte of
//! the file (keys, order, comments, quoting, line endings) is kept, except that a quoted
//! top-level ISO date or timestamp becomes plain (the unified representation, applied
//! only when a lifecycle write happens anyway; files are never rewritten in bulk). A file whose status is
//! missing, repeated or written in a form a line edit cannot replace safely (a block
//! scalar, an anchor, a flow mapping, several documents) is refused with a reason instead
//! of being rewritten from scratch. Timestamps we add are plain YAML scalars, never quoted.
//! Every write is atomic: a temporary file in the same directory, fsync, rename.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The lifecycle values the server and the agent write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Creating,
    Draft,
    Applying,
    Archived,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Creating => "creating",
            Status::Draft => "draft",
            Status::Applying => "applying",
            Status::Archived => "archived",
        }
    }
}

/// Why a metadata file was not written.
#[derive(Debug, thiserror::Error)]
pub enum MetaError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} has no top-level `status` key")]
    Missing { path: PathBuf },
    #[error("{path} has a top-level `status` key on lines {lines:?}; exactly one is required")]
    Duplicated { path: PathBuf, lines: Vec<usize> },
    #[error("{path}: {why}")]
    Ambiguous { path: PathBuf, why: String },
}

impl MetaError {
    /// A stable code for the state's error entries.
    pub fn code(&self) -> &'static str {
        match self {
            MetaError::Read { .. } => "METADATA_UNREADABLE",
            MetaError::Write { .. } => "METADATA_WRITE_FAILED",
            MetaError::Missing { .. } => "METADATA_STATUS_MISSING",
            MetaError::Duplicated { .. } => "METADATA_STATUS_DUPLICATED",
            MetaError::Ambiguous { .. } => "METADATA_STATUS_AMBIGUOUS",
        }
    }
}

/// Where the top-level status sits in a file, or why it cannot be edited.
#[derive(Debug, PartialEq, Eq)]
enum Found {
    None,
    /// Byte range of the value within the text, and its current value.
    One {
        start: usize,
        end: usize,
        value: String,
    },
}

fn is_status_key(line: &str) -> Option<usize> {
    ["status:", "\"status\":", "'status':"]
        .iter()
        .find(|k| line.starts_with(*k))
        .map(|k| k.len())
}

fn locate(path: &Path, text: &str) -> Result<Found, MetaError> {
    let ambiguous = |why: String| MetaError::Ambiguous {
        path: path.to_owned(),
        why,
    };
    let mut hits = Vec::new();
    let mut offset = 0;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let line = raw.trim_end_matches(['\n', '\r']);
        if i > 0 && (line == "---" || line.starts_with("--- ")) {
            return Err(ambiguous(format!(
                "line {} starts a second YAML document",
                i + 1
            )));
        }
        if i == 0 && line.trim_start().starts_with(['{', '[']) {
            return Err(ambiguous("the document is a flow collection".into()));
        }
        if let Some(key_len) = is_status_key(line) {
            hits.push((i + 1, offset, offset + line.len(), key_len));
        }
        offset += raw.len();
    }
    match hits.as_slice() {
        [] => Ok(Found::None),
        [(line_no, start, end, key_len)] => {
            let line = &text[*start..*end];
            let after_key = &line[*key_len..];
            let value_part = after_key.trim_start();
            let value_start = start + key_len + (after_key.len() - value_part.len());
            // A trailing comment stays where it is.
            let value = match value_part.find(" #") {
                Some(at) => &value_part[..at],
                None => value_part,
            }
            .trim_end();
            if value.is_empty() || value.starts_with('#') {
                return Err(ambiguous(format!(
                    "line {line_no}: `status` has no inline value (a nested or block value cannot be replaced safely)"
                )));
            }
            if value.starts_with(['|', '>', '&', '*', '!', '{', '[']) {
                return Err(ambiguous(format!(
                    "line {line_no}: `status` is written as `{value}`, not a plain value"
                )));
            }
            Ok(Found::One {
                start: value_start,
                end: value_start + value.len(),
                value: unquote(value).to_owned(),
            })
        }
        many => Err(MetaError::Duplicated {
            path: path.to_owned(),
            lines: many.iter().map(|h| h.0).collect(),
        }),
    }
}

fn unquote(value: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = value.strip_prefix(q).and_then(|v| v.strip_suffix(q)) {
            return inner;
        }
    }
    value
}

/// Longest `.openspec.yaml` read.
const META_CAP: u64 = 1024 * 1024;

/// The file's text: a regular file, not a symlink (its target would be read, and edited),
/// at most [`META_CAP`] bytes.
fn read(path: &Path) -> Result<String, MetaError> {
    use crate::safe_file::Refusal;
    use std::io::{Error, ErrorKind};
    let fail = |source| MetaError::Read {
        path: path.to_owned(),
        source,
    };
    let bytes = crate::safe_file::read(path, META_CAP).map_err(|why| {
        fail(match why {
            Refusal::Missing => Error::new(ErrorKind::NotFound, "no such file"),
            other => Error::other(other.to_string()),
        })
    })?;
    String::from_utf8(bytes).map_err(|_| fail(Error::new(ErrorKind::InvalidData, "not UTF-8")))
}

/// The current top-level status, if exactly one plain value is present.
pub fn read_status(path: &Path) -> Result<Option<String>, MetaError> {
    let text = read(path)?;
    match locate(path, &text)? {
        Found::None => Ok(None),
        Found::One { value, .. } => Ok(Some(value)),
    }
}

/// Replaces the value of the one top-level `status`. Returns false when it already had
/// that value (nothing is written then).
pub fn set_status(path: &Path, status: Status) -> Result<bool, MetaError> {
    let text = read(path)?;
    match locate(path, &text)? {
        Found::None => Err(MetaError::Missing {
            path: path.to_owned(),
        }),
        Found::One { value, .. } if value == status.as_str() => Ok(false),
        Found::One { start, end, .. } => {
            let mut out = String::with_capacity(text.len() + 8);
            out.push_str(&plain_timestamps(&text[..start]));
            out.push_str(status.as_str());
            out.push_str(&plain_timestamps(&text[end..]));
            write_atomic(path, out.as_bytes())?;
            Ok(true)
        }
    }
}

/// The unified representation, applied when a lifecycle write touches the file anyway:
/// a top-level ISO date or timestamp written in quotes becomes a plain scalar. Every
/// other byte stays.
fn plain_timestamps(text: &str) -> String {
    text.split_inclusive('\n')
        .map(|raw| {
            let line = raw.trim_end_matches(['\n', '\r']);
            let Some((key, rest)) = line.split_once(": ") else {
                return raw.to_owned();
            };
            let top = !key.is_empty()
                && !key.starts_with([' ', '\t', '#', '-'])
                && !key.contains([' ', '"', '\'']);
            let value = rest.trim();
            let inner = ['"', '\'']
                .iter()
                .find_map(|q| value.strip_prefix(*q).and_then(|v| v.strip_suffix(*q)));
            match inner {
                Some(iso) if top && is_iso(iso) => {
                    format!("{key}: {iso}{}", &raw[line.len()..])
                }
                _ => raw.to_owned(),
            }
        })
        .collect()
}

/// `YYYY-MM-DD`, optionally followed by `T` and a time of ASCII digits, `:`, `.`, `+`,
/// `-` and `Z`: nothing a plain scalar would read differently.
fn is_iso(v: &str) -> bool {
    let b = v.as_bytes();
    let date = b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b'-'
        && b[8..10].iter().all(u8::is_ascii_digit);
    let time = match b.get(10) {
        None => true,
        Some(b'T') => {
            b.len() > 11
                && b[11..]
                    .iter()
                    .all(|c| c.is_ascii_digit() || b":.+-Z".contains(c))
        }
        Some(_) => false,
    };
    date && time
}

/// Marks a freshly created change: appends `createdAt: <iso>` unless a top-level
/// `createdAt` exists, and sets `status: creating` (appending it when absent).
pub fn mark_created(path: &Path, created_at: &str) -> Result<(), MetaError> {
    let text = read(path)?;
    let found = locate(path, &text)?;
    let mut out = text.clone();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    if !text.lines().any(|l| l.starts_with("createdAt:")) {
        out.push_str(&format!("createdAt: {created_at}\n"));
    }
    match found {
        Found::None => out.push_str("status: creating\n"),
        Found::One { start, end, .. } => {
            let shifted = out[..start].to_owned() + Status::Creating.as_str() + &out[end..];
            out = shifted;
        }
    }
    if out != text {
        write_atomic(path, out.as_bytes())?;
    }
    Ok(())
}

/// Writes `bytes` to `path` through a temporary sibling, fsync and rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), MetaError> {
    let fail = |source| MetaError::Write {
        path: path.to_owned(),
        source,
    };
    let dir = path
        .parent()
        .ok_or_else(|| fail(std::io::Error::other("no parent directory")))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", uuid::Uuid::new_v4().simple()));
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        if let Ok(meta) = std::fs::metadata(path) {
            file.set_permissions(meta.permissions())?;
        }
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_file(content: &str, f: impl FnOnce(&Path)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".openspec.yaml");
        std::fs::write(&path, content).unwrap();
        f(&path);
    }

    #[test]
    fn replaces_only_the_status_value() {
        let original = "# kept comment\nschema: spec-driven\ncreated: 2026-11-29\nstatus: creating # why\ngoal: \"quoted\"\ncreatedAt: 2026-11-29T20:00:00.123Z\nnested:\n  status: other\r\n";
        with_file(original, |path| {
            assert!(set_status(path, Status::Draft).unwrap());
            let after = std::fs::read_to_string(path).unwrap();
            assert_eq!(after, original.replace("status: creating", "status: draft"));
            assert!(!set_status(path, Status::Draft).unwrap(), "idempotent");
            assert_eq!(read_status(path).unwrap().as_deref(), Some("draft"));
        });
    }

    #[test]
    fn a_status_write_unquotes_timestamps() {
        let original = "schema: spec-driven\ncreated: '2026-11-29'\ncreatedAt: \"2026-11-29T20:00:00.123Z\" # when\ngoal: \"2026-11-29 launch\"\nnested:\n  at: \"2026-11-29T20:00:00Z\"\nstatus: draft\r\n";
        with_file(original, |path| {
            assert!(set_status(path, Status::Applying).unwrap());
            assert_eq!(
                std::fs::read_to_string(path).unwrap(),
                "schema: spec-driven\ncreated: 2026-11-29\ncreatedAt: \"2026-11-29T20:00:00.123Z\" # when\ngoal: \"2026-11-29 launch\"\nnested:\n  at: \"2026-11-29T20:00:00Z\"\nstatus: applying\r\n"
            );
        });
        with_file(
            "createdAt: \"2026-11-29T20:00:00.123Z\"\nstatus: draft\n",
            |path| {
                set_status(path, Status::Applying).unwrap();
                assert_eq!(
                    std::fs::read_to_string(path).unwrap(),
                    "createdAt: 2026-11-29T20:00:00.123Z\nstatus: applying\n"
                );
            },
        );
        assert!(is_iso("2026-11-29T20:00:00+01:00") && !is_iso("2026-11-29 x"));
    }

    #[test]
    fn quoted_values_and_crlf_are_kept_in_form() {
        with_file("schema: spec-driven\r\nstatus: 'applying'\r\n", |path| {
            assert!(set_status(path, Status::Archived).unwrap());
            assert_eq!(
                std::fs::read_to_string(path).unwrap(),
                "schema: spec-driven\r\nstatus: archived\r\n"
            );
        });
    }

    #[test]
    fn refuses_missing_duplicated_and_ambiguous() {
        let cases = [
            ("schema: spec-driven\n", "METADATA_STATUS_MISSING"),
            (
                "status: draft\nstatus: applying\n",
                "METADATA_STATUS_DUPLICATED",
            ),
            ("status: |\n  draft\n", "METADATA_STATUS_AMBIGUOUS"),
            ("status:\n  value: draft\n", "METADATA_STATUS_AMBIGUOUS"),
            ("status: &a draft\n", "METADATA_STATUS_AMBIGUOUS"),
            (
                "status: draft\n---\nstatus: x\n",
                "METADATA_STATUS_AMBIGUOUS",
            ),
            ("{status: draft}\n", "METADATA_STATUS_AMBIGUOUS"),
        ];
        for (content, code) in cases {
            with_file(content, |path| {
                let err = set_status(path, Status::Applying).unwrap_err();
                assert_eq!(err.code(), code, "{content:?}: {err}");
                assert_eq!(std::fs::read_to_string(path).unwrap(), content, "untouched");
            });
        }
    }

    #[test]
    fn created_marks_are_plain_and_appended() {
        with_file("schema: spec-driven\ncreated: 2026-11-29", |path| {
            mark_created(path, "2026-11-29T21:00:00.000Z").unwrap();
            assert_eq!(
                std::fs::read_to_string(path).unwrap(),
                "schema: spec-driven\ncreated: 2026-11-29\ncreatedAt: 2026-11-29T21:00:00.000Z\nstatus: creating\n"
            );
            mark_created(path, "2026-11-30T00:00:00.000Z").unwrap();
            assert!(
                std::fs::read_to_string(path)
                    .unwrap()
                    .contains("createdAt: 2026-11-29T21:00:00.000Z"),
                "an existing createdAt is kept"
            );
        });
    }

    #[test]
    fn unreadable_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = set_status(&dir.path().join("missing.yaml"), Status::Draft).unwrap_err();
        assert_eq!(err.code(), "METADATA_UNREADABLE");
    }
}
