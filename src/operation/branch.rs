//! `branch`: create a branch at a start point and, by default, check it out.
//!
//! Without checkout the branch is created with `update-ref` guarded on the name being
//! absent, so a branch created meanwhile is never overwritten; with checkout, `switch -c`
//! creates and checks out in one step (local changes carried over as git does, hooks as
//! configured). The start point is resolved to a commit when proposed and that commit,
//! not the name, is what the branch starts at.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::commit::checked;
use super::fields::{ensure, parse, schema_of};
use super::intent::{Found, read_ref};
use super::paths::check_branch;
use super::{Checkout, Ctx, Expect, Fields, Intent, OpError, Operation, Pins, pins};
use crate::gateway::api::FieldError;
use crate::git::write::GitWrite;
use crate::git::{Git, Rev};

/// The fields of a `branch` proposal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BranchFields {
    /// The new branch's name (`feature/x`).
    #[schemars(length(min = 1, max = 255))]
    pub name: String,
    /// Where it starts: a branch, tag or commit; `HEAD` when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1024))]
    pub start_point: Option<String>,
    /// Check the new branch out (default true).
    #[serde(default = "yes")]
    pub checkout: bool,
}

fn yes() -> bool {
    true
}

const NAMES: &[&str] = &["name", "startPoint", "checkout"];

impl BranchFields {
    pub fn from_fields(fields: &Fields) -> Result<BranchFields, FieldError> {
        let f: BranchFields = parse(fields, NAMES)?;
        check_branch("name", &f.name)?;
        if let Some(start) = &f.start_point {
            let ok = Rev::parse("startPoint", start).is_ok();
            ensure(ok, "startPoint", || {
                "expected a branch, tag or commit (not starting with '-', no control characters)"
                    .into()
            })?;
        }
        Ok(f)
    }

    fn start(&self) -> &str {
        self.start_point.as_deref().unwrap_or("HEAD")
    }

    fn refname(&self) -> String {
        format!("refs/heads/{}", self.name)
    }
}

/// The `branch` operation type.
pub struct Branch;

/// The name free, the start point's commit, and HEAD when the branch is checked out.
async fn read_pins(ctx: Ctx<'_>, f: &BranchFields) -> Result<Value, OpError> {
    let git = Git::new(ctx.repo, ctx.cancel);
    let start = Rev::parse("startPoint", f.start())?;
    let head = pins::head(&git).await?;
    // HEAD was just read from its files; any other start point is git's to resolve.
    let start_oid = match (&head, f.start_point.is_none()) {
        (Found::Symbolic { oid: Some(oid), .. } | Found::At(oid), true) => oid.clone(),
        _ => git.resolve_named_commit("startPoint", &start).await?,
    };
    let existing = read_ref(&git, &f.refname()).await?;
    let mut out = json!({"branch": existing.to_json(), "startOid": start_oid.as_str()});
    if f.checkout {
        out["head"] = head.to_json();
    }
    Ok(out)
}

