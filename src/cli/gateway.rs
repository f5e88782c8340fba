//! `gitward gateway`: the approval gateway — the handshake listener for sidecars and the
//! approval page for people, both on loopback only.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use super::login_file;
use super::startup::{runtime, start_audit};
use crate::config::{Config, vars};
use crate::gateway::addr::GatewayAddr;
use crate::gateway::server::instance::Instance;
use crate::gateway::server::policy::Policy;
use crate::gateway::server::run::{self, Options, Stopped};
use crate::gateway::server::store::Settings;
use crate::process::opener;

/// The handshake address when neither `--addr` nor the environment names one.
const DEFAULT_ADDR: &str = "127.0.0.1:59647";

/// Run the approval gateway: sidecars propose, a person approves, the gateway executes.
#[derive(Debug, Args)]
pub struct GatewayArgs {
    /// The handshake listener [default: FLUXGIT_MCP_HANDSHAKE_ADDR, then its fallbacks, else 127.0.0.1:59647].
    #[arg(long, value_name = "ADDR")]
    addr: Option<String>,
    /// The approval page's listener (port 0 picks a free one).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    ui_addr: String,
    /// The store [default: <runDir>/gateway/gateway.db].
    #[arg(long, value_name = "PATH")]
    db: Option<PathBuf>,
    /// Open the login link in the default browser ($BROWSER, else xdg-open), through a
    /// private file: the link never appears on a command line.
    #[arg(long)]
    open: bool,
    /// Repositories a proposal may name must be under DIR (repeatable; adds to
    /// FLUXGIT_MCP_ALLOWED_ROOTS).
    #[arg(long = "allowed-root", value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// How long a proposal waits for a decision (e.g. 90s, 30m, 2h).
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = parse_duration)]
    expiry: Duration,
    /// Pending proposals one agent may have at once.
    #[arg(long, value_name = "N", default_value_t = 20)]
    max_pending_per_agent: u32,
    /// Pending proposals of all agents together (agent names are self-declared).
    #[arg(long, value_name = "N", default_value_t = 100,
          value_parser = clap::value_parser!(u32).range(1..=500))]
    max_pending: u32,
    /// On SIGINT or SIGTERM, how long a running write may take to finish before it is
    /// stopped, its git operation aborted and its repository put back (a second signal
    /// stops at once).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    stop_timeout: Duration,
}

/// `90s`, `30m`, `2h` or a number of seconds.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("{text:?}: expected a duration such as 90s, 30m or 2h"))?;
    let secs = match unit {
        "s" => Some(n),
        "m" => n.checked_mul(60),
        "h" => n.checked_mul(3600),
        _ => None,
    }
    .filter(|s| *s > 0)
    .ok_or_else(|| format!("{text:?}: expected a positive duration such as 90s, 30m or 2h"))?;
    Ok(Duration::from_secs(secs))
}

fn refuse(why: &str) -> ExitCode {
    eprintln!("gitward gateway: {why}; refusing to start");
    ExitCode::FAILURE
}

impl GatewayArgs {
    pub fn run(self) -> ExitCode {
        match self.options() {
            Ok(options) => gateway(options, self.open, self.stop_timeout),
            Err(why) => refuse(&why),
        }
    }

    fn options(&self) -> Result<Options, String> {
        let config = Config::from_env(&self.roots)?;
        let handshake = match &self.addr {
            Some(addr) => addr.clone(),
            None => match &config.gateway_addr {
                Some(env) => {
                    let parsed = GatewayAddr::parse(env)
                        .map_err(|why| format!("{}: {why}", vars::HANDSHAKE_ADDR))?;
                    format!("{}:{}", parsed.host, parsed.port)
                }
                None => DEFAULT_ADDR.to_owned(),
            },
        };
        let handshake = run::parse_listen(&handshake).map_err(|e| format!("--addr {e}"))?;
        let ui = run::parse_listen(&self.ui_addr).map_err(|e| format!("--ui-addr {e}"))?;
        let gateway_dir = config.run_dir.as_ref().map(|d| d.join("gateway"));
        let db = match (&self.db, &gateway_dir) {
            (Some(db), _) => db.clone(),
            (None, Some(dir)) => dir.join("gateway.db"),
            (None, None) => {
                return Err(format!(
                    "no store location: pass --db or set {}",
                    vars::RUN_DIR
                ));
            }
        };
        let policy = match &config.agent_policy {
            Some(path) => Policy::load(path).map_err(|e| e.to_string())?,
            None => Policy::permissive(),
        };
        let settings = Settings {
            expiry: self.expiry,
            max_pending_per_agent: self.max_pending_per_agent,
            max_pending: self.max_pending,
            ..Settings::default()
        };
        Ok(Options {
            handshake,
            ui,
            db,
            gateway_dir,
            config,
            settings,
            policy,
            audit: None,
        })
    }
}

