//! Ed25519 audit signing keys: loading the private key safely, key ids, signing and
//! checking the v3 signature domain, and generating a key pair.

use std::io::Read;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use serde_json::{Map, Value};

use super::canonical;

/// Key files larger than this are refused: a PEM Ed25519 key is about 120 bytes.
pub const MAX_KEY_BYTES: u64 = 4096;

/// The signing domain version this writer produces.
pub const SIGNATURE_VERSION: u64 = 3;

/// A loaded private key and its id.
pub struct AuditSigner {
    key: SigningKey,
    key_id: String,
}

impl std::fmt::Debug for AuditSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditSigner")
            .field("key_id", &self.key_id)
            .finish()
    }
}

/// The 16-hex-digit id of a public key: its first 8 bytes.
pub fn key_id(key: &VerifyingKey) -> String {
    let mut id = String::with_capacity(16);
    canonical::push_hex(&mut id, &key.as_bytes()[..8]);
    id
}

impl AuditSigner {
    pub fn new(key: SigningKey) -> AuditSigner {
        let key_id = key_id(&key.verifying_key());
        AuditSigner { key, key_id }
    }

    /// Loads a PEM PKCS#8 Ed25519 private key, refusing anything that is not a private,
    /// regular, small file that parses.
    pub fn load(path: &Path) -> Result<AuditSigner, String> {
        if path.as_os_str().is_empty() {
            return Err("the variable is empty; it must name a key file".into());
        }
        // O_NOFOLLOW: a symlink could be swapped to point at a key someone else controls.
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(path);
        let file = match file {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err("the key file does not exist".into());
            }
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
                return Err("the key file is a symbolic link; name the file itself".into());
            }
            Err(e) => return Err(format!("the key file cannot be opened: {e}")),
        };
        let meta = file
            .metadata()
            .map_err(|e| format!("the key file cannot be inspected: {e}"))?;
        if !meta.is_file() {
            return Err("the key file is not a regular file".into());
        }
        let mode = meta.permissions().mode();
        if mode & 0o077 != 0 {
            return Err(format!(
                "the key file is accessible to group or others (mode {:o}); run chmod 600 on it",
                mode & 0o777
            ));
        }
        if meta.size() == 0 {
            return Err("the key file is empty".into());
        }
        if meta.size() > MAX_KEY_BYTES {
            return Err(format!(
                "the key file is larger than {MAX_KEY_BYTES} bytes; it is not an Ed25519 key"
            ));
        }
        let mut text = String::new();
        file.take(MAX_KEY_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|_| "the key file is not PEM text".to_owned())?;
        let key = SigningKey::from_pkcs8_pem(&text)
            .map_err(|_| "the key file is not a PEM PKCS#8 Ed25519 private key".to_owned())?;
        Ok(AuditSigner::new(key))
    }

    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    /// Signs `bytes`, returning base64url without padding.
    pub fn sign(&self, bytes: &[u8]) -> String {
        URL_SAFE_NO_PAD.encode(self.key.sign(bytes).to_bytes())
    }

    pub fn verifying_key(&self) -> VerifyingKey {
        self.key.verifying_key()
    }
}

/// Reads an SPKI PEM Ed25519 public key.
pub fn load_public_key(path: &Path) -> Result<VerifyingKey, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.len() > MAX_KEY_BYTES {
        return Err(format!("{}: too large for a public key", path.display()));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    VerifyingKey::from_public_key_pem(&text)
        .map_err(|_| format!("{}: not a PEM SPKI Ed25519 public key", path.display()))
}

/// The bytes a signature covers. Versions 2 and 3 keep `signatureKeyId` and
/// `signatureVersion`; unversioned (legacy) signatures also drop `signatureKeyId`.
pub fn signed_bytes(entry: &Map<String, Value>) -> Vec<u8> {
    if entry.contains_key("signatureVersion") {
        canonical::object_without(entry, &["signature"])
    } else {
        canonical::object_without(entry, &["signature", "signatureKeyId"])
    }
}

/// Why a signature did not check out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignatureProblem {
    /// `signature` (or a companion field) has the wrong type or encoding.
    Malformed(&'static str),
    /// No supplied public key has this id.
    UnknownKey(String),
    /// The signature does not match the entry.
    Invalid,
}

