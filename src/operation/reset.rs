//! `reset`: move the checked-out branch (or a detached HEAD) to `targetRef` with
//! `git reset --soft | --mixed | --hard`.
//!
//! - `soft` keeps the index and the worktree: what the branch leaves behind stays staged;
//! - `mixed` (default) keeps the worktree and resets the index;
//! - `hard` resets both: every uncommitted change to a tracked file is overwritten. It
//!   needs the card's explicit checkbox, and its pins include every tracked change, so a
//!   change made after the proposal — one the person never saw listed — makes it stale.
//!
//! The card shows the commits the branch leaves behind and, for a hard reset, the files
//! overwritten (local changes, and untracked files that the target tracks).

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::commit::checked;
use super::fields::{ensure, parse, schema_of};
use super::intent::Found;
use super::{Checkout, Ctx, Expect, Fields, Intent, OpError, Operation, Pins, pins};
use crate::gateway::api::FieldError;
use crate::git::log::{self, Hide};
use crate::git::status::{IgnoreSubmodules, StatusQuery, Untracked};
use crate::git::write::GitWrite;
use crate::git::write_history::ResetMode;
use crate::git::{Git, Oid, Rev, head_tree};

/// Commits listed as left behind on a card at most.
pub const MAX_COMMITS: usize = 200;

/// How far the reset reaches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Soft,
    #[default]
    Mixed,
    Hard,
}

impl Mode {
    fn git(self) -> ResetMode {
        match self {
            Mode::Soft => ResetMode::Soft,
            Mode::Mixed => ResetMode::Mixed,
            Mode::Hard => ResetMode::Hard,
        }
    }
}

/// The fields of a `reset` proposal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResetFields {
    /// Where HEAD's branch goes: a branch, tag or commit.
    #[schemars(length(min = 1, max = 1024))]
    pub target_ref: String,
    /// `soft`, `mixed` (default) or `hard`.
    #[serde(default)]
    pub mode: Mode,
}

const NAMES: &[&str] = &["targetRef", "mode"];

impl ResetFields {
    pub fn from_fields(fields: &Fields) -> Result<ResetFields, FieldError> {
        let f: ResetFields = parse(fields, NAMES)?;
        let ok = Rev::parse("targetRef", &f.target_ref).is_ok();
        ensure(ok, "targetRef", || {
            "expected a branch, tag or commit (not starting with '-', no control characters)".into()
        })?;
        Ok(f)
    }
}

/// The `reset` operation type.
pub struct Reset;

/// HEAD, the target's commit, the index, and for `hard` every tracked change.
async fn read_pins(ctx: Ctx<'_>, f: &ResetFields) -> Result<Value, OpError> {
    let mut out = read_refs(ctx, f).await?;
    if let Some(changes) = read_changes(ctx, f).await? {
        out["changes"] = changes;
    }
    Ok(out)
}

/// HEAD, the target's commit and the index: what the proposal is refused on.
async fn read_refs(ctx: Ctx<'_>, f: &ResetFields) -> Result<Value, OpError> {
    let git = Git::new(ctx.repo, ctx.cancel);
    let target = Rev::parse("targetRef", &f.target_ref)?;
    let (head, target, index) = tokio::join!(
        pins::head(&git),
        git.resolve_named_commit("targetRef", &target),
        pins::index_digest(&git)
    );
    Ok(json!({"head": head?.to_json(), "targetOid": target?.as_str(), "index": index?}))
}

/// For `hard`, every tracked change it overwrites (path, status and content): a whole
/// status and a read of each changed file, so it is read beside the card's preview —
/// the card lists the same files — rather than before the proposal is answered.
async fn read_changes(ctx: Ctx<'_>, f: &ResetFields) -> Result<Option<Value>, OpError> {
    if f.mode != Mode::Hard {
        return Ok(None);
    }
    let top = ctx.repo.require_worktree()?;
    let git = Git::new(ctx.repo, ctx.cancel);
    let changes = tracked_changes(&git).await?;
    Ok(Some(pins::change_states(&git, top, changes).await?))
}

/// Every tracked path that differs from HEAD in the index or the worktree.
async fn tracked_changes(git: &Git<'_>) -> Result<Vec<pins::Change>, OpError> {
    let parsed = StatusQuery {
        untracked: Some(Untracked::No),
        ignore_submodules: Some(IgnoreSubmodules::None),
        paths: Some(&[]),
        no_renames: true,
        ..StatusQuery::default()
    }
    .read(git, pins::MAX_CHANGES)
    .await?;
    if parsed.truncated() {
        return Err(OpError::Unsupported(format!(
            "more than {} changed paths: too many to review in one proposal",
            pins::MAX_CHANGES
        )));
    }
    Ok(parsed
        .entries
        .into_iter()
        .map(|e| pins::Change {
            path: String::from_utf8_lossy(&e.path).into_owned(),
            xy: String::from_utf8_lossy(&e.xy).into_owned(),
            kind: e.kind,
        })
        .collect())
}

