//! `operation.preview.<type>`: one generic tool over [`Operation`], built once per type in
//! `operation::ALL`, so a new operation type is one file there and no code here.
//!
//! A call validates its arguments (the common ones here, the type's own through
//! [`Operation::validate`]), opens the repository through the read path (allowed roots,
//! canonical top level), POSTs the proposal, reads its status once, and returns at once
//! with `accepted: true` and the gateway's canonical `previewId`. It never waits for a
//! person: `operation.status` continues from there.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::hint::{self, OtherAgents};
use super::{NextAction, SOURCE, agent_id, client, ended, status_schema};
use crate::config::Toolset;
use crate::error::ToolError;
use crate::gateway::api::{self, MAX_REASON_BYTES, Proposal};
use crate::git::repo;
use crate::operation::{self, Operation};
use crate::tools::{self, About, Annotations, CallCtx, Rendered, Schemas, ToolDef, input, schema};

/// The longest `idempotencyKey` a client may send; the wire key adds the type prefix.
pub const MAX_CLIENT_KEY: usize = 128;

/// The fields every proposal has besides its type's own.
const COMMON: [&str; 3] = ["repoPath", "reason", "idempotencyKey"];

/// One preview tool per operation type, in the order of the product's tool list.
pub fn tools() -> Vec<ToolDef> {
    let mut ops: Vec<&'static dyn Operation> = operation::ALL.to_vec();
    ops.sort_by_key(|op| {
        api::OPERATION_TYPES
            .iter()
            .position(|t| *t == op.kind())
            .unwrap_or(usize::MAX)
    });
    ops.into_iter().map(tool).collect()
}

fn tool(op: &'static dyn Operation) -> ToolDef {
    // Built once at start-up; the registry keeps every tool for the life of the process.
    let name: &'static str = Box::leak(format!("operation.preview.{}", op.kind()).into_boxed_str());
    ToolDef::dynamic(
        About {
            name,
            title: op.title(),
            description: op.description(),
            toolset: Toolset::Ops,
            annotations: Annotations {
                read_only: false,
                destructive: crate::operation::risk::destructive(op.kind()),
                // A repeated call is a new proposal unless it repeats the idempotencyKey.
                idempotent: false,
                open_world: false,
            },
            schemas: Box::new(move || Schemas {
                input: input_schema(op),
                output: input::output_schema_of::<PreviewOutput>(),
            }),
        },
        Box::new(move |ctx, args| {
            Box::pin(async move {
                let output = call(op, name, ctx, args).await?;
                Ok(Rendered {
                    structured: tools::raw(&output)?,
                    text: None,
                })
            })
        }),
    )
}

/// The common fields' schema joined with the type's own (a closed object either way).
fn input_schema(op: &dyn Operation) -> Value {
    let own = op.fields_schema();
    let mut properties = Map::new();
    properties.insert(
        "repoPath".into(),
        json!({"type": "string", "description": "Absolute path of the repository (any directory inside its working tree)."}),
    );
    properties.insert(
        "reason".into(),
        json!({"type": "string", "minLength": 1, "maxLength": MAX_REASON_BYTES,
               "description": "Why, in plain words; the approver reads it."}),
    );
    properties.insert(
        "idempotencyKey".into(),
        json!({"type": "string", "minLength": 1, "maxLength": MAX_CLIENT_KEY, "pattern": "^[A-Za-z0-9._:-]+$",
               "description": "Only to retry the same intent (resolves to its proposal)."}),
    );
    if let Some(own) = own["properties"].as_object() {
        for (key, schema) in own {
            properties.insert(key.clone(), schema.clone());
        }
    }
    let mut required = vec![json!("repoPath"), json!("reason")];
    required.extend(own["required"].as_array().into_iter().flatten().cloned());
    schema::terse_input(json!({
        "type": "object",
        "additionalProperties": false,
        "properties": properties,
        "required": required,
    }))
}

/// The result of a preview: the proposal was submitted, not carried out.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PreviewOutput {
    pub tool: &'static str,
    pub read_only: bool,
    /// Always `fluxgit-gateway`.
    pub source: &'static str,
    /// True: the gateway holds the proposal and a person will decide. Nothing changed in
    /// git yet; do not report an outcome before `operation.status` says `completed`.
    pub accepted: bool,
    /// The gateway's canonical id of the proposal.
    pub preview_id: String,
    pub operation_type: &'static str,
    /// `pending` for a new proposal; a retry with the same `idempotencyKey` may find it
    /// further on.
    #[schemars(schema_with = "status_schema")]
    pub status: String,
    /// When the proposal expires undecided (RFC 3339).
    pub expires_at: String,
    /// Poll this while the proposal is live.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_action: Option<NextAction>,
    /// The gateway's lifecycle record from the one status read; null when that read did
    /// not answer (the proposal stands all the same: see `statusReadError`).
    pub data: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_read_error: Option<String>,
    /// Other coding agents in this repository, informational only (absent when agent
    /// detection is disabled).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_agents: Option<OtherAgents>,
}

/// The checked arguments of one call.
struct Args {
    repo_path: String,
    reason: String,
    key: Option<String>,
    fields: Map<String, Value>,
}

