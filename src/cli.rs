//! The command line: serve over stdio (the default), run one tool, list tools.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::Value;

use crate::audit::{self, AuditConfig, AuditError, Ledger};
use crate::config::{Config, Toolset, vars};
use crate::process::CancellationToken;
use crate::specs::workspace::Workspace;
use crate::tools::{self, CallCtx, ClientInfo};
use crate::transport::{self, Server};

const USAGE: &str = "\
gitward — a safety-first MCP server for Git

Usage:
  gitward [serve] [--read-only] [--toolsets git,ops,specs] [--allowed-root DIR]...
          [--workspace FILE]   serve MCP over stdio (the default)
  gitward call TOOL [JSON]     run one tool once and print its result
  gitward tools [--json]       list the tools (or print the tools/list payload)
  gitward verify-audit PATH [--pubkey PEM]... [--require-signed] [--require-unbroken]
                               verify an audit ledger (exit 0 ok, 3 broken)
  gitward keygen --out DIR     write an Ed25519 audit signing key pair into DIR
  gitward --help | --version

Options for serve, call and tools:
  --read-only          hide every tool that proposes a change
  --toolsets LIST      comma-separated: git, ops, specs (default: all)
  --allowed-root DIR   only serve repositories under DIR (repeatable; adds to
                       FLUXGIT_MCP_ALLOWED_ROOTS); without a workspace descriptor
                       these folders also form the spec tools' workspace
  --workspace FILE     the spec tools' workspace descriptor, read from FILE
                       (otherwise FYLLO_WORKSPACE_JSON)
";

