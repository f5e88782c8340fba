//! `rebase`: replay a branch's own commits onto another commit, non-interactively, through
//! git's own `rebase` (hooks as configured, no autostash, no other branch moved along).
//!
//! The onto commit is resolved when proposed and pinned; git is given the user's own name,
//! checked against that commit right before, so hooks and reflogs see what a person
//! typing the command would give them. A conflict never leaves the repository mid-rebase: the rebase is
//! aborted and the failure names the commit it stopped at and the conflicting paths.
//! `interactive: true` is refused by the schema (`const: false`) and by validation, so it
//! never reaches a card.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::fields::{ensure, parse, schema_of};
use super::intent::{Found, read_ref};
use super::paths::check_branch;
use super::{Checkout, Ctx, Expect, Fields, Intent, OpError, Operation, Pins, pins};
use crate::gateway::api::FieldError;
use crate::git::write::GitWrite;
use crate::git::{Git, Oid, Rev};

mod preview;

/// The fields of a `rebase` proposal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RebaseFields {
    /// The commit (branch, tag or id) to replay the branch's commits onto.
    #[schemars(length(min = 1, max = 1024))]
    pub onto_ref: String,
    /// The branch to rebase: `HEAD` (the checked-out branch) or a local branch name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1024))]
    pub current_ref: Option<String>,
    /// Must be false: only a non-interactive rebase can be proposed.
    #[serde(default)]
    pub interactive: bool,
}

const NAMES: &[&str] = &["ontoRef", "currentRef", "interactive"];

impl RebaseFields {
    pub fn from_fields(fields: &Fields) -> Result<RebaseFields, FieldError> {
        let f: RebaseFields = parse(fields, NAMES)?;
        ensure(!f.interactive, "interactive", || {
            "only a non-interactive rebase can be proposed".into()
        })?;
        ensure(
            Rev::parse("ontoRef", &f.onto_ref).is_ok(),
            "ontoRef",
            || {
                "expected a branch, tag or commit (not starting with '-', no control characters)"
                    .into()
            },
        )?;
        if let Some(branch) = f.branch() {
            check_branch("currentRef", branch)?;
        }
        Ok(f)
    }

    /// The branch named by `currentRef`, short form; `None` for `HEAD`.
    pub fn branch(&self) -> Option<&str> {
        let current = self.current_ref.as_deref().unwrap_or("HEAD");
        (current != "HEAD").then(|| current.strip_prefix("refs/heads/").unwrap_or(current))
    }
}

/// The `rebase` operation type.
pub struct Rebase;

/// HEAD, the rebased ref (`refs/heads/x`, or null for a detached HEAD) and its commit,
/// and the onto commit.
async fn read_pins(ctx: Ctx<'_>, f: &RebaseFields) -> Result<Value, OpError> {
    ctx.repo.require_worktree()?;
    let git = Git::new(ctx.repo, ctx.cancel);
    let onto = Rev::parse("ontoRef", &f.onto_ref)?;
    let (head, onto) = tokio::join!(pins::head(&git), git.resolve_named_commit("ontoRef", &onto));
    let (head, onto) = (head?, onto?);
    let (branch, current) = match (f.branch(), &head) {
        (Some(name), _) => {
            let refname = format!("refs/heads/{name}");
            match read_ref(&git, &refname).await? {
                Found::At(oid) => (Some(refname), oid),
                _ => {
                    return Err(OpError::invalid(
                        "currentRef",
                        format!("no local branch `{name}`"),
                    ));
                }
            }
        }
        (
            None,
            Found::Symbolic {
                target,
                oid: Some(oid),
            },
        ) => (Some(target.clone()), oid.clone()),
        (None, Found::At(oid)) => (None, oid.clone()),
        (None, _) => {
            return Err(OpError::invalid(
                "currentRef",
                "HEAD is on an unborn branch: there is nothing to rebase",
            ));
        }
    };
    Ok(json!({
        "head": head.to_json(),
        "branch": branch,
        "currentOid": current.as_str(),
        "ontoOid": onto.as_str(),
    }))
}

fn oid_of(pins: &Pins, key: &str) -> Result<String, OpError> {
    pins.0[key]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| OpError::Internal(format!("no {key} pinned")))
}

