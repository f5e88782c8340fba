//! `branchDelete`: delete local branches whose every commit is kept elsewhere.
//!
//! The agent names branches in up to 20 repositories; the seed's rules decide which go. A
//! branch is kept (and reported `skipped` with the reason) when it has commits that are
//! neither in HEAD nor in its own upstream, when some worktree has it checked out, or
//! when it does not exist. The decision is made when proposed (per repository: the tips
//! and the worktrees' branches from their files, one `for-each-ref --merged=HEAD` and one
//! `for-each-ref` of the upstreams' tracking counts, side by side) and made
//! again under the locks of every repository named: anything that changed in any of them
//! is `stale`, and nothing is deleted anywhere. Each deletion is one `update-ref -d`
//! guarded on the pinned tip, so a tip that moved in between is never deleted (`failed`).
//! Every tip is named in its repository's intent, so that repository's restore point
//! keeps them and Restore recreates the branches. Remote branches are never read as
//! candidates nor touched: names are looked up under `refs/heads/` only.
//!
//! Every repository is opened through the allowed roots when proposed and again when
//! executed; the gateway checks each against the agent policy before a card opens.

use std::collections::BTreeSet;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

mod repos;

use super::commit::checked;
use super::fields::{ensure, parse, schema_of};
use super::paths::check_branch;
use super::{Ctx, Expect, Fields, Intent, OpError, Operation, Pins};
use crate::gateway::api::FieldError;
use crate::git::ref_file::{self, RefValue};
use crate::git::write::GitWrite;
use crate::git::{Git, Oid, refs};
use crate::parse::for_each_ref::Track;

/// Repositories one proposal may name.
pub const MAX_TARGETS: usize = 20;
/// Branches per repository.
pub const MAX_PER_TARGET: usize = 20;
/// Branches in all.
pub const MAX_TOTAL: usize = 100;
/// Worktrees read to see what is checked out.
const MAX_WORKTREES: usize = 1000;

/// One repository and the branches proposed for deletion in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Target {
    /// Absolute path of the repository.
    #[schemars(length(min = 1, max = 4096))]
    pub repo_path: String,
    /// Local branch names (`feature/x`, never `refs/…` or a remote-tracking name).
    #[schemars(length(min = 1, max = 20))]
    pub branches: Vec<String>,
}

/// The fields of a `branchDelete` proposal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BranchDeleteFields {
    /// Up to 20 repositories × 20 branches, 100 branches in all.
    #[schemars(length(min = 1, max = 20))]
    pub targets: Vec<Target>,
}

const NAMES: &[&str] = &["targets"];

impl BranchDeleteFields {
    pub fn from_fields(fields: &Fields) -> Result<BranchDeleteFields, FieldError> {
        let f: BranchDeleteFields = parse(fields, NAMES)?;
        ensure(
            (1..=MAX_TARGETS).contains(&f.targets.len()),
            "targets",
            || format!("expected 1-{MAX_TARGETS} repositories"),
        )?;
        let mut total = 0;
        for t in &f.targets {
            ensure(
                (1..=MAX_PER_TARGET).contains(&t.branches.len()),
                "targets",
                || format!("expected 1-{MAX_PER_TARGET} branches per repository"),
            )?;
            let unique: BTreeSet<&String> = t.branches.iter().collect();
            ensure(unique.len() == t.branches.len(), "targets", || {
                "a branch is named twice".into()
            })?;
            for b in &t.branches {
                check_branch("targets", b)?;
            }
            total += t.branches.len();
        }
        ensure(total <= MAX_TOTAL, "targets", || {
            format!("at most {MAX_TOTAL} branches in all")
        })?;
        Ok(f)
    }
}

fn refname(branch: &str) -> String {
    format!("refs/heads/{branch}")
}

/// The `branchDelete` operation type.
pub struct BranchDelete;

