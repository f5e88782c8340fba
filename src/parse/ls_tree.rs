//! A tree's entries: `git ls-tree -r -z --full-tree`.
//!
//! Grammar, one NUL-terminated record each (git-ls-tree(1), "OUTPUT FORMAT"):
//!
//! ```text
//! <mode> SP <type> SP <object> TAB <path>
//! ```
//!
//! `<mode>` is octal (`100644`, `100755`, `120000`, `160000`; `040000` only without `-r`),
//! `<type>` is `blob`, `tree` or `commit`. With `-z` the path is never quoted and may hold
//! any byte but NUL.

use super::{ParseError, entry_fields, file_mode, object_id};
use crate::model::Oid;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    pub mode: u32,
    pub oid: Oid,
    pub path: Vec<u8>,
}

/// Parses every record of `bytes`.
pub fn entries(bytes: &[u8]) -> Result<Vec<TreeEntry>, ParseError> {
    let mut out = Vec::new();
    let mut offset = 0;
    for record in bytes.split(|b| *b == 0) {
        if !record.is_empty() {
            out.push(entry(record, offset)?);
        }
        offset += record.len() + 1;
    }
    Ok(out)
}

/// Parses one record.
pub fn entry(record: &[u8], offset: usize) -> Result<TreeEntry, ParseError> {
    let ([mode, kind, oid], path) = entry_fields(record, offset, "tree entry")?;
    let mode = file_mode(mode, offset)?;
    if !matches!(kind, "blob" | "tree" | "commit") {
        return Err(ParseError::new(offset, format!("bad type {kind:?}")));
    }
    let oid = object_id(oid, offset)?;
    Ok(TreeEntry {
        mode,
        oid,
        path: path.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_with_any_byte_in_their_paths() {
        let a = "a".repeat(40);
        let out = format!(
            "100644 blob {a}\tdir/x y\0120000 blob {a}\tl\u{e9}\n\x01\0160000 commit {a}\tsub\0"
        );
        let got = entries(out.as_bytes()).unwrap();
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].path, b"dir/x y");
        assert_eq!(got[1].mode, 0o120000);
        assert_eq!(got[1].path, "l\u{e9}\n\x01".as_bytes());
        assert_eq!(got[2].mode, 0o160000);
        assert_eq!(got[2].oid.as_str(), a);
    }

    #[test]
    fn malformed_records_name_their_offset() {
        let a = "a".repeat(40);
        let first = format!("100644 blob {a}\tok\0");
        for bad in [
            format!("100644 blob {a} ok"),
            format!("10064 blob {a}\tp"),
            format!("100644 tag {a}\tp"),
            "100644 blob xyz\tp".to_owned(),
            format!("100644 blob {a}\t"),
            format!("100644 blob {a} extra\tp"),
        ] {
            let err = entries(format!("{first}{bad}\0").as_bytes()).unwrap_err();
            assert_eq!(err.offset, first.len(), "{bad:?}");
        }
    }
}