fn gateway(mut options: Options, open: bool, grace: Duration) -> ExitCode {
    // Before anything is opened or written: a second gateway on this store or run
    // directory touches nothing.
    let mut instance = match Instance::acquire(&options.db, options.gateway_dir.as_deref()) {
        Ok(instance) => instance,
        Err(why) => return refuse(&why),
    };
    let opener = open.then(|| {
        let env = crate::config::Env::read();
        opener::resolve(
            env.os(vars::BROWSER),
            Some(&options.config.user.search_path),
        )
    });
    if options.config.allowed_roots.is_empty() {
        eprintln!("gitward gateway: no allowed roots set; any repository may be proposed");
    }
    options.audit = match start_audit(&options.config) {
        Ok(audit) => audit,
        Err(code) => return code,
    };
    let audit = options.audit.clone();
    let options_dir = options.gateway_dir.clone();
    let runtime = runtime();
    let code = runtime.block_on(async {
        let started = match run::start(options).await {
            Ok(started) => started,
            Err(why) => return refuse(&why),
        };
        instance.note(&serde_json::json!({
            "pid": std::process::id(),
            "handshake": started.line["handshake"],
            "ui": started.line["ui"],
        }));
        {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", started.line);
            let _ = out.flush();
        }
        if let Some(opener) = opener {
            let login = started.line["login"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let app = std::sync::Arc::clone(&started.app);
            let dir = private_parent(&options_dir);
            // Beside serving: the page must answer while the browser comes up.
            tokio::spawn(open_login(opener, login, app, dir));
        }
        match run::serve(started, signals(), grace).await {
            Stopped::Clean | Stopped::Listener => ExitCode::SUCCESS,
            Stopped::Interrupted | Stopped::AtOnce => ExitCode::FAILURE,
        }
    });
    runtime.shutdown_background();
    if let Some(writer) = audit {
        writer.finish();
    }
    // Held to the very end: the ledger is finished before another gateway may start.
    drop(instance);
    code
}

/// Where the private login file's directory goes: the gateway's own directory, else the
/// system's temporary one.
fn private_parent(gateway_dir: &Option<PathBuf>) -> PathBuf {
    gateway_dir.clone().unwrap_or_else(std::env::temp_dir)
}

/// Hands the login link to the browser; a failure is a warning, never a failed start.
///
/// The link is a secret, and a child's argv (and environment) is readable by every local
/// user in the process table: so the browser is given a file, readable by this user only,
/// whose page forwards to the link. The file goes once the link is used or expires.
async fn open_login(
    opener: Result<PathBuf, String>,
    login: String,
    app: std::sync::Arc<crate::gateway::server::app::App>,
    parent: PathBuf,
) {
    let warn = |why: &dyn std::fmt::Display| {
        eprintln!(
            "gitward gateway: could not open the browser ({why}); open the login link \
             printed on stdout"
        );
    };
    let program = match opener {
        Ok(program) => program,
        Err(why) => return warn(&why),
    };
    let file = match login_file::write(&parent, &login) {
        Ok(file) => file,
        Err(e) => return warn(&format!("cannot write the private login file: {e}")),
    };
    match opener::open(&program, file.path(), opener::TIMEOUT).await {
        Ok(Some(0) | None) => {}
        Ok(Some(code)) => warn(&format!("{} exited with {code}", program.display())),
        Err(e) => warn(&e),
    }
    // The browser reads the file when it comes up; after the login (or the link's end)
    // nothing needs it.
    let until = std::time::Instant::now() + crate::gateway::server::auth::LOGIN_LIFETIME;
    while app.auth.login_token().is_some() && std::time::Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    drop(file);
}

/// Every SIGTERM and SIGINT, by name, as they come. Installed before serving starts, so
/// from then on a signal never ends the process by default: the first asks for a clean
/// stop, the second for an immediate one.
fn signals() -> tokio::sync::mpsc::UnboundedReceiver<&'static str> {
    use tokio::signal::unix::{SignalKind, signal};
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::spawn(async move {
                loop {
                    let name = tokio::select! {
                        Some(()) = term.recv() => "SIGTERM",
                        Some(()) = int.recv() => "SIGINT",
                        else => return,
                    };
                    if tx.send(name).is_err() {
                        return;
                    }
                }
            });
        }
        _ => eprintln!("gitward gateway: cannot watch SIGTERM/SIGINT; a signal stops at once"),
    }
    rx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_a_unit() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("5"), Ok(Duration::from_secs(5)));
        for bad in ["", "0s", "m", "3d", "-1s", "1.5h"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