/// Each named branch: its tip (null when absent) and whether it goes, with the reason.
/// Tips and the worktrees' branches come from their files when they can; git answers
/// which branches HEAD contains and how each relates to its upstream, side by side.
async fn assess(git: &Git<'_>, branches: &[String]) -> Result<Value, OpError> {
    let names: Vec<String> = branches.iter().map(|b| refname(b)).collect();
    let head = super::pins::head(git).await?;
    let (tips, upstreams, merged, worktrees) = tokio::join!(
        tips(git, &names),
        refs::upstream_tracks(git, &names),
        merged_into_head(git, &names, head.to_json().is_null()),
        crate::git::worktree::checked_out(git, MAX_WORKTREES)
    );
    let (tips, upstreams, merged) = (tips?, upstreams?, merged?);
    let checked_out: BTreeSet<String> = worktrees?.into_iter().collect();
    let mut out = Vec::new();
    for (branch, name) in branches.iter().zip(&names) {
        let tip = tips.iter().find(|(n, _)| n == name).map(|(_, o)| o.clone());
        let upstream = upstreams.iter().find(|(n, _, _)| n == name);
        let (delete, reason) = match &tip {
            None => (false, "no such local branch".to_owned()),
            Some(_) if checked_out.contains(name) => {
                (false, "checked out in a worktree".to_owned())
            }
            Some(_) if merged.contains(name) => (true, "every commit is in HEAD".to_owned()),
            // Nothing ahead of an upstream that exists: the tip is in its history.
            Some(_) => match upstream {
                Some((_, u, Some(Track::Counts(0, _)))) => {
                    (true, format!("every commit is in its upstream {u}"))
                }
                _ => (
                    false,
                    "has commits that are neither in HEAD nor in its upstream".to_owned(),
                ),
            },
        };
        out.push(json!({
            "branch": branch,
            "tip": tip.as_ref().map(Oid::as_str),
            "delete": delete,
            "reason": reason,
        }));
    }
    Ok(json!({"head": head.to_json(), "branches": out}))
}

/// The named refs that exist, with their commits: from the ref files, or from git when
/// one of them cannot be read there.
async fn tips(git: &Git<'_>, names: &[String]) -> Result<Vec<(String, Oid)>, OpError> {
    let mut found = Vec::new();
    for name in names {
        match ref_file::read(git.repo, name) {
            Some(RefValue::At(oid)) => found.push((name.clone(), oid)),
            Some(RefValue::Absent) => {}
            _ => return Ok(refs::resolve(git, names).await?),
        }
    }
    Ok(found)
}

/// The named branches every commit of which HEAD contains.
async fn merged_into_head(
    git: &Git<'_>,
    names: &[String],
    unborn: bool,
) -> Result<BTreeSet<String>, OpError> {
    if unborn {
        return Ok(BTreeSet::new());
    }
    Ok(refs::merged_into_head(git, names)
        .await?
        .into_iter()
        .collect())
}