#[async_trait]
impl Operation for Branch {
    fn kind(&self) -> &'static str {
        "branch"
    }

    fn title(&self) -> &'static str {
        "Propose a branch"
    }

    fn description(&self) -> &'static str {
        "Propose creating (and optionally checking out) a branch from a start point."
    }

    fn fields_schema(&self) -> Value {
        schema_of::<BranchFields>()
    }

    fn validate(&self, fields: &Fields) -> Result<(), FieldError> {
        BranchFields::from_fields(fields).map(|_| ())
    }

    fn checks_out(&self, fields: &Fields, pins: &Pins) -> Vec<Checkout> {
        match BranchFields::from_fields(fields) {
            Ok(f) if f.checkout => Checkout::of(&pins.0, "startOid"),
            _ => Vec::new(),
        }
    }

    fn touched_refs(&self, fields: &Fields, pins: &Pins) -> Result<Vec<String>, OpError> {
        Ok(self.intent(fields, pins)?.moved_refs())
    }

    async fn pin(&self, ctx: Ctx<'_>, fields: &Fields) -> Result<Pins, OpError> {
        let f = BranchFields::from_fields(fields)?;
        // `check-ref-format --branch`, in-process: the fields already passed the
        // branch-name rules, and `refs/heads/<name>` must be a well-formed ref.
        if crate::git::args::check_ref_name("name", &f.refname()).is_err() {
            return Err(OpError::invalid(
                "name",
                "git does not accept it as a branch name",
            ));
        }
        let pins = read_pins(ctx, &f).await;
        if f.checkout && ctx.repo.worktree.is_none() {
            return Err(OpError::invalid(
                "checkout",
                "a bare repository has no worktree to check out in",
            ));
        }
        let pins = pins?;
        if !pins["branch"].is_null() {
            return Err(OpError::invalid(
                "name",
                format!("branch `{}` already exists", f.name),
            ));
        }
        Ok(Pins(pins))
    }

    async fn preview(&self, _ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<Value, OpError> {
        let f = BranchFields::from_fields(fields)?;
        Ok(json!({
            "name": f.name,
            "startPoint": f.start(),
            "startOid": pins.0["startOid"],
            "checkout": f.checkout,
        }))
    }

    async fn revalidate(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<(), OpError> {
        let f = BranchFields::from_fields(fields)?;
        let now = match read_pins(ctx, &f).await {
            // The start point vanished: report it as moved, not as a bad argument.
            Err(OpError::Invalid { .. }) => json!({"startOid": null}),
            other => other?,
        };
        let mut expected = pins.0.clone();
        if now.get("branch").is_none() {
            expected = json!({"startOid": expected["startOid"]});
        }
        pins::compare(&expected, &now)
    }

    fn intent(&self, fields: &Fields, pins: &Pins) -> Result<Intent, OpError> {
        let f = BranchFields::from_fields(fields)?;
        let start = pins.0["startOid"]
            .as_str()
            .ok_or_else(|| OpError::Internal("no start pinned".into()))?
            .to_owned();
        let mut intent = Intent::default();
        intent.pre.insert(f.refname(), Expect::Absent);
        intent.post.insert(f.refname(), Expect::At { oid: start });
        if f.checkout {
            let head = &pins.0["head"];
            let before = match (head["symbolic"].as_str(), head.as_str()) {
                (Some(target), _) => Expect::Symbolic {
                    target: target.to_owned(),
                },
                (None, Some(oid)) => Expect::Detached {
                    oid: oid.to_owned(),
                },
                _ => Expect::Absent,
            };
            intent.pre.insert("HEAD".into(), before);
            intent.post.insert(
                "HEAD".into(),
                Expect::Symbolic {
                    target: f.refname(),
                },
            );
        }
        Ok(intent)
    }

    async fn execute(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<Fields, OpError> {
        let f = BranchFields::from_fields(fields)?;
        let start = pins.0["startOid"]
            .as_str()
            .ok_or_else(|| OpError::Internal("no start pinned".into()))?;
        let w = GitWrite::new(&ctx.repo.path, ctx.cancel);
        if f.checkout {
            // The start point as the user named it (revalidated against `start` just
            // before; the intent check after the write holds the branch to it), so the
            // branch's reflog reads `branch: Created from main` as after `git switch -c`.
            checked(w.switch_new(&f.name, f.start()).await)?;
        } else {
            let message = format!("branch: Created from {}", f.start());
            checked(w.create_ref(&f.refname(), start, &message).await)?;
        }
        let git = Git::new(ctx.repo, ctx.cancel);
        let tip = match read_ref(&git, &f.refname()).await? {
            Found::At(oid) => oid,
            _ => return Err(OpError::git("the branch was not created")),
        };
        let mut out = Fields::new();
        out.insert("branch".into(), json!(f.name));
        out.insert("branchOid".into(), json!(tip.as_str()));
        out.insert("checkedOut".into(), json!(f.checkout));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(v: Value) -> Fields {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn defaults_and_refusals() {
        let f = BranchFields::from_fields(&fields(json!({"name": "feature/x"}))).unwrap();
        assert!(f.checkout);
        assert_eq!(f.start(), "HEAD");
        for (v, field) in [
            (json!({}), "name"),
            (json!({"name": "-f"}), "name"),
            (json!({"name": "a..b"}), "name"),
            (json!({"name": "x", "startPoint": "--orphan"}), "startPoint"),
            (json!({"name": "x", "startPoint": "a\nb"}), "startPoint"),
            (json!({"name": "x", "checkout": "yes"}), "checkout"),
            (json!({"name": "x", "force": true}), "fields"),
        ] {
            let err = BranchFields::from_fields(&fields(v.clone())).unwrap_err();
            assert_eq!(err.field, field, "{v} → {err}");
        }
    }
}
