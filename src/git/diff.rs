//! `git diff` for reads, with the flags that keep repository-chosen programs from running
//! built in: no external diff driver (`diff.external`, `diff.<driver>.command`), no
//! textconv filter, no colour codes in what we parse.
//!
//! A comparison with the working tree makes git refresh the index; those run on a private
//! copy of it (`super::index_copy`), so a read never writes `.git/index`.

use std::ffi::OsString;

use super::index_copy::IndexCopy;
use super::{Git, GitError, Oid, Repo, RepoRelPath};
use crate::process::Sink;

/// On every diff that may print content: git's own diff only, nothing the repository
/// configured to run.
pub const SAFE_DIFF: [&str; 3] = ["--no-ext-diff", "--no-textconv", "--no-color"];

/// What a diff compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sides {
    /// The index against the working tree (`git diff`).
    IndexToWorktree,
    /// HEAD against the index (`git diff --cached`).
    HeadToIndex,
    /// A commit against the working tree (`git diff <rev>`).
    RevToWorktree(Oid),
    /// A commit against the index (`git diff --cached <rev>`).
    RevToIndex(Oid),
    /// Tree to tree (`git diff <a> <b>`); needs no working tree.
    Trees(Oid, Oid),
}

impl Sides {
    /// Whether git reads the working tree, and so refreshes the index.
    pub fn reads_worktree(&self) -> bool {
        matches!(self, Sides::IndexToWorktree | Sides::RevToWorktree(_))
    }

    /// The commits compared, old side first.
    pub fn revisions(&self) -> (Option<&Oid>, Option<&Oid>) {
        match self {
            Sides::Trees(a, b) => (Some(a), Some(b)),
            Sides::RevToIndex(rev) | Sides::RevToWorktree(rev) => (Some(rev), None),
            Sides::HeadToIndex | Sides::IndexToWorktree => (None, None),
        }
    }

    fn argv(&self) -> Vec<String> {
        let eoo = "--end-of-options".to_owned();
        match self {
            Sides::IndexToWorktree => Vec::new(),
            Sides::HeadToIndex => vec!["--cached".into()],
            Sides::RevToWorktree(rev) => vec![eoo, rev.to_string()],
            Sides::RevToIndex(rev) => vec!["--cached".into(), eoo, rev.to_string()],
            Sides::Trees(a, b) => vec![eoo, a.to_string(), b.to_string()],
        }
    }
}

/// One diff: what it compares, optionally under one path.
#[derive(Debug, Clone, Copy)]
pub struct DiffQuery<'a> {
    pub sides: &'a Sides,
    pub path: Option<&'a RepoRelPath>,
}

impl DiffQuery<'_> {
    /// `--literal-pathspecs diff <format…> <safety flags> <sides> -- [path]`.
    fn argv(&self, format: &[&str]) -> Vec<String> {
        let mut args: Vec<String> = vec!["--literal-pathspecs".into(), "diff".into()];
        args.extend(format.iter().map(|f| (*f).to_owned()));
        args.extend(SAFE_DIFF.map(str::to_owned));
        args.extend(self.sides.argv());
        args.push("--".into());
        args.extend(self.path.map(|p| p.as_str().to_owned()));
        args
    }

    fn patch_argv(&self) -> Vec<String> {
        // The other forms (`diff.submodule=log|diff`) run git inside each submodule,
        // under the submodule's own configuration (its external diff, its textconv).
        self.argv(&["--submodule=short", "-M"])
    }

    /// The unified patch exactly as the user's `git diff` prints it (their path quoting
    /// included), streamed into `sink`.
    pub async fn patch<S: Sink>(&self, git: &Git<'_>, repo: &Repo, sink: S) -> Result<S, GitError> {
        let args = self.patch_argv();
        let done = if self.sides.reads_worktree() {
            let index = IndexCopy::new(repo).await?;
            git.cmd_on_copy_as_user(&index, args).stream(sink).await?
        } else {
            git.cmd_as_user(args).stream(sink).await?
        };
        Ok(done.sink)
    }

    /// The arguments [`Self::raw_patch`] gives git for `context` lines of context (after
    /// the `-c` settings every read carries), so a benchmark can time the same `git diff`.
    pub fn raw_patch_argv(&self, context: u32) -> Vec<String> {
        let context = format!("--unified={context}");
        self.argv(&[
            "--raw",
            "-p",
            "-z",
            &context,
            "--full-index",
            "--no-abbrev",
            "--submodule=short",
            "-M",
        ])
    }

    /// Raw records and a patch with `context` lines of context and full blob ids in one
    /// run (`--raw -p -z -U<context> --full-index`), for the semantic engine; at most `cap`
    /// bytes.
    pub async fn raw_patch(
        &self,
        git: &Git<'_>,
        repo: &Repo,
        context: u32,
        cap: usize,
    ) -> Result<crate::process::Capped, GitError> {
        let args: Vec<OsString> = self
            .raw_patch_argv(context)
            .into_iter()
            .map(OsString::from)
            .collect();
        let out = if self.sides.reads_worktree() {
            let index = IndexCopy::new(repo).await?;
            git.cmd_on_copy(&index, args).capture(cap).await?
        } else {
            git.cmd(args).capture(cap).await?
        };
        Ok(out.sink)
    }

    /// The changed paths (`--name-only -z`), in git's order.
    pub async fn names(&self, git: &Git<'_>, repo: &Repo) -> Result<Vec<Vec<u8>>, GitError> {
        let args: Vec<OsString> = self
            .argv(&["--name-only", "-z"])
            .into_iter()
            .map(OsString::from)
            .collect();
        let out = if self.sides.reads_worktree() {
            let index = IndexCopy::new(repo).await?;
            git.cmd_on_copy(&index, args)
                .capture(super::DEFAULT_CAP)
                .await?
        } else {
            git.cmd(args).capture(super::DEFAULT_CAP).await?
        };
        Ok(out
            .sink
            .bytes
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(<[u8]>::to_vec)
            .collect())
    }
}

