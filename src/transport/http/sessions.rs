//! Legacy-era sessions (`Mcp-Session-Id`): one [`Handler`] per `initialize`, bound to the
//! capability it was opened under.
//!
//! Ids are signed claims ([`session_id`](super::session_id)) with a random part, so one
//! client cannot guess or forge another's. A session lives in memory until `DELETE`,
//! until it has been idle for [`IDLE`], or until the server stops; at most
//! [`MAX_SESSIONS`] live at once, so a client opening sessions in a loop cannot grow the
//! table without bound. An id the table does not hold (the server restarted, the session
//! idled out, or left a full table as the least recently used one with nothing in flight)
//! restores its session from the id itself while the id has not expired; an id ended
//! with `DELETE` restores nothing in this process.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::scope::Scope;
use super::session_id::{self, Claims, Keys};
use crate::observe::ClientInfo;
use crate::process::CancellationToken;
use crate::transport::dispatch::{self, Conversation, Handler, Observers};
use crate::transport::jsonrpc::Id;
use crate::transport::protocol::Version;

/// A session unused for this long is ended.
const IDLE: Duration = Duration::from_secs(60 * 60);
/// The most sessions kept at once.
const MAX_SESSIONS: usize = 1024;
/// The most ended ids remembered (so they are not restored); the oldest are forgotten.
const MAX_ENDED: usize = 4096;

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

    fn last_used(&self) -> Instant {
        *self.used.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Nothing holds the session but the table: no request in flight, no event stream.
    fn quiet(self: &Arc<Self>) -> bool {
        Arc::strong_count(self) == 1 && Arc::strong_count(&self.handler) == 1
    }

    fn end(&self) {
        self.handler.cancel_all();
        self.ended.cancel();
    }
}

pub struct Sessions {
    table: Mutex<HashMap<String, Arc<Session>>>,
    /// Ids ended with `DELETE`, oldest first.
    ended: Mutex<std::collections::VecDeque<String>>,
    keys: Keys,
    observers: Observers,
    shutdown: CancellationToken,
}

impl Sessions {
    pub fn new(
        observers: Observers,
        shutdown: CancellationToken,
        run_dir: Option<&std::path::Path>,
    ) -> Sessions {
        Sessions {
            table: Mutex::new(HashMap::new()),
            ended: Mutex::new(std::collections::VecDeque::new()),
            keys: Keys::load(run_dir),
            observers,
            shutdown,
        }
    }

    /// A handler for one stateless (modern-era) request: no session, same dispatch;
    /// presence credits each client on its own.
    pub fn stateless(&self, scope: &Scope) -> Handler {
        Handler::new(
            Arc::clone(&scope.config),
            Arc::clone(&self.observers),
            self.shutdown.clone(),
        )
        .serving(Conversation::PerClient)
    }

    /// Opens a session under `scope` with its `initialize` request: its id and the
    /// answer. `None` when the table is full of live sessions.
    pub fn open(
        &self,
        scope: &Scope,
        id: &Id,
        params: &Map<String, Value>,
    ) -> Option<(String, Value)> {
        let handler = self.stateless(scope);
        let reply = handler.inline(id, "initialize", params)?;
        let (version, client) = handler.settled();
        let claims = Claims {
            v: version
                .unwrap_or(Version::LATEST_LEGACY)
                .as_str()
                .to_owned(),
            c: scope.capability.clone(),
            n: client.name,
            cv: client.version,
            e: session_id::now_secs() + session_id::LIFETIME_SECS,
            r: session_id::nonce(),
        };
        let sid = self.keys.mint(&claims);
        self.insert(sid.clone(), handler, scope)?;
        Some((sid, reply))
    }

    /// Keeps `handler` as the session `sid`; `None` when the table is full.
    fn insert(&self, sid: String, handler: Handler, scope: &Scope) -> Option<Arc<Session>> {
        // Presence tells sessions apart by a digest of the id: the id itself stays a
        // secret of its client.
        let key = super::capability::token_hash(&sid);
        let handler = handler.serving(Conversation::Session(key[..16].to_owned()));
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
                // Still full: the least recently used session with nothing in flight
                // leaves the table. It is not ended for its client: its id restores it
                // on its next request, so a client opening sessions in a loop displaces
                // only table entries, and a new session always gets in.
                let quiet = table
                    .iter()
                    .filter(|(_, s)| s.quiet())
                    .min_by_key(|(_, s)| s.last_used())
                    .map(|(id, _)| id.clone());
                table.remove(&quiet?);
            }
        }
        let session = Arc::new(Session {
            handler: Arc::new(handler),
            capability: scope.capability.clone(),
            ended: self.shutdown.child_token(),
            used: Mutex::new(Instant::now()),
        });
        table.insert(sid, Arc::clone(&session));
        Some(session)
    }

    /// The session `id` of `scope`'s capability: the live one, or the one its id
    /// restores.
    pub fn get(&self, id: &str, scope: &Scope) -> Option<Arc<Session>> {
        self.live(id, scope).or_else(|| self.restore(id, scope))
    }

    /// The session `id`, when the table holds it, it is not idle, and it belongs to
    /// `scope`'s capability.
    fn live(&self, id: &str, scope: &Scope) -> Option<Arc<Session>> {
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

    /// The session an id this server signed restores: same capability, not expired,
    /// not ended here.
    fn restore(&self, id: &str, scope: &Scope) -> Option<Arc<Session>> {
        let claims = self.keys.verify(id)?;
        if claims.c != scope.capability
            || self
                .ended
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .any(|e| e == id)
        {
            return None;
        }
        let version = Version::parse(&claims.v).filter(|v| !v.is_modern())?;
        let client = ClientInfo {
            name: claims.n,
            version: claims.cv,
        };
        let handler = Handler::resume(
            Arc::clone(&scope.config),
            Arc::clone(&self.observers),
            self.shutdown.clone(),
            dispatch::Session::settled(version, client),
        );
        // Two requests restoring one id at once keep whichever came first.
        if let Some(first) = self.live(id, scope) {
            return Some(first);
        }
        self.insert(id.to_owned(), handler, scope)
    }

    /// Ends the session `id` of `scope`; false when there is none.
    pub fn end(&self, id: &str, scope: &Scope) -> bool {
        if self.get(id, scope).is_none() {
            return false;
        }
        {
            let mut ended = self.ended.lock().unwrap_or_else(|p| p.into_inner());
            if ended.len() >= MAX_ENDED {
                ended.pop_front();
            }
            ended.push_back(id.to_owned());
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
