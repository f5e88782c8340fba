//! Ref moves: one `update-ref --stdin -z` transaction (all or nothing, every line guarded
//! on the value it expects), and pointing HEAD at a branch or a commit. Ref names come
//! from gitward itself or from refs git listed, never raw from a request.

use super::{Git, GitError, Oid};

/// One ref transaction, built line by line and applied at once.
#[derive(Debug, Default, Clone)]
pub struct Transaction {
    input: Vec<u8>,
}

impl Transaction {
    pub fn new() -> Self {
        Transaction::default()
    }

    pub fn is_empty(&self) -> bool {
        self.input.is_empty()
    }

    /// Creates `name` at `new`; git refuses when it already exists.
    pub fn create(&mut self, name: &str, new: &str) -> &mut Self {
        self.line(format!("create {name}\0{new}\0"))
    }

    /// Moves `name` to `new` if it is at `old` now (all zeros: absent).
    pub fn update(&mut self, name: &str, new: &str, old: &str) -> &mut Self {
        self.line(format!("update {name}\0{new}\0{old}\0"))
    }

    /// Deletes `name`; with `old`, only if it is there now.
    pub fn delete(&mut self, name: &str, old: Option<&str>) -> &mut Self {
        self.line(format!("delete {name}\0{}\0", old.unwrap_or("")))
    }

    fn line(&mut self, line: String) -> &mut Self {
        self.input.extend_from_slice(line.as_bytes());
        self
    }

    /// Applies every line or none; `message` goes to the reflogs. No process runs for an
    /// empty transaction.
    pub async fn commit(self, git: &Git<'_>, message: Option<&str>) -> Result<(), GitError> {
        if self.input.is_empty() {
            return Ok(());
        }
        let mut args = vec!["update-ref"];
        if let Some(m) = message {
            args.extend(["-m", m]);
        }
        args.extend(["--stdin", "-z"]);
        git.cmd(args).stdin(self.input).capture(64 * 1024).await?;
        Ok(())
    }
}

/// Points HEAD at the branch `target` (a full ref name).
pub async fn head_to_branch(git: &Git<'_>, target: &str, message: &str) -> Result<(), GitError> {
    git.cmd(["symbolic-ref", "-m", message, "HEAD", target])
        .capture(4096)
        .await?;
    Ok(())
}

/// Detaches HEAD at `oid`.
pub async fn head_to_commit(git: &Git<'_>, oid: &str, message: &str) -> Result<(), GitError> {
    git.cmd(["update-ref", "-m", message, "--no-deref", "HEAD", oid])
        .capture(4096)
        .await?;
    Ok(())
}

/// The object `name` (a full ref name or `HEAD`) points at, `None` when it does not exist.
pub async fn verify(git: &Git<'_>, name: &str) -> Result<Option<Oid>, GitError> {
    let out = git
        .cmd(["rev-parse", "--verify", "--quiet", "--end-of-options", name])
        .capture_allowing(4096, &[0, 1, 128])
        .await?;
    let text = String::from_utf8_lossy(&out.sink.bytes);
    Ok(match (out.code, Oid::parse(text.trim())) {
        (Some(0), Some(oid)) => Some(oid),
        _ => None,
    })
}
