//! Who may use the human listener: a page that exchanged the one-time login token for a
//! session token, or the CLI holding the per-start bearer token from its 0600 file.
//!
//! Every secret is fresh random per start and lives only in this process (the CLI token
//! also in its file), so a restart logs everyone out. The page keeps its session token in
//! its own origin's storage and sends it as a header: never a cookie, which a browser
//! sends to every port of 127.0.0.1 (cookies ignore ports), so any other loopback server
//! the person opens would receive it. A browser's state-changing request must also carry
//! its session's CSRF token and come from the listener's own origin; the headers are
//! something no web page can make a browser send to another origin without a CORS
//! preflight, which this gateway never answers.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, StatusCode, header};
use base64::Engine;
use sha2::{Digest, Sha256};

use super::app::{ApiError, App};
use crate::gateway::api::Channel;

/// The header the page's session token travels in.
pub const SESSION_HEADER: &str = "x-gitward-session";

/// The header the CSRF token travels in.
pub const CSRF_HEADER: &str = "x-csrf-token";

/// The header the CLI names its channel with.
pub const CHANNEL_HEADER: &str = "x-gitward-channel";

/// Sessions a gateway keeps at once; the oldest goes first (a person rarely has more than
/// a couple of tabs, and each login needs a fresh start-up token anyway).
const MAX_SESSIONS: usize = 16;

/// How long the login link works after start: long enough to open it, short enough that
/// one copied from a terminal or a file later is worth nothing.
pub const LOGIN_LIFETIME: Duration = Duration::from_secs(5 * 60);

/// A fresh 256-bit secret, URL-safe.
pub fn random_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// Compares secrets without an early exit, so timing says nothing about a prefix.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// The human side's credentials.
pub struct Auth {
    /// The login token and when it stops working, until it is exchanged once.
    login: Mutex<Option<(String, Instant)>>,
    /// Session id → its CSRF token, oldest first.
    sessions: Mutex<Vec<(String, String)>>,
    cli_token: String,
    /// Keys the cards' confirmation codes, so an agent that knows a previewId cannot
    /// work out the code a person types.
    code_key: String,
}

/// Who is calling the human API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// A browser session, with its CSRF token.
    Web { csrf: String },
    /// The CLI, with the bearer token.
    Tty,
}

impl Caller {
    pub fn channel(&self) -> Channel {
        match self {
            Caller::Web { .. } => Channel::Web,
            Caller::Tty => Channel::Tty,
        }
    }
}

impl Auth {
    pub fn new() -> Result<Auth, getrandom::Error> {
        Auth::with_login_lifetime(LOGIN_LIFETIME)
    }

    /// An [`Auth`] whose login token works for `lifetime`.
    pub fn with_login_lifetime(lifetime: Duration) -> Result<Auth, getrandom::Error> {
        let deadline = Instant::now() + lifetime;
        Ok(Auth {
            login: Mutex::new(Some((random_token()?, deadline))),
            sessions: Mutex::new(Vec::new()),
            cli_token: random_token()?,
            code_key: random_token()?,
        })
    }

    /// The one-time login token (for the start-up line), while it is neither used nor
    /// past its lifetime.
    pub fn login_token(&self) -> Option<String> {
        let login = self.login.lock().unwrap_or_else(|p| p.into_inner());
        login
            .as_ref()
            .filter(|(_, deadline)| Instant::now() < *deadline)
            .map(|(token, _)| token.clone())
    }

    pub fn cli_token(&self) -> &str {
        &self.cli_token
    }

    /// Exchanges the login token for a new session: `(session id, csrf)`. The token works
    /// once and only within its lifetime; a replay or a late one gets `None`.
    pub fn exchange(&self, token: &str) -> Result<Option<(String, String)>, getrandom::Error> {
        let mut login = self.login.lock().unwrap_or_else(|p| p.into_inner());
        let live = login
            .as_ref()
            .is_some_and(|(t, deadline)| Instant::now() < *deadline && same(t, token));
        if !live {
            return Ok(None);
        }
        let session = (random_token()?, random_token()?);
        *login = None;
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        if sessions.len() >= MAX_SESSIONS {
            sessions.remove(0);
        }
        sessions.push(session.clone());
        Ok(Some(session))
    }

    /// The CSRF token of session `id`.
    fn csrf_of(&self, id: &str) -> Option<String> {
        let sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        sessions
            .iter()
            .find(|(s, _)| same(s, id))
            .map(|(_, csrf)| csrf.clone())
    }

