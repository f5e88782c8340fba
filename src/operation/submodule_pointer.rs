//! `submodulePointer`: one submodule's pointer (its gitlink), at any depth, brought in
//! line with the submodule in either direction.
//!
//! - `record`: the parent commits only the gitlink, as the submodule's checked-out commit
//!   (`git commit --only -- <relativePath>`, through git's own commit so hooks and signing
//!   apply; anything else staged stays staged, nothing is pushed);
//! - `return`: the submodule checks out the recorded commit, detached (`git switch
//!   --detach <oid>`).
//!
//! The submodule must be initialized, clean and differ from its recorded pointer. Pins
//! are the two OIDs (`submodule.status` reports them; the caller may pass them as
//! expected values) and the parent's HEAD, read without a full status of the parent: only
//! the submodule's own status is read, to know it is clean.
//!
//! A restore point captures the refs of the repository the proposal names. It undoes a
//! `record` made in that repository; it cannot put back a submodule's own HEAD after a
//! `return`, nor a commit recorded in a nested parent, and the card and the result say so.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::commit::{MAX_MESSAGE_BYTES, checked};
use super::fields::{ensure, parse, schema_of};
use super::paths::check_rel_path;
use super::{Ctx, Fields, Intent, Moved, OpError, Operation, Pins, pins};
use crate::gateway::api::FieldError;
use crate::git::status::{IgnoreSubmodules, StatusQuery};
use crate::git::write::GitWrite;
use crate::git::{Git, Oid, Repo, ls_files, repo};

/// Gitlinks of one parent read at most to find the one named.
const MAX_GITLINKS: usize = 10_000;

/// Which way the pointer and the submodule are brought together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Commit the submodule's checked-out commit as the parent's pointer.
    Record,
    /// Check out the recorded commit in the submodule, detached.
    Return,
}

/// The fields of a `submodulePointer` proposal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubmodulePointerFields {
    /// `record` (commit the gitlink) or `return` (check out the recorded commit).
    pub action: Action,
    /// The repository recording the submodule, relative to the top; empty for the top.
    #[serde(default)]
    #[schemars(length(max = 4096))]
    pub parent_path: String,
    /// The submodule's path inside its parent, as `submodule.status` reports it.
    #[schemars(length(min = 1, max = 4096))]
    pub relative_path: String,
    /// The commit message; required for `record`, refused for `return`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 65536))]
    pub message: Option<String>,
    /// The pointer the parent must record (`recordedOid` of `submodule.status`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^([0-9a-f]{40}|[0-9a-f]{64})$"))]
    pub expected_recorded_oid: Option<String>,
    /// The commit the submodule must have checked out (`checkedOutOid`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^([0-9a-f]{40}|[0-9a-f]{64})$"))]
    pub expected_checked_out_oid: Option<String>,
}

const NAMES: &[&str] = &[
    "action",
    "parentPath",
    "relativePath",
    "message",
    "expectedRecordedOid",
    "expectedCheckedOutOid",
];

impl SubmodulePointerFields {
    pub fn from_fields(fields: &Fields) -> Result<SubmodulePointerFields, FieldError> {
        let f: SubmodulePointerFields = parse(fields, NAMES)?;
        if !f.parent_path.is_empty() {
            check_rel_path("parentPath", &f.parent_path)?;
        }
        check_rel_path("relativePath", &f.relative_path)?;
        match (f.action, &f.message) {
            (Action::Record, None) => {
                return Err(FieldError {
                    field: "message",
                    reason: "`record` needs a commit message".into(),
                });
            }
            (Action::Record, Some(m)) => {
                ensure(!m.trim().is_empty(), "message", || {
                    "say what the commit does".into()
                })?;
                ensure(m.len() <= MAX_MESSAGE_BYTES, "message", || {
                    format!("longer than {MAX_MESSAGE_BYTES} bytes")
                })?;
                ensure(!m.contains('\0'), "message", || {
                    "must not contain NUL".into()
                })?;
            }
            (Action::Return, Some(_)) => {
                return Err(FieldError {
                    field: "message",
                    reason: "`return` commits nothing; leave the message out".into(),
                });
            }
            (Action::Return, None) => {}
        }
        for (field, oid) in [
            ("expectedRecordedOid", &f.expected_recorded_oid),
            ("expectedCheckedOutOid", &f.expected_checked_out_oid),
        ] {
            if let Some(oid) = oid {
                ensure(Oid::parse(oid).is_some(), field, || {
                    "expected a full lowercase commit id (40 or 64 hex digits)".into()
                })?;
            }
        }
        Ok(f)
    }

