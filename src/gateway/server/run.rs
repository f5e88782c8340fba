//! Starting the gateway: everything that can refuse (policy, store, addresses) is checked
//! before anything is announced; then both listeners serve, the follower audits and
//! streams, the timer expires, and the start-up line says where everything is.
//!
//! The run directory gets `gateway/ui.json` (where the human listener is) and
//! `gateway/cli-token` (the CLI's bearer token), both `0600`, so `gitward pending` and
//! friends find the gateway without being told.

use std::fs::{self, DirBuilder, OpenOptions};
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::Notify;

use super::app::{App, StorePool};
use super::auth::Auth;
use super::events::{self, Events};
use super::executor::Executor;
use super::policy::Policy;
use super::store::Settings;
use super::{handshake, human};
use crate::audit::writer::AuditWriter;
use crate::config::Config;

/// How often the timer looks for proposals past their deadline.
const EXPIRY_TICK: Duration = Duration::from_millis(500);

/// Everything `gitward gateway` was told.
pub struct Options {
    pub handshake: SocketAddr,
    pub ui: SocketAddr,
    pub db: PathBuf,
    /// Where `ui.json` and `cli-token` go.
    pub gateway_dir: Option<PathBuf>,
    pub config: Config,
    pub settings: Settings,
    pub policy: Policy,
    pub audit: Option<Arc<AuditWriter>>,
}

/// A started gateway: the shared state and where it listens.
pub struct Started {
    pub app: Arc<App>,
    handshake: TcpListener,
    ui: TcpListener,
    /// The start-up line.
    pub line: serde_json::Value,
}

/// Parses a listener address: a loopback IP or `localhost`, with a port (0 picks one).
/// Anything else is refused — the gateway never listens beyond this machine.
pub fn parse_listen(value: &str) -> Result<SocketAddr, String> {
    let trimmed = value.trim();
    let bare = trimmed
        .strip_prefix("http://")
        .unwrap_or(trimmed)
        .trim_end_matches('/');
    let refuse = || {
        format!(
            "{value:?} is not a loopback address with a port (use 127.0.0.1:PORT, [::1]:PORT or localhost:PORT)"
        )
    };
    if let Some(port) = bare.strip_prefix("localhost:") {
        let port: u16 = port.parse().map_err(|_| refuse())?;
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    let addr: SocketAddr = bare.parse().map_err(|_| refuse())?;
    match addr.ip() {
        IpAddr::V4(ip) if ip == Ipv4Addr::LOCALHOST => Ok(addr),
        IpAddr::V6(ip) if ip == Ipv6Addr::LOCALHOST => Ok(addr),
        _ => Err(refuse()),
    }
}

fn authority(addr: SocketAddr) -> String {
    match addr.ip() {
        IpAddr::V6(_) => format!("[::1]:{}", addr.port()),
        IpAddr::V4(_) => format!("127.0.0.1:{}", addr.port()),
    }
}

async fn bind(addr: SocketAddr, what: &str) -> Result<TcpListener, String> {
    TcpListener::bind(addr).await.map_err(|e| {
        if e.kind() == std::io::ErrorKind::AddrInUse {
            format!("the {what} address {addr} is already in use")
        } else {
            format!("cannot listen on the {what} address {addr}: {e}")
        }
    })
}

/// Checks everything and binds both listeners; nothing is served yet.
pub async fn start(options: Options) -> Result<Started, String> {
    let store = StorePool::open(options.db.clone(), options.settings.clone()).map_err(|e| {
        format!(
            "cannot open the gateway store {}: {e}",
            options.db.display()
        )
    })?;
    let auth = Auth::new().map_err(|e| format!("no randomness for the login token: {e}"))?;
    let handshake = bind(options.handshake, "handshake").await?;
    let ui = bind(options.ui, "approval page").await?;
    let (handshake_addr, ui_addr) = (
        handshake.local_addr().map_err(|e| e.to_string())?,
        ui.local_addr().map_err(|e| e.to_string())?,
    );
    let ui_url = format!("http://{}/", authority(ui_addr));
    let login = auth
        .login_token()
        .map(|token| format!("{ui_url}login#{token}"))
        .unwrap_or_default();
    let config = Arc::new(options.config);
    let executor = Executor::new(
        options.db.clone(),
        options.settings.clone(),
        Arc::clone(&config),
    );
    let app = Arc::new(App {
        store: Arc::new(store),
        policy: options.policy,
        config,
        executor: Arc::new(executor),
        events: Events::default(),
        auth,
        audit: options.audit,
        changed: Arc::new(Notify::new()),
        ui_port: ui_addr.port(),
        handshake_port: handshake_addr.port(),
        answered: Default::default(),
    });
    if let Some(dir) = &options.gateway_dir {
        write_run_files(dir, &app, &ui_url, handshake_addr)
            .map_err(|e| format!("cannot write the run files in {}: {e}", dir.display()))?;
    }
    let line = json!({
        "handshake": authority(handshake_addr),
        "ui": ui_url,
        "login": login,
    });
    Ok(Started {
        app,
        handshake,
        ui,
        line,
    })
}

/// How serving ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// Nothing was running, or everything running finished within the bound.
    Clean,
    /// A write did not finish within the bound: it was stopped, its git operation
    /// aborted and the proposal recorded `failed/interrupted`.
    Interrupted,
    /// A second signal: stopped at once; the next start reconciles what was running.
    AtOnce,
    /// A listener failed.
    Listener,
}

