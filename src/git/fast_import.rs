//! Commits and refs written in one `git fast-import` run: each commit starts from an
//! existing tree and applies removals and new entries (contents given inline, stored raw
//! as `hash-object --no-filters` would store them, or named by an existing object), and
//! refs are created at existing commits. One process replaces the chain of entering
//! changes in an index, writing its tree, committing it and creating the refs; and only
//! the directories on a changed path are read and written again.
//!
//! Nothing repository-controlled runs: fast-import starts no hook, filter or helper. Its
//! objects go into one new pack, which is kept even when small (`fastimport.unpackLimit`
//! would otherwise start `unpack-objects`) and is not flushed to disk before the refs
//! move, as git's own loose objects are not by default (`core.fsync` without the pack
//! components). Path names match byte for byte, whatever `core.ignoreCase` says.

use super::{Git, GitError, Oid};

/// What one entry of a commit's tree becomes.
pub enum Change {
    /// The path is removed (absent is fine).
    Remove,
    /// The path holds a blob with this mode.
    Put { mode: u32, content: Content },
}

/// A blob's bytes, or an object already in the database.
pub enum Content {
    Bytes(Vec<u8>),
    Object(Oid),
}

/// A commit to write, at a new ref.
pub struct NewCommit {
    pub ref_name: String,
    pub message: String,
    /// The tree the changes apply to; `None` starts empty.
    pub root: Option<Oid>,
    /// Applied in order; a path a later change adds below a removed one is kept.
    pub changes: Vec<(String, Change)>,
}

/// What [`run`] wrote: each commit with its tree, in order, and the object of each
/// inline blob in the order the changes listed them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub commits: Vec<(Oid, Oid)>,
    pub blobs: Vec<Oid>,
}

/// `"path"` in C quoting, as fast-import reads it: any byte but NUL may appear.
fn quoted(path: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    for &b in path.as_bytes() {
        match b {
            b'"' | b'\\' => out.extend_from_slice(&[b'\\', b]),
            b'\n' => out.extend_from_slice(b"\\n"),
            0..0x20 | 0x7f => out.extend_from_slice(format!("\\{b:03o}").as_bytes()),
            _ => out.push(b),
        }
    }
    out.push(b'"');
}

fn data(bytes: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(format!("data {}\n", bytes.len()).as_bytes());
    out.extend_from_slice(bytes);
    out.push(b'\n');
}

/// The stream for `commits` and `refs`, and the marks of the inline blobs and of the
/// commits. Blobs are marked `:1…`, commits after them.
fn stream(commits: &[NewCommit], refs: &[(String, Oid)], when: i64) -> (Vec<u8>, usize) {
    let mut out = b"feature done\nfeature get-mark\nfeature ls\n".to_vec();
    let mut blobs = 0usize;
    for commit in commits {
        for (_, change) in &commit.changes {
            if let Change::Put {
                content: Content::Bytes(bytes),
                ..
            } = change
            {
                blobs += 1;
                out.extend_from_slice(format!("blob\nmark :{blobs}\n").as_bytes());
                data(bytes, &mut out);
            }
        }
    }
    let mut blob = 0usize;
    for (i, commit) in commits.iter().enumerate() {
        let mark = blobs + i + 1;
        out.extend_from_slice(format!("commit {}\nmark :{mark}\n", commit.ref_name).as_bytes());
        out.extend_from_slice(
            format!("committer gitward <gitward@localhost> {when} +0000\n").as_bytes(),
        );
        data(commit.message.as_bytes(), &mut out);
        if let Some(root) = &commit.root {
            out.extend_from_slice(format!("M 040000 {root} \"\"\n").as_bytes());
        }
        for (path, change) in &commit.changes {
            match change {
                Change::Remove => out.extend_from_slice(b"D "),
                Change::Put { mode, content } => {
                    let what = match content {
                        Content::Bytes(_) => {
                            blob += 1;
                            format!(":{blob}")
                        }
                        Content::Object(oid) => oid.to_string(),
                    };
                    out.extend_from_slice(format!("M {mode:o} {what} ").as_bytes());
                }
            }
            quoted(path, &mut out);
            out.push(b'\n');
        }
        out.push(b'\n');
    }
    for (name, oid) in refs {
        out.extend_from_slice(format!("reset {name}\nfrom {oid}\n\n").as_bytes());
    }
    for i in 0..commits.len() {
        let mark = blobs + i + 1;
        out.extend_from_slice(format!("get-mark :{mark}\nls :{mark} \"\"\n").as_bytes());
    }
    for mark in 1..=blobs {
        out.extend_from_slice(format!("get-mark :{mark}\n").as_bytes());
    }
    out.extend_from_slice(b"done\n");
    (out, blobs)
}