    /// The submodule's path from the top of the repository.
    fn full_path(&self) -> String {
        let rel = self.relative_path.trim_end_matches('/');
        match self.parent_path.trim_end_matches('/') {
            "" => rel.to_owned(),
            parent => format!("{parent}/{rel}"),
        }
    }
}

/// The `submodulePointer` operation type.
pub struct SubmodulePointer;

/// The parent repository and the submodule, both opened as repositories of their own.
struct Located {
    parent: Arc<Repo>,
    sub: Arc<Repo>,
}

/// Opens `dir` as the top of its own working tree, or explains why it is not one.
async fn open_own(
    ctx: Ctx<'_>,
    field: &str,
    dir: PathBuf,
    what: &str,
) -> Result<Arc<Repo>, OpError> {
    let not = || OpError::invalid(field, format!("{what} is not checked out"));
    if !dir.is_dir() || std::fs::symlink_metadata(dir.join(".git")).is_err() {
        return Err(not());
    }
    let opened = repo::open_path(ctx.config, field, &dir, ctx.cancel)
        .await
        .map_err(|_| not())?;
    let canonical = std::fs::canonicalize(&dir).map_err(|_| not())?;
    if opened.worktree.as_deref() != Some(canonical.as_path()) {
        return Err(not());
    }
    Ok(opened)
}

async fn locate(ctx: Ctx<'_>, f: &SubmodulePointerFields) -> Result<Located, OpError> {
    let top = ctx.repo.require_worktree()?;
    let parent = if f.parent_path.is_empty() {
        open_own(ctx, "repoPath", top.to_path_buf(), "the repository").await?
    } else {
        let what = format!("the parent submodule `{}`", f.parent_path);
        let parent = open_own(ctx, "parentPath", top.join(&f.parent_path), &what).await?;
        managed("parentPath", ctx.repo, &f.parent_path, &parent, &what)?;
        parent
    };
    let parent_top = parent.require_worktree()?.to_path_buf();
    let what = format!("submodule `{}`", f.full_path());
    let sub = open_own(
        ctx,
        "relativePath",
        parent_top.join(&f.relative_path),
        &what,
    )
    .await?;
    managed("relativePath", &parent, &f.relative_path, &sub, &what)?;
    Ok(Located { parent, sub })
}

/// Refuses `sub` unless it is the submodule git manages for `parent` at `rel`: checked
/// out at that very path (no symbolic link on the way), with its git directory inside
/// the parent's `modules` or in its own `.git` directory — not one a `.git` file points
/// to elsewhere, which would make the write land in another repository.
fn managed(field: &str, parent: &Repo, rel: &str, sub: &Repo, what: &str) -> Result<(), OpError> {
    let refuse = |why: &str| OpError::invalid(field, format!("{what} {why}"));
    let canonical = |p: &Path| std::fs::canonicalize(p).ok();
    let top = parent.require_worktree()?;
    let expected = top.join(rel.trim_end_matches('/'));
    if sub.worktree.as_deref() != Some(expected.as_path()) {
        return Err(refuse(
            "is reached through a symbolic link: not the submodule git manages there",
        ));
    }
    let git_dir = canonical(&sub.common_dir);
    let own = canonical(&expected.join(".git"));
    let modules = canonical(&parent.common_dir.join("modules"));
    let inside_modules = match (&git_dir, &modules) {
        (Some(dir), Some(modules)) => dir.starts_with(modules),
        _ => false,
    };
    if git_dir.is_none() || !(inside_modules || git_dir == own) {
        return Err(refuse(
            "has a git directory outside its parent's: not the submodule git manages there",
        ));
    }
    Ok(())
}

