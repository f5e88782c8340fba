//! `push`: push a local branch to the same-named branch of a remote — the one operation
//! that reaches the network and the user's credential helpers.
//!
//! Without `forceWithLease` git refuses anything but a fast-forward. With it the push is
//! `--force-with-lease=refs/heads/<branch>:<expected>`, `<expected>` being the
//! remote-tracking commit pinned when proposed (empty: the remote branch must not exist),
//! never a bare `--force`; such a card is HIGH risk and needs the person's checkbox.
//!
//! The restore point covers the local side only: the upstream configuration `-u` sets is
//! put back, while the remote-tracking ref stays as the remote has it (a restore never
//! moves one). Undoing a completed push on the remote is a new push proposal back to the
//! old tip, approved on its own ([`undo_fields`]).

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::commit::checked;
use super::fields::{ensure, parse, schema_of};
use super::intent::{Found, read_ref};
use super::paths::check_branch;
use super::{Ctx, Expect, Fields, Intent, OpError, Operation, Pins, pins};
use crate::gateway::api::FieldError;
use crate::git::write::{GitWrite, PushStep};
use crate::git::{Git, Oid};

mod preview;

/// The fields of a `push` proposal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PushFields {
    /// The remote to push to.
    #[serde(default = "origin")]
    #[schemars(length(min = 1, max = 255))]
    pub remote: String,
    /// The local branch to push; default the checked-out one
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 255))]
    pub branch: Option<String>,
    /// Record the remote branch as the local branch's upstream (`git push -u`).
    #[serde(default)]
    pub set_upstream: bool,
    /// Replace the remote branch, only while it is where it was last fetched (`--force-with-lease`). HIGH risk.
    #[serde(default)]
    pub force_with_lease: bool,
    /// Gateway only: push this commit instead of the branch tip (undoing an earlier push).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub revert_to: Option<String>,
}

fn origin() -> String {
    "origin".to_owned()
}

const NAMES: &[&str] = &[
    "remote",
    "branch",
    "setUpstream",
    "forceWithLease",
    "revertTo",
];

impl PushFields {
    pub fn from_fields(fields: &Fields) -> Result<PushFields, FieldError> {
        let f: PushFields = parse(fields, NAMES)?;
        let bad = |c: char| c.is_control() || c.is_whitespace() || ":?*[\\^~".contains(c);
        ensure(
            !f.remote.starts_with('-')
                && !f.remote.contains("..")
                && !f.remote.chars().any(bad)
                && !f.remote.is_empty(),
            "remote",
            || "expected a configured remote's name".into(),
        )?;
        if let Some(branch) = &f.branch {
            check_branch("branch", branch)?;
        }
        if let Some(oid) = &f.revert_to {
            ensure(Oid::parse(oid).is_some(), "revertTo", || {
                "expected a full commit id".into()
            })?;
            ensure(f.force_with_lease, "forceWithLease", || {
                "undoing a push replaces the remote branch: it needs forceWithLease".into()
            })?;
        }
        Ok(f)
    }
}

/// The `push` operation type.
pub struct Push;

/// The branch pushed, its commit (or the undo's commit), the remote-tracking commit last
/// fetched, and the remote's URL being configured.
async fn read_pins(ctx: Ctx<'_>, f: &PushFields) -> Result<Value, OpError> {
    let git = Git::new(ctx.repo, ctx.cancel);
    let branch = match &f.branch {
        Some(b) => b.clone(),
        None => match pins::head(&git).await? {
            Found::Symbolic { target, .. } => target
                .strip_prefix("refs/heads/")
                .map(str::to_owned)
                .ok_or_else(|| OpError::invalid("branch", "HEAD is not on a local branch"))?,
            _ => {
                return Err(OpError::invalid(
                    "branch",
                    "HEAD is detached: name the branch to push",
                ));
            }
        },
    };
    let local = match read_ref(&git, &format!("refs/heads/{branch}")).await? {
        Found::At(oid) => oid,
        _ => {
            return Err(OpError::invalid(
                "branch",
                format!("no local branch `{branch}` with a commit"),
            ));
        }
    };
    if !crate::git::remote::has_url(&git, &f.remote).await? {
        return Err(OpError::invalid(
            "remote",
            format!("no remote `{}` is configured", f.remote),
        ));
    }
    let tracking = read_ref(&git, &tracking_ref(&f.remote, &branch)).await?;
    Ok(json!({
        "branch": branch,
        "localOid": local.as_str(),
        "pushOid": f.revert_to.clone().unwrap_or_else(|| local.as_str().to_owned()),
        "remoteOid": tracking.to_json(),
    }))
}

