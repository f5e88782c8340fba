//! `git apply` as a read: whether a patch applies, and what it changes per file. The
//! patch goes in on stdin; nothing is written (`--check`, `--numstat`).

use super::{Git, GitError};

/// Whether a patch applies, and git's message when it does not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub ok: bool,
    /// git's stderr, trimmed.
    pub message: String,
}

/// `apply --check`: to the worktree, or with `index` to the worktree and the index
/// together (`--index`).
pub async fn check(git: &Git<'_>, patch: Vec<u8>, index: bool) -> Result<Checked, GitError> {
    let mut argv = vec!["apply", "--check"];
    if index {
        argv.push("--index");
    }
    argv.push("-");
    let done = git
        .cmd(argv)
        .stdin(patch)
        .capture_allowing(64 * 1024, &[0, 1, 128])
        .await?;
    Ok(Checked {
        ok: done.code == Some(0),
        message: done.stderr_text().trim().to_owned(),
    })
}

/// One file of a patch: lines added and deleted, `None` for a binary file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStat {
    pub path: String,
    pub additions: Option<u64>,
    pub deletions: Option<u64>,
}

/// `apply --numstat -z`: each file the patch touches.
pub async fn numstat(git: &Git<'_>, patch: Vec<u8>) -> Result<Vec<FileStat>, GitError> {
    let done = git
        .cmd(["apply", "--numstat", "-z", "-"])
        .stdin(patch)
        .capture_allowing(1024 * 1024, &[0, 1, 128])
        .await?;
    Ok(parse_numstat(&String::from_utf8_lossy(&done.sink.bytes)))
}

/// `<added>\t<deleted>\t<path>` records, NUL-terminated; `-` counts (binary) are `None`.
fn parse_numstat(text: &str) -> Vec<FileStat> {
    text.split('\0')
        .filter(|r| !r.is_empty())
        .filter_map(|r| {
            let mut parts = r.splitn(3, '\t');
            let (a, d, path) = (parts.next()?, parts.next()?, parts.next()?);
            Some(FileStat {
                path: path.to_owned(),
                additions: a.parse().ok(),
                deletions: d.parse().ok(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numstat_records() {
        let got = parse_numstat("1\t2\ta.txt\0-\t-\tbin\0\0broken\0");
        assert_eq!(
            got,
            [
                FileStat {
                    path: "a.txt".into(),
                    additions: Some(1),
                    deletions: Some(2)
                },
                FileStat {
                    path: "bin".into(),
                    additions: None,
                    deletions: None
                },
            ]
        );
    }
}