/// The gitlink the parent's index records at `rel`; `None` when there is none. Read
/// from the index file; git lists the gitlinks of an index the reader leaves to it.
async fn recorded(git: &Git<'_>, rel: &str) -> Result<Option<Oid>, OpError> {
    let rel = rel.trim_end_matches('/').as_bytes();
    let (index, format, wanted) = (
        git.repo.git_dir.join("index"),
        git.repo.object_format,
        rel.to_vec(),
    );
    let read = crate::safe_file::off_thread(git.cancel(), move || {
        crate::git::index_lookup::gitlink(&index, format, &wanted)
    })
    .await
    .map_err(|e| OpError::Internal(e.to_string()))?;
    if let Some(found) = read {
        return Ok(found);
    }
    let links = ls_files::gitlinks(git, MAX_GITLINKS).await?;
    Ok(links
        .merged
        .into_iter()
        .find(|e| e.path == rel)
        .map(|e| e.oid))
}

/// The parent's HEAD, the recorded pointer, the submodule's checked-out commit and
/// whether it has local changes.
async fn read_pins(
    ctx: Ctx<'_>,
    f: &SubmodulePointerFields,
    at: &Located,
) -> Result<Value, OpError> {
    let parent = Git::new(&at.parent, ctx.cancel);
    let sub = Git::new(&at.sub, ctx.cancel);
    let status = StatusQuery {
        ignore_submodules: Some(IgnoreSubmodules::Dirty),
        ..StatusQuery::default()
    };
    let (head, recorded, checked_out, status) = tokio::join!(
        pins::head(&parent),
        recorded(&parent, &f.relative_path),
        pins::head_commit(&sub),
        status.read(&sub, 0)
    );
    Ok(json!({
        "parentHead": head?.to_json(),
        "recordedOid": recorded?.as_ref().map(Oid::as_str),
        "checkedOutOid": checked_out?.as_ref().map(Oid::as_str),
        "dirty": status?.counts.entries > 0,
    }))
}

/// The caller's expected OIDs against what was read: a mismatch is stale, not invalid.
fn check_expected(f: &SubmodulePointerFields, now: &Value) -> Result<(), OpError> {
    let mut moved = Vec::new();
    for (key, expected) in [
        ("recordedOid", &f.expected_recorded_oid),
        ("checkedOutOid", &f.expected_checked_out_oid),
    ] {
        if let Some(expected) = expected
            && now[key].as_str() != Some(expected.as_str())
        {
            moved.push(Moved {
                what: format!("submodule {} {key}", f.full_path()),
                expected: json!(expected),
                found: now[key].clone(),
            });
        }
    }
    if moved.is_empty() {
        Ok(())
    } else {
        Err(OpError::Stale { moved })
    }
}

/// Refuses a submodule that is not in a state this operation can change.
fn check_usable(f: &SubmodulePointerFields, pins: &Value) -> Result<(), OpError> {
    let path = f.full_path();
    let field = "relativePath";
    if pins["recordedOid"].is_null() {
        return Err(OpError::invalid(
            field,
            format!("`{path}` is not a submodule its parent's index records"),
        ));
    }
    if pins["checkedOutOid"].is_null() {
        return Err(OpError::invalid(
            field,
            format!("submodule `{path}` has no commit checked out"),
        ));
    }
    if pins["dirty"] == true {
        return Err(OpError::invalid(
            field,
            format!("submodule `{path}` has local changes; commit or discard them first"),
        ));
    }
    if pins["recordedOid"] == pins["checkedOutOid"] {
        return Err(OpError::invalid(
            field,
            format!("submodule `{path}` is already at its recorded pointer"),
        ));
    }
    Ok(())
}

/// What a restore point taken before this write can put back.
fn undo_note(f: &SubmodulePointerFields) -> (bool, &'static str) {
    match (f.action, f.parent_path.is_empty()) {
        (Action::Record, true) => (
            true,
            "Restore moves the branch back to before the pointer commit.",
        ),
        (Action::Record, false) => (
            false,
            "The commit is made in a nested submodule: a restore point of this repository \
             cannot take it back; undo it there by hand.",
        ),
        (Action::Return, _) => (
            false,
            "A restore point cannot put the submodule's previous checkout back; check out \
             checkedOutBefore in the submodule to undo it.",
        ),
    }
}

fn oid_at<'a>(pins: &'a Pins, key: &str) -> Result<&'a str, OpError> {
    pins.0[key]
        .as_str()
        .ok_or_else(|| OpError::Internal(format!("no {key} pinned")))
}