/// Exit codes: 0 success, 1 the tool reported an error, 2 usage.
pub fn main(args: Vec<OsString>) -> ExitCode {
    let mut args: Vec<String> = match args.into_iter().map(OsString::into_string).collect() {
        Ok(args) => args,
        Err(bad) => return usage_error(&format!("argument is not UTF-8: {bad:?}")),
    };
    let verb = match args.first().map(String::as_str) {
        Some("--help" | "-h" | "help") => {
            let _ = std::io::stdout().write_all(USAGE.as_bytes());
            return ExitCode::SUCCESS;
        }
        Some("--version" | "-V") => {
            let _ = writeln!(std::io::stdout(), "gitward {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Some(v) if !v.starts_with('-') => args.remove(0),
        _ => "serve".to_owned(),
    };
    match verb.as_str() {
        "verify-audit" => return verify_audit(args),
        "keygen" => return keygen(args),
        _ => {}
    }
    let (options, rest) = match ServeOptions::parse(args) {
        Ok(parsed) => parsed,
        Err(why) => return usage_error(&why),
    };
    let config = match options.config() {
        Ok(config) => Arc::new(config),
        Err(why) => return usage_error(&why),
    };
    match verb.as_str() {
        "serve" if rest.is_empty() => serve(config),
        "call" => call(config, rest),
        "tools" => list(&config, rest),
        other => usage_error(&format!(
            "unknown command or argument: {other} {}",
            rest.join(" ")
        )),
    }
}

fn usage_error(why: &str) -> ExitCode {
    eprintln!("gitward: {why}\n\n{USAGE}");
    ExitCode::from(2)
}

#[derive(Default)]
struct ServeOptions {
    read_only: bool,
    toolsets: Option<Vec<Toolset>>,
    roots: Vec<PathBuf>,
    workspace: Option<PathBuf>,
}

impl ServeOptions {
    /// Takes the shared options out of `args`, returning the remaining positionals.
    fn parse(args: Vec<String>) -> Result<(ServeOptions, Vec<String>), String> {
        let mut options = ServeOptions::default();
        let mut rest = Vec::new();
        let mut iter = args.into_iter();
        while let Some(arg) = iter.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
                _ => (arg.clone(), None),
            };
            let mut value = |name: &str| {
                inline
                    .clone()
                    .or_else(|| iter.next())
                    .ok_or_else(|| format!("{name} needs a value"))
            };
            match flag.as_str() {
                "--read-only" => options.read_only = true,
                "--toolsets" => {
                    let list = value("--toolsets")?;
                    let sets = list
                        .split(',')
                        .map(|s| Toolset::parse(s).ok_or_else(|| format!("unknown toolset: {s}")))
                        .collect::<Result<Vec<_>, _>>()?;
                    options.toolsets = Some(sets);
                }
                "--allowed-root" => options.roots.push(PathBuf::from(value("--allowed-root")?)),
                "--workspace" => options.workspace = Some(PathBuf::from(value("--workspace")?)),
                _ => rest.push(arg),
            }
        }
        Ok((options, rest))
    }

    fn config(&self) -> Result<Config, String> {
        let mut config = Config::from_env(&self.roots)?;
        config.read_only = self.read_only;
        if let Some(sets) = &self.toolsets {
            config.toolsets = sets.clone();
        }
        config.workspace = self.workspace(&config)?.map(Arc::new);
        if config.workspace.is_none() {
            config.toolsets.retain(|t| *t != Toolset::Specs);
        }
        crate::specs::openspec::exclude_project_dirs(&config);
        Ok(config)
    }

    /// The spec tools' workspace: `--workspace FILE`, else `FYLLO_WORKSPACE_JSON`, else the
    /// allowed roots. A descriptor that is present but invalid stops the server; the
    /// current directory is never used.
    fn workspace(&self, config: &Config) -> Result<Option<Workspace>, String> {
        if std::env::var_os(vars::DISABLE_BUNDLED_MCP).is_some_and(|v| v == "1")
            || !config.has(Toolset::Specs)
        {
            return Ok(None);
        }
        if let Some(file) = &self.workspace {
            let text = std::fs::read_to_string(file)
                .map_err(|e| format!("cannot read --workspace {}: {e}", file.display()))?;
            return Workspace::parse(&text)
                .map(Some)
                .map_err(|e| format!("--workspace {}: {e}", file.display()));
        }
        if let Some(json) = std::env::var_os(vars::WORKSPACE_JSON) {
            let json = json
                .into_string()
                .map_err(|_| format!("{} is not UTF-8", vars::WORKSPACE_JSON))?;
            return Workspace::parse(&json)
                .map(Some)
                .map_err(|e| format!("{}: {e}", vars::WORKSPACE_JSON));
        }
        if config.allowed_roots.is_empty() {
            return Ok(None);
        }
        Workspace::from_roots(&config.allowed_roots).map(Some)
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("the async runtime must start")
}

fn serve(config: Arc<Config>) -> ExitCode {
    if config.allowed_roots.is_empty() {
        eprintln!("gitward: no allowed roots set; any absolute repository path is served");
    }
    // Audit configuration fails closed: a bad signing key stops the server before it
    // has said anything on stdout.
    let audit = match start_audit() {
        Ok(audit) => audit,
        Err(code) => return code,
    };
    let presence = crate::presence::own::Presence::start();
    let mut observers: Vec<Arc<dyn transport::CallObserver>> = Vec::new();
    let recorder = audit
        .as_ref()
        .map(|writer| Arc::new(audit::record::AuditObserver::new(Arc::clone(writer))));
    if let Some(recorder) = &recorder {
        observers.push(Arc::clone(recorder) as Arc<dyn transport::CallObserver>);
    }
    if let Some(presence) = &presence {
        observers.push(Arc::clone(presence) as Arc<dyn transport::CallObserver>);
    }
    let runtime = runtime();
    let result = runtime.block_on(async {
        let shutdown = CancellationToken::new();
        let signals = shutdown.clone();
        tokio::spawn(async move {
            use tokio::signal::unix::{SignalKind, signal};
            let (Ok(mut term), Ok(mut int)) = (
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
            ) else {
                return;
            };
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            signals.cancel();
        });
        let stdin = tokio::io::BufReader::with_capacity(64 * 1024, tokio::io::stdin());
        Server::serve(config, observers, stdin, tokio::io::stdout(), shutdown).await
    });
    // Stdin closed, SIGTERM and SIGINT all end `serve`: the record goes with us.
    if let Some(presence) = presence {
        presence.finish();
    }
    // In-flight blocking reads of stdin must not keep the process alive.
    runtime.shutdown_background();
    // Every call has been observed by now: write what is still queued.
    if let Some(recorder) = recorder {
        recorder.finish();
    }
    if let Some(writer) = audit {
        writer.finish();
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gitward: {e}");
            ExitCode::FAILURE
        }
    }
}