/// The pins [`Reset::pin`] reads, from values read once for several steps (see
/// `plan::shared`): HEAD, the target's commit and the index digest.
pub(crate) fn pins_from(head: &Found, target: &Oid, index: String) -> Result<Value, OpError> {
    let pins = json!({"head": head.to_json(), "targetOid": target.as_str(), "index": index});
    check_born(&pins)?;
    Ok(pins)
}

fn check_born(pins: &Value) -> Result<(), OpError> {
    match pinned(pins, "head") {
        Ok(_) => Ok(()),
        Err(_) => Err(OpError::invalid(
            "targetRef",
            "HEAD has no commit yet: there is nothing to reset",
        )),
    }
}

pub(crate) fn pinned(pins: &Value, key: &str) -> Result<Oid, OpError> {
    let v = if key == "head" {
        pins["head"]["oid"]
            .as_str()
            .or_else(|| pins["head"].as_str())
    } else {
        pins[key].as_str()
    };
    v.and_then(Oid::parse)
        .ok_or_else(|| OpError::Internal(format!("no {key} pinned")))
}

#[async_trait]
impl Operation for Reset {
    fn kind(&self) -> &'static str {
        "reset"
    }

    fn title(&self) -> &'static str {
        "Propose a reset"
    }

    fn description(&self) -> &'static str {
        "Propose a soft, mixed or hard reset of the checked-out branch to targetRef; a hard reset needs the person's explicit confirmation."
    }

    fn fields_schema(&self) -> Value {
        schema_of::<ResetFields>()
    }

    fn validate(&self, fields: &Fields) -> Result<(), FieldError> {
        ResetFields::from_fields(fields).map(|_| ())
    }

    fn needs_confirmation(&self, fields: &Fields) -> bool {
        ResetFields::from_fields(fields).is_ok_and(|f| f.mode == Mode::Hard)
    }

    /// A hard reset writes the target's tree; a mixed one reads it into the index, so a
    /// file on disk at a path it tracks becomes tracked, and a restore removes it again
    /// unless the point holds it.
    fn checks_out(&self, fields: &Fields, pins: &Pins) -> Vec<Checkout> {
        match ResetFields::from_fields(fields) {
            Ok(f) if f.mode != Mode::Soft => Checkout::of(&pins.0, "targetOid"),
            _ => Vec::new(),
        }
    }

    fn touched_refs(&self, fields: &Fields, pins: &Pins) -> Result<Vec<String>, OpError> {
        Ok(self.intent(fields, pins)?.moved_refs())
    }

    async fn pin(&self, ctx: Ctx<'_>, fields: &Fields) -> Result<Pins, OpError> {
        let f = ResetFields::from_fields(fields)?;
        if f.mode != Mode::Soft {
            ctx.repo.require_worktree()?;
        }
        let pins = read_refs(ctx, &f).await?;
        check_born(&pins)?;
        Ok(Pins(pins))
    }

    async fn late_pins(
        &self,
        ctx: Ctx<'_>,
        fields: &Fields,
        _pins: &Pins,
    ) -> Result<Option<Fields>, OpError> {
        let f = ResetFields::from_fields(fields)?;
        Ok(read_changes(ctx, &f)
            .await?
            .map(|changes| Fields::from_iter([("changes".to_owned(), changes)])))
    }

    async fn preview(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<Value, OpError> {
        let f = ResetFields::from_fields(fields)?;
        preview(ctx, &f, &pins.0).await
    }

    async fn revalidate(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<(), OpError> {
        let f = ResetFields::from_fields(fields)?;
        let now = match read_pins(ctx, &f).await {
            Err(OpError::Invalid { .. }) => json!({"targetOid": null}),
            other => other?,
        };
        let mut expected = pins.0.clone();
        if now.get("head").is_none() {
            expected = json!({"targetOid": expected["targetOid"]});
        }
        pins::compare(&expected, &now)
    }

    fn intent(&self, _fields: &Fields, pins: &Pins) -> Result<Intent, OpError> {
        let head = pinned(&pins.0, "head")?.as_str().to_owned();
        let target = pinned(&pins.0, "targetOid")?.as_str().to_owned();
        let mut intent = Intent::default();
        match pins.0["head"]["symbolic"].as_str() {
            Some(branch) => {
                let on = Expect::Symbolic {
                    target: branch.to_owned(),
                };
                intent.pre.insert("HEAD".into(), on.clone());
                intent.post.insert("HEAD".into(), on);
                intent
                    .pre
                    .insert(branch.to_owned(), Expect::At { oid: head });
                intent
                    .post
                    .insert(branch.to_owned(), Expect::At { oid: target });
            }
            None => {
                intent
                    .pre
                    .insert("HEAD".into(), Expect::Detached { oid: head });
                intent
                    .post
                    .insert("HEAD".into(), Expect::Detached { oid: target });
            }
        }
        Ok(intent)
    }

    async fn execute(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<Fields, OpError> {
        let f = ResetFields::from_fields(fields)?;
        let target = pinned(&pins.0, "targetOid")?;
        let dir = ctx.repo.worktree.as_deref().unwrap_or(&ctx.repo.git_dir);
        let w = GitWrite::new(dir, ctx.cancel);
        // The user's own name, revalidated against `target` under the repository lock just
        // before: git writes `reset: moving to <name>` as after the same command by hand.
        // Should the name move in between, the intent check after the write sees a tip
        // other than `target`.
        checked(w.reset(f.mode.git(), &f.target_ref).await)?;
        let mut out = Fields::new();
        out.insert("commitSha".into(), json!(target.as_str()));
        out.insert("mode".into(), json!(f.mode));
        out.insert(
            "previousSha".into(),
            json!(pinned(&pins.0, "head")?.as_str()),
        );
        Ok(out)
    }
}

/// The card: the commits left behind (and gained), and for `hard` what is overwritten.
async fn preview(ctx: Ctx<'_>, f: &ResetFields, pins: &Value) -> Result<Value, OpError> {
    let git = Git::new(ctx.repo, ctx.cancel);
    let head = pinned(pins, "head")?;
    let target = pinned(pins, "targetOid")?;
    let behind = commits_only_in(&git, &head, &target).await?;
    let gained = commits_only_in(&git, &target, &head).await?;
    let mut out = json!({
        "targetRef": f.target_ref,
        "targetOid": target.as_str(),
        "headOid": head.as_str(),
        "branch": pins["head"]["symbolic"],
        "mode": f.mode,
        "commitsLeftBehind": behind,
        "commitsGained": gained,
    });
    if f.mode == Mode::Hard {
        out["overwritten"] = overwritten(ctx, pins, &target).await?;
    }
    Ok(out)
}

/// Commits reachable from `tip` but not from `other`, newest first, with subjects; at
/// most [`MAX_COMMITS`] listed, all counted.
async fn commits_only_in(git: &Git<'_>, tip: &Oid, other: &Oid) -> Result<Value, OpError> {
    let walk = log::only_in(git, tip, Hide::Commit(other), MAX_COMMITS, None).await?;
    let listed: Vec<Value> = walk
        .commits
        .iter()
        .map(|c| json!({"sha": c.oid.as_str(), "subject": c.subject}))
        .collect();
    Ok(json!({"total": walk.seen, "commits": listed}))
}

/// What a hard reset overwrites: each tracked change (from the pins), and each untracked
/// file at a path the target tracks.
async fn overwritten(ctx: Ctx<'_>, pins: &Value, target: &Oid) -> Result<Value, OpError> {
    let git = Git::new(ctx.repo, ctx.cancel);
    let mut files: Vec<Value> = pins["changes"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(path, state)| json!({"path": path, "status": state["status"]}))
        .collect();
    let untracked = pins::changes(&git, None).await?;
    let untracked: Vec<String> = untracked
        .into_iter()
        .filter(|c| c.xy == "??")
        .map(|c| c.path)
        .collect();
    if !untracked.is_empty() {
        for path in head_tree::tracked_of(&git, target, &untracked).await? {
            files.push(json!({"path": String::from_utf8_lossy(&path), "status": "untracked"}));
        }
    }
    Ok(Value::Array(files))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(v: Value) -> Fields {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn mode_defaults_to_mixed_and_hard_needs_the_checkbox() {
        let f = ResetFields::from_fields(&fields(json!({"targetRef": "HEAD~1"}))).unwrap();
        assert_eq!(f.mode, Mode::Mixed);
        assert!(Reset.needs_confirmation(&fields(json!({"targetRef": "x", "mode": "hard"}))));
        assert!(!Reset.needs_confirmation(&fields(json!({"targetRef": "x", "mode": "soft"}))));
        for (v, field) in [
            (json!({}), "targetRef"),
            (json!({"targetRef": "--hard"}), "targetRef"),
            (json!({"targetRef": "x", "mode": "keep"}), "mode"),
            (json!({"targetRef": "x", "paths": ["a"]}), "fields"),
        ] {
            let err = ResetFields::from_fields(&fields(v.clone())).unwrap_err();
            assert_eq!(err.field, field, "{v} → {err}");
        }
    }
}
