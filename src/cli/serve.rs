//! `gitward serve`: MCP over stdio until stdin closes or a signal arrives, or with
//! `--http ADDR` over Streamable HTTP on a loopback address until a signal arrives.

use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;

use super::options::SharedOptions;
use super::startup::{open_audit, runtime, spawn_audit};
use crate::config::Config;
use crate::process::CancellationToken;
use crate::transport::{Server, http, opening};

/// Serve MCP over stdio (the default when no command is given), or over HTTP.
#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub options: SharedOptions,
    /// Serve Streamable HTTP on this loopback address (127.0.0.1:PORT, [::1]:PORT or
    /// localhost:PORT; port 0 picks one) instead of stdio. The endpoint is printed on stdout.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// With --http: refuse requests without a workspace capability (401) instead of
    /// serving them the git tools.
    #[arg(long, requires = "http")]
    pub require_capability: bool,
}

impl ServeArgs {
    pub fn run(self) -> ExitCode {
        let config = match self.options.config() {
            Ok(config) => config,
            Err(why) => return super::usage_error("serve", &why),
        };
        let transport = match &self.http {
            None => Transport::Stdio,
            Some(addr) => match crate::gateway::server::run::parse_listen(addr) {
                Ok(addr) => Transport::Http {
                    addr,
                    options: http::Options {
                        require_capability: self.require_capability,
                        specs: self.options.specs_allowed(&config),
                    },
                },
                Err(why) => return super::usage_error("serve", &format!("--http: {why}")),
            },
        };
        serve(Arc::new(config), transport)
    }
}

enum Transport {
    Stdio,
    Http {
        addr: std::net::SocketAddr,
        options: http::Options,
    },
}

fn serve(config: Arc<Config>, transport: Transport) -> ExitCode {
    // Audit configuration fails closed: a bad signing key stops the server before it
    // has said anything on stdout.
    let ledger = match open_audit(&config) {
        Ok(ledger) => ledger,
        Err(code) => return code,
    };
    // Everything else waits for the first answer, so a client's `initialize` does not:
    // the warning below, the presence sweep, the writer threads, the runtime and its
    // workers. All of it still happens before the next message is read.
    let mut opening = match transport {
        Transport::Stdio => match opening::answer_first(&config) {
            Ok(opening) => Some(opening),
            Err(e) => {
                eprintln!("gitward: {e}");
                return ExitCode::FAILURE;
            }
        },
        Transport::Http { .. } => None,
    };
    if config.allowed_roots.is_empty() {
        crate::observe::notes::warn("no allowed roots set; any absolute repository path is served");
    }
    let presence = crate::presence::own::Presence::start(&config);
    let audit = match ledger.map(spawn_audit).transpose() {
        Ok(audit) => audit,
        Err(code) => return code,
    };
    if let Some(presence) = &presence {
        presence.start_writer();
    }
    let recorder = audit
        .as_ref()
        .map(|writer| Arc::new(super::audit_observer(writer, &config.audit)));
    let mut observers: Vec<Arc<dyn crate::observe::CallObserver>> = Vec::new();
    if let Some(recorder) = &recorder {
        observers.push(Arc::clone(recorder) as Arc<dyn crate::observe::CallObserver>);
    }
    if let Some(presence) = &presence {
        observers.push(Arc::clone(presence) as Arc<dyn crate::observe::CallObserver>);
    }
    let runtime = runtime();
    let result = runtime.block_on(async {
        let shutdown = CancellationToken::new();
        watch_signals(shutdown.clone());
        match (transport, opening.take()) {
            (Transport::Stdio, opening) => {
                let mut opening = opening.unwrap_or_default();
                let stdin = opening.input();
                Server::serve_stdout(config, observers, opening, stdin, shutdown).await
            }
            (Transport::Http { addr, options }, _) => {
                let listener = tokio::net::TcpListener::bind(addr).await?;
                let local = listener.local_addr()?;
                {
                    use std::io::Write;
                    let line = serde_json::json!({ "http": http::url(local, None) });
                    let mut out = std::io::stdout().lock();
                    let _ = writeln!(out, "{line}");
                    let _ = out.flush();
                }
                http::serve(config, observers, listener, options, shutdown).await
            }
        }
    });
    // Stdin closed (stdio), SIGTERM and SIGINT all end `serve`: the record goes with us.
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

/// Cancels `shutdown` on SIGTERM or SIGINT.
fn watch_signals(shutdown: CancellationToken) {
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
        shutdown.cancel();
    });
}
