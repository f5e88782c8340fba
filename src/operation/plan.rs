//! `plan`: 1–10 steps of `merge`, `rebase`, `discard`, `reset` or `patch`, run in order
//! as one all-or-nothing write.
//!
//! Each step is the operation type of its `operationType` (found through
//! [`super::find`], so a type this build does not carry is refused when proposed), with
//! its own fields beside `operationType`. Every step is validated, pinned and previewed
//! against the state the steps before it leave, as plain git run step by step would see
//! it: up to the first step that moves a ref that is the repository as it is; after it,
//! the state [`predict`] tells beforehand (a name relative to what an earlier step
//! moves, such as `HEAD~1` after a merge, is read on the predicted commit, or refused
//! when that commit is only made as the plan runs). Every pin is compared again before
//! the first step runs, and a predicted step's pins once more right before it runs, on
//! the state the steps before really left — what the card showed is what runs.
//!
//! On the first step that fails, nothing more runs and the executor puts the repository
//! back to the restore point it took before the plan (`failure: "rolledBack"`), with
//! each step's result: `completed`, `failed` (with git's message and any `conflicts`)
//! or `notRun`.

use async_trait::async_trait;
use serde_json::{Map, Value, json};

use super::{Checkout, Ctx, Expect, Fields, Intent, OpError, Operation, Pins};
use crate::gateway::api::FieldError;

pub mod predict;
pub mod shared;

/// Steps in one plan at most.
pub const MAX_STEPS: usize = 10;
/// The operation types a step may be.
pub const STEP_TYPES: [&str; 5] = ["merge", "rebase", "discard", "reset", "patch"];

/// One step: its operation type and its own fields.
pub struct Step {
    pub op: &'static dyn Operation,
    pub fields: Fields,
}

fn refuse(reason: String) -> FieldError {
    FieldError {
        field: "steps",
        reason,
    }
}

/// Parses and validates every step of `fields`.
pub fn steps(fields: &Fields) -> Result<Vec<Step>, FieldError> {
    if let Some(other) = fields.keys().find(|k| *k != "steps") {
        return Err(FieldError {
            field: "fields",
            reason: format!("unknown field `{other}` (known: steps)"),
        });
    }
    let list = match fields.get("steps") {
        None => return Err(refuse("is required".into())),
        Some(Value::Array(list)) => list,
        Some(_) => return Err(refuse("expected an array of steps".into())),
    };
    if list.is_empty() || list.len() > MAX_STEPS {
        return Err(refuse(format!("expected 1-{MAX_STEPS} steps")));
    }
    list.iter()
        .enumerate()
        .map(|(i, v)| step(i + 1, v))
        .collect()
}

fn step(n: usize, value: &Value) -> Result<Step, FieldError> {
    let Some(obj) = value.as_object() else {
        return Err(refuse(format!("step {n}: expected an object")));
    };
    let kind = obj.get("operationType").and_then(Value::as_str);
    let Some(kind) = kind.filter(|k| STEP_TYPES.contains(k)) else {
        return Err(refuse(format!(
            "step {n}: `operationType` must be one of {}",
            STEP_TYPES.join(", ")
        )));
    };
    if obj.get("interactive") == Some(&Value::Bool(true)) {
        return Err(refuse(format!(
            "step {n}: an interactive rebase cannot be approved ahead"
        )));
    }
    let Some(op) = super::find(kind) else {
        return Err(refuse(format!(
            "step {n}: this gateway does not carry out `{kind}` steps"
        )));
    };
    let mut fields: Map<String, Value> = obj.clone();
    fields.remove("operationType");
    op.validate(&fields)
        .map_err(|e| refuse(format!("step {n} ({kind}): `{}` {}", e.field, e.reason)))?;
    Ok(Step { op, fields })
}

/// An operation error of step `n`, as the plan's.
fn in_step(n: usize, kind: &str, e: OpError) -> OpError {
    match e {
        OpError::Invalid { field, reason } => OpError::Invalid {
            field: "steps".into(),
            reason: format!("step {n} ({kind}): `{field}` {reason}"),
        },
        other => other,
    }
}

