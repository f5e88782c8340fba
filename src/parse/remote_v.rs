//! `git remote -v`: every remote with its URLs as git will use them, so
//! `url.<base>.insteadOf` and `pushInsteadOf` are already applied.
//!
//! Grammar (`builtin/remote.c`, `show_all`), remotes sorted by name, one line each for
//! the first fetch URL and for every push URL:
//!
//! ```text
//! line := name TAB url " (fetch)" LF
//!       | name TAB url " (push)" LF
//!       | name TAB LF                     (a remote without any URL)
//! ```
//!
//! A remote name never holds a TAB or LF (git refuses such names), so the first TAB ends
//! it; a URL may hold anything but LF.

use super::ParseError;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Remote {
    pub name: String,
    /// Absent for a remote configured without a URL.
    pub fetch_url: Option<Vec<u8>>,
    pub push_urls: Vec<Vec<u8>>,
}

/// Parses the whole output; remotes keep git's order.
pub fn parse(out: &[u8]) -> Result<Vec<Remote>, ParseError> {
    let mut remotes: Vec<Remote> = Vec::new();
    let mut offset = 0;
    for line in out.split_inclusive(|b| *b == b'\n') {
        let at = offset;
        offset += line.len();
        let line = line
            .strip_suffix(b"\n")
            .ok_or_else(|| ParseError::new(at, "line without a newline"))?;
        let tab = line
            .iter()
            .position(|b| *b == b'\t')
            .ok_or_else(|| ParseError::new(at, "line without a TAB"))?;
        let (name, rest) = (&line[..tab], &line[tab + 1..]);
        let name = String::from_utf8_lossy(name).into_owned();
        if remotes.last().is_none_or(|r| r.name != name) {
            remotes.push(Remote {
                name,
                ..Remote::default()
            });
        }
        let Some(remote) = remotes.last_mut() else {
            continue;
        };
        if let Some(url) = rest.strip_suffix(b" (fetch)") {
            remote.fetch_url = Some(url.to_vec());
        } else if let Some(url) = rest.strip_suffix(b" (push)") {
            remote.push_urls.push(url.to_vec());
        } else if !rest.is_empty() {
            return Err(ParseError::new(at, "neither a fetch nor a push URL"));
        }
    }
    Ok(remotes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captured from `git remote -v` (git 2.47) with `url.https://mirror.example/.insteadOf`
    /// and `url.ssh://push.example/.pushInsteadOf` set for `https://example.com/`.
    const REAL: &[u8] = b"nourl\t\norigin\thttps://mirror.example/a.git (fetch)\n\
origin\tssh://push.example/a.git (push)\ntwo\thttps://u:p@example.com/b.git (fetch)\n\
two\thttps://mirror.example/push1 (push)\ntwo\t/local/x (push)\n";

    #[test]
    fn real_output() {
        let remotes = parse(REAL).unwrap();
        let shown: Vec<_> = remotes
            .iter()
            .map(|r| {
                (
                    r.name.as_str(),
                    r.fetch_url.as_deref().map(String::from_utf8_lossy),
                    r.push_urls.len(),
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                ("nourl", None, 0),
                ("origin", Some("https://mirror.example/a.git".into()), 1),
                ("two", Some("https://u:p@example.com/b.git".into()), 2),
            ]
        );
        assert_eq!(remotes[2].push_urls[1], b"/local/x");
    }

    #[test]
    fn malformed_output_is_an_error() {
        for bad in [
            &b"origin\n"[..],
            b"origin\turl (pull)\n",
            b"origin\turl (fetch)",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        assert!(parse(b"").unwrap().is_empty());
    }
}
