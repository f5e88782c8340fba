//! The repository as a plan's earlier steps leave it, told before any step runs, so that
//! each later step is validated, pinned and previewed against the state it will really
//! start from — as plain git run step by step would see it.
//!
//! A step that moves a ref leaves it at a commit known beforehand (a fast-forward: the
//! source; a reset: its target) or at one only made when the step runs (a merge commit, a
//! squash, replayed commits). Names in later steps are resolved against that: a name
//! rooted at `HEAD` or at a moved branch (`HEAD~1`, `main^`) is read on the predicted
//! commit; where that commit is not known yet, or the name reads a reflog, an upstream or
//! a state file the earlier steps rewrite (`@{1}`, `@{u}`, `ORIG_HEAD`), it is refused
//! naming the step that makes it unknowable. Names that nothing in the plan moves are
//! read as they are.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::Step;
use crate::git::{Git, Oid, Rev, head};
use crate::operation::intent::{Found, read_ref};
use crate::operation::merge::{self, MergeFields, Strategy};
use crate::operation::rebase::RebaseFields;
use crate::operation::reset::{Mode, ResetFields};
use crate::operation::{Ctx, Expect, Intent, OpError};

/// The operation types of a step that move a ref.
pub const MOVERS: [&str; 3] = ["merge", "reset", "rebase"];

/// The pins key that marks a step starting from a commit an earlier step makes.
pub const MADE_BY: &str = "headMadeBy";

/// The steps (0-based count) pinned on the repository as it is: every step up to and
/// including the first that moves a ref. Later steps are pinned on the predicted state.
pub fn live_prefix(steps: &[Step]) -> usize {
    steps
        .iter()
        .position(|s| MOVERS.contains(&s.op.kind()))
        .map_or(steps.len(), |i| i + 1)
}

/// A step, by number and type.
#[derive(Debug, Clone, Copy)]
struct By {
    step: usize,
    kind: &'static str,
}

/// Where an earlier step leaves a ref: a known commit, or one it makes when it runs.
#[derive(Debug, Clone)]
enum Tip {
    Known(Oid),
    Made(By),
}

/// The repository as the steps before one leave it.
#[derive(Debug, Clone, Default)]
struct Before {
    /// HEAD's branch (full name) once a step moved it; `None`: detached.
    branch: Option<String>,
    /// HEAD's commit as the last step that moved it leaves it.
    head: Option<Tip>,
    /// Every ref an earlier step moved, with where it is left.
    moved: BTreeMap<String, Tip>,
    /// Whether the index then differs from HEAD's tree; `None` when not known.
    staged: Option<bool>,
    /// The first step that moved a ref.
    first: Option<By>,
}

fn oid_at(pins: &Value, key: &str) -> Option<Oid> {
    pins[key].as_str().and_then(Oid::parse)
}

impl Before {
    /// The state once step `n` (1-based), pinned as `pins`, has run.
    fn after(&mut self, n: usize, step: &Step, pins: &Value) {
        let by = By {
            step: n,
            kind: step.op.kind(),
        };
        match by.kind {
            "merge" => {
                let Ok(f) = MergeFields::from_fields(&step.fields) else {
                    return;
                };
                let ff = f.strategy == Strategy::Merge && pins["fastForward"] == true;
                let tip = match oid_at(pins, "sourceOid") {
                    Some(source) if ff => Tip::Known(source),
                    _ => Tip::Made(by),
                };
                self.set(Some(f.refname()), tip, by);
                self.staged = Some(false);
            }
            "reset" => {
                let Some(target) = oid_at(pins, "targetOid") else {
                    return;
                };
                let branch = pins["head"]["symbolic"].as_str().map(str::to_owned);
                self.set(branch, Tip::Known(target), by);
                let soft =
                    ResetFields::from_fields(&step.fields).is_ok_and(|f| f.mode == Mode::Soft);
                // A soft reset keeps the index: whether it then differs from the new HEAD
                // is for git to find when the next step runs.
                self.staged = if soft { None } else { Some(false) };
            }
            "rebase" => {
                let branch = pins["branch"].as_str().map(str::to_owned);
                self.set(branch, Tip::Made(by), by);
                self.staged = Some(false);
            }
            "patch" if step.fields.get("applyToIndex") == Some(&Value::Bool(true)) => {
                self.staged = None;
            }
            _ => {}
        }
    }

    fn set(&mut self, branch: Option<String>, tip: Tip, by: By) {
        if let Some(b) = &branch {
            self.moved.insert(b.clone(), tip.clone());
        }
        self.branch = branch;
        self.head = Some(tip);
        self.first.get_or_insert(by);
    }

    /// HEAD as the pins record it.
    fn head_json(&self) -> Value {
        match (&self.branch, &self.head) {
            (Some(b), Some(Tip::Known(o))) => json!({"symbolic": b, "oid": o.as_str()}),
            (Some(b), _) => json!({"symbolic": b, "oid": null}),
            (None, Some(Tip::Known(o))) => json!(o.as_str()),
            (None, _) => Value::Null,
        }
    }

