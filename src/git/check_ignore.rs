//! Which of a few paths git ignores (`check-ignore --no-index`): for paths already known
//! to have no index entry, so git need not load the index to answer.

use super::{Git, GitError};

/// The subset of `paths` that `.gitignore`, `info/exclude` or `core.excludesFile` ignore,
/// as git prints them.
pub async fn ignored(git: &Git<'_>, paths: &[String]) -> Result<Vec<String>, GitError> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let mut input = Vec::new();
    for p in paths {
        input.extend_from_slice(p.as_bytes());
        input.push(0);
    }
    // Paths go in on stdin: one of them starting with `-` is never an option.
    let done = git
        .cmd(["check-ignore", "--no-index", "-z", "--stdin"])
        .stdin(input)
        .capture_allowing(super::DEFAULT_CAP, &[0, 1])
        .await?;
    Ok(done
        .sink
        .bytes
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect())
}

/// [`ignored`] of paths given and answered as bytes (a name need not be UTF-8).
pub async fn ignored_bytes(git: &Git<'_>, paths: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, GitError> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let mut input = Vec::new();
    for p in paths {
        input.extend_from_slice(p);
        input.push(0);
    }
    let done = git
        .cmd(["check-ignore", "--no-index", "-z", "--stdin"])
        .stdin(input)
        .capture_allowing(super::DEFAULT_CAP * 4, &[0, 1])
        .await?;
    Ok(done
        .sink
        .bytes
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(<[u8]>::to_vec)
        .collect())
}