fn parse(op: &dyn Operation, args: Value) -> Result<Args, ToolError> {
    let mut args = match args {
        Value::Object(map) => map,
        Value::Null => Map::new(),
        _ => return Err(ToolError::invalid("arguments", "must be a JSON object")),
    };
    let own = op.fields_schema();
    let own = own["properties"].as_object();
    if let Some(unknown) = args
        .keys()
        .find(|k| !COMMON.contains(&k.as_str()) && !own.is_some_and(|o| o.contains_key(*k)))
    {
        let known: Vec<String> = COMMON
            .iter()
            .map(|k| format!("`{k}`"))
            .chain(
                own.into_iter()
                    .flat_map(|o| o.keys().map(|k| format!("`{k}`"))),
            )
            .collect();
        return Err(ToolError::invalid(
            unknown,
            format!("is not a known argument (expected {})", known.join(", ")),
        ));
    }
    let mut text = |field: &str, required: bool| -> Result<Option<String>, ToolError> {
        match args.remove(field) {
            Some(Value::String(s)) => Ok(Some(s)),
            None | Some(Value::Null) if !required => Ok(None),
            None => Err(ToolError::invalid(field, "is required")),
            Some(other) => Err(ToolError::invalid(
                field,
                format!("expected a string, got {other}"),
            )),
        }
    };
    let repo_path = text("repoPath", true)?.unwrap_or_default();
    let reason = text("reason", true)?.unwrap_or_default();
    let key = text("idempotencyKey", false)?;
    if reason.trim().is_empty() {
        return Err(ToolError::invalid(
            "reason",
            "say why the operation is wanted: the person approving reads it",
        ));
    }
    if reason.len() > MAX_REASON_BYTES {
        return Err(ToolError::invalid(
            "reason",
            format!("longer than {MAX_REASON_BYTES} bytes"),
        ));
    }
    if let Some(key) = &key {
        let allowed = |b: u8| b.is_ascii_alphanumeric() || b"._:-".contains(&b);
        if key.is_empty() || key.len() > MAX_CLIENT_KEY || !key.bytes().all(allowed) {
            return Err(ToolError::invalid(
                "idempotencyKey",
                format!("expected 1-{MAX_CLIENT_KEY} of [A-Za-z0-9._:-]"),
            ));
        }
    }
    op.validate(&args)
        .map_err(|e| ToolError::invalid(e.field, e.reason))?;
    Ok(Args {
        repo_path,
        reason,
        key,
        fields: args,
    })
}

/// The key on the wire: scoped to the operation type, so the same client key on two
/// types names two intents; a fresh one when the client gave none.
pub fn scoped_key(kind: &str, client_key: Option<&str>) -> String {
    match client_key {
        Some(key) => format!("{kind}:{key}"),
        None => format!("{kind}:auto-{}", uuid::Uuid::new_v4()),
    }
}

async fn call(
    op: &'static dyn Operation,
    name: &'static str,
    ctx: CallCtx,
    args: Value,
) -> Result<PreviewOutput, ToolError> {
    let args = parse(op, args)?;
    // The repository's place inside the allowed roots is checked here, as every tool
    // checks it, before anything is known of a gateway.
    let repo = repo::open(&ctx.config, "repoPath", &args.repo_path, &ctx.cancel).await?;
    let client = client(&ctx)?;
    let proposal = Proposal {
        preview_id: Some(uuid::Uuid::new_v4().to_string()),
        agent_id: agent_id(ctx.client.name.as_deref()),
        operation_type: op.kind().to_owned(),
        repo_path: Some(repo.display()),
        reason: args.reason,
        requested_at: format!("{:.3}", jiff::Timestamp::now()),
        idempotency_key: Some(scoped_key(op.kind(), args.key.as_deref())),
        fields: args.fields,
    };
    // Detection runs beside the gateway call; its answer is used only once the gateway
    // accepted, and dropped (the task aborted) on every other path.
    let hint = AbortOnDrop(tokio::spawn(hint::other_agents(
        Arc::clone(&ctx.config),
        Arc::clone(&repo),
        ctx.client.name.clone(),
        op.touched_paths(&proposal.fields),
    )));
    let accepted = client.propose(&proposal, &ctx.cancel).await?;
    let (status, data, status_read_error) =
        match client.status(&accepted.preview_id, &ctx.cancel).await {
            Ok((record, body)) => {
                if let Some(error) = ended(&record, &body) {
                    return Err(error);
                }
                (record.status, body, None)
            }
            Err(e) => (accepted.status, Value::Null, Some(e.to_string())),
        };
    let other_agents = hint.join().await.flatten();
    Ok(PreviewOutput {
        tool: name,
        read_only: false,
        source: SOURCE,
        accepted: true,
        next_action: NextAction::poll(&accepted.preview_id, status),
        preview_id: accepted.preview_id,
        operation_type: op.kind(),
        status: status.as_str().to_owned(),
        expires_at: accepted.expires_at,
        data,
        status_read_error,
        other_agents,
    })
}

/// A spawned task that is aborted when dropped unjoined.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> AbortOnDrop<T> {
    async fn join(mut self) -> Option<T> {
        (&mut self.0).await.ok()
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}
