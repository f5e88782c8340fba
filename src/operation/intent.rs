//! The intent record: the refs a write expects to find before it and to leave after it.
//!
//! The executor stores it before the first write. After a crash, reconciliation compares
//! the repository with both sides: the post-state reached means the write finished; the
//! pre-state means it never started (or was undone); anything else is reported as found.
//! The same comparison verifies a write that did not crash.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Ctx, OpError};
use crate::git::ref_file::RefValue;
use crate::git::{Git, Oid};

/// What one ref (or `HEAD`) is expected to be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Expect {
    /// The ref does not exist.
    Absent,
    /// The ref points at exactly this object.
    At { oid: String },
    /// The ref points at a new commit whose first parent is `parent` (a root commit when
    /// `None`): the result of a commit whose id cannot be known in advance.
    ChildOf { parent: Option<String> },
    /// The ref points at `from` or a commit that has `from` as an ancestor: the result of
    /// replaying commits on top of it, whose ids cannot be known in advance.
    Descends { from: String },
    /// `HEAD` is a symbolic ref to `target` (a branch, born or not).
    Symbolic { target: String },
    /// `HEAD` is detached at `oid`.
    Detached { oid: String },
    /// The ref (or a detached `HEAD`) points at a commit that has `oid` in its history,
    /// and is not `oid` itself: the result of a rebase onto `oid`, whose ids cannot be
    /// known in advance.
    Contains { oid: String },
}

/// The expected pre- and post-state of one write.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Intent {
    /// Ref name (`HEAD` or a full `refs/…` name) → state before the write.
    pub pre: BTreeMap<String, Expect>,
    /// Ref name → state after the write.
    pub post: BTreeMap<String, Expect>,
    /// A worktree the write adds: absent before, registered after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<String>,
}

impl Intent {
    /// The intent of one new commit on the pinned `head` (`{oid, symbolic}` or a bare
    /// oid): HEAD stays where it points, and the branch it names (or a detached HEAD)
    /// moves to a child of the pinned commit (of nothing, on an unborn branch).
    pub fn new_commit(head: &Value) -> Result<Intent, OpError> {
        let parent = head["oid"]
            .as_str()
            .or_else(|| head.as_str())
            .map(str::to_owned);
        let mut intent = Intent::default();
        match head["symbolic"].as_str() {
            Some(target) => {
                let symbolic = Expect::Symbolic {
                    target: target.to_owned(),
                };
                intent.pre.insert("HEAD".into(), symbolic.clone());
                intent.post.insert("HEAD".into(), symbolic);
                let before = match &parent {
                    Some(oid) => Expect::At { oid: oid.clone() },
                    None => Expect::Absent,
                };
                intent.pre.insert(target.to_owned(), before);
                intent
                    .post
                    .insert(target.to_owned(), Expect::ChildOf { parent });
            }
            None => {
                let oid = parent.ok_or_else(|| OpError::Internal("no HEAD pinned".into()))?;
                intent
                    .pre
                    .insert("HEAD".into(), Expect::Detached { oid: oid.clone() });
                intent
                    .post
                    .insert("HEAD".into(), Expect::ChildOf { parent: Some(oid) });
            }
        }
        Ok(intent)
    }

    /// The refs this intent moves, for the agent policy: each whose state after is not
    /// its state before, or that has no state after (left unknown). `HEAD` counts only
    /// when it does not end symbolic: a symbolic `HEAD` moves the branch it names, which
    /// is listed on its own. The stash is left out: it only ever gains the entry that
    /// keeps what a discard removed.
    pub fn moved_refs(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (name, before) in &self.pre {
            let after = self.post.get(name);
            let symbolic = matches!(after, Some(Expect::Symbolic { .. }))
                || (after.is_none() && matches!(before, Expect::Symbolic { .. }));
            if after == Some(before) || (name == "HEAD" && symbolic) {
                continue;
            }
            out.push(name.clone());
        }
        for (name, after) in &self.post {
            if self.pre.contains_key(name)
                || (name == "HEAD" && matches!(after, Expect::Symbolic { .. }))
            {
                continue;
            }
            out.push(name.clone());
        }
        out.retain(|name| name != super::discard::STASH_REF);
        out
    }

    /// Every ref the write may move (the restore point captures each).
    pub fn refs(&self) -> Vec<String> {
        let mut names: Vec<String> = self.pre.keys().chain(self.post.keys()).cloned().collect();
        names.sort();
        names.dedup();
        names
    }
}

/// Which side of an intent the repository is on.
#[derive(Debug, Clone, PartialEq)]
pub enum Reached {
    /// Every post-state expectation holds.
    Post,
    /// Every pre-state expectation holds (nothing was written, or it was undone).
    Pre,
    /// Neither: what was found, per ref.
    Neither(Value),
}

/// One ref as found now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    Absent,
    At(Oid),
    /// `HEAD` only: symbolic to `target`, pointing at the commit if born.
    Symbolic {
        target: String,
        oid: Option<Oid>,
    },
}