    /// The commit `name` names once the earlier steps have run; `field` for refusals.
    async fn resolve(&self, git: &Git<'_>, field: &str, name: &str) -> Result<Oid, OpError> {
        let rev = Rev::parse(field, name)?;
        let Some(first) = self.first else {
            return Ok(git.resolve_named_commit(field, &rev).await?);
        };
        if name.contains("@{") {
            return Err(OpError::invalid(
                field,
                format!(
                    "`{name}` reads a reflog or an upstream, which step {} ({}) changes: name the commit, branch or tag itself",
                    first.step, first.kind
                ),
            ));
        }
        let cut = name.find(['~', '^', ':']).unwrap_or(name.len());
        let (root, suffix) = name.split_at(cut);
        let pseudo = root != "HEAD"
            && root != "FETCH_HEAD"
            && root.ends_with("HEAD")
            && root.bytes().all(|b| b.is_ascii_uppercase() || b == b'_');
        if pseudo {
            return Err(OpError::invalid(
                field,
                format!(
                    "`{name}` names {root}, which step {} ({}) rewrites: name the commit itself",
                    first.step, first.kind
                ),
            ));
        }
        let full = match root {
            "HEAD" | "@" => Some("HEAD".to_owned()),
            "" => None,
            _ => head::full_ref_name(git, root).await?,
        };
        let tip = match full.as_deref() {
            Some("HEAD") => self.head.as_ref().map(|t| (t, "HEAD".to_owned())),
            Some(r) => self.moved.get(r).map(|t| (t, r.to_owned())),
            None => None,
        };
        match tip {
            None => Ok(git.resolve_named_commit(field, &rev).await?),
            Some((Tip::Known(oid), _)) => {
                let on = Rev::parse(field, &format!("{oid}{suffix}"))?;
                git.resolve_commit(field, &on).await.map_err(|_| {
                    OpError::invalid(
                        field,
                        format!("no commit named '{name}' once the steps before have run"),
                    )
                })
            }
            Some((Tip::Made(by), what)) => {
                let reads = if suffix.is_empty() {
                    "names"
                } else {
                    "is relative to"
                };
                Err(OpError::invalid(
                    field,
                    format!(
                        "`{name}` {reads} {what}, which step {} ({}) moves to a commit it makes only when it runs: name a commit, branch or tag that the steps before do not move",
                        by.step, by.kind
                    ),
                ))
            }
        }
    }

    /// Step `n`'s pins on this state.
    async fn pin(&self, ctx: Ctx<'_>, step: &Step) -> Result<Value, OpError> {
        let git = Git::new(ctx.repo, ctx.cancel);
        let mut pins = match step.op.kind() {
            "merge" => {
                self.merge(&git, &MergeFields::from_fields(&step.fields)?)
                    .await?
            }
            "reset" => {
                let f = ResetFields::from_fields(&step.fields)?;
                let target = self.resolve(&git, "targetRef", &f.target_ref).await?;
                json!({"head": self.head_json(), "targetOid": target.as_str(), "index": null})
            }
            "rebase" => {
                self.rebase(&git, &RebaseFields::from_fields(&step.fields)?)
                    .await?
            }
            _ => {
                let mut own = step.op.pin(ctx, &step.fields).await?.0;
                own["head"] = self.head_json();
                own
            }
        };
        if let Some(Tip::Made(by)) = &self.head {
            pins[MADE_BY] = json!({"step": by.step, "operationType": by.kind});
        }
        Ok(pins)
    }

    async fn merge(&self, git: &Git<'_>, f: &MergeFields) -> Result<Value, OpError> {
        let source = self.resolve(git, "sourceRef", &f.source_ref).await?;
        match &self.head {
            Some(Tip::Known(tip)) => {
                let head = match &self.branch {
                    Some(b) => Found::Symbolic {
                        target: b.clone(),
                        oid: Some(tip.clone()),
                    },
                    None => Found::At(tip.clone()),
                };
                let bases: Vec<Oid> = crate::git::merge_base::of(git, tip, &source)
                    .await?
                    .into_iter()
                    .collect();
                let staged = Ok(self.staged == Some(true));
                let mut pins = merge::pins_from(f, &head, &source, String::new(), &bases, staged)?;
                pins["index"] = Value::Null;
                Ok(pins)
            }
            _ => {
                if self.branch.as_deref() != Some(f.refname().as_str()) {
                    return Err(OpError::invalid(
                        "targetRef",
                        format!(
                            "`{}` is not the branch checked out once the steps before have run",
                            f.target()
                        ),
                    ));
                }
                Ok(json!({"head": self.head_json(), "sourceOid": source.as_str(), "index": null}))
            }
        }
    }