fn tracking_ref(remote: &str, branch: &str) -> String {
    format!("refs/remotes/{remote}/{branch}")
}

fn pinned<'a>(pins: &'a Pins, key: &str) -> Result<&'a str, OpError> {
    pins.0[key]
        .as_str()
        .ok_or_else(|| OpError::Internal(format!("no {key} pinned")))
}

/// The fields of the proposal that undoes the completed push `fields` → `result`: the
/// same remote branch back to the commit it had, leased on the commit the push left.
pub fn undo_fields(fields: &Fields, result: &Fields) -> Result<Fields, OpError> {
    let f = PushFields::from_fields(fields)?;
    let old = result
        .get("previousRemoteOid")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            OpError::Unsupported("the push created the remote branch: nothing to go back to".into())
        })?;
    let branch = result
        .get("branch")
        .and_then(Value::as_str)
        .ok_or_else(|| OpError::Internal("the push recorded no branch".into()))?;
    let mut out = Fields::new();
    out.insert("remote".into(), json!(f.remote));
    out.insert("branch".into(), json!(branch));
    out.insert("forceWithLease".into(), json!(true));
    out.insert("revertTo".into(), json!(old));
    Ok(out)
}

#[async_trait]
impl Operation for Push {
    fn kind(&self) -> &'static str {
        "push"
    }

    fn title(&self) -> &'static str {
        "Propose a push"
    }

    fn description(&self) -> &'static str {
        "Propose pushing a local branch to the same branch of a remote (optional setUpstream); forceWithLease replaces it only where it was last fetched, flagged HIGH risk."
    }

    fn fields_schema(&self) -> Value {
        let mut schema = schema_of::<PushFields>();
        schema["properties"]["remote"]["default"] = json!("origin");
        schema
    }

    fn validate(&self, fields: &Fields) -> Result<(), FieldError> {
        PushFields::from_fields(fields).map(|_| ())
    }

    fn needs_confirmation(&self, fields: &Fields) -> bool {
        fields.get("forceWithLease").and_then(Value::as_bool) == Some(true)
    }

    fn touched_config(&self, fields: &Fields, pins: &Pins) -> Vec<String> {
        let upstream = fields.get("setUpstream").and_then(Value::as_bool) == Some(true);
        match pins.0["branch"].as_str() {
            Some(branch) if upstream => ["remote", "merge"]
                .map(|k| format!("branch.{branch}.{k}"))
                .to_vec(),
            _ => Vec::new(),
        }
    }

    fn touched_refs(&self, _fields: &Fields, pins: &Pins) -> Result<Vec<String>, OpError> {
        // The remote's branch, as pinned (the checked-out one when no branch was named).
        Ok(vec![format!("refs/heads/{}", pinned(pins, "branch")?)])
    }

    async fn pin(&self, ctx: Ctx<'_>, fields: &Fields) -> Result<Pins, OpError> {
        let f = PushFields::from_fields(fields)?;
        let pins = read_pins(ctx, &f).await?;
        if pins["remoteOid"] == pins["pushOid"] {
            return Err(OpError::invalid(
                "branch",
                "the remote branch is already there: nothing to push",
            ));
        }
        Ok(Pins(pins))
    }

    async fn preview(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<Value, OpError> {
        let f = PushFields::from_fields(fields)?;
        preview::card(ctx, &f, pins).await
    }

    async fn revalidate(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<(), OpError> {
        let f = PushFields::from_fields(fields)?;
        let now = match read_pins(ctx, &f).await {
            Err(OpError::Invalid { field, .. }) => json!({ "moved": field }),
            other => other?,
        };
        pins::compare(&pins.0, &now)
    }

    fn intent(&self, fields: &Fields, pins: &Pins) -> Result<Intent, OpError> {
        let f = PushFields::from_fields(fields)?;
        let tracking = tracking_ref(&f.remote, pinned(pins, "branch")?);
        let before = match pins.0["remoteOid"].as_str() {
            Some(oid) => Expect::At {
                oid: oid.to_owned(),
            },
            None => Expect::Absent,
        };
        let after = Expect::At {
            oid: pinned(pins, "pushOid")?.to_owned(),
        };
        let mut intent = Intent::default();
        intent.pre.insert(tracking.clone(), before);
        intent.post.insert(tracking, after);
        Ok(intent)
    }

    async fn execute(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<Fields, OpError> {
        let f = PushFields::from_fields(fields)?;
        let branch = pinned(pins, "branch")?;
        let push_oid = pinned(pins, "pushOid")?;
        let remote_oid = pins.0["remoteOid"].as_str();
        let destination = format!("refs/heads/{branch}");
        // A plain push names the branch (so -u can record it); an undo names the commit.
        let source = match &f.revert_to {
            Some(oid) => oid.clone(),
            None => destination.clone(),
        };
        let step = PushStep {
            remote: &f.remote,
            source: &source,
            destination: &destination,
            lease: f.force_with_lease.then(|| remote_oid.unwrap_or("")),
            set_upstream: f.set_upstream,
        };
        let w = GitWrite::new(&ctx.repo.path, ctx.cancel);
        checked(w.push(step).await)?;
        let mut out = Fields::new();
        out.insert("remote".into(), json!(f.remote));
        out.insert("branch".into(), json!(branch));
        out.insert("previousRemoteOid".into(), json!(remote_oid));
        out.insert("pushedOid".into(), json!(push_oid));
        let range = match remote_oid {
            Some(old) => format!("{old}..{push_oid}"),
            None => push_oid.to_owned(),
        };
        out.insert("pushedRange".into(), json!(range));
        out.insert("forced".into(), json!(f.force_with_lease));
        out.insert("upstreamSet".into(), json!(f.set_upstream));
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
    fn defaults_refusals_and_the_undo_proposal() {
        let f = PushFields::from_fields(&fields(json!({}))).unwrap();
        assert_eq!(f.remote, "origin");
        assert!(!f.force_with_lease && !f.set_upstream && f.branch.is_none());
        for (v, field) in [
            (json!({"remote": "--upload-pack=x"}), "remote"),
            (json!({"remote": "a b"}), "remote"),
            (json!({"branch": "-f"}), "branch"),
            (json!({"force": true}), "fields"),
            (
                json!({"revertTo": "abc", "forceWithLease": true}),
                "revertTo",
            ),
            (
                json!({"revertTo": "0123456789012345678901234567890123456789"}),
                "forceWithLease",
            ),
        ] {
            let err = PushFields::from_fields(&fields(v.clone())).unwrap_err();
            assert_eq!(err.field, field, "{v} → {err}");
        }
        assert!(Push.fields_schema()["properties"].get("revertTo").is_none());
        let old = "0123456789012345678901234567890123456789";
        let undo = undo_fields(
            &fields(json!({"remote": "up"})),
            &fields(json!({"branch": "main", "previousRemoteOid": old})),
        )
        .unwrap();
        assert_eq!(
            Value::Object(undo),
            json!({"remote": "up", "branch": "main", "forceWithLease": true, "revertTo": old})
        );
        let created = undo_fields(
            &fields(json!({})),
            &fields(json!({"branch": "main", "previousRemoteOid": null})),
        );
        assert!(created.is_err());
    }
}
