//! Writing tree objects from entries already known (`git mktree -z --batch`): git sorts
//! each tree's entries, checks that every object it names exists with the type its mode
//! says, and hashes and stores the tree. Nothing here touches a ref, the index or the
//! worktree.

use super::{Git, GitError, Oid};

const MODE_TREE: u32 = 0o040000;
const MODE_GITLINK: u32 = 0o160000;

/// One entry of a tree to write.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TreeEntry {
    pub mode: u32,
    pub oid: Oid,
    /// One path component (no `/`).
    pub name: Vec<u8>,
}

fn kind(mode: u32) -> &'static str {
    match mode {
        MODE_TREE => "tree",
        MODE_GITLINK => "commit",
        _ => "blob",
    }
}

/// The `mktree -z --batch` input of `trees`: each entry a NUL-terminated record, each
/// tree closed by an empty record.
pub fn input(trees: &[Vec<TreeEntry>]) -> Vec<u8> {
    let mut out = Vec::new();
    for tree in trees {
        for e in tree {
            out.extend_from_slice(format!("{:o} {} {}\t", e.mode, kind(e.mode), e.oid).as_bytes());
            out.extend_from_slice(&e.name);
            out.push(0);
        }
        out.push(0);
    }
    out
}

/// Writes each of `trees` (none empty), in one process; their ids, in order.
pub async fn write(git: &Git<'_>, trees: &[Vec<TreeEntry>]) -> Result<Vec<Oid>, GitError> {
    if trees.is_empty() {
        return Ok(Vec::new());
    }
    if trees.iter().any(|t| t.is_empty()) {
        return Err(GitError::internal("an empty tree was asked of mktree"));
    }
    let out = git
        .cmd(["mktree", "-z", "--batch"])
        .stdin(input(trees))
        .capture(trees.len() * 80 + 256)
        .await?;
    let oids: Vec<Oid> = out
        .sink
        .bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(Oid::from_bytes)
        .collect::<Option<_>>()
        .ok_or_else(|| GitError::internal("mktree printed something other than ids"))?;
    if oids.len() != trees.len() {
        return Err(GitError::internal(
            "mktree answered a different number of trees",
        ));
    }
    Ok(oids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_carry_the_type_of_their_mode() {
        let oid = Oid::parse(&"a".repeat(40)).unwrap();
        let e = |mode, name: &str| TreeEntry {
            mode,
            oid: oid.clone(),
            name: name.as_bytes().to_vec(),
        };
        let text = input(&[
            vec![e(0o100644, "f"), e(MODE_TREE, "d")],
            vec![e(MODE_GITLINK, "s")],
        ]);
        let a = "a".repeat(40);
        assert_eq!(
            String::from_utf8(text).unwrap(),
            format!("100644 blob {a}\tf\040000 tree {a}\td\0\0160000 commit {a}\ts\0\0")
        );
    }
}
