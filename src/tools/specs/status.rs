//! A change's OpenSpec status, with a repair hint when its metadata is rejected.

use std::path::Path;

use serde_json::{Value, json};

use crate::process::CancellationToken;
use crate::specs::{SpecError, openspec};

/// `openspec status` for one change in a target directory.
pub(super) async fn status_of(
    dir: &Path,
    name: &str,
    cancel: &CancellationToken,
) -> Result<Value, SpecError> {
    openspec::status(dir, name, cancel)
        .await
        .map_err(|e| metadata_hint(dir, name, e))
}

/// OpenSpec 1.13.2 rejects a `created` that is not `YYYY-MM-DD`; say which line to fix.
pub(super) fn metadata_hint(dir: &Path, name: &str, err: openspec::CliError) -> SpecError {
    let created_bad = err.message.contains("created must be YYYY-MM-DD");
    let mut out = SpecError::from_cli(err);
    if created_bad {
        let path = dir
            .join("openspec/changes")
            .join(name)
            .join(".openspec.yaml");
        let text = crate::safe_file::read(&path, 1024 * 1024)
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned());
        let line = text.as_deref().and_then(created_line);
        out.code = Some("OPENSPEC_METADATA_CREATED_FORMAT".into());
        out.details = Some(Box::new(json!({
            "path": path.display().to_string(),
            "line": line.as_ref().map(|l| l.0),
            "current": line.as_ref().map(|l| l.1.clone()),
            "repair": "replace that line with `created: YYYY-MM-DD` (the date part only); keep the full time as a separate top-level `createdAt:` line",
        })));
    }
    out
}

/// The 1-based number and text of the top-level `created:` line.
fn created_line(text: &str) -> Option<(usize, String)> {
    text.lines()
        .enumerate()
        .find(|(_, l)| l.starts_with("created:"))
        .map(|(i, l)| (i + 1, l.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_created_line_is_found_at_top_level_only() {
        let text = "schema: spec-driven\n  created: nested\ncreated: 2024-01-02T10:00:00Z\n";
        assert_eq!(
            created_line(text),
            Some((3, "created: 2024-01-02T10:00:00Z".to_owned()))
        );
        assert_eq!(created_line("schema: spec-driven\n"), None);
    }
}