/// Whether the index differs from HEAD, compared without looking at the working tree
/// (so nothing is refreshed) and without printing content.
pub async fn index_differs_from_head(git: &Git<'_>) -> Result<bool, GitError> {
    let out = git
        .cmd(["diff-index", "--cached", "--quiet", "HEAD", "--"])
        .capture_allowing(4096, &[0, 1])
        .await?;
    Ok(out.code == Some(1))
}

/// Whether anything is staged: the index against HEAD, or against nothing on an unborn
/// branch (`diff --cached --quiet`; the working tree is not read).
pub async fn anything_staged(git: &Git<'_>) -> Result<bool, GitError> {
    let out = git
        .cmd([
            "diff",
            "--cached",
            "--quiet",
            "--no-ext-diff",
            "--no-textconv",
        ])
        .capture_allowing(0, &[0, 1])
        .await?;
    Ok(out.code == Some(1))
}

/// [`anything_staged`] for a born HEAD at `head`: when the index's cache tree says which
/// tree the whole index amounts to, that tree against HEAD's (one `rev-parse`, the index
/// read in-process); otherwise git's whole comparison.
pub async fn staged_against(git: &Git<'_>, head: &Oid) -> Result<bool, GitError> {
    let path = git.repo.git_dir.join("index");
    let format = git.repo.object_format;
    let root = crate::safe_file::off_thread(git.cancel(), move || {
        super::index_lookup::tree(&path, format)
    })
    .await?;
    if let Some(root) = root
        && let Some(tree) = super::head_tree::tree_of(git, head).await?
    {
        return Ok(tree != root);
    }
    anything_staged(git).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oid(c: char) -> Oid {
        Oid::parse(&c.to_string().repeat(40)).unwrap()
    }

    #[test]
    fn argv_keeps_user_values_behind_the_option_ends() {
        let path = RepoRelPath::parse("path", "-x").unwrap();
        let trees = Sides::Trees(oid('a'), oid('b'));
        let q = DiffQuery {
            sides: &trees,
            path: Some(&path),
        };
        insta::assert_snapshot!(q.patch_argv().join(" "), @"--literal-pathspecs diff --submodule=short -M --no-ext-diff --no-textconv --no-color --end-of-options aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb -- -x");
        let staged = Sides::RevToIndex(oid('c'));
        let q = DiffQuery {
            sides: &staged,
            path: None,
        };
        insta::assert_snapshot!(q.argv(&["--name-only", "-z"]).join(" "), @"--literal-pathspecs diff --name-only -z --no-ext-diff --no-textconv --no-color --cached --end-of-options cccccccccccccccccccccccccccccccccccccccc --");
    }

    #[test]
    fn only_worktree_sides_refresh_the_index() {
        let reads: Vec<bool> = [
            Sides::IndexToWorktree,
            Sides::HeadToIndex,
            Sides::RevToWorktree(oid('a')),
            Sides::RevToIndex(oid('a')),
            Sides::Trees(oid('a'), oid('b')),
        ]
        .iter()
        .map(Sides::reads_worktree)
        .collect();
        assert_eq!(reads, [true, false, true, false, false]);
    }
}
