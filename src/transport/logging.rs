//! MCP logging: the warnings a stdio user reads on stderr (`observe::notes`), sent to the
//! client as `notifications/message`, since an HTTP client has no stderr to read.
//!
//! Legacy era: once `logging/setLevel` set a conversation's level, each note at that level
//! or above is sent once per conversation, before the answer to its next request that
//! can carry messages (a client that never asks is sent nothing it did not expect). The
//! 2026-07-28 era has no `logging/setLevel` and no conversation: a request whose `_meta`
//! names `io.modelcontextprotocol/logLevel` is told every note at that level or above.

use std::sync::Mutex;

use serde_json::{Map, Value, json};

use super::outgoing::RequestChannel;
use crate::observe::notes;

/// The `_meta` key of a modern request's log level.
pub const LOG_LEVEL_META: &str = "io.modelcontextprotocol/logLevel";

/// RFC 5424 severities, least severe first, as MCP names them.
const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];
/// The severity of every note.
const NOTE_LEVEL: &str = "warning";

fn rank(level: &str) -> Option<usize> {
    LEVELS.iter().position(|l| *l == level)
}

/// A conversation's level and how many notes it was told.
#[derive(Debug, Default)]
pub struct LogState {
    level: Option<&'static str>,
    told: usize,
}

/// `logging/setLevel`: the level is kept, or why not.
pub fn set_level(state: &Mutex<LogState>, params: &Map<String, Value>) -> Result<(), String> {
    let level = params.get("level").and_then(Value::as_str).unwrap_or("");
    let Some(at) = rank(level) else {
        return Err(format!(
            "logging/setLevel: \"level\" must be one of {}",
            LEVELS.join(", ")
        ));
    };
    state.lock().unwrap_or_else(|p| p.into_inner()).level = Some(LEVELS[at]);
    Ok(())
}

/// Tells a legacy-era conversation the notes it was not told yet, at its level.
pub fn tell_conversation(state: &Mutex<LogState>, channel: &RequestChannel) {
    if !channel.is_open() {
        return;
    }
    let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
    let Some(level) = state.level else {
        return;
    };
    let (new, all) = notes::since(state.told);
    state.told = all;
    send(&new, level, channel);
}

/// Tells a modern-era request every note, when its `_meta` asks for a level.
pub fn tell_request(params: &Map<String, Value>, channel: &RequestChannel) {
    let level = params
        .get("_meta")
        .and_then(|m| m.get(LOG_LEVEL_META))
        .and_then(Value::as_str);
    if let Some(level) = level.filter(|l| rank(l).is_some())
        && channel.is_open()
    {
        send(&notes::since(0).0, level, channel);
    }
}

fn send(notes: &[String], level: &str, channel: &RequestChannel) {
    if rank(NOTE_LEVEL) < rank(level) {
        return;
    }
    for note in notes {
        channel.notify(
            "notifications/message",
            json!({ "level": NOTE_LEVEL, "logger": "gitward", "data": note }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_checked_and_ordered() {
        let state = Mutex::new(LogState::default());
        let params = |level: Value| json!({ "level": level }).as_object().unwrap().clone();
        assert!(set_level(&state, &params(json!("verbose"))).is_err());
        assert!(set_level(&state, &params(json!(3))).is_err());
        assert!(set_level(&state, &params(json!("error"))).is_ok());
        assert_eq!(state.lock().unwrap().level, Some("error"));
        assert!(rank("debug") < rank("warning") && rank("warning") < rank("emergency"));
    }
}
