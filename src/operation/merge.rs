//! `merge`: bring `sourceRef` into the checked-out branch `targetRef`, by one of the
//! seed's three strategies:
//!
//! - `merge`: `git merge` (a fast-forward when git would make one, else a merge commit);
//! - `squash`: `git merge --squash` then `git commit` with the message git prepared;
//! - `rebase`: the commits of `sourceRef` replayed on `targetRef` by `git rebase`, then
//!   `targetRef` fast-forwarded to them — `sourceRef` itself never moves.
//!
//! Hooks and signing apply as to the same manual commands. A conflict is never left
//! behind: the merge (or rebase) is aborted, the repository is as before, and the
//! failure lists the `conflicts`. The card's preview is `merge-tree` in a scratch object
//! store: clean or the conflicting paths, and the files that come in.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::commit::checked;
use super::fields::{ensure, parse, schema_of};
use super::intent::Found;
use super::paths::check_branch;
use super::{Checkout, Ctx, Expect, Fields, Intent, OpError, Operation, Pins, pins};
use crate::gateway::api::FieldError;
use crate::git::merge::{MergeQuery, Scratch};
use crate::git::write::GitWrite;
use crate::git::{Git, GitError, Oid, Rev};

/// Conflicting paths and incoming files listed on a card or in a result at most.
pub const MAX_LISTED: usize = 1000;

/// How the source comes in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    #[default]
    Merge,
    Squash,
    Rebase,
}

/// The fields of a `merge` proposal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MergeFields {
    /// What to merge: a branch, tag or commit.
    #[schemars(length(min = 1, max = 1024))]
    pub source_ref: String,
    /// The branch merged into; it must be the checked-out branch.
    #[schemars(length(min = 1, max = 255))]
    pub target_ref: String,
    /// `merge` (default), `squash` (one new commit) or `rebase` (replay, then fast-forward).
    #[serde(default)]
    pub strategy: Strategy,
}

const NAMES: &[&str] = &["sourceRef", "targetRef", "strategy"];

impl MergeFields {
    pub fn from_fields(fields: &Fields) -> Result<MergeFields, FieldError> {
        let f: MergeFields = parse(fields, NAMES)?;
        let ok = Rev::parse("sourceRef", &f.source_ref).is_ok();
        ensure(ok, "sourceRef", || {
            "expected a branch, tag or commit (not starting with '-', no control characters)".into()
        })?;
        check_branch("targetRef", f.target())?;
        Ok(f)
    }

    /// The target's short name (`refs/heads/` accepted and dropped).
    pub fn target(&self) -> &str {
        self.target_ref
            .strip_prefix("refs/heads/")
            .unwrap_or(&self.target_ref)
    }

    pub fn refname(&self) -> String {
        format!("refs/heads/{}", self.target())
    }
}

/// The `merge` operation type.
pub struct Merge;

/// HEAD (on the target), the source's commit, the index, and whether the merge is a
/// fast-forward.
async fn read_pins(ctx: Ctx<'_>, f: &MergeFields) -> Result<Value, OpError> {
    let git = Git::new(ctx.repo, ctx.cancel);
    let (refs, index) = tokio::join!(read_refs(&git, f), pins::index_digest(&git));
    let (head, source) = refs?;
    let tip = tip_of(&head);
    let base = match &tip {
        Some(tip) => crate::git::merge_base::of(&git, tip, &source).await?,
        None => None,
    };
    let mut pins = pins_of(&head, &source, index?);
    mark_fast_forward(&mut pins, tip.as_ref(), base.as_ref());
    Ok(pins)
}

/// HEAD and the source's commit, each read from its file when it can be (a source that
/// is not a local branch is resolved by git).
async fn read_refs(git: &Git<'_>, f: &MergeFields) -> Result<(Found, Oid), OpError> {
    let source = Rev::parse("sourceRef", &f.source_ref)?;
    let (head, source) = tokio::join!(
        pins::head(git),
        git.resolve_named_commit("sourceRef", &source)
    );
    Ok((head?, source?))
}

fn pins_of(head: &Found, source: &Oid, index: String) -> Value {
    json!({"head": head.to_json(), "sourceOid": source.as_str(), "index": index})
}

