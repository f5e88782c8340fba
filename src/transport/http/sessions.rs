//! Legacy-era sessions (`Mcp-Session-Id`): one [`Handler`] per `initialize`, bound to the
//! capability it was opened under.
//!
//! Ids are random v4 UUIDs, so one client cannot guess another's. A session lives until
//! `DELETE`, until it has been idle for [`IDLE`], or until the server stops; at most
//! [`MAX_SESSIONS`] live at once, so a client opening sessions in a loop cannot grow the
//! table without bound.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::scope::Scope;
use crate::process::CancellationToken;
use crate::transport::dispatch::{Handler, Observers};

/// A session unused for this long is ended.
const IDLE: Duration = Duration::from_secs(60 * 60);
/// The most sessions kept at once.
const MAX_SESSIONS: usize = 1024;

pub struct Session {
    /// Shared with the event streams of the session's requests in flight.
    pub handler: Arc<Handler>,
    pub capability: Option<String>,
    /// Fires when the session ends: its GET streams close.
    pub ended: CancellationToken,
    used: Mutex<Instant>,
}

impl Session {
    fn touch(&self) {
        *self.used.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }

    fn idle(&self, now: Instant) -> bool {
        now.duration_since(*self.used.lock().unwrap_or_else(|p| p.into_inner())) > IDLE
    }

    fn end(&self) {
        self.handler.cancel_all();
        self.ended.cancel();
    }
}

pub struct Sessions {
    table: Mutex<HashMap<String, Arc<Session>>>,
    observers: Observers,
    shutdown: CancellationToken,
}

impl Sessions {
    pub fn new(observers: Observers, shutdown: CancellationToken) -> Sessions {
        Sessions {
            table: Mutex::new(HashMap::new()),
            observers,
            shutdown,
        }
    }

    /// A handler for one stateless (modern-era) request: no session, same dispatch.
    pub fn stateless(&self, scope: &Scope) -> Handler {
        Handler::new(
            Arc::clone(&scope.config),
            Arc::clone(&self.observers),
            self.shutdown.clone(),
        )
    }

    /// Opens a session under `scope`; `None` when the table is full of live sessions.
    pub fn open(&self, scope: &Scope) -> Option<(String, Arc<Session>)> {
        let mut table = self.table.lock().unwrap_or_else(|p| p.into_inner());
        if table.len() >= MAX_SESSIONS {
            let now = Instant::now();
            table.retain(|_, s| {
                let keep = !s.idle(now);
                if !keep {
                    s.end();
                }
                keep
            });
            if table.len() >= MAX_SESSIONS {
                return None;
            }
        }
        let id = uuid::Uuid::new_v4().simple().to_string();
        let session = Arc::new(Session {
            handler: Arc::new(self.stateless(scope)),
            capability: scope.capability.clone(),
            ended: self.shutdown.child_token(),
            used: Mutex::new(Instant::now()),
        });
        table.insert(id.clone(), Arc::clone(&session));
        Some((id, session))
    }

    /// The session `id`, when it exists, is not idle, and belongs to `scope`'s capability.
    pub fn get(&self, id: &str, scope: &Scope) -> Option<Arc<Session>> {
        let mut table = self.table.lock().unwrap_or_else(|p| p.into_inner());
        let session = table.get(id)?;
        if session.idle(Instant::now()) {
            if let Some(gone) = table.remove(id) {
                gone.end();
            }
            return None;
        }
        if session.capability != scope.capability {
            return None;
        }
        session.touch();
        Some(Arc::clone(session))
    }

    /// Ends the session `id` of `scope`; false when there is none.
    pub fn end(&self, id: &str, scope: &Scope) -> bool {
        if self.get(id, scope).is_none() {
            return false;
        }
        let gone = self
            .table
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
        if let Some(gone) = gone {
            gone.end();
        }
        true
    }
}