/// Checks the signature of one entry against the keys given. `Ok(false)` when unsigned.
///
/// This is the compatible per-entry check; it knows nothing of the chain.
pub fn verify_audit_event_signature(
    entry: &Map<String, Value>,
    keys: &[VerifyingKey],
) -> Result<bool, SignatureProblem> {
    let Some(signature) = entry.get("signature") else {
        if entry.contains_key("signatureKeyId") || entry.contains_key("signatureVersion") {
            return Err(SignatureProblem::Malformed(
                "signatureKeyId or signatureVersion without a signature",
            ));
        }
        return Ok(false);
    };
    let signature = signature
        .as_str()
        .ok_or(SignatureProblem::Malformed("signature is not a string"))?;
    match entry.get("signatureVersion") {
        None => {}
        Some(v) if v.as_u64() == Some(2) || v.as_u64() == Some(3) => {}
        Some(_) => return Err(SignatureProblem::Malformed("unsupported signatureVersion")),
    }
    let bytes = URL_SAFE_NO_PAD
        .decode(signature)
        .map_err(|_| SignatureProblem::Malformed("signature is not base64url without padding"))?;
    let signature = Signature::from_slice(&bytes)
        .map_err(|_| SignatureProblem::Malformed("signature is not 64 bytes"))?;
    let message = signed_bytes(entry);
    let candidates: Vec<&VerifyingKey> = match entry.get("signatureKeyId") {
        Some(Value::String(id)) => {
            let matching: Vec<_> = keys.iter().filter(|k| key_id(k) == *id).collect();
            if matching.is_empty() {
                return Err(SignatureProblem::UnknownKey(id.chars().take(16).collect()));
            }
            matching
        }
        Some(_) => {
            return Err(SignatureProblem::Malformed(
                "signatureKeyId is not a string",
            ));
        }
        // Legacy entries may carry no id: any supplied key may have made them.
        None => keys.iter().collect(),
    };
    if candidates.is_empty() {
        return Err(SignatureProblem::UnknownKey(String::new()));
    }
    if candidates
        .iter()
        .any(|k| k.verify(&message, &signature).is_ok())
    {
        Ok(true)
    } else {
        Err(SignatureProblem::Invalid)
    }
}

/// A fresh key pair as (PKCS#8 private PEM, SPKI public PEM).
pub fn generate_pem_pair() -> Result<(String, String), String> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|e| format!("no randomness available: {e}"))?;
    let key = SigningKey::from_bytes(&seed);
    seed.fill(0);
    let private = key
        .to_pkcs8_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
        .map_err(|e| format!("cannot encode the private key: {e}"))?;
    let public = key
        .verifying_key()
        .to_public_key_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
        .map_err(|e| format!("cannot encode the public key: {e}"))?;
    Ok((private.to_string(), public))
}