impl Found {
    pub fn to_json(&self) -> Value {
        match self {
            Found::Absent => Value::Null,
            Found::At(oid) => json!(oid.as_str()),
            Found::Symbolic { target, oid } => {
                json!({"symbolic": target, "oid": oid.as_ref().map(Oid::as_str)})
            }
        }
    }
}

/// Reads `HEAD` (symbolic target and commit) or a full ref name.
pub async fn read_ref(git: &Git<'_>, name: &str) -> Result<Found, OpError> {
    // The ref files answer without a process in the common case; git is asked for the rest.
    if let Some(value) = crate::git::ref_file::read(git.repo, name) {
        return Ok(match value {
            RefValue::Symbolic { target, oid } => Found::Symbolic { target, oid },
            RefValue::At(oid) => Found::At(oid),
            RefValue::Absent => Found::Absent,
        });
    }
    if name == "HEAD" {
        let (sym, oid) = tokio::join!(crate::git::head::symbolic_text(git), git.head());
        let oid = oid?;
        if let Some(target) = sym? {
            return Ok(Found::Symbolic { target, oid });
        }
        return Ok(oid.map_or(Found::Absent, Found::At));
    }
    Ok(crate::git::update_ref::verify(git, name)
        .await?
        .map_or(Found::Absent, Found::At))
}

/// The first parent of `oid`, `None` for a root commit.
async fn first_parent(git: &Git<'_>, oid: &Oid) -> Result<Option<Option<Oid>>, OpError> {
    Ok(crate::git::log::parents(git, oid)
        .await?
        .map(|parents| parents.into_iter().next()))
}

/// True when `found` meets `expect`.
pub async fn meets(git: &Git<'_>, expect: &Expect, found: &Found) -> Result<bool, OpError> {
    Ok(match (expect, found) {
        (Expect::Absent, Found::Absent) => true,
        (Expect::At { oid }, Found::At(f)) => f.as_str() == oid,
        (Expect::ChildOf { parent }, Found::At(f) | Found::Symbolic { oid: Some(f), .. }) => {
            if parent.as_deref() == Some(f.as_str()) {
                false
            } else {
                first_parent(git, f)
                    .await?
                    .is_some_and(|p| p.as_ref().map(Oid::as_str) == parent.as_deref())
            }
        }
        (Expect::Descends { from }, Found::At(f) | Found::Symbolic { oid: Some(f), .. }) => {
            match Oid::parse(from) {
                Some(from) => {
                    crate::git::merge_base::is_ancestor(git, &from, f).await? == Some(true)
                }
                None => false,
            }
        }
        (Expect::Symbolic { target }, Found::Symbolic { target: t, .. }) => t == target,
        (Expect::Detached { oid }, Found::At(f)) => f.as_str() == oid,
        (Expect::Contains { oid }, Found::At(f) | Found::Symbolic { oid: Some(f), .. }) => {
            match Oid::parse(oid) {
                Some(base) if base != *f => {
                    crate::git::merge_base::is_ancestor(git, &base, f).await? == Some(true)
                }
                _ => false,
            }
        }
        _ => false,
    })
}

/// True when a worktree is registered at `path` (compared canonically).
pub async fn worktree_registered(git: &Git<'_>, path: &str) -> Result<bool, OpError> {
    use std::os::unix::ffi::OsStrExt;
    let listed = crate::git::worktree::list(git, 100_000).await?;
    let want = std::fs::canonicalize(path).unwrap_or_else(|_| Path::new(path).to_owned());
    Ok(listed.worktrees.iter().any(|w| {
        let p = Path::new(std::ffi::OsStr::from_bytes(&w.path));
        std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned()) == want
    }))
}

async fn side(
    ctx: Ctx<'_>,
    expects: &BTreeMap<String, Expect>,
    found: &BTreeMap<String, Found>,
) -> Result<bool, OpError> {
    let git = Git::new(ctx.repo, ctx.cancel);
    for (name, expect) in expects {
        let Some(f) = found.get(name) else {
            return Ok(false);
        };
        if !meets(&git, expect, f).await? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Compares the repository with both sides of `intent`.
pub async fn reached(ctx: Ctx<'_>, intent: &Intent) -> Result<Reached, OpError> {
    let git = Git::new(ctx.repo, ctx.cancel);
    let mut found = BTreeMap::new();
    for name in intent.refs() {
        let f = read_ref(&git, &name).await?;
        found.insert(name, f);
    }
    let worktree = match &intent.worktree {
        Some(path) => Some(worktree_registered(&git, path).await?),
        None => None,
    };
    if side(ctx, &intent.post, &found).await? && worktree != Some(false) {
        return Ok(Reached::Post);
    }
    if side(ctx, &intent.pre, &found).await? && worktree != Some(true) {
        return Ok(Reached::Pre);
    }
    let mut map: serde_json::Map<String, Value> = found
        .iter()
        .map(|(k, v)| (k.clone(), v.to_json()))
        .collect();
    if let (Some(path), Some(registered)) = (&intent.worktree, worktree) {
        map.insert(
            "worktree".into(),
            json!({"path": path, "registered": registered}),
        );
    }
    Ok(Reached::Neither(Value::Object(map)))
}
