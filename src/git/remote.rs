//! Configured remotes and their URLs, with any secret a URL carries hidden.
//!
//! URLs come from `git remote -v` rather than the raw configuration: it applies
//! `url.<base>.insteadOf` and `pushInsteadOf` the way git will when it connects.

use super::{Git, GitError};
use crate::parse::remote_v;

/// Most bytes of `git remote -v` read; past it the call fails rather than drop remotes.
const REMOTES_CAP: usize = 4 * 1024 * 1024;

/// A remote with a URL, every URL redacted by [`redact_url`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    pub name: String,
    pub fetch_url: String,
    pub push_urls: Vec<String>,
    /// True when some URL of this remote lost a secret.
    pub credentials_redacted: bool,
}

/// Every remote that has a URL, in `git remote -v` order.
pub async fn list(git: &Git<'_>) -> Result<Vec<Remote>, GitError> {
    let out = git.cmd(["remote", "-v"]).capture(REMOTES_CAP).await?;
    let parsed = remote_v::parse(&out.sink.bytes)?;
    Ok(parsed
        .iter()
        .filter_map(|remote| {
            let (fetch_url, mut credentials_redacted) =
                redact_url(&String::from_utf8_lossy(remote.fetch_url.as_deref()?));
            let push_urls = remote
                .push_urls
                .iter()
                .map(|url| {
                    let (shown, redacted) = redact_url(&String::from_utf8_lossy(url));
                    credentials_redacted |= redacted;
                    shown
                })
                .collect();
            Some(Remote {
                name: remote.name.clone(),
                fetch_url,
                push_urls,
                credentials_redacted,
            })
        })
        .collect())
}

/// Whether the remote `name` (a validated remote name) has a URL configured
/// (`config --get remote.<name>.url`): a push to it would have somewhere to go.
pub async fn has_url(git: &Git<'_>, name: &str) -> Result<bool, GitError> {
    let out = git
        .cmd(["config", "--get", &format!("remote.{name}.url")])
        .capture_allowing(4096, &[0, 1])
        .await?;
    Ok(out.code == Some(0))
}

/// Hides secrets a remote URL may carry in its userinfo; true when something was hidden.
///
/// For `scheme://user:secret@host/…` the whole userinfo goes (for https a lone "user" is
/// very often a token); for ssh only a password does, since `ssh://git@host` names an
/// account. An scp-like `user@host:path` keeps its user unless it carries a `:` secret.
pub fn redact_url(url: &str) -> (String, bool) {
    if let Some((scheme, rest)) = url.split_once("://") {
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(authority_end);
        let Some(at) = authority.rfind('@') else {
            return (url.to_owned(), false);
        };
        let (userinfo, host) = (&authority[..at], &authority[at + 1..]);
        let ssh = matches!(
            scheme.to_ascii_lowercase().as_str(),
            "ssh" | "git+ssh" | "ssh+git"
        );
        let kept = match userinfo.split_once(':') {
            Some((user, _)) if ssh => format!("{user}:***"),
            None if ssh => return (url.to_owned(), false),
            _ => "***".to_owned(),
        };
        return (format!("{scheme}://{kept}@{host}{tail}"), true);
    }
    // scp-like syntax: `[user@]host:path`; a `:` before the `@` can only be a secret.
    if let Some(at) = url.find('@') {
        let userinfo = &url[..at];
        if let Some((user, _)) = userinfo.split_once(':')
            && !userinfo.contains('/')
        {
            return (format!("{user}:***{}", &url[at..]), true);
        }
    }
    (url.to_owned(), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_survive() {
        let cases = [
            "https://user:s3cret@example.com/x.git",
            "https://ghp_token123@github.com/o/r.git",
            "https://example.com/x.git",
            "ssh://git@host/r.git",
            "ssh://git:pw@host/r.git",
            "git@github.com:o/r.git",
            "me:pw@host:r.git",
            "/srv/repos/a@b.git",
            "http://a:b@c@host/p",
        ];
        let out: Vec<_> = cases.iter().map(|c| redact_url(c)).collect();
        insta::assert_debug_snapshot!(out, @r#"
        [
            (
                "https://***@example.com/x.git",
                true,
            ),
            (
                "https://***@github.com/o/r.git",
                true,
            ),
            (
                "https://example.com/x.git",
                false,
            ),
            (
                "ssh://git@host/r.git",
                false,
            ),
            (
                "ssh://git:***@host/r.git",
                true,
            ),
            (
                "git@github.com:o/r.git",
                false,
            ),
            (
                "me:***@host:r.git",
                true,
            ),
            (
                "/srv/repos/a@b.git",
                false,
            ),
            (
                "http://***@host/p",
                true,
            ),
        ]
        "#);
    }
}
