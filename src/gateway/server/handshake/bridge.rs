//! The read bridge behind the FluxGit-required tools: restore points and the safety
//! timeline of one repository inside the allowed roots. Reads only: the store, HEAD and
//! one ref's reflog (HEAD's by default; through the read door).
//!
//! The timeline merges the reflog of one ref, named by `refName` and checked like any ref
//! name (never an option: `--all` and anything starting with `-` are refused) and resolved
//! the way `git reflog <name>` resolves it. Every ref's reflog at once is not offered: the
//! events of one ref are what a restore decision is about, and `repo.reflog` reads any
//! other ref's.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use super::events::{self, Current, RESTORE_EVENT};
use crate::gateway::server::app::{ApiError, App};
use crate::gateway::server::store::{RestorePoint, is_restore_point_id};
use crate::git::{Git, Repo, reflog};
use crate::operation::intent::Found;
use crate::process::CancellationToken;

/// Most reflog entries one event id may reach back (`reflog:HEAD@{n}`).
const MAX_REFLOG_INDEX: usize = 100;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RestoreQuery {
    pub repo_path: Option<String>,
    pub limit: Option<u32>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimelineQuery {
    pub repo_path: Option<String>,
    pub limit: Option<u32>,
    pub reflog_limit: Option<u32>,
    pub include_reflog: Option<bool>,
    pub include_restore_points: Option<bool>,
    pub ref_name: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RepoQuery {
    pub repo_path: Option<String>,
}

/// The repository a query names, opened, canonical and inside the allowed roots.
async fn open(app: &App, repo_path: Option<&str>) -> Result<Arc<Repo>, ApiError> {
    let path = repo_path.ok_or_else(|| ApiError::invalid("repoPath", "required"))?;
    let cancel = CancellationToken::new();
    crate::git::repo::open(&app.config, "repoPath", path, &cancel)
        .await
        .map_err(|e| ApiError::invalid("repoPath", e.to_string()))
}

/// The repository a restore-point query names, as its canonical path.
pub async fn query_repo(app: &App, repo_path: Option<&str>) -> Result<String, ApiError> {
    Ok(open(app, repo_path).await?.display())
}

/// HEAD now; unknown (`None`) when it cannot be read.
async fn current(repo: &Repo) -> Option<Current> {
    let cancel = CancellationToken::new();
    let git = Git::new(repo, &cancel);
    match crate::operation::pins::head(&git).await.ok()? {
        Found::Symbolic { target, oid } => Some(Current {
            branch_ref: Some(target),
            head: oid.map(|o| o.as_str().to_owned()),
        }),
        Found::At(oid) => Some(Current {
            branch_ref: None,
            head: Some(oid.as_str().to_owned()),
        }),
        Found::Absent => Some(Current::default()),
    }
}

fn current_json(current: Option<&Current>) -> Value {
    json!({
        "branchRef": current.and_then(|c| c.branch_ref.clone()),
        "head": current.and_then(|c| c.head.clone()),
    })
}

/// `GET /v1/mcp/restore-points?repoPath=&limit=`: newest first.
pub async fn restore_points(
    State(app): State<Arc<App>>,
    Query(query): Query<RestoreQuery>,
) -> Result<Response, ApiError> {
    let repo = open(&app, query.repo_path.as_deref()).await?;
    let limit = query.limit.unwrap_or(50).clamp(1, 200);
    let path = repo.display();
    let points = app
        .store
        .run(move |s| s.list_restore_points(&path, limit + 1))
        .await?;
    let more = points.len() > limit as usize;
    let now = current(&repo).await;
    let views: Vec<Value> = points
        .iter()
        .take(limit as usize)
        .map(|p| events::restore_point(p, None))
        .collect();
    Ok(axum::Json(json!({
        "restorePoints": views,
        "count": views.len(),
        "moreAvailable": more,
        "current": current_json(now.as_ref()),
        "approvalRequired": true,
        "approvalMessage": events::APPROVAL_MESSAGE,
    }))
    .into_response())
}

/// The restore point `id` of the repository `repo` (canonical), or 404.
async fn point_of(app: &App, repo: &str, id: String) -> Result<RestorePoint, ApiError> {
    if !is_restore_point_id(&id) {
        return Err(ApiError::not_found());
    }
    let point = app.store.run(move |s| s.restore_point(&id)).await?;
    // Another repository's point is not this caller's to see through this one.
    point
        .filter(|p| p.repo_path == repo)
        .ok_or_else(ApiError::not_found)
}

/// `GET /v1/mcp/restore-points/{id}?repoPath=`.
pub async fn restore_point(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    Query(query): Query<RepoQuery>,
) -> Result<Response, ApiError> {
    let repo = open(&app, query.repo_path.as_deref()).await?;
    let point = point_of(&app, &repo.display(), id).await?;
    let now = current(&repo).await;
    Ok(axum::Json(events::restore_point(&point, now.as_ref())).into_response())
}

/// The newest `limit` entries of the reflog of `name` (checked, then resolved as `git
/// reflog` does); the name events carry (the full one when the short one is ambiguous).
async fn ref_reflog(
    repo: &Repo,
    name: &str,
    limit: usize,
) -> Result<(String, reflog::Read), ApiError> {
    let invalid = |e: crate::git::GitError| match e {
        crate::git::GitError::Invalid { reason, .. } => ApiError::invalid("refName", reason),
        other => ApiError::internal(format!("reading the reflog of {name}: {other}")),
    };
    crate::git::args::check_ref_name("refName", name).map_err(invalid)?;
    let cancel = CancellationToken::new();
    let git = Git::new(repo, &cancel);
    let (full, ambiguous) = reflog::full_name(&git, "refName", name)
        .await
        .map_err(invalid)?;
    let read = reflog::read(&git, &full, limit)
        .await
        .map_err(|e| ApiError::internal(format!("reading the reflog of {full}: {e}")))?;
    Ok((if ambiguous { full } else { name.to_owned() }, read))
}

/// `GET /v1/mcp/safety/timeline?repoPath=&limit=&reflogLimit=&includeReflog=&includeRestorePoints=&refName=`.
pub async fn timeline(
    State(app): State<Arc<App>>,
    Query(query): Query<TimelineQuery>,
) -> Result<Response, ApiError> {
    let repo = open(&app, query.repo_path.as_deref()).await?;
    let limit = query.limit.unwrap_or(50).clamp(1, 200);
    let reflog_limit = query.reflog_limit.unwrap_or(12).clamp(1, 100) as usize;
    let path = repo.display();
    let mut all = Vec::new();
    let mut more = false;
    if query.include_restore_points.unwrap_or(true) {
        let path = path.clone();
        let points = app
            .store
            .run(move |s| s.list_restore_points(&path, limit + 1))
            .await?;
        more |= points.len() > limit as usize;
        all.extend(points.iter().map(events::restore_event));
    }
    if query.include_reflog.unwrap_or(true) {
        let name = query.ref_name.as_deref().unwrap_or("HEAD");
        let (name, read) = ref_reflog(&repo, name, reflog_limit).await?;
        more |= read.more;
        all.extend(
            read.entries
                .iter()
                .enumerate()
                .map(|(n, e)| events::reflog_event(&path, &name, n, e)),
        );
    }
    let (events, cut) = events::merge_newest_first(all, limit as usize);
    Ok(axum::Json(json!({
        "repoLabel": events::repo_label(&path),
        "eventCount": events.len(),
        "events": events,
        "moreAvailable": more || cut,
        "readOnly": true,
        "approvalRequired": true,
        "approvalMessage": events::APPROVAL_MESSAGE,
        "networkFetchPerformed": false,
    }))
    .into_response())
}

/// `GET /v1/mcp/safety/events/{eventId}?repoPath=`: one timeline event with what is
/// behind it (the restore point, or the reflog entry).
pub async fn event(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    Query(query): Query<RepoQuery>,
) -> Result<Response, ApiError> {
    let repo = open(&app, query.repo_path.as_deref()).await?;
    let path = repo.display();
    if let Some(point_id) = id.strip_prefix(RESTORE_EVENT) {
        let point = point_of(&app, &path, point_id.to_owned()).await?;
        let now = current(&repo).await;
        return Ok(axum::Json(json!({
            "eventId": id,
            "event": events::restore_event(&point),
            "restorePoint": events::restore_point(&point, now.as_ref()),
            "reflogEntry": null,
            "readOnly": true,
            "networkFetchPerformed": false,
        }))
        .into_response());
    }
    let (name, n) = events::reflog_index(&id)
        .filter(|(_, n)| *n < MAX_REFLOG_INDEX)
        .ok_or_else(ApiError::not_found)?;
    let (name, read) = ref_reflog(&repo, &name, n + 1).await?;
    let entry = read.entries.get(n).ok_or_else(ApiError::not_found)?;
    Ok(axum::Json(json!({
        "eventId": id,
        "event": events::reflog_event(&path, &name, n, entry),
        "restorePoint": null,
        "reflogEntry": events::reflog_entry(&name, n, entry),
        "readOnly": true,
        "networkFetchPerformed": false,
    }))
    .into_response())
}
