//! One MCP conversation's dispatch, shared by every transport: the protocol era of each
//! request, the methods we answer, tool calls with their observers, and cancellation.
//!
//! A transport owns the bytes (stdio frames, HTTP bodies) and one [`Handler`] per
//! conversation; everything a request means is decided here, so stdio and HTTP give the
//! same answers, the same audit entries and the same presence.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::elicit::{self, Standing};
use super::guard;
use super::instructions::instructions;
use super::jsonrpc::{self, Id};
use super::logging;
use super::outgoing::{self, Outgoing, RequestChannel};
use super::protocol::{self, Version, meta};
use super::reply::{CallReply, Reply};
pub use super::settle::settle;
use crate::config::Config;
use crate::error::{ToolError, code};
use crate::model::tool_name;
use crate::observe::{CallEvent, CallObserver, ClientInfo};
use crate::process::CancellationToken;
use crate::tools::{self, CallCtx, Rendered};

/// The outcome of running one tool.
pub struct CallOutcome {
    /// The structured result, or the error payload, and the text block.
    pub rendered: Rendered,
    pub is_error: bool,
    pub error_code: Option<i64>,
}

/// Runs a tool by name outside any protocol framing (the `call` verb uses this too).
/// `None` when no served tool has that name.
///
/// The tool runs as a task of its own, so a panic in it ends that call alone, as an
/// internal error (-32603) that is answered and audited like any other outcome.
pub async fn run_tool(ctx: CallCtx, name: &str, args: Value) -> Option<CallOutcome> {
    let tool = tools::find(&ctx.config, name)?;
    let task = guard::AbortOnDrop(tokio::spawn(async move {
        guard::debug_panic::maybe_panic(&ctx.config, tool.name);
        tool.call_rendered(ctx, args).await
    }));
    Some(match task.await {
        Ok(Ok(rendered)) => CallOutcome {
            rendered,
            is_error: false,
            error_code: None,
        },
        Ok(Err(err)) => error_outcome(tool, &err),
        Err(join) => {
            let why = if join.is_panic() {
                "the tool failed unexpectedly (a bug in gitward; details are on its stderr)"
            } else {
                "the tool was stopped"
            };
            error_outcome(tool, &ToolError::internal(why))
        }
    })
}

fn error_outcome(tool: &tools::ToolDef, err: &ToolError) -> CallOutcome {
    let payload = tools::compact(&tool.error_payload(err));
    CallOutcome {
        rendered: Rendered {
            // The compact JSON of a `Value` is valid JSON.
            structured: RawValue::from_string(payload).unwrap_or_else(|_| raw_null()),
            text: None,
        },
        is_error: true,
        error_code: Some(err.code),
    }
}

/// What `initialize` settled for a conversation; carried over when the handshake was
/// answered before the serving loop started.
#[derive(Default)]
pub struct Session {
    /// Set by `initialize` (legacy era only).
    version: Option<Version>,
    client: ClientInfo,
    /// The client declared URL-mode elicitation.
    url_elicitation: bool,
}

impl Session {
    /// A conversation whose handshake settled `version` with `client` (HTTP sessions
    /// restored from their id after a restart).
    pub fn settled(version: Version, client: ClientInfo) -> Session {
        Session {
            version: Some(version),
            client,
            url_elicitation: false,
        }
    }
}

/// Who hears about every call: the audit recorder and the presence file.
pub type Observers = Arc<[Arc<dyn CallObserver>]>;

/// One conversation: its negotiated version (legacy era), its requests in flight, and
/// the configuration its tools see.
pub struct Handler {
    config: Arc<Config>,
    conversation: Conversation,
    session: Mutex<Session>,
    inflight: Mutex<HashMap<String, CancellationToken>>,
    /// The conversation's log level and the notes it was told (legacy era).
    log: Mutex<super::logging::LogState>,
    observers: Observers,
    shutdown: CancellationToken,
    /// Where a proposal's review request goes (see [`elicit`]).
    standing: Standing,
}

/// Which of a server's conversations a handler serves, as presence tells them apart.
#[derive(Debug, Clone, Default)]
pub enum Conversation {
    /// The process's one conversation (stdio).
    #[default]
    Process,
    /// An HTTP session, by a key of its own.
    Session(String),
    /// Sessionless HTTP requests: each client (by its declared name) is one.
    PerClient,
}

impl Conversation {
    fn key(&self, client: &ClientInfo) -> Option<String> {
        match self {
            Conversation::Process => None,
            Conversation::Session(key) => Some(format!("session:{key}")),
            Conversation::PerClient => Some(format!(
                "client:{}/{}",
                client.name.as_deref().unwrap_or(""),
                client.version.as_deref().unwrap_or("")
            )),
        }
    }
}

