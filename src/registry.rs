//! FluxGit's repository registry: `<runDir>/repos/<id>.path`, each file holding the
//! absolute path of one repository FluxGit knows.
//!
//! The one reader of it. The directory is foreign input: only so many entries are looked
//! at, each file is read bounded and without following a link, and a line that is not an
//! absolute path without control characters is skipped.

use std::path::Path;

/// Entries looked at, so a flooded directory cannot stall a call.
const MAX_ENTRIES: usize = 10_000;
/// A path file is one line.
const MAX_FILE: u64 = 4096;

/// One registered repository as FluxGit wrote it (canonical when written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registered {
    pub id: String,
    pub path: String,
}

/// The registered repositories under `run_dir`, in directory order.
pub fn entries(run_dir: &Path) -> Vec<Registered> {
    let Ok(dir) = std::fs::read_dir(run_dir.join("repos")) else {
        return Vec::new();
    };
    dir.take(MAX_ENTRIES)
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name();
            let id = name.to_str()?.strip_suffix(".path")?;
            if id.is_empty() || !entry.file_type().is_ok_and(|t| t.is_file()) {
                return None;
            }
            let bytes = crate::safe_file::read(&entry.path(), MAX_FILE).ok()?;
            let text = String::from_utf8(bytes).ok()?;
            let path = text.trim_end_matches(['\n', '\r']);
            (!path.chars().any(char::is_control) && Path::new(path).is_absolute()).then(|| {
                Registered {
                    id: id.to_owned(),
                    path: path.to_owned(),
                }
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_well_formed_path_files_count() {
        let run = tempfile::tempdir().unwrap();
        let repos = run.path().join("repos");
        std::fs::create_dir(&repos).unwrap();
        std::fs::write(repos.join("a.path"), "/srv/a\n").unwrap();
        std::fs::write(repos.join(".path"), "/srv/no-id\n").unwrap();
        std::fs::write(repos.join("b.path"), "relative/b\n").unwrap();
        std::fs::write(repos.join("c.path"), "/srv/c\n/srv/d\n").unwrap();
        std::fs::write(repos.join("d.txt"), "/srv/d\n").unwrap();
        std::fs::create_dir(repos.join("e.path")).unwrap();
        std::fs::write(repos.join("f.path"), b"/srv/\xff\n").unwrap();
        let found = entries(run.path());
        assert_eq!(
            found,
            vec![Registered {
                id: "a".into(),
                path: "/srv/a".into()
            }]
        );
        assert!(entries(&run.path().join("missing")).is_empty());
    }
}
