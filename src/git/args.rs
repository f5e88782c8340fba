//! Validated values that may reach git's argv.
//!
//! A user-supplied value is only ever placed where git cannot read it as an option: a
//! revision goes after `--end-of-options` (and is resolved to an object id before any
//! further use), a path goes after `--` with literal pathspecs. These types refuse what
//! could still confuse git: a revision with a leading `-` or control characters, a path
//! that is absolute, holds a `..` segment or a NUL.

use super::error::GitError;

/// Longest revision expression we accept.
pub const MAX_REV_LEN: usize = 1024;
/// Longest repository-relative path we accept.
pub const MAX_PATH_LEN: usize = 4096;

/// A revision expression (`main`, `HEAD~2`, `v1.0^{commit}`, a full or short object id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rev(String);

impl Rev {
    /// An optional argument: absent stays `None`, present must be valid.
    pub fn parse_opt(arg: &str, value: Option<&str>) -> Result<Option<Rev>, GitError> {
        value.map(|v| Rev::parse(arg, v)).transpose()
    }

    pub fn parse(arg: &str, value: &str) -> Result<Rev, GitError> {
        if value.is_empty() {
            return Err(GitError::invalid(arg, "must not be empty"));
        }
        if value.len() > MAX_REV_LEN {
            return Err(GitError::invalid(
                arg,
                format!("must be at most {MAX_REV_LEN} bytes"),
            ));
        }
        if value.starts_with('-') {
            return Err(GitError::invalid(
                arg,
                "must not start with '-' (a ref named like an option can be written as refs/heads/<name>)",
            ));
        }
        if value.chars().any(char::is_control) {
            return Err(GitError::invalid(
                arg,
                "must not contain control characters (NUL, newline, …)",
            ));
        }
        Ok(Rev(value.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A full object id in hex, as git printed it (40 for SHA-1, 64 for SHA-256).
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct Oid(String);

impl Oid {
    /// Accepts exactly 40 or 64 lowercase hex digits.
    pub fn parse(text: &str) -> Option<Oid> {
        let ok = matches!(text.len(), 40 | 64)
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        ok.then(|| Oid(text.to_owned()))
    }

    pub fn from_bytes(bytes: &[u8]) -> Option<Oid> {
        std::str::from_utf8(bytes).ok().and_then(Oid::parse)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True for the all-zero id git uses for "no object".
    pub fn is_zero(&self) -> bool {
        self.0.bytes().all(|b| b == b'0')
    }

    pub fn short(&self) -> &str {
        &self.0[..7]
    }
}

impl std::fmt::Display for Oid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A path relative to the top of a working tree, never escaping it. Only ever given to
/// git as a literal pathspec (`--literal-pathspecs`), after `--`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoRelPath(String);

impl RepoRelPath {
    /// An optional argument: absent stays `None`, present must be valid.
    pub fn parse_opt(arg: &str, value: Option<&str>) -> Result<Option<RepoRelPath>, GitError> {
        value.map(|v| RepoRelPath::parse(arg, v)).transpose()
    }

    pub fn parse(arg: &str, value: &str) -> Result<RepoRelPath, GitError> {
        let trimmed = value.trim_end_matches('/');
        if trimmed.is_empty() || trimmed == "." {
            return Err(GitError::invalid(
                arg,
                "must name a path inside the repository (omit it for the whole repository)",
            ));
        }
        if value.len() > MAX_PATH_LEN {
            return Err(GitError::invalid(
                arg,
                format!("must be at most {MAX_PATH_LEN} bytes"),
            ));
        }
        if value.starts_with('/') || value.starts_with('\\') {
            return Err(GitError::invalid(
                arg,
                "must be relative to the repository top level",
            ));
        }
        // Every path reaches git after `--` with `--literal-pathspecs`, so a leading `:`
        // is a file name, never pathspec magic; tabs and newlines are legal in names too.
        if value.contains('\0') {
            return Err(GitError::invalid(arg, "must not contain NUL"));
        }
        if trimmed.split(['/', '\\']).any(|c| c == "..") {
            return Err(GitError::invalid(arg, "must not contain '..' segments"));
        }
        Ok(RepoRelPath(trimmed.trim_start_matches("./").to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Checks a ref name the way `git check-ref-format` would (plus: no leading `-`, so it
/// can never be read as an option), allowing one-level names such as `HEAD` or `main`.
pub fn check_ref_name(arg: &str, value: &str) -> Result<(), GitError> {
    let bad = |why: &str| Err(GitError::invalid(arg, why));
    if value.is_empty() {
        return bad("must not be empty");
    }
    if value.len() > 1024 {
        return bad("must be at most 1024 bytes");
    }
    if value.starts_with('-') {
        return bad("must not start with '-'");
    }
    if value.chars().any(|c| c.is_control()) {
        return bad("must not contain control characters (NUL, newline, …)");
    }
    if value.contains([' ', '~', '^', ':', '?', '*', '[', '\\']) {
        return bad("must not contain spaces or any of ~ ^ : ? * [ \\");
    }
    if value.contains("..") || value.contains("@{") || value == "@" {
        return bad("must not contain '..' or '@{' (give a ref name, not a revision)");
    }
    if value.starts_with('/') || value.ends_with('/') || value.contains("//") {
        return bad("must not start or end with '/' or contain '//'");
    }
    if value.ends_with('.') {
        return bad("must not end with '.'");
    }
    if value
        .split('/')
        .any(|c| c.starts_with('.') || c.ends_with(".lock"))
    {
        return bad("no component may start with '.' or end with '.lock'");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_that_look_like_options_are_refused() {
        for bad in ["-n", "--output=/tmp/x", "", "a\nb", "a\0b", "a\tb"] {
            assert!(Rev::parse("commit", bad).is_err(), "{bad:?}");
        }
        for good in [
            "main",
            "HEAD~2",
            "v1.0^{commit}",
            "refs/heads/-n",
            "a/b@{1}",
        ] {
            assert!(Rev::parse("commit", good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn paths_must_stay_inside() {
        for bad in ["/etc/passwd", "../x", "a/../../b", "a\0b", "", ".", "a/.."] {
            assert!(RepoRelPath::parse("path", bad).is_err(), "{bad:?}");
        }
        for name in [":(glob)*", "tab\there", "new\nline", ".hidden", ":colon"] {
            assert_eq!(RepoRelPath::parse("path", name).unwrap().as_str(), name);
        }
        assert_eq!(RepoRelPath::parse("path", "src/").unwrap().as_str(), "src");
        assert_eq!(
            RepoRelPath::parse("path", "./src/a.rs").unwrap().as_str(),
            "src/a.rs"
        );
        assert_eq!(
            RepoRelPath::parse("path", "with space.txt")
                .unwrap()
                .as_str(),
            "with space.txt"
        );
    }

    #[test]
    fn oids_are_full_lowercase_hex() {
        assert!(Oid::parse(&"a".repeat(40)).is_some());
        assert!(Oid::parse(&"0".repeat(64)).unwrap().is_zero());
        assert!(Oid::parse("abc").is_none());
        assert!(Oid::parse(&"A".repeat(40)).is_none());
    }

    #[test]
    fn ref_names_like_check_ref_format() {
        for good in [
            "HEAD",
            "main",
            "feat/x-1",
            "refs/heads/-n",
            "refs/stash",
            "v1.0",
        ] {
            assert!(check_ref_name("refName", good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "-n",
            "--all",
            "--output=/tmp/x",
            "a\nb",
            "a\0b",
            "a b",
            "a..b",
            "HEAD@{1}",
            "@",
            "a/",
            "/a",
            "a//b",
            "a.",
            ".a",
            "a/.b",
            "x.lock",
            "a~1",
            "a^",
            "a:b",
            "a*",
            "a?",
            "a[",
            "a\\b",
        ] {
            assert!(check_ref_name("refName", bad).is_err(), "{bad:?}");
        }
    }
}