#[async_trait]
impl Operation for BranchDelete {
    fn kind(&self) -> &'static str {
        "branchDelete"
    }

    fn title(&self) -> &'static str {
        "Propose deleting merged branches"
    }

    fn description(&self) -> &'static str {
        "Propose deleting merged local branches in one or more repositories; the gateway keeps any branch unmerged, checked out or moved. Remote branches are never touched."
    }

    fn fields_schema(&self) -> Value {
        schema_of::<BranchDeleteFields>()
    }

    fn validate(&self, fields: &Fields) -> Result<(), FieldError> {
        BranchDeleteFields::from_fields(fields).map(|_| ())
    }

    fn touched_refs(&self, fields: &Fields, pins: &Pins) -> Result<Vec<String>, OpError> {
        let mut out = self.intent(fields, pins)?.moved_refs();
        for (_, intent) in self.other_repositories(fields, pins)? {
            out.extend(intent.moved_refs());
        }
        Ok(out)
    }

    async fn pin(&self, ctx: Ctx<'_>, fields: &Fields) -> Result<Pins, OpError> {
        let f = BranchDeleteFields::from_fields(fields)?;
        Ok(Pins(repos::assess_all(ctx, &f).await?))
    }

    async fn preview(
        &self,
        _ctx: Ctx<'_>,
        _fields: &Fields,
        pins: &Pins,
    ) -> Result<Value, OpError> {
        Ok(repos::preview(pins))
    }

    async fn revalidate(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<(), OpError> {
        let f = BranchDeleteFields::from_fields(fields)?;
        let now = repos::assess_all(ctx, &f).await?;
        let moved = repos::moved(&pins.0, &now);
        if moved.is_empty() {
            Ok(())
        } else {
            Err(OpError::Stale { moved })
        }
    }

    fn intent(&self, _fields: &Fields, pins: &Pins) -> Result<Intent, OpError> {
        let own = pins.0["repoPath"].as_str();
        Ok(repos::listed(pins)
            .find(|r| r["repoPath"].as_str() == own)
            .map(intent_in)
            .unwrap_or_default())
    }

    fn other_repositories(
        &self,
        _fields: &Fields,
        pins: &Pins,
    ) -> Result<Vec<(String, Intent)>, OpError> {
        let own = pins.0["repoPath"].as_str();
        Ok(repos::listed(pins)
            .filter(|r| r["repoPath"].as_str() != own)
            .filter_map(|r| Some((r["repoPath"].as_str()?.to_owned(), intent_in(r))))
            .collect())
    }

    async fn execute(
        &self,
        ctx: Ctx<'_>,
        _fields: &Fields,
        pins: &Pins,
    ) -> Result<Fields, OpError> {
        let (mut deleted, mut failed, mut skipped) = (Vec::new(), Vec::new(), Vec::new());
        for r in repos::listed(pins) {
            let path = r["repoPath"].as_str().unwrap_or_default();
            let repo = crate::git::repo::open(ctx.config, "targets", path, ctx.cancel).await?;
            let w = GitWrite::new(&repo.path, ctx.cancel);
            for b in r["branches"].as_array().into_iter().flatten() {
                let branch = b["branch"].as_str().unwrap_or_default().to_owned();
                let entry = |status: &str, reason: Value| {
                    json!({"repoPath": path, "branch": branch, "tip": b["tip"],
                           "status": status, "reason": reason})
                };
                match (b["delete"] == true, b["tip"].as_str()) {
                    (true, Some(tip)) => {
                        let message = format!("branch: deleted {branch} (was {tip})");
                        match checked(w.delete_ref(&refname(&branch), tip, &message).await) {
                            Ok(_) => deleted.push(entry("deleted", b["reason"].clone())),
                            Err(e) => failed.push(entry("failed", json!(e.to_string()))),
                        }
                    }
                    _ => skipped.push(entry("skipped", b["reason"].clone())),
                }
            }
        }
        if deleted.is_empty() && !failed.is_empty() {
            return Err(OpError::git(format!(
                "no branch could be deleted: {}",
                failed
                    .iter()
                    .map(|f| f["reason"].as_str().unwrap_or_default())
                    .collect::<Vec<_>>()
                    .join("; ")
            )));
        }
        let mut out = Fields::new();
        out.insert("deleted".into(), json!(deleted));
        out.insert("failed".into(), json!(failed));
        out.insert("skipped".into(), json!(skipped));
        Ok(out)
    }
}

/// One repository's intent: every named tip as pinned before, and after gone when it is
/// deleted, unchanged when kept.
fn intent_in(repository: &Value) -> Intent {
    let mut intent = Intent::default();
    for b in repository["branches"].as_array().into_iter().flatten() {
        let name = refname(b["branch"].as_str().unwrap_or_default());
        let Some(tip) = b["tip"].as_str() else {
            continue;
        };
        let at = Expect::At {
            oid: tip.to_owned(),
        };
        intent.pre.insert(name.clone(), at.clone());
        let after = if b["delete"] == true {
            Expect::Absent
        } else {
            at
        };
        intent.post.insert(name, after);
    }
    intent
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(v: Value) -> Fields {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn bounds_and_refusals() {
        let ok = json!({"targets": [{"repoPath": "/r", "branches": ["a", "b/c"]}]});
        let f = BranchDeleteFields::from_fields(&fields(ok)).unwrap();
        assert_eq!(f.targets[0].branches, ["a", "b/c"]);
        let many = |repos: usize, each: usize| {
            let targets: Vec<Value> = (0..repos)
                .map(|r| {
                    let b: Vec<String> = (0..each).map(|i| format!("b{r}-{i}")).collect();
                    json!({"repoPath": format!("/r{r}"), "branches": b})
                })
                .collect();
            json!({ "targets": targets })
        };
        assert!(BranchDeleteFields::from_fields(&fields(many(5, 20))).is_ok());
        for v in [
            json!({}),
            json!({"targets": []}),
            many(21, 1),
            many(1, 21),
            many(6, 20),
            json!({"targets": [{"repoPath": "/r", "branches": []}]}),
            json!({"targets": [{"repoPath": "/r", "branches": ["a", "a"]}]}),
            json!({"targets": [{"repoPath": "/r", "branches": ["refs/heads/a"]}]}),
            json!({"targets": [{"repoPath": "/r", "branches": ["-D"]}]}),
            json!({"targets": [{"repoPath": "/r", "branches": ["a"], "force": true}]}),
        ] {
            let err = BranchDeleteFields::from_fields(&fields(v.clone())).unwrap_err();
            assert_eq!(err.field, "targets", "{v} → {err}");
        }
    }
}