/// HEAD's commit when it is on a born branch.
pub(crate) fn tip_of(head: &Found) -> Option<Oid> {
    match head {
        Found::Symbolic { oid: Some(tip), .. } => Some(tip.clone()),
        _ => None,
    }
}

/// Whether the merge is a fast-forward follows from the merge base of HEAD and the
/// source (as "already merged" does: when one commit contains the other, it is their only
/// best common ancestor).
fn mark_fast_forward(pins: &mut Value, tip: Option<&Oid>, base: Option<&Oid>) {
    if tip.is_some() {
        pins["fastForward"] = json!(base == tip);
    }
}

/// The pins [`Merge::pin`] reads, from values read once for several steps (see
/// `plan::shared`): HEAD, the source's commit, the index digest, and for a born branch
/// every merge base of HEAD's commit and the source and whether the index differs from
/// HEAD's tree.
pub(crate) fn pins_from(
    f: &MergeFields,
    head: &Found,
    source: &Oid,
    index: String,
    bases: &[Oid],
    staged: Result<bool, GitError>,
) -> Result<Value, OpError> {
    let tip = tip_of(head);
    // `git merge-base` names one best common ancestor; when one of the two commits
    // contains the other it is the only one, and that is all the pins ask of it.
    let base = tip
        .iter()
        .chain([source])
        .find(|c| bases.contains(c))
        .or(bases.first())
        .filter(|_| tip.is_some())
        .cloned();
    let mut pins = pins_of(head, source, index);
    mark_fast_forward(&mut pins, tip.as_ref(), base.as_ref());
    check_mergeable(f, &pins, base.as_ref(), staged)?;
    Ok(pins)
}

/// The pinned commit of the target branch.
pub(crate) fn head_oid(pins: &Value) -> Result<Oid, OpError> {
    pins["head"]["oid"]
        .as_str()
        .and_then(Oid::parse)
        .ok_or_else(|| OpError::Internal("no HEAD commit pinned".into()))
}

fn source_oid(pins: &Value) -> Result<Oid, OpError> {
    pins["sourceOid"]
        .as_str()
        .and_then(Oid::parse)
        .ok_or_else(|| OpError::Internal("no source pinned".into()))
}

/// Refuses what git would refuse or what would do nothing, naming the field. `base` is
/// the merge base of HEAD and the source, `staged` whether the index differs from HEAD.
fn check_mergeable(
    f: &MergeFields,
    pins: &Value,
    base: Option<&Oid>,
    staged: Result<bool, GitError>,
) -> Result<(), OpError> {
    if pins["head"]["symbolic"].as_str() != Some(f.refname().as_str()) {
        return Err(OpError::invalid(
            "targetRef",
            format!(
                "`{}` is not the checked-out branch: a merge writes into the branch checked out",
                f.target()
            ),
        ));
    }
    head_oid(pins).map_err(|_| OpError::invalid("targetRef", "has no commit yet"))?;
    if base == Some(&source_oid(pins)?) {
        return Err(OpError::invalid(
            "sourceRef",
            format!("already merged into `{}`: nothing to merge", f.target()),
        ));
    }
    if staged? {
        return Err(OpError::invalid(
            "targetRef",
            "the index holds staged changes: commit or unstage them before a merge",
        ));
    }
    Ok(())
}