/// Serves until the first signal from `signals` (or a failed listener), then stops: no
/// new work is taken, a running write gets `grace` to finish, and past it is stopped
/// cleanly; a second signal stops at once.
pub async fn serve(
    started: Started,
    mut signals: tokio::sync::mpsc::UnboundedReceiver<&'static str>,
    grace: Duration,
) -> Stopped {
    let Started {
        app, handshake, ui, ..
    } = started;
    human::resume_at_start(&app).await;
    handshake::preview::resume_at_start(&app).await;
    let following = tokio_util::sync::CancellationToken::new();
    let follower = tokio::spawn(events::follow(Arc::clone(&app), following.clone()));
    let timer = tokio::spawn(expire(Arc::clone(&app)));
    // Bounded (header timeout, connection cap): nothing that connects to either port can
    // keep the page from answering.
    let limits = crate::listen::Limits::default();
    let never = std::future::pending::<()>;
    let handshake = crate::listen::serve(
        handshake,
        handshake::router(Arc::clone(&app)),
        limits,
        never(),
    );
    let ui = crate::listen::serve(ui, human::router(Arc::clone(&app)), limits, never());
    // Leaving this select drops both listeners: no new connection is accepted.
    let signal = tokio::select! {
        r = handshake => { report(r, "handshake"); None }
        r = ui => { report(r, "approval page"); None }
        Some(signal) = signals.recv() => Some(signal),
    };
    timer.abort();
    let stopped = drain(&app, &mut signals, grace, signal).await;
    if stopped != Stopped::AtOnce {
        // The last transitions reach the ledger before the process ends.
        following.cancel();
        let _ = tokio::time::timeout(LAST_ROUND, follower).await;
    }
    match (stopped, signal) {
        (Stopped::Clean, None) => Stopped::Listener,
        _ => stopped,
    }
}

/// How long the follower may take to write the last transitions to the ledger.
const LAST_ROUND: Duration = Duration::from_secs(10);

/// Stops taking new executions, then waits for the running ones: up to `grace`, then
/// aborts them and waits for their clean-up. A signal meanwhile stops at once.
async fn drain(
    app: &App,
    signals: &mut tokio::sync::mpsc::UnboundedReceiver<&'static str>,
    grace: Duration,
    signal: Option<&'static str>,
) -> Stopped {
    let stop = &app.executor.stop;
    stop.stop_taking();
    let running = stop.running();
    if running > 0 {
        eprintln!(
            "gitward gateway: {}: stopping; {running} running write(s) may take up to {}s to finish (a second signal stops at once)",
            signal.unwrap_or("a listener failed"),
            grace.as_secs_f64()
        );
    }
    tokio::select! {
        () = stop.idle() => return Stopped::Clean,
        () = tokio::time::sleep(grace) => {}
        Some(signal) = signals.recv() => return at_once(signal),
    }
    eprintln!(
        "gitward gateway: the running write(s) did not finish within {}s; stopping them and putting their repositories back",
        grace.as_secs_f64()
    );
    stop.abort();
    tokio::select! {
        () = stop.idle() => Stopped::Interrupted,
        Some(signal) = signals.recv() => at_once(signal),
    }
}

fn at_once(signal: &str) -> Stopped {
    eprintln!(
        "gitward gateway: {signal} again: stopping at once; the next start reconciles any write left executing"
    );
    Stopped::AtOnce
}

fn report(result: std::io::Result<()>, what: &str) {
    if let Err(e) = result {
        eprintln!("gitward gateway: the {what} listener stopped: {e}");
    }
}

/// Expires proposals whose deadline passed, so a page shows it without anyone reading them.
async fn expire(app: Arc<App>) {
    let mut tick = tokio::time::interval(EXPIRY_TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        match app
            .store
            .run(|s| s.expire_due(jiff::Timestamp::now()))
            .await
        {
            Ok(ids) if !ids.is_empty() => app.changed.notify_one(),
            Ok(_) => {}
            Err(e) => eprintln!("gitward gateway: expiring proposals: {e}"),
        }
    }
}

/// A private file, replaced atomically: written beside, synced, renamed over.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let _ = fs::remove_file(&tmp);
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    fs::rename(&tmp, path)
}

fn write_run_files(
    dir: &Path,
    app: &App,
    ui_url: &str,
    handshake: SocketAddr,
) -> std::io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    write_private(&dir.join("cli-token"), app.auth.cli_token().as_bytes())?;
    let ui = json!({
        "ui": ui_url,
        "handshake": authority(handshake),
        "pid": std::process::id(),
    });
    write_private(&dir.join("ui.json"), format!("{ui}\n").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses_are_accepted() {
        for ok in [
            "127.0.0.1:0",
            "localhost:8080",
            "[::1]:9",
            "http://127.0.0.1:59647/",
        ] {
            assert!(parse_listen(ok).is_ok(), "{ok}");
        }
        for bad in [
            "0.0.0.0:80",
            "10.0.0.1:1",
            "example.com:80",
            "127.0.0.1",
            "[::]:1",
            "",
        ] {
            assert!(parse_listen(bad).is_err(), "{bad}");
        }
    }
}