/// Writes `audit-signing.key.pem` (0600) and `audit-signing.pub.pem` into `dir`, never
/// replacing existing files. Returns the key id.
pub fn keygen(dir: &Path) -> Result<String, String> {
    use std::io::Write;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let (private, public) = generate_pem_pair()?;
    let key = SigningKey::from_pkcs8_pem(&private).map_err(|e| e.to_string())?;
    let id = key_id(&key.verifying_key());
    let write = |name: &str, text: &str, mode: u32| -> Result<(), String> {
        let path = dir.join(name);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        file.write_all(text.as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(|e| format!("{}: {e}", path.display()))
    };
    write("audit-signing.key.pem", &private, 0o600)?;
    write("audit-signing.pub.pem", &public, 0o644)?;
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// RFC 8032 test 1 secret key, so the vectors below are reproducible anywhere.
    const SEED: [u8; 32] = [
        0x9d, 0x61, 0xb1, 0x9d, 0xef, 0xfd, 0x5a, 0x60, 0xba, 0x84, 0x4a, 0xf4, 0x92, 0xec, 0x2c,
        0xc4, 0x44, 0x49, 0xc5, 0x69, 0x7b, 0x32, 0x69, 0x19, 0x70, 0x3b, 0xac, 0x03, 0x1c, 0xae,
        0x7f, 0x60,
    ];

    fn signer() -> AuditSigner {
        AuditSigner::new(SigningKey::from_bytes(&SEED))
    }

    #[test]
    fn key_id_is_the_first_eight_public_key_bytes() {
        // RFC 8032 test 1 public key: d75a980182b10ab7...
        assert_eq!(signer().key_id(), "d75a980182b10ab7");
    }

    #[test]
    fn rfc8032_empty_message_vector() {
        let sig = signer().sign(b"");
        let bytes = URL_SAFE_NO_PAD.decode(&sig).unwrap();
        let mut hex = String::new();
        canonical::push_hex(&mut hex, &bytes);
        assert_eq!(
            hex,
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155\
             5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
        );
    }

    fn entry() -> Map<String, Value> {
        let Value::Object(map) = json!({
            "sequence": 1, "tool": "repo.status", "signatureKeyId": "d75a980182b10ab7",
            "signatureVersion": 3,
        }) else {
            unreachable!()
        };
        map
    }

    #[test]
    fn v3_signature_known_answer_and_round_trip() {
        let mut e = entry();
        let message = signed_bytes(&e);
        assert_eq!(
            String::from_utf8(message.clone()).unwrap(),
            r#"{"sequence":1,"signatureKeyId":"d75a980182b10ab7","signatureVersion":3,"tool":"repo.status"}"#
        );
        let sig = signer().sign(&message);
        insta::assert_snapshot!(sig, @"0PHamkBp_CjT_BaOHAydaycKlX4eLAD9_oZC-AA7tPgXU_USck3g9R1wPhB8eM0t0tkyduAKtvebZhe-GudRDw");
        e.insert("signature".into(), sig.into());
        let keys = [signer().verifying_key()];
        assert_eq!(verify_audit_event_signature(&e, &keys), Ok(true));

        // The key id is covered: changing it breaks the signature.
        let mut moved = e.clone();
        moved.insert("signatureVersion".into(), 2.into());
        assert_eq!(
            verify_audit_event_signature(&moved, &keys),
            Err(SignatureProblem::Invalid)
        );
        let mut edited = e.clone();
        edited.insert("sequence".into(), 2.into());
        assert_eq!(
            verify_audit_event_signature(&edited, &keys),
            Err(SignatureProblem::Invalid)
        );
        let mut other = e.clone();
        other.insert("signatureKeyId".into(), "0000000000000000".into());
        assert_eq!(
            verify_audit_event_signature(&other, &keys),
            Err(SignatureProblem::UnknownKey("0000000000000000".into()))
        );
    }

    #[test]
    fn legacy_signatures_drop_the_key_id() {
        let Value::Object(mut e) =
            json!({ "tool": "repo.status", "signatureKeyId": "d75a980182b10ab7" })
        else {
            unreachable!()
        };
        assert_eq!(
            String::from_utf8(signed_bytes(&e)).unwrap(),
            r#"{"tool":"repo.status"}"#
        );
        let sig = signer().sign(br#"{"tool":"repo.status"}"#);
        e.insert("signature".into(), sig.into());
        assert_eq!(
            verify_audit_event_signature(&e, &[signer().verifying_key()]),
            Ok(true)
        );
    }

    #[test]
    fn malformed_signatures() {
        let keys = [signer().verifying_key()];
        let mut e = entry();
        e.insert("signature".into(), "not base64!".into());
        assert!(matches!(
            verify_audit_event_signature(&e, &keys),
            Err(SignatureProblem::Malformed(_))
        ));
        e.insert("signature".into(), "AAAA".into());
        assert!(matches!(
            verify_audit_event_signature(&e, &keys),
            Err(SignatureProblem::Malformed(_))
        ));
        let unsigned = entry();
        assert!(matches!(
            verify_audit_event_signature(&unsigned, &keys),
            Err(SignatureProblem::Malformed(_))
        ));
    }

    #[test]
    fn pem_pair_round_trips() {
        let (private, public) = generate_pem_pair().unwrap();
        assert!(private.starts_with("-----BEGIN PRIVATE KEY-----\n"));
        assert!(public.starts_with("-----BEGIN PUBLIC KEY-----\n"));
        let key = SigningKey::from_pkcs8_pem(&private).unwrap();
        let public = VerifyingKey::from_public_key_pem(&public).unwrap();
        assert_eq!(key.verifying_key(), public);
    }
}