    /// The short code a person types to approve on a terminal: 6 characters from an
    /// alphabet without look-alikes.
    pub fn confirmation_code(&self, preview_id: &str) -> String {
        const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
        let digest = Sha256::new()
            .chain_update(self.code_key.as_bytes())
            .chain_update([0u8])
            .chain_update(preview_id.as_bytes())
            .finalize();
        digest
            .iter()
            .take(6)
            .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
            .collect()
    }
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn unauthorized() -> ApiError {
    ApiError::other(
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "not logged in: open the login link the gateway printed at start",
    )
}

/// Who is calling, or 401.
pub fn authenticate(app: &App, headers: &HeaderMap) -> Result<Caller, ApiError> {
    if let Some(value) = header_str(headers, header::AUTHORIZATION.as_str()) {
        return match value.strip_prefix("Bearer ") {
            Some(token) if same(token.trim(), app.auth.cli_token()) => Ok(Caller::Tty),
            _ => Err(unauthorized()),
        };
    }
    // Cookies are never read: one set by an older gateway on this host still arrives.
    let session = header_str(headers, SESSION_HEADER).ok_or_else(unauthorized)?;
    let csrf = app.auth.csrf_of(session).ok_or_else(unauthorized)?;
    Ok(Caller::Web { csrf })
}

/// Checks a state-changing request: a browser's must come from the listener's own
/// origin and carry its session's CSRF token; the CLI's must name its channel.
pub fn check_change(headers: &HeaderMap, caller: &Caller) -> Result<(), ApiError> {
    match caller {
        Caller::Tty => {
            if header_str(headers, CHANNEL_HEADER) == Some("tty") {
                Ok(())
            } else {
                Err(ApiError::forbidden(
                    "a bearer request must send X-Gitward-Channel: tty",
                ))
            }
        }
        Caller::Web { csrf } => {
            let host = header_str(headers, header::HOST.as_str()).unwrap_or_default();
            let own = format!("http://{host}");
            match header_str(headers, header::ORIGIN.as_str()) {
                Some(origin) if origin.eq_ignore_ascii_case(&own) => {}
                _ => {
                    return Err(ApiError::forbidden(
                        "a state-changing request must come from the approval page's own origin",
                    ));
                }
            }
            match header_str(headers, CSRF_HEADER) {
                Some(token) if same(token, csrf) => Ok(()),
                _ => Err(ApiError::forbidden("missing or wrong X-CSRF-Token")),
            }
        }
    }
}

/// The terminal's proof that a person read what it acts on: a bearer request claiming the
/// `tty` channel approves or restores only with the confirmation code of `subject` (a
/// previewId or a restore point id) in the body's `confirmationCode`. The check is here,
/// not only in the CLI, so a request that skips the CLI proves nothing and is refused, and
/// the ledger's `tty` means a code was typed. A page's session has its own proof (the
/// CSRF token and the origin) and needs none.
pub fn check_code(
    auth: &Auth,
    caller: &Caller,
    subject: &str,
    body: &serde_json::Value,
) -> Result<(), ApiError> {
    if !matches!(caller, Caller::Tty) {
        return Ok(());
    }
    match body.get("confirmationCode").and_then(|c| c.as_str()) {
        Some(code)
            if same(
                &code.trim().to_ascii_uppercase(),
                &auth.confirmation_code(subject),
            ) =>
        {
            Ok(())
        }
        Some(_) => Err(ApiError::other(
            StatusCode::FORBIDDEN,
            "confirmationCodeWrong",
            "the confirmation code does not match: type the code shown with the card",
        )),
        None => Err(ApiError::other(
            StatusCode::FORBIDDEN,
            "confirmationCodeRequired",
            "a terminal approval or restore needs the confirmation code a person types \
             (confirmationCode); use `gitward approve` / `gitward restore` or the page",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_login_token_works_once() {
        let auth = Auth::new().unwrap();
        let token = auth.login_token().unwrap();
        assert!(auth.exchange("wrong").unwrap().is_none());
        let (session, csrf) = auth.exchange(&token).unwrap().unwrap();
        assert_ne!(session, csrf);
        assert!(auth.exchange(&token).unwrap().is_none());
        assert_eq!(auth.csrf_of(&session), Some(csrf));
        assert_eq!(auth.login_token(), None);
    }

    #[test]
    fn the_login_token_stops_working_after_its_lifetime() {
        let auth = Auth::with_login_lifetime(Duration::from_millis(50)).unwrap();
        let token = auth.login_token().unwrap();
        std::thread::sleep(Duration::from_millis(80));
        assert_eq!(auth.login_token(), None);
        assert!(auth.exchange(&token).unwrap().is_none());
    }

    #[test]
    fn a_terminal_request_needs_the_code_and_a_page_does_not() {
        let auth = Auth::new().unwrap();
        let id = "rp_abc";
        let code = auth.confirmation_code(id);
        let web = Caller::Web { csrf: "x".into() };
        assert!(check_code(&auth, &web, id, &serde_json::json!({})).is_ok());
        let none = check_code(&auth, &Caller::Tty, id, &serde_json::json!({}));
        assert_eq!(none.unwrap_err().status(), StatusCode::FORBIDDEN);
        let wrong = serde_json::json!({"confirmationCode": "AAAAAA"});
        assert!(check_code(&auth, &Caller::Tty, id, &wrong).is_err());
        let other = serde_json::json!({"confirmationCode": auth.confirmation_code("rp_other")});
        assert!(check_code(&auth, &Caller::Tty, id, &other).is_err());
        let right = serde_json::json!({"confirmationCode": code.to_lowercase()});
        assert!(check_code(&auth, &Caller::Tty, id, &right).is_ok());
    }

    #[test]
    fn confirmation_codes_are_short_stable_and_keyed() {
        let a = Auth::new().unwrap();
        let b = Auth::new().unwrap();
        let id = "1f3c5b9a-0c1d-4e2f-8a9b-0123456789ab";
        assert_eq!(a.confirmation_code(id), a.confirmation_code(id));
        assert_eq!(a.confirmation_code(id).len(), 6);
        assert_ne!(a.confirmation_code(id), b.confirmation_code(id));
    }

    #[test]
    fn a_session_travels_in_its_header_never_in_a_cookie() {
        let auth = Auth::new().unwrap();
        let (session, _) = auth
            .exchange(&auth.login_token().unwrap())
            .unwrap()
            .unwrap();
        let mut by_cookie = HeaderMap::new();
        let cookie = format!("gw_session={session}; x-gitward-session={session}");
        by_cookie.insert(header::COOKIE, cookie.parse().unwrap());
        assert!(header_str(&by_cookie, SESSION_HEADER).is_none());
        let mut by_header = HeaderMap::new();
        by_header.insert(SESSION_HEADER, session.parse().unwrap());
        assert_eq!(
            header_str(&by_header, SESSION_HEADER),
            Some(session.as_str())
        );
    }
}
