//! Where HEAD is: the branch it names and that branch's upstream. The commit it points
//! at is [`super::Git::head`].

use super::{Git, GitError, Oid};

/// The ref HEAD names (`refs/heads/main`), as bytes since a branch name need not be
/// UTF-8; `None` when HEAD is detached.
pub async fn symbolic(git: &Git<'_>) -> Result<Option<Vec<u8>>, GitError> {
    let out = git
        .cmd(["symbolic-ref", "--quiet", "HEAD"])
        .capture_allowing(4096, &[0, 1, 128])
        .await?;
    Ok(out
        .success()
        .then(|| out.sink.bytes.trim_ascii_end().to_vec())
        .filter(|r| !r.is_empty()))
}

/// [`symbolic`] as text, invalid UTF-8 shown lossily.
pub async fn symbolic_text(git: &Git<'_>) -> Result<Option<String>, GitError> {
    Ok(symbolic(git)
        .await?
        .map(|r| String::from_utf8_lossy(&r).into_owned()))
}

/// The current branch's upstream: its full ref name and the commit it points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    pub ref_name: String,
    pub oid: Option<Oid>,
}

/// `None` when HEAD is detached or its branch has no (existing) upstream.
pub async fn upstream(git: &Git<'_>) -> Result<Option<Upstream>, GitError> {
    let out = git
        .cmd([
            "rev-parse",
            "@{upstream}",
            "--symbolic-full-name",
            "@{upstream}",
        ])
        .capture_allowing(4096, &[0, 128])
        .await?;
    if !out.success() {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&out.sink.bytes);
    let mut lines = text.lines();
    Ok(match (lines.next(), lines.next()) {
        (Some(oid), Some(name)) => Some(Upstream {
            ref_name: name.to_owned(),
            oid: Oid::parse(oid),
        }),
        _ => None,
    })
}

/// The full ref name git reads `name` as (`main` → `refs/heads/main`), `None` when it
/// names no ref (an object id, a name nothing matches). `name` is a validated revision
/// root, never an option.
pub async fn full_ref_name(git: &Git<'_>, name: &str) -> Result<Option<String>, GitError> {
    if let Some((full, _)) = super::ref_file::branch_named(git.repo, name) {
        return Ok(Some(full));
    }
    let out = git
        .cmd([
            "rev-parse",
            "--symbolic-full-name",
            "--end-of-options",
            name,
        ])
        .capture_allowing(4096, &[0, 1, 128])
        .await?;
    let text = String::from_utf8_lossy(&out.sink.bytes);
    Ok(text
        .lines()
        .next()
        .map(str::trim)
        .filter(|l| out.success() && (l.starts_with("refs/") || *l == "HEAD"))
        .map(str::to_owned))
}
