//! The paths a unified diff touches, read from its headers (`diff --git`, `---`/`+++`,
//! `rename`/`copy` lines), so a patch can be refused before git sees it when a path is
//! absolute or climbs out of the repository, and so its paths can be pinned.

use crate::gateway::api::FieldError;
use crate::operation::paths::check_rel_path;

/// Most files one patch may touch.
pub const MAX_FILES: usize = 1000;

fn refuse(reason: impl Into<String>) -> FieldError {
    FieldError {
        field: "patchContent",
        reason: reason.into(),
    }
}

/// Undoes git's C quoting of a path (`"a\tb"`, octal bytes); plain text as is.
fn unquote(text: &str) -> Result<String, FieldError> {
    let Some(inner) = text.strip_prefix('"') else {
        return Ok(text.to_owned());
    };
    let inner = inner
        .strip_suffix('"')
        .ok_or_else(|| refuse(format!("unterminated quoted path {text}")))?;
    let mut out = Vec::new();
    let mut bytes = inner.bytes();
    while let Some(b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        let escaped = bytes.next().ok_or_else(|| refuse("a path ends in '\\'"))?;
        out.push(match escaped {
            b'n' => b'\n',
            b't' => b'\t',
            b'"' | b'\\' => escaped,
            b'0'..=b'7' => {
                let digits = [Some(escaped), bytes.next(), bytes.next()];
                let mut value: u32 = 0;
                for d in digits {
                    match d {
                        Some(d @ b'0'..=b'7') => value = value * 8 + u32::from(d - b'0'),
                        _ => return Err(refuse("a bad octal escape in a quoted path")),
                    }
                }
                u8::try_from(value).map_err(|_| refuse("a bad octal escape in a quoted path"))?
            }
            other => return Err(refuse(format!("an unknown escape \\{}", other as char))),
        });
    }
    String::from_utf8(out).map_err(|_| refuse("a path that is not UTF-8"))
}

/// `a/x` → `x` for the `---`/`+++` side; `/dev/null` → none.
fn side_path(value: &str) -> Result<Option<String>, FieldError> {
    let value = value.split('\t').next().unwrap_or(value);
    let value = unquote(value.trim_end_matches('\r'))?;
    if value == "/dev/null" {
        return Ok(None);
    }
    let stripped = value
        .strip_prefix("a/")
        .or_else(|| value.strip_prefix("b/"))
        .ok_or_else(|| {
            refuse(format!(
                "`{value}`: expected an a/ or b/ prefix (git diff's -p1)"
            ))
        })?;
    Ok(Some(stripped.to_owned()))
}

/// The old and new line counts of a hunk header `@@ -a[,b] +c[,d] @@`.
fn hunk_counts(line: &str) -> Option<(u64, u64)> {
    let mut words = line.split(' ');
    let _at = words.next()?;
    let count = |w: Option<&str>, sign: char| -> Option<u64> {
        let range = w?.strip_prefix(sign)?;
        match range.split_once(',') {
            Some((_, n)) => n.parse().ok(),
            None => Some(1),
        }
    };
    Some((count(words.next(), '-')?, count(words.next(), '+')?))
}

/// Every repository-relative path the patch names, in order, without repeats. Refuses a
/// text with no file header, an absolute or escaping path, or too many files. Hunk bodies
/// are skipped by their counts, so a removed line that starts with `-- ` is no header.
pub fn touched(patch: &str) -> Result<Vec<String>, FieldError> {
    let mut paths: Vec<String> = Vec::new();
    let mut headers = 0usize;
    let (mut old, mut new) = (0u64, 0u64);
    for line in patch.lines() {
        if old > 0 || new > 0 {
            match line.as_bytes().first() {
                Some(b'-') => old = old.saturating_sub(1),
                Some(b'+') => new = new.saturating_sub(1),
                Some(b'\\') => {}
                _ => {
                    old = old.saturating_sub(1);
                    new = new.saturating_sub(1);
                }
            }
            continue;
        }
        if line.starts_with("@@ ") {
            (old, new) = hunk_counts(line)
                .ok_or_else(|| refuse(format!("a malformed hunk header `{line}`")))?;
            continue;
        }
        let found = if let Some(rest) = line
            .strip_prefix("--- ")
            .or_else(|| line.strip_prefix("+++ "))
        {
            headers += 1;
            side_path(rest)?
        } else if let Some(rest) = ["rename from ", "rename to ", "copy from ", "copy to "]
            .iter()
            .find_map(|p| line.strip_prefix(p))
        {
            Some(unquote(rest)?)
        } else {
            None
        };
        if let Some(path) = found {
            check_rel_path("patchContent", &path)?;
            if !paths.contains(&path) {
                paths.push(path);
            }
            if paths.len() > MAX_FILES {
                return Err(refuse(format!("touches more than {MAX_FILES} files")));
            }
        }
    }
    if headers == 0 || paths.is_empty() {
        return Err(refuse(
            "expected a unified diff with ---/+++ file headers (as git diff prints)",
        ));
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_come_from_every_kind_of_header() {
        let patch = "diff --git a/src/a.rs b/src/a.rs\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1 +1 @@\n-x\n+y\n\
                     diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+n\n\
                     diff --git a/old b/moved\nrename from old\nrename to moved\n\
                     --- \"a/sp ace\\tx\"\n+++ \"b/sp ace\\tx\"\n@@ -1,2 +1 @@\n--- not/a/header\n \n";
        assert_eq!(
            touched(patch).unwrap(),
            ["src/a.rs", "new.txt", "old", "moved", "sp ace\tx"]
        );
    }

    #[test]
    fn escaping_absolute_and_headerless_patches_are_refused() {
        for bad in [
            "--- a/../x\n+++ b/../x\n",
            "--- /etc/passwd\n+++ /etc/passwd\n",
            "--- x\n+++ x\n",
            "just words\n",
            "rename from ../a\n--- a/b\n+++ b/b\n",
            "--- \"a/x\n+++ b/x\n",
        ] {
            let err = touched(bad).unwrap_err();
            assert_eq!(err.field, "patchContent", "{bad:?}");
        }
    }
}