fn call(config: Arc<Config>, rest: Vec<String>) -> ExitCode {
    let (name, json) = match rest.as_slice() {
        [name] => (name.clone(), "{}".to_owned()),
        [name, json] => (name.clone(), json.clone()),
        _ => return usage_error("call takes TOOL and an optional JSON object of arguments"),
    };
    let args: Value = match serde_json::from_str(&json) {
        Ok(v) => v,
        Err(e) => return usage_error(&format!("arguments are not valid JSON: {e}")),
    };
    // Audited exactly as a call through the server is, and failing closed the same way.
    let audit = match start_audit() {
        Ok(audit) => audit,
        Err(code) => return code,
    };
    let recorder = audit
        .as_ref()
        .map(|writer| audit::record::AuditObserver::new(Arc::clone(writer)));
    let client = ClientInfo {
        name: Some("gitward-cli".into()),
        version: Some(env!("CARGO_PKG_VERSION").into()),
    };
    let ctx = CallCtx {
        config: Arc::clone(&config),
        cancel: CancellationToken::new(),
        client: client.clone(),
    };
    let started = std::time::Instant::now();
    let runtime = runtime();
    let outcome = runtime.block_on(transport::run_tool(ctx, &name, args.clone()));
    if let Some(recorder) = &recorder {
        let unknown;
        let read_only = tools::find(&config, &name).is_some_and(|t| t.annotations.read_only);
        let (payload, is_error, error_code) = match &outcome {
            Some(o) => (&o.structured, o.is_error, o.error_code),
            None => {
                unknown = transport::unknown_tool(&config, &name);
                (&unknown, true, Some(crate::error::code::INVALID_PARAMS))
            }
        };
        let event = transport::CallEvent {
            tool: &name,
            known: outcome.is_some(),
            read_only,
            arguments: &args,
            payload,
            is_error,
            error_code,
            duration: started.elapsed(),
            client: &client,
        };
        use transport::CallObserver as _;
        let settled = recorder.on_call(&event);
        runtime.block_on(transport::settle(settled));
        recorder.finish();
    }
    if let Some(writer) = audit {
        writer.finish();
    }
    let Some(outcome) = outcome else {
        return usage_error(&format!("unknown tool: {name} (see `gitward tools`)"));
    };
    let text = serde_json::to_string_pretty(&outcome.structured).unwrap_or_default();
    let _ = writeln!(std::io::stdout(), "{text}");
    if outcome.is_error {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn list(config: &Config, rest: Vec<String>) -> ExitCode {
    let json = match rest.as_slice() {
        [] => false,
        [flag] if flag == "--json" => true,
        _ => return usage_error("tools takes only --json"),
    };
    let mut out = std::io::stdout().lock();
    if json {
        let version = transport::protocol::Version::V2026_07_28;
        let tools: Vec<Value> = tools::visible(config)
            .map(|t| transport::protocol::tool_descriptor(t, version))
            .collect();
        let _ = writeln!(out, "{}", serde_json::json!({ "tools": tools }));
    } else {
        for tool in tools::visible(config) {
            let kind = if tool.annotations.read_only {
                "read"
            } else {
                "propose"
            };
            let _ = writeln!(out, "{:<36} {:<8} {}", tool.name, kind, tool.title);
        }
    }
    ExitCode::SUCCESS
}

/// Opens the audit ledger and its writer thread; `Ok(None)` when audit is off.
fn start_audit() -> Result<Option<Arc<audit::writer::AuditWriter>>, ExitCode> {
    let config = match AuditConfig::from_env() {
        Ok(Some(config)) => config,
        Ok(None) => return Ok(None),
        Err(AuditError::NoLocation) => {
            eprintln!("gitward: {}; audit is off", AuditError::NoLocation);
            return Ok(None);
        }
        Err(e) => {
            eprintln!("gitward: {e}; refusing to start");
            return Err(ExitCode::FAILURE);
        }
    };
    let started = Ledger::open(config).and_then(audit::writer::AuditWriter::spawn);
    match started {
        Ok(writer) => Ok(Some(writer)),
        Err(e) => {
            eprintln!("gitward: cannot start the audit writer: {e}; refusing to start");
            Err(ExitCode::FAILURE)
        }
    }
}

/// `verify-audit PATH [--pubkey PEM]... [--require-signed]`: exit 0 verified, 3 not, 2 usage.
fn verify_audit(args: Vec<String>) -> ExitCode {
    let mut path = None;
    let mut keys = Vec::new();
    let mut require_signed = false;
    let mut require_unbroken = false;
    let mut iter = args.into_iter();
    while let Some(arg) = iter.next() {
        let pubkey = match arg.strip_prefix("--pubkey=") {
            Some(value) => Some(value.to_owned()),
            None if arg == "--pubkey" => match iter.next() {
                Some(value) => Some(value),
                None => return usage_error("--pubkey needs a PEM file"),
            },
            None => None,
        };
        if let Some(file) = pubkey {
            match audit::signing::load_public_key(std::path::Path::new(&file)) {
                Ok(key) => keys.push(key),
                Err(why) => return usage_error(&format!("--pubkey {why}")),
            }
        } else if arg == "--require-signed" {
            require_signed = true;
        } else if arg == "--require-unbroken" {
            require_unbroken = true;
        } else if arg.starts_with('-') || path.is_some() {
            return usage_error(&format!("verify-audit: unexpected argument {arg}"));
        } else {
            path = Some(PathBuf::from(arg));
        }
    }
    let Some(path) = path else {
        return usage_error("verify-audit needs the ledger PATH");
    };
    let mut out = std::io::stdout().lock();
    let verified = audit::verify_audit_ledger(&path, &keys, require_signed).and_then(|report| {
        if report.breaks == 0 {
            return Ok(report);
        }
        eprintln!(
            "gitward: the audit ledger has {} recorded break(s): a segment ended in bytes that \
             were not valid entries; the writer that found them recorded their hash and went on \
             in a new segment",
            report.breaks
        );
        if !require_unbroken {
            return Ok(report);
        }
        let failure = audit::verify::VerifyFailure {
            segment: None,
            line: None,
            reason: format!("{} recorded break(s), and none are allowed", report.breaks),
        };
        Err(audit::verify::VerifyError::Failed(Box::new((
            failure, report,
        ))))
    });
    match verified {
        Ok(report) => {
            let mut line = serde_json::json!({ "ok": true });
            merge(&mut line, &report);
            let _ = writeln!(out, "{line}");
            ExitCode::SUCCESS
        }
        Err(audit::verify::VerifyError::NotFound(path)) => {
            usage_error(&format!("no audit ledger at {}", path.display()))
        }
        Err(audit::verify::VerifyError::Failed(failed)) => {
            let (failure, report) = *failed;
            eprintln!("gitward: audit ledger does not verify: {failure}");
            let mut line = serde_json::json!({ "ok": false, "failure": failure });
            merge(&mut line, &report);
            let _ = writeln!(out, "{line}");
            ExitCode::from(3)
        }
    }
}

fn merge(line: &mut Value, report: &audit::VerifyReport) {
    if let (Value::Object(line), Ok(Value::Object(counters))) = (line, serde_json::to_value(report))
    {
        line.extend(counters);
    }
}

/// `keygen --out DIR`: a fresh Ed25519 key pair for audit signing.
fn keygen(args: Vec<String>) -> ExitCode {
    let dir = match args.as_slice() {
        [flag, dir] if flag == "--out" => PathBuf::from(dir),
        [flag] if flag.starts_with("--out=") => PathBuf::from(&flag["--out=".len()..]),
        _ => return usage_error("keygen takes --out DIR"),
    };
    match audit::signing::keygen(&dir) {
        Ok(key_id) => {
            let _ = writeln!(
                std::io::stdout(),
                "wrote {0}/audit-signing.key.pem (private, mode 600) and \
                 {0}/audit-signing.pub.pem; key id {key_id}",
                dir.display()
            );
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("gitward: keygen: {why}");
            ExitCode::FAILURE
        }
    }
}
