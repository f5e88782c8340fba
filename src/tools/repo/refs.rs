//! `repo.refs`: HEAD, branches, remote-tracking branches, tags, remotes and stashes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Toolset;
use crate::error::ToolError;
use crate::git::refs::{self, RefRecord, RefSink};
use crate::git::{Git, Oid, head, remote, repo, stash};
use crate::model::{name_text, opt_name_text};
use crate::parse::for_each_ref::Track;
use crate::tools::input::Bounded;
use crate::tools::{Annotations, CallCtx, Local, Tool};

/// `repo.refs`: HEAD, branches, remote-tracking branches, tags, remotes and stashes.
pub struct Refs;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RefsInput {
    /// Absolute path of the repository (a working tree, a directory inside one, or a bare
    /// repository).
    pub repo_path: String,
    /// FluxGit workspace id; accepted for compatibility and not needed locally.
    #[serde(default)]
    pub repo_id: Option<String>,
    /// Most entries kept in each list
    #[serde(default)]
    pub max_per_list: Bounded<1, 10000, 1000>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefsData {
    pub head: HeadRef,
    /// Local branches, by name.
    pub local: Vec<LocalBranch>,
    pub local_truncated: bool,
    pub local_total: u64,
    /// Remote-tracking branches, by name.
    pub remote: Vec<RemoteBranch>,
    pub remote_truncated: bool,
    pub remote_total: u64,
    pub tags: Vec<TagRef>,
    pub tags_truncated: bool,
    pub tags_total: u64,
    /// Configured remotes; credentials in their URLs are redacted.
    pub remotes: Vec<RemoteInfo>,
    pub remotes_truncated: bool,
    pub remotes_total: u64,
    /// Stash entries, newest first.
    pub stashes: Vec<StashEntry>,
    pub stashes_truncated: bool,
    pub stashes_total: u64,
    pub max_per_list: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HeadRef {
    /// The branch HEAD points at (`refs/heads/main`); null when detached.
    #[serde(rename = "ref")]
    pub ref_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ref_bytes_b64: Option<String>,
    /// The commit HEAD points at; null on an unborn branch.
    pub oid: Option<Oid>,
    pub detached: bool,
    pub unborn: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocalBranch {
    /// Branch name without `refs/heads/`.
    pub name: String,
    /// Base64 of a non-UTF-8 name (what `refBytesB64` inputs take).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_bytes_b64: Option<String>,
    pub oid: Oid,
    /// The configured upstream (`origin/main`); null without one.
    pub upstream: Option<String>,
    /// True when an upstream is configured but its ref no longer exists.
    pub upstream_gone: bool,
    /// Commits ahead of / behind the upstream; null without a usable upstream.
    pub ahead: Option<u64>,
    pub behind: Option<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemoteBranch {
    /// Name without `refs/remotes/` (`origin/main`).
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_bytes_b64: Option<String>,
    pub oid: Oid,
    /// For a symbolic ref such as `origin/HEAD`: the branch it points to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symref: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TagRef {
    /// Tag name without `refs/tags/`.
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_bytes_b64: Option<String>,
    /// The object the tag ref points at (the tag object when annotated).
    pub oid: Oid,
    pub annotated: bool,
    /// For an annotated tag: the object it finally points to (usually a commit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_oid: Option<Oid>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemoteInfo {
    pub name: String,
    /// The fetch URL as `git remote -v` shows it (`url.<base>.insteadOf` applied), with
    /// any password or token replaced by `***`.
    pub fetch_url: String,
    /// The push URLs as `git remote -v` shows them (`pushurl`, or the URL with
    /// `pushInsteadOf` or `insteadOf` applied), redacted the same way.
    pub push_urls: Vec<String>,
    pub credentials_redacted: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StashEntry {
    /// `n` in `stash@{n}`.
    pub index: u64,
    pub oid: Oid,
    pub message: String,
}

/// Sorts refs into the lists of `repo.refs`, each capped, each counted.
struct RefLists {
    max: usize,
    local: (Vec<LocalBranch>, u64),
    remote: (Vec<RemoteBranch>, u64),
    tags: (Vec<TagRef>, u64),
    has_stash: bool,
}

fn keep<T>(list: &mut (Vec<T>, u64), max: usize, item: impl FnOnce() -> T) {
    list.1 += 1;
    if list.0.len() < max {
        list.0.push(item());
    }
}

impl RefSink for RefLists {
    fn visit(&mut self, r: RefRecord) {
        let max = self.max;
        // The exact short name, base64, when the full one is not UTF-8.
        let raw = |prefix: &str| {
            r.name_bytes
                .as_deref()
                .and_then(|b| b.strip_prefix(prefix.as_bytes()))
                .and_then(|b| name_text(b).1)
        };
        if let Some(branch) = r.name.strip_prefix("refs/heads/") {
            keep(&mut self.local, max, || {
                let (ahead, behind) = match (&r.upstream, r.track) {
                    (Some(_), Some(Track::Counts(a, b))) => (Some(a), Some(b)),
                    _ => (None, None),
                };
                LocalBranch {
                    name: branch.to_owned(),
                    name_bytes_b64: raw("refs/heads/"),
                    oid: r.oid.clone(),
                    upstream_gone: r.upstream.is_some() && r.track == Some(Track::Gone),
                    upstream: r.upstream.clone(),
                    ahead,
                    behind,
                }
            });
        } else if let Some(branch) = r.name.strip_prefix("refs/remotes/") {
            keep(&mut self.remote, max, || RemoteBranch {
                name: branch.to_owned(),
                name_bytes_b64: raw("refs/remotes/"),
                oid: r.oid.clone(),
                symref: r.symref.as_ref().map(|target| {
                    target
                        .strip_prefix("refs/remotes/")
                        .unwrap_or(target)
                        .to_owned()
                }),
            });
        } else if let Some(tag) = r.name.strip_prefix("refs/tags/") {
            keep(&mut self.tags, max, || {
                let annotated = r.object_type == "tag";
                TagRef {
                    name: tag.to_owned(),
                    name_bytes_b64: raw("refs/tags/"),
                    oid: r.oid.clone(),
                    annotated,
                    target_oid: if annotated { r.peeled.clone() } else { None },
                }
            });
        } else if r.name == "refs/stash" {
            self.has_stash = true;
        }
    }
}

impl Tool for Refs {
    type Input = RefsInput;
    type Output = Local<RefsData>;

    const NAME: &'static str = "repo.refs";
    const TITLE: &'static str = "Branches, tags, remotes and stashes";
    const DESCRIPTION: &'static str = "HEAD, local branches with upstream and ahead/behind, remote-tracking branches, tags, remotes (credentials redacted) and stashes. Bare repositories too.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: RefsInput) -> Result<Self::Output, ToolError> {
        let repo = repo::open(&ctx.config, "repoPath", &input.repo_path, &ctx.cancel).await?;
        let git = Git::new(&repo, &ctx.cancel);
        let max = input.max_per_list.usize();
        let lists = RefLists {
            max,
            local: (Vec::new(), 0),
            remote: (Vec::new(), 0),
            tags: (Vec::new(), 0),
            has_stash: false,
        };
        let (lists, head_ref, head, remotes) = tokio::try_join!(
            refs::each_ref(&git, lists),
            head::symbolic(&git),
            git.head(),
            remote::list(&git),
        )?;
        let (stashes, stashes_total) = if lists.has_stash {
            let parsed = stash::list(&git, max).await?;
            let entries = parsed
                .stashes
                .into_iter()
                .map(|s| StashEntry {
                    index: s.index,
                    oid: s.oid,
                    message: s.message,
                })
                .collect();
            (entries, parsed.total)
        } else {
            (Vec::new(), 0)
        };
        let remotes_total = remotes.len() as u64;
        let remotes: Vec<RemoteInfo> = remotes
            .into_iter()
            .take(max)
            .map(|r| RemoteInfo {
                name: r.name,
                fetch_url: r.fetch_url,
                push_urls: r.push_urls,
                credentials_redacted: r.credentials_redacted,
            })
            .collect();
        let (ref_name, ref_bytes_b64) = opt_name_text(head_ref.as_deref());
        let data = RefsData {
            head: HeadRef {
                detached: head_ref.is_none(),
                unborn: head.is_none(),
                ref_name,
                ref_bytes_b64,
                oid: head,
            },
            local_truncated: lists.local.1 > lists.local.0.len() as u64,
            local_total: lists.local.1,
            local: lists.local.0,
            remote_truncated: lists.remote.1 > lists.remote.0.len() as u64,
            remote_total: lists.remote.1,
            remote: lists.remote.0,
            tags_truncated: lists.tags.1 > lists.tags.0.len() as u64,
            tags_total: lists.tags.1,
            tags: lists.tags.0,
            // Past the entries read, remotes are known to exist but not how many.
            remotes_truncated: remotes_total > remotes.len() as u64,
            remotes_total,
            remotes,
            stashes_truncated: stashes_total > stashes.len() as u64,
            stashes_total,
            stashes,
            max_per_list: max as u64,
        };
        Ok(Local::new::<Self>(&repo, data))
    }
}
