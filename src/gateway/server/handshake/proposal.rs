//! `POST /v1/mcp/operation/preview/{operationType}`: validate again (the sidecar is never
//! trusted), resolve every repository inside the allowed roots, ask the policy, store the
//! proposal under the gateway's own id, answer — and only then compute the card's preview.

use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::super::app::{ApiError, App};
use super::super::human::others;
use super::super::policy::{Decision, Request};
use super::super::store::Inserted;
use super::{read_json, scope};
use crate::gateway::api::{self, Accepted, ErrorCode, Proposal};
use crate::git::Repo;

/// Crash point (development builds): the proposal is stored, the `202` not yet sent.
pub const AFTER_INSERT: &str = "after-insert";

pub async fn preview(
    State(app): State<Arc<App>>,
    Path(kind): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let value = read_json(&headers, body).await?;
    if !api::OPERATION_TYPES.contains(&kind.as_str()) {
        return Err(ApiError::not_found());
    }
    let mut proposal = parse(value)?;
    proposal
        .check_common(&kind)
        .map_err(|e| ApiError::invalid(e.field, e.reason))?;
    super::preview::validate(&kind, &proposal.fields)?;
    let (repo, repositories) = resolve_repositories(&app, &mut proposal).await?;
    // What the proposal names is judged before git reads anything for it, …
    let named = scope::Touched {
        repositories: repositories.clone(),
        ..scope::Touched::default()
    };
    check_policy(&app, &proposal, &named)?;
    let repo = repo.ok_or_else(|| ApiError::invalid("repoPath", "required"))?;
    let pins = super::preview::pin(&app, &kind, &repo, &proposal.fields).await?;
    // … and what it will really touch once its pins say so (the executor refuses to run
    // on any other state).
    let op = super::preview::operation_of(&kind)?;
    let touched = scope::touched(op, &proposal.fields, &pins, &repositories)
        .map_err(super::preview::refusal)?;
    check_policy(&app, &proposal, &touched)?;
    let identity = crate::operation::identity::read(&repo).map_err(super::preview::refusal)?;

    let id = uuid::Uuid::new_v4().to_string();
    let inserted = app
        .store
        .run({
            let (id, proposal) = (id.clone(), proposal.clone());
            let pins = pins.0.clone();
            let now = jiff::Timestamp::now();
            move |s| s.insert_pinned(&id, &proposal, now, Some(&pins), Some(&identity))
        })
        .await?;
    crate::operation::crash::point(AFTER_INSERT);
    let (status, record) = match inserted {
        Inserted::New(record) => {
            let id = record.preview_id.clone();
            app.answered.expect(&id);
            // All of it runs once the proposing call has its answer (`settle`): it can
            // neither delay nor change that answer.
            let paths = super::preview::operation_of(&kind)
                .map(|op| op.touched_paths(&proposal.fields))
                .unwrap_or_default();
            let agent = proposal.agent_id.clone();
            let app = Arc::clone(&app);
            tokio::spawn(async move {
                app.answered.settled(&id).await;
                app.changed.notify_one();
                others::spawn(
                    Arc::clone(&app),
                    id.clone(),
                    Arc::clone(&repo),
                    agent,
                    paths,
                );
                super::preview::spawn(app, id, repo, kind, proposal.fields, pins);
            });
            (StatusCode::ACCEPTED, record)
        }
        Inserted::Existing(record) => {
            app.changed.notify_one();
            (StatusCode::OK, record)
        }
    };
    let accepted = Accepted {
        preview_id: record.preview_id,
        status: record.status,
        expires_at: record.expires_at,
    };
    Ok((status, axum::Json(accepted)).into_response())
}

/// The body as a proposal; a wrong or missing common field is a 422 naming it.
fn parse(value: Value) -> Result<Proposal, ApiError> {
    if !value.is_object() {
        return Err(ApiError::invalid("body", "expected a JSON object"));
    }
    serde_path_to_error::deserialize::<_, Proposal>(value).map_err(|e| {
        let path = e.path().to_string();
        let message = e.inner().to_string();
        // A missing field has no path; serde names it in the message.
        let field = if path == "." {
            message
                .split('`')
                .nth(1)
                .map_or_else(|| "body".to_owned(), str::to_owned)
        } else {
            path
        };
        let reason = message.clone();
        ApiError::new(ErrorCode::Invalid, format!("invalid `{field}`: {message}"))
            .with_details(json!({"field": field, "reason": reason}))
    })
}

/// Every repository the proposal names, opened (it must be a repository inside the allowed
/// roots) and canonical; `repoPath` is rewritten to its canonical form so the card, the
/// policy and the executor all see one spelling.
async fn resolve_repositories(
    app: &App,
    proposal: &mut Proposal,
) -> Result<(Option<Arc<Repo>>, Vec<PathBuf>), ApiError> {
    let cancel = crate::process::CancellationToken::new();
    let mut out = Vec::new();
    let mut main = None;
    match proposal.repo_path.as_deref() {
        Some(path) => {
            let repo = crate::git::repo::open(&app.config, "repoPath", path, &cancel)
                .await
                .map_err(|e| ApiError::invalid("repoPath", reason_of(e)))?;
            proposal.repo_path = Some(repo.display());
            out.push(repo.path.clone());
            main = Some(repo);
        }
        None if proposal.operation_type != "branchDelete" => {
            return Err(ApiError::invalid("repoPath", "required"));
        }
        None => {}
    }
    for path in scope::extra_repositories(&proposal.operation_type, &proposal.fields) {
        let repo = crate::git::repo::open(&app.config, "targets[].repoPath", &path, &cancel)
            .await
            .map_err(|e| ApiError::invalid("targets[].repoPath", reason_of(e)))?;
        out.push(repo.path.clone());
    }
    Ok((main, out))
}

fn reason_of(e: crate::git::GitError) -> String {
    match e {
        crate::git::GitError::Invalid { reason, .. } => reason,
        other => other.to_string(),
    }
}

fn check_policy(app: &App, proposal: &Proposal, touched: &scope::Touched) -> Result<(), ApiError> {
    let kind = proposal.operation_type.as_str();
    let operations = scope::operations(kind, &proposal.fields);
    let operations: Vec<&str> = operations.iter().map(String::as_str).collect();
    let request = Request {
        agent_id: &proposal.agent_id,
        operations: &operations,
        refs: &touched.refs,
        repositories: &touched.repositories,
        worktrees: &touched.worktrees,
    };
    match app.policy.evaluate(&request) {
        Decision::Allow => Ok(()),
        Decision::Deny(denial) => {
            let details = serde_json::to_value(&denial).unwrap_or(Value::Null);
            Err(ApiError::new(ErrorCode::PolicyDenied, denial.message).with_details(details))
        }
    }
}
