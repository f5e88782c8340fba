//! Session ids the server can verify without remembering them, so a legacy-era session
//! outlives a restart of the server: hosts on the 2025-11-25 transport (and earlier) throw
//! on a 404 for their session and do not open a new one.
//!
//! An id is `s1.<payload>.<mac>`: the payload (base64url JSON) holds what `initialize`
//! settled (the version, the client's self-declared name), the capability the session
//! was opened under and when the id stops restoring a session; the MAC is HMAC-SHA-256
//! over it with a key kept in the run directory (`http/session.key`, `0600`), which every
//! start of the server with that run directory shares. Without a run directory the key
//! lives in memory, and sessions end with the process as before.
//!
//! The id grants nothing the URL does not: a request still needs the capability in its
//! URL, and the id must name that same capability.

use std::fs::{self, DirBuilder, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// How long after `initialize` an id restores its session.
pub const LIFETIME_SECS: u64 = 24 * 60 * 60;
const PREFIX: &str = "s1.";
/// Ids longer than this are not looked at (the payload is small).
const MAX_ID: usize = 2048;

/// What an id carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// The negotiated protocol version.
    pub v: String,
    /// The capability id it was opened under; `None` for `/mcp`.
    pub c: Option<String>,
    /// The client's self-declared name and version.
    pub n: Option<String>,
    pub cv: Option<String>,
    /// Seconds since the epoch after which the id restores nothing.
    pub e: u64,
    /// Random: two sessions of one client never share an id.
    pub r: String,
}

/// The key ids are signed with.
pub struct Keys {
    key: [u8; 32],
}

impl Keys {
    /// The run directory's key (made on first use), else one for this process only.
    pub fn load(run_dir: Option<&Path>) -> Keys {
        let key = run_dir
            .and_then(|dir| shared_key(&dir.join("http").join("session.key")).ok())
            .unwrap_or_else(random_key);
        Keys { key }
    }

    pub fn mint(&self, claims: &Claims) -> String {
        let payload = B64.encode(serde_json::to_vec(claims).unwrap_or_default());
        let mac = B64.encode(hmac(&self.key, payload.as_bytes()));
        format!("{PREFIX}{payload}.{mac}")
    }

    /// The claims of an id this key signed that has not expired.
    pub fn verify(&self, id: &str) -> Option<Claims> {
        if id.len() > MAX_ID {
            return None;
        }
        let (payload, mac) = id.strip_prefix(PREFIX)?.split_once('.')?;
        let given = B64.decode(mac).ok()?;
        let expected = hmac(&self.key, payload.as_bytes());
        // Compared in full whatever differs first: timing tells nothing of the MAC.
        let same = given.len() == expected.len()
            && given
                .iter()
                .zip(expected.iter())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0;
        if !same {
            return None;
        }
        let claims: Claims = serde_json::from_slice(&B64.decode(payload).ok()?).ok()?;
        (claims.e > now_secs()).then_some(claims)
    }
}

pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// 16 random bytes, base64url.
pub fn nonce() -> String {
    let mut bytes = [0u8; 16];
    let _ = getrandom::fill(&mut bytes);
    B64.encode(bytes)
}

fn random_key() -> [u8; 32] {
    let mut key = [0u8; 32];
    let _ = getrandom::fill(&mut key);
    key
}

/// Reads the key at `path`, or makes it: written whole to a temporary file and linked
/// into place, so two servers starting at once agree on one key.
fn shared_key(path: &Path) -> std::io::Result<[u8; 32]> {
    if let Some(key) = read_key(path) {
        return Ok(key);
    }
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("no parent"))?;
    DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let tmp = dir.join(format!(".session.key.{}.tmp", std::process::id()));
    let _ = fs::remove_file(&tmp);
    let key = random_key();
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    file.write_all(&key)?;
    file.sync_all()?;
    drop(file);
    let linked = fs::hard_link(&tmp, path);
    let _ = fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(key),
        Err(_) => read_key(path).ok_or_else(|| std::io::Error::other("unreadable key")),
    }
}

fn read_key(path: &Path) -> Option<[u8; 32]> {
    let bytes = crate::safe_file::read(path, 64).ok()?;
    bytes.try_into().ok()
}

/// HMAC-SHA-256 (RFC 2104).
fn hmac(key: &[u8; 32], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; 64];
    block[..32].copy_from_slice(key);
    let pad = |byte: u8| block.map(|b| b ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(e: u64) -> Claims {
        Claims {
            v: "2025-11-25".into(),
            c: Some("cap".into()),
            n: Some("client".into()),
            cv: None,
            e,
            r: nonce(),
        }
    }

    #[test]
    fn hmac_matches_the_rfc_4231_vector() {
        // Test case 2 uses a 4-byte key; padded with zeros it is the same HMAC key.
        let mut key = [0u8; 32];
        key[..4].copy_from_slice(b"Jefe");
        let mac = hmac(&key, b"what do ya want for nothing?");
        let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn an_id_verifies_under_its_key_only_and_until_it_expires() {
        let dir = tempfile::tempdir().unwrap();
        let keys = Keys::load(Some(dir.path()));
        let live = claims(now_secs() + 60);
        let id = keys.mint(&live);
        assert!(id.bytes().all(|b| b.is_ascii_graphic()), "{id}");
        assert_eq!(keys.verify(&id), Some(live.clone()));
        // The same run directory, another start: the same key.
        assert_eq!(Keys::load(Some(dir.path())).verify(&id), Some(live));
        // Another key, a changed payload, an expired id: nothing.
        assert_eq!(Keys::load(None).verify(&id), None);
        let (head, mac) = id.rsplit_once('.').unwrap();
        let forged = format!("{}x.{mac}", head);
        assert_eq!(keys.verify(&forged), None);
        assert_eq!(keys.verify(&keys.mint(&claims(now_secs() - 1))), None);
        assert_eq!(keys.verify("0123456789abcdef"), None);
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &fs::metadata(dir.path().join("http/session.key"))
                .unwrap()
                .permissions(),
        );
        assert_eq!(mode & 0o777, 0o600);
    }
}
