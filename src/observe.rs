//! What the side paths (audit, presence) learn about each tool call, and how they say
//! when they are done with it. Neutral ground: `transport` and `cli` report calls here,
//! `audit` and `presence` observe them, and none of them needs the others.

use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// What a client says about itself. Attribution only: never identity or authorization.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ClientInfo {
    pub name: Option<String>,
    pub version: Option<String>,
}

/// What observers learn about each `tools/call` (audit, presence).
#[derive(Debug)]
pub struct CallEvent<'a> {
    pub tool: &'a str,
    /// False when the name matched no served tool (the call was refused).
    pub known: bool,
    pub read_only: bool,
    pub arguments: &'a Value,
    /// The structured result, or the error payload, as the JSON the client gets: an
    /// observer parses the little it reads rather than every call paying for a tree.
    pub payload: &'a RawValue,
    pub is_error: bool,
    pub error_code: Option<i64>,
    pub duration: Duration,
    pub client: &'a ClientInfo,
    /// Which of the server's conversations made the call: `None` for the process's own
    /// (stdio, the CLI); an HTTP session, or an HTTP client without one, otherwise.
    pub conversation: Option<&'a str>,
}

/// Resolves once an observer has kept what it must keep of a call (the audit entry is in
/// the ledger, or the ledger failed: then with its error); the response waits for it.
pub type Settled = tokio::sync::oneshot::Receiver<Result<(), String>>;

/// Sees every tool call before its response is sent. Must not block: slow work is handed
/// off, and what the response must wait for is returned as [`Settled`].
pub trait CallObserver: Send + Sync {
    fn on_call(&self, event: &CallEvent<'_>) -> Option<Settled>;
}

/// What the server has to say to its users besides answers: warnings a stdio user reads
/// on stderr, kept so a client without stderr (HTTP) is told them as log messages.
pub mod notes {
    use std::sync::Mutex;

    /// Notes kept; later ones are on stderr only.
    const MAX_NOTES: usize = 64;

    static NOTES: Mutex<Vec<String>> = Mutex::new(Vec::new());

    /// Says `text` on stderr and keeps it for clients to be told (at level `warning`).
    pub fn warn(text: impl Into<String>) {
        let text = text.into();
        eprintln!("gitward: {text}");
        let mut notes = NOTES.lock().unwrap_or_else(|p| p.into_inner());
        if notes.len() < MAX_NOTES {
            notes.push(text);
        }
    }

    /// The notes from the `from`-th on, and how many there are in all.
    pub fn since(from: usize) -> (Vec<String>, usize) {
        let notes = NOTES.lock().unwrap_or_else(|p| p.into_inner());
        (notes.iter().skip(from).cloned().collect(), notes.len())
    }
}
