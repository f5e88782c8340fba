//! A project's existing specs, read from `openspec/specs/<id>/spec.md`: what
//! `openspec list --specs` would tell the agent, plus each spec's title, so a delta can be
//! researched without running the CLI.

use std::path::Path;

use serde::Serialize;

/// Most specs listed per project; the state stays small even in a huge spec tree.
const MAX_SPECS: usize = 500;
/// Longest `spec.md` read.
const SPEC_CAP: u64 = 1024 * 1024;

/// One main spec.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SpecSummary {
    /// The capability id (the folder name), as `openspec show <id>` takes it.
    pub id: String,
    /// The first `# ` heading, when there is one.
    pub title: Option<String>,
    /// `### Requirement:` headings.
    pub requirement_count: usize,
    /// The spec file, absolute.
    pub path: String,
}

/// The specs under `<dir>/openspec/specs`, sorted by id. Unreadable entries (a symlink, a
/// file too large, not UTF-8) are left out rather than followed.
pub fn specs(dir: &Path) -> Vec<SpecSummary> {
    let root = dir.join("openspec/specs");
    let Ok(entries) = std::fs::read_dir(&root) else {
        return Vec::new();
    };
    let mut ids: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|id| !id.starts_with('.'))
        .collect();
    ids.sort();
    ids.truncate(MAX_SPECS);
    ids.into_iter()
        .filter_map(|id| {
            let path = root.join(&id).join("spec.md");
            let bytes = crate::safe_file::read(&path, SPEC_CAP).ok()?;
            let text = String::from_utf8(bytes).ok()?;
            let (title, requirement_count) = summarize(&text);
            Some(SpecSummary {
                id,
                title,
                requirement_count,
                path: path.display().to_string(),
            })
        })
        .collect()
}

/// The title and the number of requirements of one spec's markdown.
fn summarize(text: &str) -> (Option<String>, usize) {
    let title = text
        .lines()
        .find_map(|l| l.strip_prefix("# "))
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty());
    let count = text
        .lines()
        .filter(|l| l.trim_start().starts_with("### Requirement:"))
        .count();
    (title, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_and_requirements_are_counted() {
        let text = "# greeting Specification\n\n## Purpose\nx\n\n## Requirements\n### Requirement: Hello\nThe script SHALL greet.\n#### Scenario: run\n### Requirement: Bye\n";
        assert_eq!(summarize(text), (Some("greeting Specification".into()), 2));
        assert_eq!(summarize("no heading\n"), (None, 0));
    }

    #[test]
    fn specs_are_listed_by_id_and_symlinks_are_not_followed() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("openspec/specs");
        for (id, body) in [
            ("zeta", "# Zeta\n### Requirement: A\n"),
            ("alpha", "# Alpha\n"),
        ] {
            std::fs::create_dir_all(root.join(id)).expect("dir");
            std::fs::write(root.join(id).join("spec.md"), body).expect("spec");
        }
        std::fs::create_dir_all(root.join("linked")).expect("dir");
        std::os::unix::fs::symlink(root.join("zeta/spec.md"), root.join("linked/spec.md"))
            .expect("symlink");
        let found = specs(dir.path());
        let ids: Vec<_> = found.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["alpha", "zeta"]);
        assert_eq!(found[1].requirement_count, 1);
        assert_eq!(found[0].title.as_deref(), Some("Alpha"));
        assert!(specs(&dir.path().join("none")).is_empty());
    }
}
