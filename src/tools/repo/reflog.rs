//! `repo.reflog`: where a ref has been, with hints for commits nothing points at any
//! more.
//!
//! Old and new ids are the ones git recorded (files backend), and reachability is decided
//! with one bounded `rev-list`.

mod action;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Toolset;
use crate::error::ToolError;
use crate::git::args::check_ref_name;
use crate::git::reachable::{self, Reach};
use crate::git::{Git, Oid, reflog, repo};
use crate::model::Identity;
use crate::tools::input::Bounded;
use crate::tools::{Annotations, CallCtx, Local, Tool};
use action::action;

/// `repo.reflog`: where a ref has been, newest first, with recovery hints.
pub struct Reflog;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReflogInput {
    /// Absolute path of the repository (any directory inside a working tree works).
    pub repo_path: String,
    #[serde(default)]
    pub repo_id: Option<String>,
    /// The ref whose reflog to read: `HEAD` (default), a branch (`main`), or a full ref.
    #[serde(default, alias = "ref")]
    pub ref_name: Option<String>,
    /// Entries to return, newest first.
    #[serde(default)]
    pub limit: Bounded<1, 100, 12>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReflogData {
    /// The ref as asked.
    pub ref_name: String,
    /// The full ref it resolved to (`HEAD`, `refs/heads/main`, …). When several refs
    /// share the name (a branch and a tag), the first with a reflog, as `git reflog` picks.
    pub full_ref: String,
    pub entries: Vec<ReflogEntry>,
    pub entry_count: u64,
    /// More (older) entries exist than were returned.
    pub more_available: bool,
    /// `files` (old ids exactly as recorded) or `reftable` (old ids inferred).
    pub storage: &'static str,
    /// False when reachability could not be decided for every entry.
    pub reachability_complete: bool,
    pub recovery_guidance: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReflogEntry {
    pub index: u64,
    /// `<ref>@{n}`: usable with git to name this position (`<ref>` is `fullRef` when the
    /// name given is ambiguous; the stash is always `stash@{n}`, as git lists it).
    pub selector: String,
    /// Null for a ref's first entry under the reftable backend.
    pub old_oid: Option<String>,
    pub new_oid: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub old_oid_inferred: bool,
    /// `commit`, `amend`, `merge`, `reset`, `rebase`, `checkout`, `pull`, `branch`,
    /// `clone`, `cherry-pick`, `revert`, `fetch`, `push`, `am`, `stash` or `other`.
    pub action: &'static str,
    /// Non-UTF-8 bytes are read in the new commit's encoding.
    pub message: String,
    /// Base64 of a message in no known encoding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_bytes_b64: Option<String>,
    pub identity: Identity,
    /// When the ref moved, milliseconds since the epoch.
    pub timestamp: i64,
    /// The recorded time zone, `+hhmm`.
    pub tz: String,
    /// The new commit is no longer reachable from any ref (null: undecided).
    pub unreachable: Option<bool>,
    /// Unreachable, but the commit still exists: a branch or tag at it brings it back.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub recoverable: bool,
    /// The object no longer exists (pruned): nothing left to recover.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub missing: bool,
    /// For an unreachable commit: the command a human can run to keep it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery_hint: Option<String>,
}

impl Tool for Reflog {
    type Input = ReflogInput;
    type Output = Local<ReflogData>;

    const NAME: &'static str = "repo.reflog";
    const TITLE: &'static str = "Reflog timeline";
    const DESCRIPTION: &'static str = "Where a ref (HEAD by default) has been, newest first; unreachable commits carry the git command a person can run to recover them.";
    const TOOLSET: Toolset = Toolset::Git;
    const ANNOTATIONS: Annotations = Annotations::READ;

    async fn call(ctx: CallCtx, input: ReflogInput) -> Result<Self::Output, ToolError> {
        let name = input.ref_name.unwrap_or_else(|| "HEAD".to_owned());
        check_ref_name("refName", &name)?;
        let repo = repo::open(&ctx.config, "repoPath", &input.repo_path, &ctx.cancel).await?;
        let git = Git::new(&repo, &ctx.cancel);
        let data = reflog_data(&git, name, input.limit.usize()).await?;
        Ok(Local::new::<Self>(&repo, data))
    }
}

async fn reflog_data(git: &Git<'_>, name: String, limit: usize) -> Result<ReflogData, ToolError> {
    let (full, ambiguous) = reflog::full_name(git, "refName", &name).await?;
    // The stash is named as git itself names it (`git stash list`, `%gd`): `stash@{n}`
    // always means refs/stash, which git looks up before any branch or tag. Otherwise an
    // ambiguous short name would make the selectors ambiguous too.
    let shown = if full == "refs/stash" {
        "stash"
    } else if ambiguous {
        full.as_str()
    } else {
        name.as_str()
    };
    let read = reflog::read(git, &full, limit).await?;
    let (entries, more) = (read.entries, read.more);
    let ids: Vec<&Oid> = entries.iter().map(|e| &e.new).collect();
    let garbled: Vec<&Oid> = entries
        .iter()
        .filter(|e| e.message_bytes.is_some())
        .map(|e| &e.new)
        .collect();
    let ((reach, complete), encodings) = tokio::try_join!(
        reachable::from_refs(git, &ids),
        crate::git::log::encodings(git, &garbled),
    )?;
    let stash = full == "refs/stash";
    let mut out = Vec::with_capacity(entries.len());
    let mut lost = 0;
    for (i, mut e) in entries.into_iter().enumerate() {
        // A commit message written in another encoding lands in the reflog as its bytes.
        let mut message_bytes_b64 = None;
        if let Some(bytes) = e.message_bytes.take() {
            match encodings
                .get(&e.new)
                .and_then(|enc| crate::model::decode_as(enc, &bytes))
            {
                Some(text) => e.message = text,
                None => message_bytes_b64 = Some(B64.encode(&bytes)),
            }
        }
        let state = reach.get(&e.new).copied().unwrap_or(Reach::Unknown);
        let unreachable = match state {
            Reach::Unreachable | Reach::Missing => Some(true),
            Reach::Reachable => Some(false),
            Reach::Unknown => None,
        };
        // Older stashes live only in this reflog by design; they are not lost.
        let recovery_hint = (state == Reach::Unreachable && !stash).then(|| {
            lost += 1;
            format!("git branch recover-{} {}", e.new.short(), e.new)
        });
        out.push(ReflogEntry {
            index: i as u64,
            selector: format!("{shown}@{{{i}}}"),
            old_oid: e.old.as_ref().map(|o| o.to_string()),
            new_oid: e.new.to_string(),
            old_oid_inferred: e.old_inferred,
            action: action(&e.message),
            identity: Identity {
                name: e.name,
                email: e.email,
            },
            timestamp: e.time * 1000,
            tz: e.tz,
            message: e.message,
            message_bytes_b64,
            unreachable,
            recoverable: state == Reach::Unreachable,
            missing: state == Reach::Missing,
            recovery_hint,
        });
    }
    let recovery_guidance = if stash {
        "Stash entries are kept by this reflog itself: each is listed by `git stash list` and is not lost while it is there.".to_owned()
    } else if lost > 0 {
        format!(
            "{lost} entr{} point at commits no ref reaches any more; they stay recoverable until the reflog expires and gc prunes them. Suggest the recoveryHint command to the human; nothing was run.",
            if lost == 1 { "y" } else { "ies" }
        )
    } else {
        "Every listed commit is still reachable from a ref; nothing needs recovering.".to_owned()
    };
    Ok(ReflogData {
        ref_name: name,
        full_ref: full,
        entry_count: out.len() as u64,
        entries: out,
        more_available: more,
        storage: read.storage.name(),
        reachability_complete: complete,
        recovery_guidance,
    })
}
