//! The plain-git side of a comparison: what a call is measured against.

use std::process::{Command, Stdio};

/// The plain-git side of a comparison.
pub enum Direct {
    Git(Vec<String>),
    Replay {
        repo: String,
        onto: String,
        pairs: Vec<(String, String)>,
    },
}

impl Direct {
    pub fn replay(repo: &str, onto: &str, file: &str) -> Result<Direct, String> {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
        let pairs = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let mut words = l.split_whitespace();
                match (words.next(), words.next()) {
                    (Some(c), Some(p)) => Ok((c.to_owned(), p.to_owned())),
                    _ => Err(format!("{file}: expected \"COMMIT PARENT\", got {l:?}")),
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Direct::Replay {
            repo: repo.to_owned(),
            onto: onto.to_owned(),
            pairs,
        })
    }

    /// Runs the git side once; its output is read through a pipe, as the server reads it.
    pub fn run(&self) -> Result<(), String> {
        match self {
            Direct::Git(args) => {
                let out = Command::new("git")
                    .args(args)
                    .stderr(Stdio::null())
                    .output()
                    .map_err(|e| format!("cannot start git: {e}"))?;
                if !out.status.success() {
                    return Err(format!("git {args:?} failed: {}", out.status));
                }
                Ok(())
            }
            Direct::Replay { repo, onto, pairs } => {
                let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
                let objects = Command::new("git")
                    .args([
                        "-C",
                        repo,
                        "rev-parse",
                        "--path-format=absolute",
                        "--git-common-dir",
                    ])
                    .output()
                    .map_err(|e| e.to_string())?;
                let objects = format!(
                    "{}/objects",
                    String::from_utf8_lossy(&objects.stdout).trim()
                );
                let mut tree = onto.clone();
                for (commit, parent) in pairs {
                    let out = Command::new("git")
                        .args(["-C", repo, "merge-tree", "--write-tree", "-z"])
                        .arg(format!("--merge-base={parent}"))
                        .args([&tree, commit])
                        .env("GIT_OBJECT_DIRECTORY", scratch.path())
                        .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", &objects)
                        .stderr(Stdio::null())
                        .output()
                        .map_err(|e| format!("cannot start git: {e}"))?;
                    if out.status.code() != Some(0) {
                        return Err(format!("merge-tree of {commit} did not merge cleanly"));
                    }
                    let end = out
                        .stdout
                        .iter()
                        .position(|b| *b == 0)
                        .unwrap_or(out.stdout.len());
                    tree = String::from_utf8_lossy(&out.stdout[..end]).into_owned();
                }
                Ok(())
            }
        }
    }
}