fn step_pins(pins: &Pins, i: usize) -> Pins {
    Pins(pins.0["steps"][i].clone())
}

/// The `plan` operation type.
pub struct Plan;

#[async_trait]
impl Operation for Plan {
    fn kind(&self) -> &'static str {
        "plan"
    }

    fn title(&self) -> &'static str {
        "Propose a multi-step plan"
    }

    fn description(&self) -> &'static str {
        "Propose 1-10 steps of merge, rebase (not interactive), discard, reset or patch; execution stops at the first failure and rolls back to the pre-plan restore point."
    }

    fn fields_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "steps": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": MAX_STEPS,
                    "description": "The steps, in order: each an operation type and that type's own fields.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "operationType": {"type": "string", "enum": STEP_TYPES},
                            "interactive": {"const": false},
                        },
                        "required": ["operationType"],
                    },
                },
            },
            "required": ["steps"],
            "additionalProperties": false,
        })
    }

    fn validate(&self, fields: &Fields) -> Result<(), FieldError> {
        steps(fields).map(|_| ())
    }

    fn touched_paths(&self, fields: &Fields) -> Vec<String> {
        let steps = steps(fields).unwrap_or_default();
        steps
            .iter()
            .flat_map(|s| s.op.touched_paths(&s.fields))
            .collect()
    }

    fn needs_confirmation(&self, fields: &Fields) -> bool {
        steps(fields).is_ok_and(|s| s.iter().any(|s| s.op.needs_confirmation(&s.fields)))
    }

    fn checks_out(&self, fields: &Fields, pins: &Pins) -> Vec<Checkout> {
        let steps = steps(fields).unwrap_or_default();
        steps
            .iter()
            .enumerate()
            .flat_map(|(i, s)| s.op.checks_out(&s.fields, &step_pins(pins, i)))
            .collect()
    }

    fn touched_refs(&self, fields: &Fields, pins: &Pins) -> Result<Vec<String>, OpError> {
        let steps = steps(fields)?;
        let mut out = Vec::new();
        for (i, s) in steps.iter().enumerate() {
            let own = step_pins(pins, i);
            match own.0.get(predict::MADE_BY) {
                // A step from a commit made only as the plan runs: what it would move.
                Some(_) => {
                    let (intent, unknown) = predict::unknown_intent(s, &own.0);
                    let symbolic = own.0["head"]["symbolic"].is_string();
                    out.extend(intent.moved_refs());
                    out.extend(
                        unknown
                            .into_iter()
                            .filter(|name| !(symbolic && name == "HEAD"))
                            .filter(|name| name != super::discard::STASH_REF),
                    );
                }
                None => out.extend(s.op.touched_refs(&s.fields, &own)?),
            }
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    async fn pin(&self, ctx: Ctx<'_>, fields: &Fields) -> Result<Pins, OpError> {
        let steps = steps(fields)?;
        let live = predict::live_prefix(&steps);
        let pinned = pin_live(ctx, &steps[..live]).await?;
        let rest = predict::pin_rest(ctx, &steps, &pinned).await?;
        Ok(Pins(
            json!({ "steps": pinned.into_iter().chain(rest).collect::<Vec<_>>() }),
        ))
    }

    async fn late_pins(
        &self,
        ctx: Ctx<'_>,
        fields: &Fields,
        pins: &Pins,
    ) -> Result<Option<Fields>, OpError> {
        let steps = steps(fields)?;
        let live = predict::live_prefix(&steps);
        let mut joined = Vec::with_capacity(steps.len());
        let mut any = false;
        for (i, s) in steps.iter().enumerate() {
            let mut own = step_pins(pins, i).0;
            // A later step's late pins would read the repository before the plan, not the
            // state that step starts from.
            if i >= live {
                joined.push(own);
                continue;
            }
            let late =
                s.op.late_pins(ctx, &s.fields, &Pins(own.clone()))
                    .await
                    .map_err(|e| in_step(i + 1, s.op.kind(), e))?;
            if let (Some(late), Some(map)) = (late, own.as_object_mut()) {
                map.extend(late);
                any = true;
            }
            joined.push(own);
        }
        Ok(any.then(|| Fields::from_iter([("steps".to_owned(), json!(joined))])))
    }

    async fn preview(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<Value, OpError> {
        let steps = steps(fields)?;
        let mut out = Vec::with_capacity(steps.len());
        let live = predict::live_prefix(&steps);
        for (i, s) in steps.iter().enumerate() {
            let own = step_pins(pins, i);
            let mut card = json!({
                "step": i + 1,
                "operationType": s.op.kind(),
                "fields": s.fields,
                "risk": s.op.risk(),
                "destructive": s.op.needs_confirmation(&s.fields),
            });
            if i >= live {
                // What this step starts from: HEAD as the steps before leave it.
                card["startsFrom"] = json!({"predicted": true, "head": own.0["head"]});
            }
            if let Some(by) = own.0.get(predict::MADE_BY) {
                card["startsFrom"]["madeBy"] = by.clone();
                card["previewError"] = json!(format!(
                    "starts from the commit step {} ({}) makes when it runs: what it does there is checked right before it runs",
                    by["step"],
                    by["operationType"].as_str().unwrap_or_default()
                ));
                out.push(card);
                continue;
            }
            match s.op.preview(ctx, &s.fields, &own).await {
                Ok(p) => card["preview"] = p,
                Err(e) => card["previewError"] = json!(e.to_string()),
            }
            out.push(card);
        }
        Ok(json!({ "steps": out, "allOrNothing": true }))
    }

    async fn revalidate(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<(), OpError> {
        let steps = steps(fields)?;
        let live = predict::live_prefix(&steps);
        let mut moved = Vec::new();
        for (i, s) in steps.iter().enumerate().take(live) {
            match s.op.revalidate(ctx, &s.fields, &step_pins(pins, i)).await {
                Ok(()) => {}
                Err(OpError::Stale { moved: m }) => {
                    moved.extend(m.into_iter().map(|mut m| {
                        m.what = format!("step {} {}", i + 1, m.what);
                        m
                    }));
                }
                Err(e) => return Err(in_step(i + 1, s.op.kind(), e)),
            }
        }
        // The later steps' pins follow from the live ones: read again only while those
        // hold, then compared whole.
        if moved.is_empty() && live < steps.len() {
            let prefix: Vec<Value> = (0..live).map(|i| step_pins(pins, i).0).collect();
            match predict::pin_rest(ctx, &steps, &prefix).await {
                Ok(now) => {
                    for (j, found) in now.iter().enumerate() {
                        let i = live + j;
                        for mut m in super::pins::diff(&step_pins(pins, i).0, found) {
                            m.what = format!("step {} {}", i + 1, m.what);
                            moved.push(m);
                        }
                    }
                }
                Err(OpError::Invalid { reason, .. }) => moved.push(super::Moved {
                    what: reason,
                    expected: Value::Null,
                    found: Value::Null,
                }),
                Err(e) => return Err(e),
            }
        }
        if moved.is_empty() {
            Ok(())
        } else {
            Err(OpError::Stale { moved })
        }
    }

    fn intent(&self, fields: &Fields, pins: &Pins) -> Result<Intent, OpError> {
        let steps = steps(fields)?;
        let mut intents = Vec::with_capacity(steps.len());
        for (i, s) in steps.iter().enumerate() {
            let own = step_pins(pins, i);
            intents.push(match own.0.get(predict::MADE_BY) {
                Some(_) => predict::unknown_intent(s, &own.0),
                None => (s.op.intent(&s.fields, &own)?, Vec::new()),
            });
        }
        Ok(combine(&intents))
    }

    async fn execute(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<Fields, OpError> {
        let steps = steps(fields)?;
        let live = predict::live_prefix(&steps);
        let mut results: Vec<Value> = Vec::with_capacity(steps.len());
        for (i, s) in steps.iter().enumerate() {
            let kind = s.op.kind();
            let mut own = step_pins(pins, i);
            if i >= live {
                match predict::recheck(ctx, s, &own.0).await {
                    Ok(now) => own = Pins(now),
                    Err(e) => return Err(failed(&steps, results, i, e)),
                }
            }
            match s.op.execute(ctx, &s.fields, &own).await {
                Ok(out) => results.push(json!({
                    "step": i + 1, "operationType": kind, "status": "completed", "result": out,
                })),
                Err(e) => return Err(failed(&steps, results, i, e)),
            }
        }
        let mut out = Fields::new();
        out.insert("steps".into(), Value::Array(results));
        Ok(out)
    }
}

/// The pins of the steps before the first that moves a ref (and of that one), read from
/// the repository as it is: what several steps read is read once for all, the rest side
/// by side; the first refusal in step order is the one reported.
async fn pin_live(ctx: Ctx<'_>, steps: &[Step]) -> Result<Vec<Value>, OpError> {
    let read = match shared::pin(ctx, steps).await {
        Some(read) => read,
        None => {
            let own = steps
                .iter()
                .map(|s| async { Ok(s.op.pin(ctx, &s.fields).await?.0) });
            futures_util::future::join_all(own).await
        }
    };
    let mut pinned = Vec::with_capacity(steps.len());
    for (i, (s, p)) in steps.iter().zip(read).enumerate() {
        pinned.push(p.map_err(|e| in_step(i + 1, s.op.kind(), e))?);
    }
    Ok(pinned)
}

/// The plan's failure at step `i` (0-based): what each step did, for the rollback.
fn failed(steps: &[Step], mut results: Vec<Value>, i: usize, e: OpError) -> OpError {
    let kind = steps[i].op.kind();
    let mut failure = json!({
        "step": i + 1, "operationType": kind, "status": "failed", "message": e.to_string(),
    });
    let mut details = Fields::new();
    if let OpError::Refused { details: d, .. } = &e {
        for (k, v) in d {
            failure[k] = v.clone();
            details.insert(k.clone(), v.clone());
        }
    }
    results.push(failure);
    for (j, s) in steps.iter().enumerate().skip(i + 1) {
        results.push(json!({"step": j + 1, "operationType": s.op.kind(), "status": "notRun"}));
    }
    details.insert("failedStep".into(), json!(i + 1));
    details.insert("steps".into(), Value::Array(results));
    OpError::RollBack {
        message: format!(
            "step {} ({kind}) failed, so the whole plan was rolled back: {e}",
            i + 1
        ),
        details,
    }
}

/// One intent for the whole plan: each ref's pre-state as the first step touching it
/// expects it; its post-state followed step by step while each step starts from the state
/// the one before leaves. A step pinned on another state than that (a merge pinned on the
/// branch a reset before it moves) leaves the ref's post-state unknown, and unknown refs
/// are left out of the post-state rather than guessed.
fn combine(intents: &[(Intent, Vec<String>)]) -> Intent {
    let mut out = Intent::default();
    let mut known: std::collections::BTreeMap<String, Option<Expect>> = Default::default();
    for (intent, unknown) in intents {
        // A step from a commit made only as the plan runs: the refs it moves end unknown.
        for name in unknown {
            known.insert(name.clone(), None);
        }
        for (name, expect) in &intent.pre {
            out.pre
                .entry(name.clone())
                .or_insert_with(|| expect.clone());
        }
        for (name, post) in &intent.post {
            let consistent = match known.get(name) {
                None => true,
                Some(Some(left)) => intent.pre.get(name) == Some(left),
                Some(None) => false,
            };
            known.insert(name.clone(), consistent.then(|| post.clone()));
        }
        if out.worktree.is_none() {
            out.worktree.clone_from(&intent.worktree);
        }
    }
    out.post = known
        .into_iter()
        .filter_map(|(name, post)| post.map(|p| (name, p)))
        .collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(v: Value) -> Fields {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn steps_are_checked_by_their_own_types() {
        let ok = fields(json!({"steps": [
            {"operationType": "merge", "sourceRef": "f", "targetRef": "main"},
            {"operationType": "reset", "targetRef": "HEAD~1", "mode": "hard"},
        ]}));
        assert_eq!(steps(&ok).unwrap().len(), 2);
        assert!(Plan.needs_confirmation(&ok));
        let soft = fields(json!({"steps": [{"operationType": "reset", "targetRef": "x"}]}));
        assert!(!Plan.needs_confirmation(&soft));
        for v in [
            json!({}),
            json!({"steps": []}),
            json!({"steps": [{"operationType": "commit", "message": "m"}]}),
            json!({"steps": [{"operationType": "rebase", "ontoRef": "main", "interactive": true}]}),
            json!({"steps": [{"operationType": "reset", "targetRef": "--hard"}]}),
            json!({"steps": [{"operationType": "discard", "paths": []}]}),
            json!({"steps": [1]}),
            json!({"steps": (0..11).map(|_| json!({"operationType": "reset", "targetRef": "x"})).collect::<Vec<_>>()}),
        ] {
            let err = steps(&fields(v.clone())).map(|_| ()).unwrap_err();
            assert_eq!(err.field, "steps", "{v} → {err}");
        }
        let err = steps(&fields(
            json!({"steps": [{"operationType": "discard", "paths": ["../x"]}]}),
        ))
        .map(|_| ())
        .unwrap_err();
        assert!(err.reason.starts_with("step 1 (discard): `paths`"), "{err}");
        assert_eq!(
            steps(&fields(json!({"steps": [], "x": 1})))
                .map(|_| ())
                .unwrap_err()
                .field,
            "fields"
        );
    }

    #[test]
    fn combined_intent_follows_each_ref_while_the_steps_chain() {
        let at = |o: &str| Expect::At { oid: o.into() };
        let mut a = Intent::default();
        a.pre.insert("refs/heads/main".into(), at("1"));
        a.post.insert("refs/heads/main".into(), at("2"));
        let mut b = Intent::default();
        b.pre.insert("refs/heads/main".into(), at("9"));
        b.post.insert(
            "refs/heads/main".into(),
            Expect::ChildOf {
                parent: Some("9".into()),
            },
        );
        b.post
            .insert("refs/stash".into(), Expect::ChildOf { parent: None });
        // b was pinned on 9, not on the 2 that a leaves: main's end state is unknown.
        let c = combine(&[(a.clone(), vec![]), (b.clone(), vec![])]);
        assert_eq!(c.pre["refs/heads/main"], at("1"));
        assert!(!c.post.contains_key("refs/heads/main"));
        assert!(c.post.contains_key("refs/stash"));
        let c = combine(&[(b.clone(), vec![]), (a.clone(), vec![])]);
        assert!(!c.post.contains_key("refs/heads/main"));
        // A step that starts where the one before ends keeps the chain; once broken it
        // stays unknown.
        let mut d = Intent::default();
        d.pre.insert("refs/heads/main".into(), at("2"));
        d.post.insert("refs/heads/main".into(), at("3"));
        let c = combine(&[(a.clone(), vec![]), (d.clone(), vec![])]);
        assert_eq!(c.post["refs/heads/main"], at("3"));
        let c = combine(&[(a.clone(), vec![]), (b, vec![]), (d.clone(), vec![])]);
        assert!(!c.post.contains_key("refs/heads/main"));
        assert_eq!(c.refs(), ["refs/heads/main", "refs/stash"]);
        // A step from an unknown commit leaves what it moves unknown.
        let c = combine(&[
            (a, vec![]),
            (Intent::default(), vec!["refs/heads/main".into()]),
            (d, vec![]),
        ]);
        assert!(!c.post.contains_key("refs/heads/main"));
        assert_eq!(c.pre["refs/heads/main"], at("1"));
    }
}