/// Which era and version a request is served in, and who the client says it is.
struct Era {
    version: Version,
    client: ClientInfo,
    /// The client declared URL-mode elicitation.
    url_elicitation: bool,
}

impl Handler {
    /// A conversation whose requests stop when `shutdown` fires.
    pub fn new(config: Arc<Config>, observers: Observers, shutdown: CancellationToken) -> Handler {
        Handler {
            config,
            conversation: Conversation::Process,
            session: Mutex::new(Session::default()),
            inflight: Mutex::new(HashMap::new()),
            log: Mutex::new(super::logging::LogState::default()),
            observers,
            shutdown,
            standing: Standing::default(),
        }
    }

    /// A conversation that goes on from `session`.
    pub fn resume(
        config: Arc<Config>,
        observers: Observers,
        shutdown: CancellationToken,
        session: Session,
    ) -> Handler {
        let handler = Handler::new(config, observers, shutdown);
        *handler.session.lock().unwrap_or_else(|p| p.into_inner()) = session;
        handler
    }

    /// What the handshake settled, to [`Handler::resume`] from.
    pub fn into_session(self) -> Session {
        self.session.into_inner().unwrap_or_else(|p| p.into_inner())
    }

    /// The same handler, serving `conversation`.
    pub fn serving(mut self, conversation: Conversation) -> Handler {
        self.conversation = conversation;
        self
    }

    pub fn config(&self) -> &Arc<Config> {
        &self.config
    }

    /// The conversation's way to its client outside any request, set by the transport.
    pub fn standing(&self) -> &Standing {
        &self.standing
    }

    /// What the handshake settled so far: the version (none before `initialize`) and the
    /// client.
    pub fn settled(&self) -> (Option<Version>, ClientInfo) {
        let session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        (session.version, session.client.clone())
    }

    /// The answer to a request that must not queue behind work, if `method` is one.
    ///
    /// A ping must never wait, and requests after `initialize` must see the negotiated
    /// version. `initialize` exists only in the legacy era, so it is the handshake even
    /// when a client stamps the modern envelope on it.
    pub fn inline(&self, id: &Id, method: &str, params: &Map<String, Value>) -> Option<Value> {
        if method == "initialize" {
            return Some(self.initialize(id.clone(), params));
        }
        if method == "ping" && !protocol::has_modern_meta(params) {
            return Some(jsonrpc::result(id.clone(), json!({})));
        }
        None
    }

    /// Acts on a notification; none gets a response.
    pub fn notify(&self, method: &str, params: &Map<String, Value>) {
        if method == "notifications/cancelled"
            && let Some(id) = params.get("requestId")
            && let Some(token) = self
                .inflight
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(&id.to_string())
        {
            token.cancel();
        }
    }

    /// Answers one request; `None` when the client cancelled it. What the request tells
    /// its client before the answer (progress) is queued on `outgoing`, when given.
    pub async fn request(
        &self,
        id: Id,
        method: String,
        params: Map<String, Value>,
        outgoing: Option<Outgoing>,
    ) -> Option<Reply> {
        let cancel = self.shutdown.child_token();
        self.request_with(id, method, params, cancel, outgoing)
            .await
    }