/// Writes `commits` (each at its new ref) and creates `refs` at existing commits, in one
/// process. Refs that exist already are refused.
pub async fn run(
    git: &Git<'_>,
    commits: &[NewCommit],
    refs: &[(String, Oid)],
    when: i64,
) -> Result<Written, GitError> {
    let (input, blobs) = stream(commits, refs, when);
    let out = git
        .cmd([
            "-c",
            "fastimport.unpackLimit=0",
            "-c",
            "core.fsync=-pack,-pack-metadata",
            "-c",
            "core.ignoreCase=false",
            "fast-import",
            "--quiet",
            "--depth=0",
        ])
        .stdin(input)
        .capture(super::DEFAULT_CAP * 4)
        .await?;
    let text = String::from_utf8_lossy(&out.sink.bytes);
    let mut lines = text.lines();
    let mut next_oid = |what: &str| {
        lines
            .next()
            .and_then(|l| {
                // `get-mark` prints the object; `ls` its mode, type and object, a tab, the path.
                let field = l.split('\t').next()?.rsplit(' ').next()?;
                Oid::parse(field)
            })
            .ok_or_else(|| GitError::internal(format!("fast-import gave no {what}")))
    };
    let mut written = Written {
        commits: Vec::with_capacity(commits.len()),
        blobs: Vec::with_capacity(blobs),
    };
    for _ in commits {
        let commit = next_oid("commit")?;
        let tree = next_oid("tree")?;
        written.commits.push((commit, tree));
    }
    for _ in 0..blobs {
        written.blobs.push(next_oid("blob")?);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_quoted_whatever_bytes_they_hold() {
        let mut out = Vec::new();
        quoted("a \"b\"\\c\nd\te\u{7f}é", &mut out);
        assert_eq!(out, "\"a \\\"b\\\"\\\\c\\nd\\011e\\177é\"".as_bytes());
    }

    #[test]
    fn blobs_are_marked_before_the_commits_that_use_them() {
        let root = Oid::parse(&"1".repeat(40)).unwrap();
        let commits = [NewCommit {
            ref_name: "refs/x/w".into(),
            message: "m\n".into(),
            root: Some(root.clone()),
            changes: vec![
                ("gone".into(), Change::Remove),
                (
                    "new".into(),
                    Change::Put {
                        mode: 0o100755,
                        content: Content::Bytes(b"hi".to_vec()),
                    },
                ),
                (
                    "kept".into(),
                    Change::Put {
                        mode: 0o100644,
                        content: Content::Object(root.clone()),
                    },
                ),
            ],
        }];
        let (text, blobs) = stream(&commits, &[("refs/x/h".into(), root)], 7);
        assert_eq!(blobs, 1);
        let ones = "1".repeat(40);
        let want = format!(
            "feature done\nfeature get-mark\nfeature ls\n\
             blob\nmark :1\ndata 2\nhi\n\
             commit refs/x/w\nmark :2\ncommitter gitward <gitward@localhost> 7 +0000\n\
             data 2\nm\n\nM 040000 {ones} \"\"\nD \"gone\"\nM 100755 :1 \"new\"\n\
             M 100644 {ones} \"kept\"\n\n\
             reset refs/x/h\nfrom {ones}\n\n\
             get-mark :2\nls :2 \"\"\nget-mark :1\ndone\n"
        );
        assert_eq!(String::from_utf8(text).unwrap(), want);
    }
}
