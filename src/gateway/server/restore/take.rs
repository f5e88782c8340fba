//! Taking a restore point: HEAD, the refs a write may move, the index, the worktree's
//! changes and git's state files, read side by side and written by one `fast-import` run
//! (see the parent module for what a point holds).

use jiff::Timestamp;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::capture;
use super::worktree::{self, Planned};
use super::{Caps, RestoreError, Steps, delete_refs, new_id, ref_base};
use crate::gateway::server::store::{RestorePoint, Store};
use crate::git::fast_import::{Import, Written};
use crate::git::{Git, Repo, path_text};
use crate::operation::OpError;

/// Takes a restore point of `repo` before a write that may move `refs`, and records it.
#[allow(clippy::too_many_arguments)]
pub async fn take(
    store: &mut Store,
    repo: &Repo,
    cancel: &CancellationToken,
    refs: &[String],
    preview_id: Option<&str>,
    operation_type: Option<&str>,
    caps: &Caps,
    now: Timestamp,
) -> Result<RestorePoint, RestoreError> {
    let steps = Steps::default();
    let what = Capture {
        refs,
        paths: &[],
        config: &[],
        preview_id,
        operation_type,
        caps,
    };
    take_timed(store, repo, cancel, &what, now, &steps).await
}

/// What [`take_timed`] captures: the refs the write may move, the paths it will touch,
/// the proposal it is for, and the caps.
pub struct Capture<'a> {
    pub refs: &'a [String],
    /// Repository paths the write touches (a patch's targets, a discard's paths): each is
    /// captured whatever git's ignore rules say of it, present or recorded as absent.
    pub paths: &'a [Vec<u8>],
    /// Configuration keys the write may set: their values are kept and put back.
    pub config: &'a [String],
    pub preview_id: Option<&'a str>,
    pub operation_type: Option<&'a str>,
    pub caps: &'a Caps,
}

/// [`take`], recording when each step ran in `steps`.
pub async fn take_timed(
    store: &mut Store,
    repo: &Repo,
    cancel: &CancellationToken,
    what: &Capture<'_>,
    now: Timestamp,
    steps: &Steps,
) -> Result<RestorePoint, RestoreError> {
    take_as(store, repo, cancel, &new_id(now), what, now, steps).await
}

/// [`take_timed`] under the id `id` (from [`new_id`]), which the caller may note before
/// the point exists: a crash after the point's refs moved and before its record is
/// written leaves refs that only that note leads to ([`super::settle_unrecorded`]).
pub async fn take_as(
    store: &mut Store,
    repo: &Repo,
    cancel: &CancellationToken,
    id: &str,
    what: &Capture<'_>,
    now: Timestamp,
    steps: &Steps,
) -> Result<RestorePoint, RestoreError> {
    let Capture {
        preview_id,
        operation_type,
        ..
    } = *what;
    let git = Git::new(repo, cancel);
    let id = id.to_owned();
    // Read before the index is, so the time is never newer than the bytes kept.
    let index_mtime = capture::index_mtime(repo);
    let mut captured = json!({
        "head": null,
        "refs": null,
        "index": null,
        "worktree": null,
        "state": null,
        "indexMtimeNs": index_mtime,
    });
    if !what.config.is_empty() {
        captured["config"] = capture::config(&git, what.config).await?;
    }
    if !what.paths.is_empty() {
        let named: Vec<String> = what.paths.iter().map(|p| path_text::encode(p)).collect();
        captured["touched"] = json!(named);
    }
    // With a worktree, fast-import starts now and is handed the point's refs and objects
    // while the worktree is listed, leaving only the worktree commit for after it. Until
    // it finishes no ref moves: a failure before then leaves nothing behind.
    let mut import = Import::new(&git, now.as_second(), repo.worktree.is_some());
    let prepared = prepare(&git, &mut import, &id, what, &mut captured, steps).await;
    let (kept, worktree, skipped) = match prepared {
        Ok(prepared) => prepared,
        Err(e) => {
            import.abandon().await;
            return Err(e);
        }
    };
    let (counter, marks, base) = match worktree {
        Some(planned) => {
            let marks = import.commit(planned.commit);
            (Some(planned.counter), Some(marks), planned.base)
        }
        None => (None, None, None),
    };
    let written = steps.time("commit and refs", import.finish()).await;
    let pinned = match written {
        Ok(written) => finish_refs(&git, &mut captured, kept, &written)
            .await
            .map(|()| written),
        Err(e) => Err(e.into()),
    };
    let written = match pinned {
        Ok(written) => written,
        Err(e) => {
            // Whatever refs were made before the failure go with it.
            let _ = delete_refs(&git, &id).await;
            return Err(e.into());
        }
    };
    if let (Some(counter), Some(marks)) = (counter, marks) {
        let blobs = marks
            .blobs
            .iter()
            .map(|m| written.object(*m))
            .collect::<Result<Vec<_>, _>>()?;
        let commit = written.object(marks.commit)?;
        let tree = written.tree(marks.commit)?;
        let hashed = counter.hashed(&blobs);
        captured["worktree"] = match base {
            Some(base) => json!({
                "commit": commit.as_str(),
                "base": base.as_str(),
                "changes": tree.as_str(),
                "hashed": hashed,
            }),
            None => json!({"commit": commit.as_str(), "tree": tree.as_str(), "hashed": hashed}),
        };
    }
    crate::operation::crash::point(crate::operation::crash::RESTORE_REFS_WRITTEN);
    let point = RestorePoint {
        id,
        repo_path: repo.display(),
        preview_id: preview_id.map(str::to_owned),
        operation_type: operation_type.map(str::to_owned),
        created_at: now,
        captured,
        skipped: Value::Array(skipped),
    };
    steps
        .time("record", async { store.insert_restore_point(&point) })
        .await?;
    crate::operation::crash::point(crate::operation::crash::RESTORE_POINT_RECORDED);
    Ok(point)
}

