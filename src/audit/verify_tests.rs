//! Tests of the ledger verifier: chains, rotations, checkpoints and signatures, broken on purpose.

use std::sync::Arc;

use ed25519_dalek::SigningKey;
use serde_json::json;

use super::*;
use crate::audit::{AuditConfig, AuditSigner, Entry, Ledger};

fn key() -> SigningKey {
    SigningKey::from_bytes(&[9; 32])
}

fn write(dir: &Path, n: usize) -> PathBuf {
    let path = dir.join("mcp.jsonl");
    let mut ledger = Ledger::open(AuditConfig {
        path: path.clone(),
        signer: Some(Arc::new(AuditSigner::new(key()))),
        rotate_bytes: 1 << 20,
    })
    .unwrap();
    for i in 0..n {
        ledger.append(Entry::now().with("n", i)).unwrap();
    }
    path
}

fn failure(path: &Path) -> String {
    match verify_audit_ledger(path, &[key().verifying_key()], false) {
        Err(VerifyError::Failed(f)) => f.0.reason,
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[test]
fn legacy_signed_records_before_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcp.jsonl");
    let signer = AuditSigner::new(key());
    let Value::Object(mut legacy) =
        json!({ "id": "mcp-tool-1-repo-status", "tool": "repo.status" })
    else {
        unreachable!()
    };
    legacy.insert("signatureKeyId".into(), signer.key_id().into());
    let signature = signer.sign(&crate::audit::signing::signed_bytes(&legacy));
    legacy.insert("signature".into(), signature.into());
    std::fs::write(&path, format!("{}\n", Value::Object(legacy.clone()))).unwrap();
    write(dir.path(), 2);
    let report = verify_audit_ledger(&path, &[key().verifying_key()], true).unwrap();
    assert_eq!(
        (
            report.legacy,
            report.chained,
            report.signed,
            report.unsigned
        ),
        (1, 2, 3, 0)
    );

    // After the chain began, a legacy record is out of place.
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(&format!("{}\n", Value::Object(legacy)));
    std::fs::write(&path, text).unwrap();
    assert_eq!(failure(&path), "unchained record after the chain began");
}

#[test]
fn structural_failures_name_their_reason() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), 3);
    let original = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = original.lines().collect();
    let case = |text: String| {
        std::fs::write(&path, text).unwrap();
        failure(&path)
    };
    assert_eq!(case(format!("{}\n\n", lines[0])), "not a JSON object");
    assert_eq!(
        case(format!("{}\n{}\n", lines[1], lines[2])),
        "the oldest retained segment neither starts the chain nor opens with a checkpoint"
    );
    assert_eq!(
        case(format!("{}\n{}\n", lines[0], lines[2])),
        "sequence 3 does not follow 1"
    );
    assert_eq!(
        case(format!(
            "{}\n",
            lines[0].replace("\"signatureVersion\":3", "\"signatureVersion\":7")
        )),
        "unsupported signatureVersion"
    );
    assert_eq!(
        case(format!("{}\n", lines[0].replace("\"n\":0", "\"n\":1"))),
        "entryHash does not match the entry"
    );
    let err = verify_audit_ledger(&dir.path().join("nothing"), &[], false);
    assert!(matches!(err, Err(VerifyError::NotFound(_))));
}