#[async_trait]
impl Operation for Merge {
    fn kind(&self) -> &'static str {
        "merge"
    }

    fn title(&self) -> &'static str {
        "Propose a merge"
    }

    fn description(&self) -> &'static str {
        "Propose merging sourceRef into the checked-out targetRef (strategy merge, squash or rebase). The card shows the conflict preflight; a conflict at execution aborts cleanly."
    }

    fn fields_schema(&self) -> Value {
        schema_of::<MergeFields>()
    }

    fn validate(&self, fields: &Fields) -> Result<(), FieldError> {
        MergeFields::from_fields(fields).map(|_| ())
    }

    /// Every strategy may write any path of the source's side: the source's tree (a
    /// fast-forward, a squash) and each commit between HEAD and it (a rebase replays
    /// them; a merge's result tracks nothing that neither side does).
    fn checks_out(&self, _fields: &Fields, pins: &Pins) -> Vec<Checkout> {
        let mut out = Checkout::of(&pins.0, "sourceOid");
        for c in &mut out {
            c.since = pins.0["head"]["oid"].as_str().map(str::to_owned);
        }
        out
    }

    fn touched_refs(&self, fields: &Fields, pins: &Pins) -> Result<Vec<String>, OpError> {
        Ok(self.intent(fields, pins)?.moved_refs())
    }

    async fn pin(&self, ctx: Ctx<'_>, fields: &Fields) -> Result<Pins, OpError> {
        let f = MergeFields::from_fields(fields)?;
        ctx.repo.require_worktree()?;
        // Read as a plan reads its steps: the index once for its digest and its tree, one
        // git run for HEAD's tree and the merge bases.
        let step = super::plan::Step {
            op: &Merge,
            fields: fields.clone(),
        };
        if let Some(read) = super::plan::shared::pin(ctx, std::slice::from_ref(&step)).await {
            return read
                .into_iter()
                .next()
                .unwrap_or_else(|| Err(OpError::Internal("the merge was not pinned".into())))
                .map(Pins);
        }
        let git = Git::new(ctx.repo, ctx.cancel);
        // The index digest is read beside the refs and the two git runs that follow them
        // (merge base, staged check), which only matter on a born branch.
        let refs_and_runs = async {
            let (head, source) = read_refs(&git, &f).await?;
            let tip = tip_of(&head);
            let (base, staged) = match &tip {
                Some(tip) => {
                    let (base, staged) = tokio::join!(
                        crate::git::merge_base::of(&git, tip, &source),
                        crate::git::diff::staged_against(&git, tip)
                    );
                    (base?, staged)
                }
                None => (None, Ok(false)),
            };
            Ok::<_, OpError>((head, source, tip, base, staged))
        };
        let (read, index) = tokio::join!(refs_and_runs, pins::index_digest(&git));
        let (head, source, tip, base, staged) = read?;
        let mut pins = pins_of(&head, &source, index?);
        mark_fast_forward(&mut pins, tip.as_ref(), base.as_ref());
        check_mergeable(&f, &pins, base.as_ref(), staged)?;
        Ok(Pins(pins))
    }

    async fn preview(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<Value, OpError> {
        let f = MergeFields::from_fields(fields)?;
        preview(ctx, &f, &pins.0).await
    }

    async fn revalidate(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<(), OpError> {
        let f = MergeFields::from_fields(fields)?;
        let now = match read_pins(ctx, &f).await {
            // The source vanished: report it as moved, not as a bad argument.
            Err(OpError::Invalid { .. }) => json!({"sourceOid": null}),
            other => other?,
        };
        let mut expected = pins.0.clone();
        if now.get("head").is_none() {
            expected = json!({"sourceOid": expected["sourceOid"]});
        }
        pins::compare(&expected, &now)
    }

    fn intent(&self, fields: &Fields, pins: &Pins) -> Result<Intent, OpError> {
        let f = MergeFields::from_fields(fields)?;
        let head = head_oid(&pins.0)?.as_str().to_owned();
        let post = match f.strategy {
            Strategy::Merge if pins.0["fastForward"] == true => Expect::At {
                oid: source_oid(&pins.0)?.as_str().to_owned(),
            },
            Strategy::Merge | Strategy::Squash => Expect::ChildOf {
                parent: Some(head.clone()),
            },
            Strategy::Rebase => Expect::Descends { from: head.clone() },
        };
        let mut intent = Intent::default();
        let on_target = Expect::Symbolic {
            target: f.refname(),
        };
        intent.pre.insert("HEAD".into(), on_target.clone());
        intent.post.insert("HEAD".into(), on_target);
        intent.pre.insert(f.refname(), Expect::At { oid: head });
        intent.post.insert(f.refname(), post);
        Ok(intent)
    }

    async fn execute(&self, ctx: Ctx<'_>, fields: &Fields, pins: &Pins) -> Result<Fields, OpError> {
        let f = MergeFields::from_fields(fields)?;
        let top = ctx.repo.require_worktree()?;
        let w = GitWrite::new(top, ctx.cancel);
        let source = source_oid(&pins.0)?;
        match f.strategy {
            Strategy::Merge => merge(ctx, &w, &f).await?,
            Strategy::Squash => squash(ctx, &w, &f).await?,
            Strategy::Rebase => rebase(ctx, &w, &f, &source).await?,
        }
        let git = Git::new(ctx.repo, ctx.cancel);
        let tip = git
            .head()
            .await?
            .ok_or_else(|| OpError::git("the merge left HEAD unborn"))?;
        if f.strategy == Strategy::Merge {
            merged_the_pinned(&git, &f, &tip, &source).await?;
        }
        let mut out = Fields::new();
        out.insert("commitSha".into(), json!(tip.as_str()));
        out.insert("strategy".into(), json!(f.strategy));
        out.insert("fastForward".into(), json!(pins.0["fastForward"] == true));
        out.insert("conflicts".into(), json!([]));
        Ok(out)
    }
}

/// `git merge` of the user's own name (revalidated against the pinned commit under the
/// repository lock just before), so the message and the reflog are git's own.
async fn merge(ctx: Ctx<'_>, w: &GitWrite<'_>, f: &MergeFields) -> Result<(), OpError> {
    let ran = w
        .merge(&f.source_ref)
        .await
        .map_err(|e| OpError::git(e.to_string()))?;
    if ran.ok() {
        return Ok(());
    }
    let conflicts = unmerged_paths(ctx).await?;
    if !conflicts.is_empty() {
        checked(w.merge_abort().await)?;
    }
    Err(refused(ran.combined(), conflicts))
}

/// Git resolved `sourceRef` itself: what it merged must be the commit the card showed
/// (the new tip after a fast-forward, the second parent of a merge commit). A name that
/// moved in the instant between revalidation and the merge is rolled back, not kept.
async fn merged_the_pinned(
    git: &Git<'_>,
    f: &MergeFields,
    tip: &Oid,
    source: &Oid,
) -> Result<(), OpError> {
    let merged = if tip == source {
        Some(source.clone())
    } else {
        let second = Rev::parse("sourceRef", &format!("{tip}^2"))?;
        git.resolve_commit("sourceRef", &second).await.ok()
    };
    if merged.as_ref() == Some(source) {
        return Ok(());
    }
    Err(OpError::RollBack {
        message: format!(
            "`{}` moved while the merge ran: git merged another commit than the approved {source}",
            f.source_ref
        ),
        details: Fields::new(),
    })
}

async fn squash(ctx: Ctx<'_>, w: &GitWrite<'_>, f: &MergeFields) -> Result<(), OpError> {
    let ran = w
        .merge_squash(&f.source_ref)
        .await
        .map_err(|e| OpError::git(e.to_string()))?;
    if !ran.ok() {
        let conflicts = unmerged_paths(ctx).await?;
        if !conflicts.is_empty() {
            checked(w.reset_merge().await)?;
        }
        return Err(refused(ran.combined(), conflicts));
    }
    let committed = w
        .commit_prepared()
        .await
        .map_err(|e| OpError::git(e.to_string()))?;
    if !committed.ok() {
        // A hook said no: the squashed changes leave the index as they came.
        checked(w.reset_merge().await)?;
        return Err(OpError::git(committed.combined().trim().to_owned()));
    }
    Ok(())
}

/// Replays `target..source` on the target by `git rebase <target> <source-oid>` (detached,
/// so the source branch never moves), then checks the target out again and fast-forwards
/// it there with `git merge --ff-only`: the commands a person would type, so
/// `pre-rebase`, `post-checkout`, `post-rewrite` and `post-merge` run, and the reflogs and
/// `ORIG_HEAD` read as after them. On a conflict the rebase is aborted and the target
/// checked out as it was.
async fn rebase(
    ctx: Ctx<'_>,
    w: &GitWrite<'_>,
    f: &MergeFields,
    source: &Oid,
) -> Result<(), OpError> {
    let ran = w
        .rebase_detached(f.target(), source.as_str())
        .await
        .map_err(|e| OpError::git(e.to_string()))?;
    let git = Git::new(ctx.repo, ctx.cancel);
    if !ran.ok() {
        let conflicts = unmerged_paths(ctx).await?;
        if ctx.repo.git_dir.join("rebase-merge").exists()
            || ctx.repo.git_dir.join("rebase-apply").exists()
        {
            checked(w.rebase_abort().await)?;
        }
        if crate::git::head::symbolic_text(&git).await?.as_deref() != Some(&f.refname()) {
            checked(w.switch(f.target()).await)?;
        }
        return Err(refused(ran.combined(), conflicts));
    }
    let tip = git
        .head()
        .await?
        .ok_or_else(|| OpError::git("the rebase left HEAD unborn"))?;
    checked(w.switch(f.target()).await)?;
    checked(w.merge_ff_only(tip.as_str()).await)?;
    Ok(())
}

/// The paths the index holds in conflict, in git's order.
pub(crate) async fn unmerged_paths(ctx: Ctx<'_>) -> Result<Vec<String>, OpError> {
    let git = Git::new(ctx.repo, ctx.cancel);
    let stages = crate::git::ls_files::unmerged(&git, MAX_LISTED).await?;
    Ok(stages
        .unmerged
        .iter()
        .map(|u| String::from_utf8_lossy(&u.path).into_owned())
        .collect())
}

/// Git's refusal, with the conflicts it stopped on (none when it refused to start).
pub(crate) fn refused(text: String, conflicts: Vec<String>) -> OpError {
    let message = if conflicts.is_empty() {
        text.trim().to_owned()
    } else {
        format!(
            "stopped on {} conflicting path(s) and aborted: the repository is as before",
            conflicts.len()
        )
    };
    let mut details = Fields::new();
    details.insert("conflicts".into(), json!(conflicts));
    OpError::Refused { message, details }
}

/// The card: merge-tree's verdict (clean or the conflicts), the commits and files that
/// come in.
async fn preview(ctx: Ctx<'_>, f: &MergeFields, pins: &Value) -> Result<Value, OpError> {
    let git = Git::new(ctx.repo, ctx.cancel);
    let head = head_oid(pins)?;
    let source = source_oid(pins)?;
    let scratch = Scratch::new(ctx.repo)?;
    let query = MergeQuery {
        base: None,
        ours: head.as_str(),
        theirs: source.as_str(),
        messages: true,
        max_paths: MAX_LISTED,
    };
    let merged = query.run(&git, &scratch).await?;
    let conflicts: Vec<Value> = merged
        .tree
        .stages
        .unmerged
        .iter()
        .zip(
            merged
                .tree
                .types
                .iter()
                .chain(std::iter::repeat(&Vec::new())),
        )
        .map(|(u, types)| json!({"path": String::from_utf8_lossy(&u.path), "types": types}))
        .collect();
    let (ours, theirs) = crate::git::log::left_right(&git, &head, &source).await?;
    let base = crate::git::merge_base::of(&git, &head, &source).await?;
    let files = match &base {
        Some(base) => incoming(&git, base, &source).await?,
        None => json!([]),
    };
    Ok(json!({
        "sourceRef": f.source_ref,
        "sourceOid": source.as_str(),
        "targetRef": f.target(),
        "targetOid": head.as_str(),
        "strategy": f.strategy,
        "fastForward": pins["fastForward"] == true,
        "clean": merged.clean,
        "conflicts": conflicts,
        "conflictsTotal": merged.tree.stages.unmerged_total,
        "commitsToMerge": theirs,
        "targetAhead": ours,
        "files": files,
    }))
}

/// The files `source` changed since `base`, with their status letter.
async fn incoming(git: &Git<'_>, base: &Oid, source: &Oid) -> Result<Value, OpError> {
    let changes = crate::git::diff_tree::trees_raw(git, base.as_str(), source.as_str()).await?;
    Ok(Value::Array(
        changes
            .into_iter()
            .take(MAX_LISTED)
            .map(|(_, _, status, path)| {
                json!({"path": path, "status": super::preview::status_word(status)})
            })
            .collect(),
    ))
}

#[cfg(test)]
mod tests;
