//! Small facts about one worktree's index and HEAD, each one git invocation: whether a
//! path is tracked, what is staged, the current branch, whether a branch exists, and
//! which paths have changed.

use super::{Git, GitError};

/// Output kept from one of these listings; a worktree's path list, not file contents.
const CAP: usize = 4 * 1024 * 1024;

impl Git<'_> {
    /// Whether the index holds `path` or anything under it (`ls-files -z -- <path>`).
    pub async fn is_tracked(&self, path: &str) -> Result<bool, GitError> {
        let out = self
            .cmd(["ls-files", "-z", "--", path])
            .capture(CAP)
            .await?;
        Ok(!out.sink.bytes.is_empty())
    }

    /// Paths staged in the index against HEAD (everything on an unborn branch); renames
    /// are not paired, so both sides of one are listed.
    pub async fn staged_paths(&self) -> Result<Vec<String>, GitError> {
        let out = self
            .cmd(["diff", "--cached", "--name-only", "-z", "--no-renames"])
            .capture(CAP)
            .await?;
        Ok(nul_records(&out.sink.bytes))
    }

    /// The branch HEAD names (`branch --show-current`), `None` when detached.
    pub async fn current_branch(&self) -> Result<Option<String>, GitError> {
        let out = self.cmd(["branch", "--show-current"]).capture(4096).await?;
        let name = String::from_utf8_lossy(&out.sink.bytes).trim().to_owned();
        Ok((!name.is_empty()).then_some(name))
    }

    /// Whether `refs/heads/<branch>` exists.
    pub async fn branch_exists(&self, branch: &str) -> Result<bool, GitError> {
        let full = format!("refs/heads/{branch}");
        let out = self
            .cmd([
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                &full,
            ])
            .capture_allowing(4096, &[0, 1])
            .await?;
        Ok(out.code == Some(0))
    }

    /// Changed paths (untracked ones each listed, a rename's source too), limited to
    /// `paths` when given.
    pub async fn changed_paths(&self, paths: &[&str]) -> Result<Vec<String>, GitError> {
        let mut args = vec!["status", "--porcelain", "-z", "--untracked-files=all", "--"];
        args.extend_from_slice(paths);
        let out = self.cmd(args).capture(CAP).await?;
        Ok(porcelain_paths(&out.sink.bytes))
    }
}

fn nul_records(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|b| *b == 0)
        .filter(|r| !r.is_empty())
        .map(|r| String::from_utf8_lossy(r).into_owned())
        .collect()
}

/// The paths of `git status --porcelain -z` output. Each record is `XY path`; a rename or
/// copy (`R`/`C` in either column) is followed by one more record holding its source path
/// with no status in front, which is a changed path too.
fn porcelain_paths(bytes: &[u8]) -> Vec<String> {
    let mut paths = Vec::new();
    let mut records = bytes.split(|b| *b == 0).filter(|r| !r.is_empty());
    while let Some(record) = records.next() {
        let (Some(status), Some(path)) = (record.get(..2), record.get(3..)) else {
            continue;
        };
        paths.push(String::from_utf8_lossy(path).into_owned());
        if status.iter().any(|c| matches!(c, b'R' | b'C')) {
            if let Some(source) = records.next() {
                paths.push(String::from_utf8_lossy(source).into_owned());
            }
        }
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porcelain_paths_keep_a_rename_source_whole() {
        let out = b"R  new name.txt\0old name.txt\0 M a.txt\0?? dir/b.txt\0";
        assert_eq!(
            porcelain_paths(out),
            ["new name.txt", "old name.txt", "a.txt", "dir/b.txt"]
        );
    }

    #[test]
    fn empty_records_are_skipped() {
        assert_eq!(nul_records(b"a\0\0b c\0"), ["a", "b c"]);
        assert!(nul_records(b"").is_empty());
    }
}
