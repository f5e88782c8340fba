//! `git config -z --file .gitmodules --get-regexp ^submodule\.`: declared submodules.
//!
//! Grammar (git-config(1), `--null`), one NUL-terminated record per variable:
//!
//! ```text
//! submodule.<name>.<var> LF <value>
//! submodule.<name>.<var>                  (a variable with no value)
//! ```
//!
//! `<name>` may contain dots and any byte but NUL and LF (UTF-8 or not), so the variable
//! is what follows the last dot. Only `path` and `url` are kept; other variables are skipped because
//! `.gitmodules` may hold any setting (`branch`, `update`, `shallow`, …). A record that
//! is not a `submodule.` key is an error.

use super::{ParseError, RecordParser};
use crate::sink::Flow;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Declared {
    /// Bytes: a name need not be UTF-8.
    pub name: Vec<u8>,
    pub path: Option<Vec<u8>>,
    pub url: Option<String>,
}

/// Declared submodules in file order, at most `max`.
#[derive(Debug)]
pub struct Gitmodules {
    pub modules: Vec<Declared>,
    max: usize,
}

impl Gitmodules {
    pub fn new(max: usize) -> Self {
        Gitmodules {
            modules: Vec::new(),
            max,
        }
    }

    /// The declaration whose `path` is `path`.
    pub fn by_path(&self, path: &[u8]) -> Option<&Declared> {
        self.modules
            .iter()
            .find(|m| m.path.as_deref() == Some(path))
    }
}

impl RecordParser for Gitmodules {
    fn record(&mut self, record: &[u8], offset: usize) -> Result<Flow, ParseError> {
        let (key, value) = match record.iter().position(|b| *b == b'\n') {
            Some(nl) => (&record[..nl], Some(&record[nl + 1..])),
            None => (record, None),
        };
        let shown = || String::from_utf8_lossy(key);
        let rest = key
            .strip_prefix(b"submodule.")
            .ok_or_else(|| ParseError::new(offset, format!("unexpected key {:?}", shown())))?;
        let (name, var) = rest
            .iter()
            .rposition(|b| *b == b'.')
            .map(|at| (&rest[..at], &rest[at + 1..]))
            .ok_or_else(|| ParseError::new(offset, format!("key without a name {:?}", shown())))?;
        let module = match self.modules.iter_mut().position(|m| m.name == name) {
            Some(i) => &mut self.modules[i],
            None if self.modules.len() >= self.max => return Ok(Flow::More),
            None => {
                self.modules.push(Declared {
                    name: name.to_vec(),
                    ..Declared::default()
                });
                self.modules.last_mut().expect("just pushed")
            }
        };
        match (var, value) {
            (b"path", Some(v)) => module.path = Some(v.to_vec()),
            (b"url", Some(v)) => module.url = Some(String::from_utf8_lossy(v).into_owned()),
            _ => {}
        }
        Ok(Flow::More)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Records;

    #[test]
    fn declarations_with_dotted_names() {
        let out = b"submodule.libs/a.path\nlibs/a\0submodule.libs/a.url\n../a.git\0\
submodule.v1.2.path\nvendor/v 1.2\0submodule.v1.2.url\nhttps://tok:secret@example.com/v.git\0\
submodule.v1.2.shallow\0submodule.v1.2.branch\nmain\0";
        let g = Records::parse_all(Gitmodules::new(10), out).unwrap();
        insta::assert_debug_snapshot!(g.modules, @r#"
        [
            Declared {
                name: [
                    108,
                    105,
                    98,
                    115,
                    47,
                    97,
                ],
                path: Some(
                    [
                        108,
                        105,
                        98,
                        115,
                        47,
                        97,
                    ],
                ),
                url: Some(
                    "../a.git",
                ),
            },
            Declared {
                name: [
                    118,
                    49,
                    46,
                    50,
                ],
                path: Some(
                    [
                        118,
                        101,
                        110,
                        100,
                        111,
                        114,
                        47,
                        118,
                        32,
                        49,
                        46,
                        50,
                    ],
                ),
                url: Some(
                    "https://tok:secret@example.com/v.git",
                ),
            },
        ]
        "#);
        assert_eq!(g.by_path(b"vendor/v 1.2").unwrap().name, b"v1.2");
    }

    #[test]
    fn a_name_that_is_not_utf8_keeps_its_neighbours() {
        let out = b"submodule.caf\xe9.path\ncaf\xe9\0submodule.caf\xe9.url\n../c.git\0\
submodule.plain.path\nplain\0submodule.plain.url\n../p.git\0";
        let g = Records::parse_all(Gitmodules::new(10), out).unwrap();
        assert_eq!(g.modules.len(), 2);
        assert_eq!(g.by_path(b"caf\xe9").unwrap().name, b"caf\xe9");
        assert_eq!(
            g.by_path(b"plain").unwrap().url.as_deref(),
            Some("../p.git")
        );
    }

    #[test]
    fn malformed_output_is_an_error() {
        for bad in [
            &b"core.bare\ntrue\0"[..],
            b"submodule\nx\0",
            b"submodule.a.path\nx",
        ] {
            assert!(
                Records::parse_all(Gitmodules::new(10), bad).is_err(),
                "{bad:?}"
            );
        }
    }
}