    async fn rebase(&self, git: &Git<'_>, f: &RebaseFields) -> Result<Value, OpError> {
        let onto = self.resolve(git, "ontoRef", &f.onto_ref).await?;
        let (branch, current) = match f.branch() {
            Some(name) => {
                let refname = format!("refs/heads/{name}");
                let current = match self.moved.get(&refname) {
                    Some(Tip::Known(oid)) => Some(oid.clone()),
                    Some(Tip::Made(_)) => None,
                    None => match read_ref(git, &refname).await? {
                        Found::At(oid) => Some(oid),
                        _ => {
                            return Err(OpError::invalid(
                                "currentRef",
                                format!("no local branch `{name}`"),
                            ));
                        }
                    },
                };
                (Some(refname), current)
            }
            None => {
                let current = match &self.head {
                    Some(Tip::Known(oid)) => Some(oid.clone()),
                    _ => None,
                };
                (self.branch.clone(), current)
            }
        };
        if let Some(current) = &current {
            if crate::git::merge_base::is_ancestor(git, &onto, current).await? == Some(true) {
                return Err(OpError::invalid(
                    "ontoRef",
                    format!(
                        "`{}` is already in the branch's history once the steps before have run: there is nothing to rebase",
                        f.onto_ref
                    ),
                ));
            }
        }
        Ok(json!({
            "head": self.head_json(),
            "branch": branch,
            "currentOid": current.as_ref().map(Oid::as_str),
            "ontoOid": onto.as_str(),
        }))
    }
}

/// The pins of every step after the live prefix (whose pins are `prefix`), each on the
/// state the steps before it leave; a refusal names its step.
pub async fn pin_rest(
    ctx: Ctx<'_>,
    steps: &[Step],
    prefix: &[Value],
) -> Result<Vec<Value>, OpError> {
    let mut before = Before::default();
    for (i, pins) in prefix.iter().enumerate() {
        before.after(i + 1, &steps[i], pins);
    }
    let mut out = Vec::new();
    for (i, step) in steps.iter().enumerate().skip(prefix.len()) {
        let pins = before
            .pin(ctx, step)
            .await
            .map_err(|e| super::in_step(i + 1, step.op.kind(), e))?;
        before.after(i + 1, step, &pins);
        out.push(pins);
    }
    Ok(out)
}

/// Keys of a predicted step's pins that the steps before rewrite by design (the index,
/// the stash, file states), left out of the check made right before the step runs.
const REWRITTEN: [&str; 5] = ["index", "changes", "paths", "stash", MADE_BY];

/// Right before a predicted step runs: its pins read now (HEAD where the steps before
/// really left it) must match the predicted ones, but for what the steps before rewrite
/// by design and, where the start commit was not known, that commit and what follows
/// from it. Returns the pins read now, which the step runs with.
pub async fn recheck(ctx: Ctx<'_>, step: &Step, stored: &Value) -> Result<Value, OpError> {
    let fresh = step.op.pin(ctx, &step.fields).await?.0;
    let made = stored.get(MADE_BY).is_some();
    let (mut expected, mut found) = (stored.clone(), fresh.clone());
    for v in [&mut expected, &mut found] {
        if let Some(map) = v.as_object_mut() {
            for key in REWRITTEN {
                map.remove(key);
            }
            if made {
                map.remove("fastForward");
                map.remove("currentOid");
                match map.get_mut("head") {
                    Some(Value::Object(h)) => {
                        h.remove("oid");
                    }
                    Some(h) => *h = Value::Null,
                    None => {}
                }
            }
        }
    }
    crate::operation::pins::compare(&expected, &found)?;
    Ok(fresh)
}

/// The intent of a step that starts from a commit only made when the plan runs: the refs
/// it moves (whose end state is then unknown) and the pre-state of those it pinned.
pub fn unknown_intent(step: &Step, pins: &Value) -> (Intent, Vec<String>) {
    let mut intent = Intent::default();
    let mut moves = vec!["HEAD".to_owned()];
    moves.extend(pins["head"]["symbolic"].as_str().map(str::to_owned));
    match step.op.kind() {
        "merge" => {
            if let Ok(f) = MergeFields::from_fields(&step.fields) {
                moves.push(f.refname());
            }
        }
        "rebase" => {
            if let Some(branch) = pins["branch"].as_str() {
                if let Some(oid) = pins["currentOid"].as_str() {
                    intent.pre.insert(
                        branch.to_owned(),
                        Expect::At {
                            oid: oid.to_owned(),
                        },
                    );
                }
                moves.push(branch.to_owned());
            }
        }
        "discard" => {
            let stash = match pins["stash"].as_str() {
                Some(oid) => Expect::At {
                    oid: oid.to_owned(),
                },
                None => Expect::Absent,
            };
            intent
                .pre
                .insert(super::super::discard::STASH_REF.into(), stash);
            moves.push(super::super::discard::STASH_REF.into());
        }
        _ => {}
    }
    (intent, moves)
}
