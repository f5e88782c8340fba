//! Workspace capabilities: the unguessable part of the URL an HTTP agent is given.
//!
//! `gitward capability add` validates a workspace descriptor (the `FYLLO_WORKSPACE_JSON`
//! document) and freezes a copy of it beside a fresh token; the agent's URL is
//! `/mcp/<token>`. Only the token's SHA-256 is kept, in `<run dir>/http/capabilities.json`
//! (`0600`), so the file does not hand out working URLs and a lookup never compares
//! secrets byte by byte. The server re-reads the file when it changes: a capability added
//! or revoked while it runs takes effect on the next request, and one added before a
//! restart keeps working after it.

use std::fs::{self, DirBuilder, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use base64::Engine;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::specs::workspace::{MAX_DESCRIPTOR, Workspace};

/// The largest capability file read (many descriptors of at most 64 KiB each).
const MAX_FILE: u64 = 32 * 1024 * 1024;

/// One minted capability as the file keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Capability {
    /// A short public name for `list` and `revoke`; not a secret.
    pub id: String,
    /// Hex SHA-256 of the token.
    pub token_sha256: String,
    /// The frozen descriptor, exactly as validated when it was added.
    pub workspace: String,
    pub created: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    version: u32,
    capabilities: Vec<Capability>,
}

/// Where the capabilities of a run directory live.
pub fn file(run_dir: &Path) -> PathBuf {
    run_dir.join("http").join("capabilities.json")
}

/// The hex SHA-256 a token is looked up by.
pub fn token_hash(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Reads the capabilities at `path`; a missing file holds none.
pub fn load(path: &Path) -> Result<Vec<Capability>, String> {
    let bytes = match crate::safe_file::read(path, MAX_FILE) {
        Ok(bytes) => bytes,
        Err(_) if !path.exists() => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot read {}: {e:?}", path.display())),
    };
    let file: File = serde_json::from_slice(&bytes)
        .map_err(|e| format!("{} is not a capability file: {e}", path.display()))?;
    Ok(file.capabilities)
}

/// What identifies one version of the file, so the server re-reads only a changed one.
pub fn stamp(path: &Path) -> Option<(i64, i64, u64, u64)> {
    let meta = fs::metadata(path).ok()?;
    Some((meta.mtime(), meta.mtime_nsec(), meta.size(), meta.ino()))
}

/// Writes the whole set atomically, readable by the owner only.
fn save(path: &Path, capabilities: Vec<Capability>) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    if let Some(dir) = path.parent() {
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(fail)?;
    }
    let mut text = serde_json::to_vec_pretty(&File {
        version: 1,
        capabilities,
    })
    .map_err(|e| e.to_string())?;
    text.push(b'\n');
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let _ = fs::remove_file(&tmp);
    let mut out = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(fail)?;
    out.write_all(&text).map_err(fail)?;
    out.sync_all().map_err(fail)?;
    fs::rename(&tmp, path).map_err(fail)
}

/// A new capability for `descriptor` and its token (shown once, never stored).
pub fn add(path: &Path, descriptor: &str) -> Result<(Capability, String), String> {
    if descriptor.len() > MAX_DESCRIPTOR {
        return Err(format!(
            "the workspace descriptor is {} bytes; at most {MAX_DESCRIPTOR} are accepted",
            descriptor.len()
        ));
    }
    Workspace::parse(descriptor)?;
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).map_err(|e| format!("no randomness for a token: {e}"))?;
    let token = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(secret);
    let mut id = [0u8; 6];
    getrandom::fill(&mut id).map_err(|e| format!("no randomness for an id: {e}"))?;
    let capability = Capability {
        id: format!(
            "cap-{}",
            id.iter().map(|b| format!("{b:02x}")).collect::<String>()
        ),
        token_sha256: token_hash(&token),
        workspace: descriptor.to_owned(),
        created: jiff::Timestamp::now().to_string(),
    };
    let mut all = load(path)?;
    all.push(capability.clone());
    save(path, all)?;
    Ok((capability, token))
}

/// Removes the capability named `id`; false when there was none.
pub fn revoke(path: &Path, id: &str) -> Result<bool, String> {
    let mut all = load(path)?;
    let before = all.len();
    all.retain(|c| c.id != id);
    if all.len() == before {
        return Ok(false);
    }
    save(path, all)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WS: &str = r#"{"version":2,"workspaceId":"ws","workspaceKind":"folder","primaryFolderId":"a","folders":[{"folderId":"a","folderName":"a","folderPath":"/src/a"}],"workspaceDataDir":"/data/ws"}"#;

    #[test]
    fn add_list_revoke_round_trip() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = file(dir.path());
        assert!(load(&path).expect("empty").is_empty());
        let (one, token) = add(&path, WS).expect("add");
        let (two, other) = add(&path, WS).expect("add");
        assert_ne!(token, other);
        assert_eq!(token.len(), 43);
        let all = load(&path).expect("load");
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].token_sha256, token_hash(&token));
        assert!(
            !std::fs::read_to_string(&path)
                .expect("read")
                .contains(&token)
        );
        let mode = std::fs::metadata(&path).expect("meta").mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert!(revoke(&path, &one.id).expect("revoke"));
        assert!(!revoke(&path, &one.id).expect("again"));
        let left = load(&path).expect("load");
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].id, two.id);
    }

    #[test]
    fn an_invalid_descriptor_mints_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = file(dir.path());
        assert!(add(&path, "{}").is_err());
        assert!(add(&path, &WS.replace("/src/a", "src/a")).is_err());
        assert!(!path.exists());
    }
}