#[async_trait]
impl Operation for SubmodulePointer {
    fn kind(&self) -> &'static str {
        "submodulePointer"
    }

    fn title(&self) -> &'static str {
        "Propose a submodule pointer change"
    }

    fn description(&self) -> &'static str {
        "Propose recording (record, needs message) or returning to (return) one submodule pointer at any depth, optionally pinned to the OIDs submodule.status reported."
    }

    fn fields_schema(&self) -> Value {
        schema_of::<SubmodulePointerFields>()
    }

    fn validate(&self, fields: &Fields) -> Result<(), FieldError> {
        SubmodulePointerFields::from_fields(fields).map(|_| ())
    }

    fn touched_paths(&self, fields: &Fields) -> Vec<String> {
        SubmodulePointerFields::from_fields(fields)
            .map(|f| vec![f.full_path()])
            .unwrap_or_default()
    }

    fn touched_refs(&self, fields: &Fields, pins: &Pins) -> Result<Vec<String>, OpError> {
        let f = SubmodulePointerFields::from_fields(fields)?;
        match f.action {
            // A commit in the parent (the proposal's repository or one nested in it).
            Action::Record => Ok(Intent::new_commit(&pins.0["parentHead"])?.moved_refs()),
            // The submodule's HEAD, detached onto the recorded commit.
            Action::Return => Ok(vec!["HEAD".to_owned()]),
        }
    }

    async fn pin(&self, ctx: Ctx<'_>, fields: &Fields) -> Result<Pins, OpError> {
        let f = SubmodulePointerFields::from_fields(fields)?;
        let at = locate(ctx, &f).await?;
        let pins = read_pins(ctx, &f, &at).await?;
        check_expected(&f, &pins)?;
        check_usable(&f, &pins)?;
        Ok(Pins(pins))
    }

    async fn preview(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<Value, OpError> {
        let f = SubmodulePointerFields::from_fields(fields)?;
        let recorded = oid_at(pins, "recordedOid")?;
        let checked_out = oid_at(pins, "checkedOutOid")?;
        let at = locate(ctx, &f).await?;
        let drift = drift(ctx, &at.sub, recorded, checked_out).await?;
        let (restorable, note) = undo_note(&f);
        let mut out = json!({
            "action": f.action,
            "path": f.full_path(),
            "parentPath": f.parent_path,
            "relativePath": f.relative_path,
            "recordedOid": recorded,
            "checkedOutOid": checked_out,
            "drift": drift,
            "restoreCoversSubmodule": restorable,
            "restoreNote": note,
        });
        match f.action {
            Action::Record => {
                out["oldPointer"] = json!(recorded);
                out["newPointer"] = json!(checked_out);
                out["message"] = json!(f.message);
            }
            Action::Return => {
                out["checkedOutBefore"] = json!(checked_out);
                out["checkedOutAfter"] = json!(recorded);
            }
        }
        Ok(out)
    }

    async fn revalidate(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<(), OpError> {
        let f = SubmodulePointerFields::from_fields(fields)?;
        let now = match locate(ctx, &f).await {
            Ok(at) => read_pins(ctx, &f, &at).await?,
            // The submodule went away: every pin moved.
            Err(OpError::Invalid { .. }) => json!({}),
            Err(e) => return Err(e),
        };
        pins::compare(&pins.0, &now)
    }

    fn intent(&self, fields: &Fields, pins: &Pins) -> Result<Intent, OpError> {
        let f = SubmodulePointerFields::from_fields(fields)?;
        // Only a commit in the repository the proposal names moves refs it owns; the
        // other writes happen in another repository, which no restore point captures.
        if f.action != Action::Record || !f.parent_path.is_empty() {
            return Ok(Intent::default());
        }
        Intent::new_commit(&pins.0["parentHead"])
    }

    async fn execute(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<Fields, OpError> {
        let f = SubmodulePointerFields::from_fields(fields)?;
        let at = locate(ctx, &f).await?;
        let recorded = oid_at(pins, "recordedOid")?;
        let checked_out = oid_at(pins, "checkedOutOid")?;
        let mut out = Fields::new();
        out.insert("path".into(), json!(f.full_path()));
        match f.action {
            Action::Record => {
                let message = f.message.as_deref().unwrap_or_default();
                let only = [f.relative_path.trim_end_matches('/').to_owned()];
                let w = GitWrite::new(at.parent.require_worktree()?, ctx.cancel);
                checked(w.commit(message, Some(&only)).await)?;
                let git = Git::new(&at.parent, ctx.cancel);
                let sha = git
                    .head()
                    .await?
                    .ok_or_else(|| OpError::git("the commit left HEAD unborn"))?;
                out.insert("commitSha".into(), json!(sha.as_str()));
                out.insert("oldPointer".into(), json!(recorded));
                out.insert("newPointer".into(), json!(checked_out));
            }
            Action::Return => {
                let w = GitWrite::new(at.sub.require_worktree()?, ctx.cancel);
                checked(w.switch_detach(recorded).await)?;
                out.insert("checkedOutBefore".into(), json!(checked_out));
                out.insert("checkedOutOid".into(), json!(recorded));
            }
        }
        let (restorable, note) = undo_note(&f);
        out.insert("restoreCoversSubmodule".into(), json!(restorable));
        if !restorable {
            out.insert("restoreNote".into(), json!(note));
        }
        Ok(out)
    }
}

/// Commits on each side: in the checked-out commit and not the recorded one (`ahead`),
/// and the other way round (`behind`); null when the submodule lacks one of them.
async fn drift(
    ctx: Ctx<'_>,
    sub: &Repo,
    recorded: &str,
    checked_out: &str,
) -> Result<Value, OpError> {
    let git = Git::new(sub, ctx.cancel);
    let (Some(recorded), Some(checked_out)) = (Oid::parse(recorded), Oid::parse(checked_out))
    else {
        return Ok(Value::Null);
    };
    match crate::git::log::left_right(&git, &recorded, &checked_out).await {
        Ok((behind, ahead)) => Ok(json!({"ahead": ahead, "behind": behind})),
        Err(_) => Ok(Value::Null),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(v: Value) -> Fields {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn valid_fields_and_the_full_path() {
        let f = SubmodulePointerFields::from_fields(&fields(
            json!({"action": "record", "relativePath": "libs/a", "message": "Bump a"}),
        ))
        .unwrap();
        assert_eq!(f.full_path(), "libs/a");
        let nested = SubmodulePointerFields::from_fields(&fields(json!({
            "action": "return", "parentPath": "libs/a", "relativePath": "deep",
            "expectedRecordedOid": "a".repeat(40),
        })))
        .unwrap();
        assert_eq!(nested.full_path(), "libs/a/deep");
        assert_eq!(
            SubmodulePointer.touched_paths(&fields(json!({
                "action": "return", "parentPath": "x", "relativePath": "y"
            }))),
            ["x/y"]
        );
    }

    #[test]
    fn bad_fields_name_the_field() {
        let oid = "b".repeat(40);
        for (v, field) in [
            (json!({"relativePath": "a"}), "action"),
            (json!({"action": "bump", "relativePath": "a"}), "action"),
            (json!({"action": "record", "relativePath": "a"}), "message"),
            (
                json!({"action": "record", "relativePath": "a", "message": " "}),
                "message",
            ),
            (
                json!({"action": "return", "relativePath": "a", "message": "m"}),
                "message",
            ),
            (
                json!({"action": "return", "relativePath": "../a"}),
                "relativePath",
            ),
            (json!({"action": "return"}), "relativePath"),
            (
                json!({"action": "return", "relativePath": "a", "parentPath": "/etc"}),
                "parentPath",
            ),
            (
                json!({"action": "return", "relativePath": "a", "expectedRecordedOid": "abc"}),
                "expectedRecordedOid",
            ),
            (
                json!({"action": "return", "relativePath": "a",
                       "expectedCheckedOutOid": oid.to_uppercase()}),
                "expectedCheckedOutOid",
            ),
            (
                json!({"action": "return", "relativePath": "a", "force": true}),
                "fields",
            ),
        ] {
            let err = SubmodulePointerFields::from_fields(&fields(v.clone())).unwrap_err();
            assert_eq!(err.field, field, "{v} → {err}");
        }
    }

    #[test]
    fn schema_names_the_seed_fields() {
        let schema = SubmodulePointer.fields_schema();
        assert_eq!(schema["required"], json!(["action", "relativePath"]));
        let props = schema["properties"].as_object().unwrap();
        let mut names: Vec<_> = props.keys().map(String::as_str).collect();
        names.sort_unstable();
        let mut want = NAMES.to_vec();
        want.sort_unstable();
        assert_eq!(names, want);
    }
}