    /// [`Handler::request`] under a token the transport also holds: HTTP cancels it when
    /// the client hangs up, so the request's git children are stopped, not orphaned.
    pub async fn request_with(
        &self,
        id: Id,
        method: String,
        params: Map<String, Value>,
        cancel: CancellationToken,
        outgoing: Option<Outgoing>,
    ) -> Option<Reply> {
        let key = id.to_string();
        self.inflight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key.clone(), cancel.clone());
        let channel = RequestChannel::new(outgoing);
        let reply = self
            .dispatch(id, &method, params, cancel.clone(), &channel)
            .await;
        // Before the answer is queued: nothing about this request may follow it.
        channel.close();
        self.inflight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&key);
        // MCP: the receiver of `notifications/cancelled` should not answer the request
        // it names; the client has already stopped waiting for it.
        let cancelled_by_client = cancel.is_cancelled() && !self.shutdown.is_cancelled();
        reply.filter(|_| !cancelled_by_client)
    }

    /// Stops every request in flight (their git processes are killed).
    pub fn cancel_all(&self) {
        for token in self
            .inflight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
        {
            token.cancel();
        }
    }

    /// Works out the era of a request from its `_meta` or the session.
    fn era(&self, id: &Id, method: &str, params: &Map<String, Value>) -> Result<Era, Value> {
        let meta_obj = params.get("_meta").and_then(Value::as_object);
        if let Some(requested) = meta_obj.and_then(|m| m.get(meta::PROTOCOL_VERSION)) {
            let meta_obj = meta_obj.expect("checked above");
            if !requested.is_string() {
                return Err(invalid_params(
                    id,
                    format!(
                        "params._meta[\"{}\"] must be a string",
                        meta::PROTOCOL_VERSION
                    ),
                ));
            }
            // The per-request envelope belongs to the modern era; a handshake-era
            // version is reached through `initialize`, never through `_meta`.
            let Some(version) = requested
                .as_str()
                .and_then(Version::parse)
                .filter(|v| v.is_modern())
            else {
                return Err(jsonrpc::error(
                    id.clone(),
                    code::UNSUPPORTED_VERSION,
                    "Unsupported protocol version",
                    Some(
                        json!({ "supported": Version::supported_in_meta(), "requested": requested }),
                    ),
                ));
            };
            if !meta_obj
                .get(meta::CLIENT_CAPABILITIES)
                .is_some_and(Value::is_object)
            {
                return Err(invalid_params(
                    id,
                    format!(
                        "params._meta[\"{}\"] is required (an object)",
                        meta::CLIENT_CAPABILITIES
                    ),
                ));
            }
            let info = meta_obj.get(meta::CLIENT_INFO);
            return Ok(Era {
                version,
                client: client_info(info),
                url_elicitation: elicit::declares_url(meta_obj.get(meta::CLIENT_CAPABILITIES)),
            });
        }
        let session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        match session.version {
            Some(version) => Ok(Era {
                version,
                client: session.client.clone(),
                url_elicitation: session.url_elicitation,
            }),
            None => Err(invalid_params(
                id,
                format!(
                    "{method}: params._meta[\"{}\"] and params._meta[\"{}\"] are required; call server/discover (or initialize, for the legacy protocol) first",
                    meta::PROTOCOL_VERSION,
                    meta::CLIENT_CAPABILITIES
                ),
            )),
        }
    }

    async fn dispatch(
        &self,
        id: Id,
        method: &str,
        params: Map<String, Value>,
        cancel: CancellationToken,
        channel: &RequestChannel,
    ) -> Option<Reply> {
        let era = match self.era(&id, method, &params) {
            Ok(era) => era,
            Err(reply) => return Some(reply.into()),
        };
        // What a stdio user reads on stderr, before this answer.
        if era.version.is_modern() {
            logging::tell_request(&params, channel);
        } else {
            logging::tell_conversation(&self.log, channel);
        }
        let shape = |result: Value| {
            if era.version.is_modern() {
                protocol::modern_result(result)
            } else {
                result
            }
        };
        let result = match method {
            "server/discover" => json!({
                "supportedVersions": Version::supported(),
                "capabilities": protocol::capabilities(),
                "instructions": instructions(&self.config),
                "ttlMs": protocol::TTL_MS,
                "cacheScope": "public",
            }),
            "ping" if !era.version.is_modern() => json!({}),
            "logging/setLevel" if !era.version.is_modern() => {
                match logging::set_level(&self.log, &params) {
                    Ok(()) => json!({}),
                    Err(details) => return Some(invalid_params(&id, details).into()),
                }
            }
            "tools/list" => {
                let tools: Vec<Value> = tools::visible(&self.config)
                    .map(|t| protocol::tool_descriptor(t, era.version))
                    .collect();
                let mut result = json!({ "tools": tools });
                if era.version.is_modern() {
                    result["ttlMs"] = protocol::TTL_MS.into();
                    result["cacheScope"] = "public".into();
                }
                result
            }
            "tools/call" => {
                return Some(match self.call(id, &params, &era, cancel, channel).await {
                    Ok(call) => Reply::Call(call),
                    Err(reply) => reply.into(),
                });
            }
            _ => {
                return Some(
                    jsonrpc::error(
                        id,
                        code::METHOD_NOT_FOUND,
                        "Method not found",
                        Some(json!({ "method": method })),
                    )
                    .into(),
                );
            }
        };
        Some(jsonrpc::result(id, shape(result)).into())
    }

    fn initialize(&self, id: Id, params: &Map<String, Value>) -> Value {
        let requested = params.get("protocolVersion").and_then(Value::as_str);
        let version = requested
            .and_then(Version::parse)
            .filter(|v| !v.is_modern())
            .unwrap_or(Version::LATEST_LEGACY);
        let mut session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        session.version = Some(version);
        session.client = client_info(params.get("clientInfo"));
        session.url_elicitation = elicit::declares_url(params.get("capabilities"));
        jsonrpc::result(
            id,
            json!({
                "protocolVersion": version.as_str(),
                "capabilities": protocol::capabilities(),
                "serverInfo": protocol::server_info(),
                "instructions": instructions(&self.config),
            }),
        )
    }

    async fn call(
        &self,
        id: Id,
        params: &Map<String, Value>,
        era: &Era,
        cancel: CancellationToken,
        channel: &RequestChannel,
    ) -> Result<CallReply, Value> {
        // `Err` is any answer that is not the tool's own: an error, or a question first.
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Err(invalid_params(
                &id,
                "tools/call: \"name\" must be a string".into(),
            ));
        };
        // The second leg of a call that asked its client (2026-07-28): the kept answer.
        if let Some(state) = params
            .get("requestState")
            .filter(|_| era.version.is_modern())
        {
            return super::rounds::resume(id, state);
        }
        let args = params.get("arguments").cloned().unwrap_or(Value::Null);
        let conversation = self.conversation.key(&era.client);
        let started = Instant::now();
        let progress = outgoing::progress(params, era.version, channel, &cancel);
        let ctx = CallCtx {
            config: Arc::clone(&self.config),
            cancel,
            client: era.client.clone(),
            progress: progress.clone(),
        };
        let outcome = run_tool(ctx, name, args.clone()).await;
        progress.close();
        let Some(outcome) = outcome else {
            let data = unknown_tool(&self.config, name);
            let payload =
                RawValue::from_string(tools::compact(&data)).unwrap_or_else(|_| raw_null());
            self.observe(&CallEvent {
                tool: name,
                known: false,
                read_only: false,
                arguments: &args,
                payload: &payload,
                is_error: true,
                error_code: Some(code::INVALID_PARAMS),
                duration: started.elapsed(),
                client: &era.client,
                conversation: conversation.as_deref(),
            })
            .await;
            return Err(jsonrpc::error(
                id,
                code::INVALID_PARAMS,
                &format!("Unknown tool: {name}"),
                Some(data),
            ));
        };
        let tool = tools::find(&self.config, name);
        let read_only = tool.is_some_and(|t| t.annotations.read_only);
        self.observe(&CallEvent {
            // Audit and presence keep the tool's identity, whichever name called it.
            tool: tool.map_or(name, |t| t.name),
            known: true,
            read_only,
            arguments: &args,
            payload: &outcome.rendered.structured,
            is_error: outcome.is_error,
            error_code: outcome.error_code,
            duration: started.elapsed(),
            client: &era.client,
            conversation: conversation.as_deref(),
        })
        .await;
        let reply = CallReply {
            id,
            rendered: outcome.rendered,
            is_error: outcome.is_error,
            version: era.version,
        };
        if !era.url_elicitation || reply.is_error {
            return Ok(reply);
        }
        let (tool, stop) = (tool.map_or(name, |t| t.name), self.shutdown.child_token());
        elicit::offer(&self.config, &self.standing, stop, tool, &args, reply)
    }

    /// Tells every observer, then waits until each has kept what it must: the response
    /// never leaves before the call's audit entry is in the ledger.
    async fn observe(&self, event: &CallEvent<'_>) {
        let mut pending = Vec::with_capacity(self.observers.len());
        for observer in self.observers.iter() {
            pending.extend(observer.on_call(event));
        }
        settle(pending).await;
    }
}

/// The error data of a call to a tool that is not served.
pub fn unknown_tool(config: &Config, name: &str) -> Value {
    let (read, write): (Vec<_>, Vec<_>) =
        tools::visible(config).partition(|t| t.annotations.read_only);
    json!({
        "tool": name,
        "reason": "no tool with this name is served; see tools/list",
        "readOnlyTools": read.iter().map(|t| tool_name::served(t.name)).collect::<Vec<_>>(),
        "writeProposalTools": write.iter().map(|t| tool_name::served(t.name)).collect::<Vec<_>>(),
    })
}

fn invalid_params(id: &Id, details: String) -> Value {
    jsonrpc::error(
        id.clone(),
        code::INVALID_PARAMS,
        "Invalid params",
        Some(json!({ "details": details })),
    )
}

fn client_info(value: Option<&Value>) -> ClientInfo {
    let text = |key: &str| {
        value
            .and_then(|v| v.get(key))
            .and_then(Value::as_str)
            .map(|s| s.chars().take(128).collect())
    };
    ClientInfo {
        name: text("name"),
        version: text("version"),
    }
}

/// `null`, for a payload that could not be kept as JSON (never, in practice).
fn raw_null() -> Box<RawValue> {
    RawValue::NULL.to_owned()
}
