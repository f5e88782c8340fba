use std::sync::Arc;

use super::*;
use crate::audit::AuditSigner;

const SEED: [u8; 32] = [7; 32];

fn fixed_entry() -> Entry {
    let mut entry = Entry {
        id: Uuid::parse_str("bdeca765-488c-4e2a-b86b-25cd734f2988").unwrap(),
        timestamp_ms: 1_712_345_678_901,
        fields: Map::new(),
    };
    entry
        .set("tool", "repo.status")
        .set("event_type", "tool_call")
        .set("summary", "ok")
        .set("sequence", 99);
    entry
}

fn ledger(dir: &Path, signed: bool, rotate_bytes: u64) -> Ledger {
    Ledger::open(AuditConfig {
        path: dir.join("audit/mcp.jsonl"),
        signer: signed.then(|| {
            Arc::new(AuditSigner::new(ed25519_dalek::SigningKey::from_bytes(
                &SEED,
            )))
        }),
        rotate_bytes,
    })
    .unwrap()
}

fn tail_at(sequence: u64) -> Tail {
    Tail {
        last: Some(Link {
            sequence,
            hash: format!("sha256:{}", "ab".repeat(32)),
            segment: "7ab6fa7a-c5bf-4d82-86a8-26b4728b5acd".into(),
            key_id: None,
        }),
        segment: Some("7ab6fa7a-c5bf-4d82-86a8-26b4728b5acd".into()),
        pending_break: None,
    }
}

