//! Submodule URLs as shown: credentials never leave the machine.

/// Replaces the user-info of a URL that carries a password or an HTTP user (often a
/// token) with `***`; an ssh user name such as `git@` is kept.
pub(super) fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else {
        return url.to_owned();
    };
    let user_info = &rest[..at];
    let http = scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https");
    if user_info.contains(':') || http {
        format!("{scheme}://***{}", &rest[at..])
    } else {
        url.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_redacted() {
        for (url, shown) in [
            (
                "https://tok:secret@example.com/a.git",
                "https://***@example.com/a.git",
            ),
            (
                "https://ghp_token@example.com/a.git",
                "https://***@example.com/a.git",
            ),
            ("ssh://git@example.com/a.git", "ssh://git@example.com/a.git"),
            (
                "ssh://u:pw@example.com/a.git",
                "ssh://***@example.com/a.git",
            ),
            ("git@example.com:a.git", "git@example.com:a.git"),
            ("../sibling.git", "../sibling.git"),
            ("https://example.com/a@b", "https://example.com/a@b"),
        ] {
            assert_eq!(redact_url(url), shown, "{url}");
        }
    }
}
