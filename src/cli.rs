//! The command line: serve over stdio (the default), run one tool, list tools.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::Value;

use crate::config::{Config, Toolset};
use crate::process::CancellationToken;
use crate::tools::{self, CallCtx, ClientInfo};
use crate::transport::{self, Server};

const USAGE: &str = "\
gitward — a safety-first MCP server for Git

Usage:
  gitward [serve] [--read-only] [--toolsets git,ops,specs] [--allowed-root DIR]...
                               serve MCP over stdio (the default)
  gitward call TOOL [JSON]     run one tool once and print its result
  gitward tools [--json]       list the tools (or print the tools/list payload)
  gitward --help | --version

Options for serve, call and tools:
  --read-only          hide every tool that proposes a change
  --toolsets LIST      comma-separated: git, ops, specs (default: all)
  --allowed-root DIR   only serve repositories under DIR (repeatable; adds to
                       FLUXGIT_MCP_ALLOWED_ROOTS)
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
        Ok(config)
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
    let presence = crate::presence::own::Presence::start();
    let observers: Vec<Arc<dyn transport::CallObserver>> = presence
        .iter()
        .map(|p| Arc::clone(p) as Arc<dyn transport::CallObserver>)
        .collect();
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
    let ctx = CallCtx {
        config,
        cancel: CancellationToken::new(),
        client: ClientInfo {
            name: Some("gitward-cli".into()),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        },
    };
    let outcome = runtime().block_on(transport::run_tool(ctx, &name, args));
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