#[test]
fn sealed_lines_known_answer() {
    let dir = tempfile::tempdir().unwrap();
    let mut tail = tail_at(41);
    let line = ledger(dir.path(), false, ROTATE_BYTES)
        .seal(&fixed_entry(), &mut tail, false)
        .unwrap();
    insta::assert_snapshot!(String::from_utf8(line).unwrap(), @r#"{"id":"bdeca765-488c-4e2a-b86b-25cd734f2988","timestamp":1712345678901,"auditSchemaVersion":1,"auditChainVersion":1,"sequence":42,"segmentId":"7ab6fa7a-c5bf-4d82-86a8-26b4728b5acd","previousHash":"sha256:abababababababababababababababababababababababababababababababab","entryHash":"sha256:cdc7664a7e44f9943c54ad3b73cd6b6796217e6998402a9ff10f5f467f591a77","tool":"repo.status","event_type":"tool_call","summary":"ok"}"#);
    assert_eq!(tail.last.as_ref().unwrap().sequence, 42);

    let mut tail = tail_at(41);
    let line = ledger(dir.path(), true, ROTATE_BYTES)
        .seal(&fixed_entry(), &mut tail, false)
        .unwrap();
    insta::assert_snapshot!(String::from_utf8(line).unwrap(), @r#"{"id":"bdeca765-488c-4e2a-b86b-25cd734f2988","timestamp":1712345678901,"auditSchemaVersion":1,"auditChainVersion":1,"sequence":42,"segmentId":"7ab6fa7a-c5bf-4d82-86a8-26b4728b5acd","previousHash":"sha256:abababababababababababababababababababababababababababababababab","entryHash":"sha256:cdc7664a7e44f9943c54ad3b73cd6b6796217e6998402a9ff10f5f467f591a77","tool":"repo.status","event_type":"tool_call","summary":"ok","signature":"iW3j0eaCRU8p1XCE4As6GMOv_Y4UtCmFRls1AXXBswp0Lr2eE1a41gOjn-I4ZTpqbMBDl6MPJjtKQuFYt9lGDg","signatureKeyId":"ea4a6c63e29c520a","signatureVersion":3}"#);
}

#[test]
fn a_torn_final_line_is_dropped_and_the_chain_continues() {
    let dir = tempfile::tempdir().unwrap();
    let mut l = ledger(dir.path(), false, ROTATE_BYTES);
    l.append_batch(vec![
        Entry::now().with("tool", "a"),
        Entry::now().with("tool", "b"),
    ])
    .unwrap();
    let path = l.path().to_owned();
    let mut file = OpenOptions::new().append(true).open(&path).unwrap();
    file.write_all(br#"{"id":"torn","#).unwrap();
    // A fresh ledger (another process) must not trust any cache.
    let mut other = ledger(dir.path(), false, ROTATE_BYTES);
    other.append(Entry::now().with("tool", "c")).unwrap();
    assert_eq!(other.take_notices().len(), 1);
    let text = std::fs::read_to_string(&path).unwrap();
    let sequences: Vec<u64> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["sequence"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(sequences, [1, 2, 3]);
}

#[test]
fn rotation_keeps_four_segments_and_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let mut l = ledger(dir.path(), false, 2000);
    for i in 0..60 {
        l.append(Entry::now().with("tool", format!("t{i}")))
            .unwrap();
    }
    let path = l.path().to_owned();
    for n in 1..=RETAINED {
        let seg = std::fs::read_to_string(rotated_path(&path, n)).unwrap();
        let first: Value = serde_json::from_str(seg.lines().next().unwrap()).unwrap();
        assert_eq!(first["event_type"], "checkpoint", "segment .{n}");
    }
    assert!(!rotated_path(&path, RETAINED + 1).exists());
    let report = crate::audit::verify_audit_ledger(&path, &[], true);
    assert!(report.is_err(), "unsigned entries fail strict mode");
    let report = crate::audit::verify_audit_ledger(&path, &[], false).unwrap();
    assert_eq!(report.segments, 5);
    assert_eq!(report.last_sequence, Some(60 + report_checkpoints(&path)));
}

fn report_checkpoints(path: &Path) -> u64 {
    // Every checkpoint ever written took a sequence number; the last line tells.
    let text = std::fs::read_to_string(path).unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    last["sequence"].as_u64().unwrap() - 60
}

#[test]
fn oversized_summaries_are_shortened_to_fit() {
    let dir = tempfile::tempdir().unwrap();
    let mut l = ledger(dir.path(), true, ROTATE_BYTES);
    l.append(Entry::now().with("summary", "é".repeat(MAX_LINE)))
        .unwrap();
    let text = std::fs::read_to_string(l.path()).unwrap();
    assert!(text.len() <= MAX_LINE);
    assert!(text.len() > MAX_LINE - 64, "only as much as needed is cut");
    crate::audit::verify_audit_ledger(
        l.path(),
        &[ed25519_dalek::SigningKey::from_bytes(&SEED).verifying_key()],
        true,
    )
    .unwrap();
}

#[test]
fn a_cached_tail_is_not_trusted_once_another_writer_rotated_its_segment_away() {
    // ext4 hands a deleted file's inode number to the next file created, so after
    // another writer's rotations a new segment can carry the number and the length
    // that this writer remembers of its own last append.
    let dir = tempfile::tempdir().unwrap();
    let mut ours = ledger(dir.path(), false, 2000);
    let mut theirs = ledger(dir.path(), false, 2000);
    let entry = |i: u32| Entry::now().with("tool", format!("t{i:04}"));
    // Three-digit sequences from here on, so equal line counts make equal lengths.
    for i in 0..100 {
        theirs.append(entry(i)).unwrap();
    }
    ours.append(entry(100)).unwrap();
    let remembered = ours.cached.as_ref().map(|c| (c.ino, c.len)).unwrap();
    let path = ours.path().to_owned();
    for i in 101..400 {
        theirs.append(entry(i)).unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        if (meta.ino(), meta.len()) == remembered {
            break;
        }
    }
    ours.append(entry(400)).unwrap();
    let report = crate::audit::verify_audit_ledger(&path, &[], false).unwrap();
    assert_eq!(report.breaks, 0);
    let text = std::fs::read_to_string(&path).unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["tool"], "t0400");
    assert_eq!(report.last_sequence, last["sequence"].as_u64());
}