/// Everything of the point but the end of the fast-import run: HEAD, refs, state files,
/// and with a worktree the index and the worktree commit (returned with what tells how
/// many files it stores).
async fn prepare(
    git: &Git<'_>,
    import: &mut Import<'_>,
    id: &str,
    what: &Capture<'_>,
    captured: &mut Value,
    steps: &Steps,
) -> Result<(capture::Kept, Option<Planned>, Vec<Value>), RestoreError> {
    let repo = git.repo;
    if let Some(top) = repo.worktree.as_deref() {
        let (kept, planned, skipped) =
            with_worktree(git, import, top, id, what, captured, steps).await?;
        return Ok((kept, Some(planned), skipped));
    }
    let (found, state) = tokio::join!(
        capture::refs(git, what.refs),
        capture::state(git, &repo.git_dir)
    );
    let (head, refmap) = found?;
    (captured["head"], captured["refs"]) = (head, json!(refmap));
    let kept = capture::keep(import, id, captured, None, state?)?;
    Ok((kept, None, Vec::new()))
}

/// Reads back what fast-import wrote for `kept` into `captured`, and creates the refs it
/// does not (tags and other refs that may name any object).
async fn finish_refs(
    git: &Git<'_>,
    captured: &mut Value,
    kept: capture::Kept,
    written: &Written,
) -> Result<(), OpError> {
    capture::fill(captured, &kept, written)?;
    kept.others.commit(git, None).await?;
    Ok(())
}

/// The reads of a repository with a worktree, side by side: refs, state files and the
/// index, handed to `import` as soon as they are known, beside the listing of the
/// worktree's changes; the worktree commit is planned once the index tree and the
/// changes are known. Fills `captured` with HEAD and the refs.
async fn with_worktree(
    git: &Git<'_>,
    import: &mut Import<'_>,
    top: &std::path::Path,
    id: &str,
    what: &Capture<'_>,
    captured: &mut Value,
    steps: &Steps,
) -> Result<(capture::Kept, Planned, Vec<Value>), RestoreError> {
    let repo = git.repo;
    let known = async {
        let (found, state, index) = tokio::join!(
            steps.time("refs", capture::refs(git, what.refs)),
            steps.time("state files", capture::state(git, &repo.git_dir)),
            capture::index(git, &mut *import, steps),
        );
        let (head, refmap) = found?;
        captured["head"] = head;
        captured["refs"] = json!(refmap);
        let mut index = index?;
        let (tree, copy) = (index.tree.clone(), index.copy.take());
        let outside = std::mem::take(&mut index.skip_worktree);
        let attributes = index.attributes;
        let kept = capture::keep(import, id, captured, Some(index), state?)?;
        Ok::<_, OpError>((kept, tree, copy, outside, attributes))
    };
    let (known, listed) = tokio::join!(
        known,
        worktree::changes(git, top, what.caps, what.paths, steps)
    );
    let (kept, tree, copy, outside, attributes) = known?;
    let mut listed = listed?;
    steps
        .time(
            "outside checkout",
            listed.unlisted(git, top, what.caps, outside),
        )
        .await?;
    // A file git counts unchanged may still differ from its index blob on disk when
    // line endings are converted: its bytes are stored too, so a restore puts back what
    // was on disk. Only a repository whose configuration or attributes may convert pays
    // for the listing.
    if repo.converts_files || attributes || repo.common_dir.join("info/attributes").exists() {
        let converted = steps
            .time("converted files", worktree::converted(git))
            .await?;
        steps
            .time(
                "store converted",
                listed.unlisted(git, top, what.caps, converted),
            )
            .await?;
    }
    let commit = (
        format!("{}worktree", ref_base(id)),
        format!("gitward restore point {id}: worktree\n"),
    );
    let (planned, skipped) = worktree::plan(
        git,
        copy,
        top,
        listed,
        tree.as_ref(),
        what.caps,
        commit,
        steps,
    )
    .await?;
    Ok((kept, planned, skipped))
}
