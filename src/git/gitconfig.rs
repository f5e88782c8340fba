//! Reading git configuration values (never writing them).

use super::{Git, GitError};

/// One configuration value with the scope it came from (`local`, `global`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scoped {
    pub scope: String,
    /// Lowercased as git prints it (`core.hookspath`).
    pub key: String,
    /// `None` for a key given without `=` (an implicit true).
    pub value: Option<String>,
}

/// Every value whose key matches `regex`, in the order git reads them. Our own `-c`
/// safety overrides (scope `command`) are left out: they say nothing about the
/// repository.
pub async fn scoped_values(git: &Git<'_>, regex: &str) -> Result<Vec<Scoped>, GitError> {
    let out = git
        .cmd(["config", "--show-scope", "-z", "--get-regexp", regex])
        .capture_allowing(64 * 1024, &[0, 1])
        .await?;
    Ok(parse_scoped(&out.sink.bytes))
}

/// `-z --show-scope`: scope NUL key LF value NUL (no LF and no value for an implicit
/// true).
fn parse_scoped(bytes: &[u8]) -> Vec<Scoped> {
    let fields: Vec<&[u8]> = bytes.split(|b| *b == 0).collect();
    fields
        .chunks(2)
        .filter_map(|pair| {
            let [scope, kv] = pair else { return None };
            if *scope == b"command" {
                return None;
            }
            let text = String::from_utf8_lossy(kv);
            let (key, value) = match text.split_once('\n') {
                Some((k, v)) => (k.to_owned(), Some(v.to_owned())),
                None => (text.into_owned(), None),
            };
            Some(Scoped {
                scope: String::from_utf8_lossy(scope).into_owned(),
                key,
                value,
            })
        })
        .collect()
}

/// Every value of `key` in the repository's own configuration file (`--local`), in
/// order; empty when it has none.
pub async fn local_values(git: &Git<'_>, key: &str) -> Result<Vec<String>, GitError> {
    let out = git
        .cmd([
            "config",
            "--local",
            "-z",
            "--get-all",
            "--end-of-options",
            key,
        ])
        .capture_allowing(64 * 1024, &[0, 1])
        .await?;
    Ok(out
        .sink
        .bytes
        .split(|b| *b == 0)
        .filter(|v| !v.is_empty())
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect())
}

/// The `submodule.<name>.path` values of the working tree's `.gitmodules`, as bytes.
/// The caller checks first that `.gitmodules` is a regular file.
pub async fn gitmodules_paths(git: &Git<'_>) -> Result<Vec<Vec<u8>>, GitError> {
    let out = git
        .cmd([
            "config",
            "--file",
            ".gitmodules",
            "-z",
            "--get-regexp",
            r"^submodule\..*\.path$",
        ])
        .capture_allowing(1024 * 1024, &[0, 1])
        .await?;
    Ok(out
        .sink
        .bytes
        .split(|b| *b == 0)
        .filter_map(|kv| {
            kv.iter()
                .position(|b| *b == b'\n')
                .map(|at| kv[at + 1..].to_vec())
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scoped_values_skip_our_own_overrides() {
        let out = b"command\0core.hookspath\n/dev/null\0local\0core.hookspath\nhooks\0global\0commit.gpgsign\0";
        let parsed = parse_scoped(out);
        assert_eq!(
            parsed,
            [
                Scoped {
                    scope: "local".into(),
                    key: "core.hookspath".into(),
                    value: Some("hooks".into()),
                },
                Scoped {
                    scope: "global".into(),
                    key: "commit.gpgsign".into(),
                    value: None,
                },
            ]
        );
    }
}
