//! `POST /v1/mcp/diff/semantic`: the built-in semantic diff engine for other sidecars.
//! Body `{repoId?, repoPath, baseRef?, headRef?, paths?[]}`, the request a sidecar sends;
//! the answer is `diff.semantic`'s envelope with the engine's `data`.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use super::super::app::{ApiError, App};
use super::read_json;
use crate::gateway::api::ErrorCode;
use crate::git::diff::Sides;
use crate::git::{Git, GitError, RepoRelPath, Rev};
use crate::semantic;

/// Paths one request may name.
const MAX_PATHS: usize = 1000;

pub async fn diff(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    if !semantic::available() {
        return Err(ApiError::new(
            ErrorCode::NotImplemented,
            "this gateway was built without any grammar",
        ));
    }
    let body = read_json(&headers, body).await?;
    let text = |key: &str| -> Result<Option<&str>, ApiError> {
        match body.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(ApiError::invalid(key, "must be a string")),
        }
    };
    let repo_path = text("repoPath")?.ok_or_else(|| ApiError::invalid("repoPath", "required"))?;
    let (base_ref, head_ref) = (text("baseRef")?, text("headRef")?);
    let base = Rev::parse_opt("baseRef", base_ref).map_err(|e| invalid("baseRef", e))?;
    let head = Rev::parse_opt("headRef", head_ref).map_err(|e| invalid("headRef", e))?;
    let paths = paths(&body)?;
    let cancel = crate::process::CancellationToken::new();
    let repo = crate::git::repo::open(&app.config, "repoPath", repo_path, &cancel)
        .await
        .map_err(|e| invalid("repoPath", e))?;
    let git = Git::new(&repo, &cancel);
    let resolve = |field: &'static str, rev: Option<Rev>| async move {
        match rev {
            Some(rev) => git.resolve_commit(field, &rev).await.map(Some),
            None => Ok(None),
        }
    };
    let base = resolve("baseRef", base)
        .await
        .map_err(|e| invalid("baseRef", e))?;
    let head = resolve("headRef", head)
        .await
        .map_err(|e| invalid("headRef", e))?;
    let sides = match (base, head) {
        (Some(b), Some(h)) => Sides::Trees(b, h),
        (Some(one), None) | (None, Some(one)) => Sides::RevToWorktree(one),
        (None, None) => Sides::IndexToWorktree,
    };
    let query = semantic::Query {
        sides: &sides,
        path: None,
        only: (!paths.is_empty()).then_some(paths.as_slice()),
    };
    let answer = semantic::run(&git, &repo, query)
        .await
        .map_err(|e| invalid("repoPath", e))?;
    let text_args = |path: &str| {
        let mut args = Map::new();
        args.insert("repoPath".into(), json!(repo.display()));
        if let Some(b) = base_ref {
            args.insert("base".into(), json!(b));
        }
        if let Some(h) = head_ref {
            args.insert("head".into(), json!(h));
        }
        args.insert("path".into(), json!(path));
        Value::Object(args)
    };
    let data = semantic::data(&answer, text_args);
    Ok(axum::Json(json!({
        "tool": "diff.semantic",
        "readOnly": true,
        "source": "gitward-gateway",
        "data": data,
    }))
    .into_response())
}

/// `paths[]`: repository-relative paths, checked as the tools check them.
fn paths(body: &Value) -> Result<Vec<String>, ApiError> {
    let Some(list) = body.get("paths").filter(|v| !v.is_null()) else {
        return Ok(Vec::new());
    };
    let list = list
        .as_array()
        .filter(|l| l.len() <= MAX_PATHS)
        .ok_or_else(|| {
            ApiError::invalid(
                "paths",
                format!("must be an array of at most {MAX_PATHS} paths"),
            )
        })?;
    list.iter()
        .map(|p| {
            let p = p
                .as_str()
                .ok_or_else(|| ApiError::invalid("paths", "must hold strings"))?;
            RepoRelPath::parse("paths", p).map_err(|e| invalid("paths", e))?;
            Ok(p.to_owned())
        })
        .collect()
}

fn invalid(field: &str, e: GitError) -> ApiError {
    match e {
        GitError::Invalid { reason, .. } => ApiError::invalid(field, reason),
        other => ApiError::invalid(field, other.to_string()),
    }
}