#[async_trait]
impl Operation for Rebase {
    fn kind(&self) -> &'static str {
        "rebase"
    }

    fn title(&self) -> &'static str {
        "Propose a rebase"
    }

    fn description(&self) -> &'static str {
        "Propose a non-interactive rebase of a branch (HEAD by default) onto another commit; interactive:true is refused. The card warns that history is rewritten."
    }

    fn fields_schema(&self) -> Value {
        let mut schema = schema_of::<RebaseFields>();
        schema["properties"]["interactive"]["const"] = json!(false);
        schema["properties"]["currentRef"]["default"] = json!("HEAD");
        schema
    }

    fn validate(&self, fields: &Fields) -> Result<(), FieldError> {
        RebaseFields::from_fields(fields).map(|_| ())
    }

    /// The rebased branch (checked out first when it is not HEAD's), the onto commit,
    /// and each commit replayed on it.
    fn checks_out(&self, _fields: &Fields, pins: &Pins) -> Vec<Checkout> {
        let mut out = Checkout::of(&pins.0, "ontoOid");
        out.extend(
            Checkout::of(&pins.0, "currentOid")
                .into_iter()
                .map(|c| Checkout {
                    since: pins.0["ontoOid"].as_str().map(str::to_owned),
                    ..c
                }),
        );
        out
    }

    fn touched_refs(&self, fields: &Fields, pins: &Pins) -> Result<Vec<String>, OpError> {
        Ok(self.intent(fields, pins)?.moved_refs())
    }

    async fn pin(&self, ctx: Ctx<'_>, fields: &Fields) -> Result<Pins, OpError> {
        let f = RebaseFields::from_fields(fields)?;
        let pins = read_pins(ctx, &f).await?;
        let git = Git::new(ctx.repo, ctx.cancel);
        let parse = |key: &str| Oid::parse(pins[key].as_str().unwrap_or_default());
        if let (Some(onto), Some(current)) = (parse("ontoOid"), parse("currentOid")) {
            if crate::git::merge_base::is_ancestor(&git, &onto, &current).await? == Some(true) {
                return Err(OpError::invalid(
                    "ontoRef",
                    format!(
                        "`{}` is already in the branch's history: there is nothing to rebase",
                        f.onto_ref
                    ),
                ));
            }
        }
        Ok(Pins(pins))
    }

    async fn preview(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<Value, OpError> {
        let f = RebaseFields::from_fields(fields)?;
        preview::card(ctx, &f, pins).await
    }

    async fn revalidate(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<(), OpError> {
        let f = RebaseFields::from_fields(fields)?;
        let now = match read_pins(ctx, &f).await {
            // The onto commit or the branch vanished: report it as moved.
            Err(OpError::Invalid { field, .. }) => json!({ "moved": field }),
            other => other?,
        };
        pins::compare(&pins.0, &now)
    }

    fn intent(&self, _fields: &Fields, pins: &Pins) -> Result<Intent, OpError> {
        let current = oid_of(pins, "currentOid")?;
        let onto = oid_of(pins, "ontoOid")?;
        let head = &pins.0["head"];
        let mut intent = Intent::default();
        match (head["symbolic"].as_str(), head.as_str()) {
            (Some(target), _) => {
                intent.pre.insert(
                    "HEAD".into(),
                    Expect::Symbolic {
                        target: target.to_owned(),
                    },
                );
            }
            (None, Some(oid)) => {
                intent.pre.insert(
                    "HEAD".into(),
                    Expect::Detached {
                        oid: oid.to_owned(),
                    },
                );
            }
            _ => return Err(OpError::Internal("no HEAD pinned".into())),
        }
        match pins.0["branch"].as_str() {
            Some(branch) => {
                intent
                    .pre
                    .insert(branch.to_owned(), Expect::At { oid: current });
                intent
                    .post
                    .insert(branch.to_owned(), Expect::Contains { oid: onto });
                intent.post.insert(
                    "HEAD".into(),
                    Expect::Symbolic {
                        target: branch.to_owned(),
                    },
                );
            }
            None => {
                intent
                    .post
                    .insert("HEAD".into(), Expect::Contains { oid: onto });
            }
        }
        Ok(intent)
    }

    async fn execute(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<Fields, OpError> {
        let f = RebaseFields::from_fields(fields)?;
        let top = ctx.repo.require_worktree()?;
        let onto = oid_of(pins, "ontoOid")?;
        let w = GitWrite::new(top, ctx.cancel);
        let before = preview::in_progress(&ctx.repo.git_dir);
        // `ontoRef` as the user named it, revalidated against `onto` under the repository
        // lock just before (the intent check after the write holds the result to it): the
        // `pre-rebase` hook gets the upstream as git passes it, and the reflog reads
        // `rebase (start): checkout main` as after the same command typed by hand.
        let ran = w
            .rebase_onto(&f.onto_ref, f.branch())
            .await
            .map_err(|e| OpError::git(e.to_string()))?;
        if !ran.ok() {
            // Stopped at a conflict, not yet aborted: git is mid-rebase.
            super::crash::point(super::crash::MID_WRITE);
            return Err(preview::stopped(ctx, &w, &ran.combined(), before).await);
        }
        let git = Git::new(ctx.repo, ctx.cancel);
        let tip = git
            .head()
            .await?
            .ok_or_else(|| OpError::git("the rebase left HEAD unborn"))?;
        let mut out = Fields::new();
        out.insert("branch".into(), pins.0["branch"].clone());
        out.insert("previousOid".into(), pins.0["currentOid"].clone());
        out.insert("ontoOid".into(), json!(onto));
        out.insert("commitSha".into(), json!(tip.as_str()));
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
    fn interactive_and_bad_refs_name_the_field() {
        let f = RebaseFields::from_fields(&fields(json!({"ontoRef": "main"}))).unwrap();
        assert_eq!(f.branch(), None);
        let f = RebaseFields::from_fields(&fields(
            json!({"ontoRef": "main", "currentRef": "refs/heads/topic"}),
        ))
        .unwrap();
        assert_eq!(f.branch(), Some("topic"));
        for (v, field) in [
            (json!({}), "ontoRef"),
            (
                json!({"ontoRef": "main", "interactive": true}),
                "interactive",
            ),
            (json!({"ontoRef": "--exec=sh"}), "ontoRef"),
            (json!({"ontoRef": "main", "currentRef": "-x"}), "currentRef"),
            (
                json!({"ontoRef": "main", "currentRef": "a..b"}),
                "currentRef",
            ),
            (json!({"ontoRef": "main", "exec": "true"}), "fields"),
        ] {
            let err = RebaseFields::from_fields(&fields(v.clone())).unwrap_err();
            assert_eq!(err.field, field, "{v} → {err}");
        }
    }

    #[test]
    fn the_schema_refuses_interactive_true() {
        let schema = Rebase.fields_schema();
        assert_eq!(schema["properties"]["interactive"]["const"], false);
        assert_eq!(schema["required"], json!(["ontoRef"]));
    }
}
