//! The audit ledger through the real binary: entries written by real `tools/call`s, the
//! verifier's verdicts on intact and tampered ledgers, concurrent writers, rotation,
//! signing-key failures, disabled and degraded ledgers.

use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Map, Value, json};

use crate::common::{Fixture, MODERN, gitward_bin};

/// Runs `gitward` with the fixture's environment plus `env`, feeding `stdin`; waits.
pub(crate) fn run(fx: &Fixture, args: &[&str], env: &[(&str, &str)], stdin: &[u8]) -> Output {
    let mut cmd = Command::new(gitward_bin());
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in fx.env() {
        cmd.env(k, v);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        // The server may refuse to start and close its end: that is not a test failure.
        let _ = input.write_all(&stdin);
    });
    let output = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    output
}

/// Newline-delimited modern `tools/call` requests.
pub(crate) fn calls(calls: &[(&str, Value)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, (tool, args)) in calls.iter().enumerate() {
        let request = json!({
            "jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
            "params": {
                "name": tool, "arguments": args,
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": { "name": "audit-tests", "version": "1" },
                },
            },
        });
        out.extend(request.to_string().into_bytes());
        out.push(b'\n');
    }
    out
}

pub(crate) fn serve(fx: &Fixture, env: &[(&str, &str)], requests: &[(&str, Value)]) -> Output {
    let out = run(fx, &[], env, &calls(requests));
    assert!(out.status.success(), "server failed: {}", stderr(&out));
    out
}

pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub(crate) fn lines(path: &Path) -> Vec<Map<String, Value>> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| match serde_json::from_str(l).unwrap() {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        })
        .collect()
}

/// `gitward verify-audit` → (exit code, stdout JSON or Null).
pub(crate) fn verify(fx: &Fixture, log: &Path, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["verify-audit", log.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = run(fx, &args, &[], b"");
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap(), json)
}

/// A key pair made by `gitward keygen`: (private key path, public key path).
pub(crate) fn keygen(fx: &Fixture) -> (PathBuf, PathBuf) {
    let dir = fx.path("keys");
    let out = run(fx, &["keygen", "--out", dir.to_str().unwrap()], &[], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    (
        dir.join("audit-signing.key.pem"),
        dir.join("audit-signing.pub.pem"),
    )
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn calls_are_chained_and_signed() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "a\n", "first");
    let (key, public) = keygen(&fx);
    assert_eq!(mode(&key), 0o600);
    let pem = std::fs::read_to_string(&key).unwrap();
    assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----"), "PKCS#8");
    assert!(
        std::fs::read_to_string(&public)
            .unwrap()
            .starts_with("-----BEGIN PUBLIC KEY-----")
    );

    let out = serve(
        &fx,
        &[("FLUXGIT_MCP_AUDIT_SIGN_KEY", key.to_str().unwrap())],
        &[
            ("repo.status", json!({ "repoPath": repo })),
            (
                "repo.status",
                json!({ "repoPath": repo.join("."), "maxEntries": 0 }),
            ),
            ("no.such.tool", json!({ "repoPath": repo })),
        ],
    );
    let replies: Vec<Value> = String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(replies.len(), 3);

    // The default location under the run directory, private.
    let log = fx.run_dir().join("audit/mcp.jsonl");
    assert_eq!(mode(&fx.run_dir().join("audit")), 0o700);
    assert_eq!(mode(&log), 0o600);
    let raw = std::fs::read_to_string(&log).unwrap();
    assert!(
        !raw.contains(repo.to_str().unwrap()),
        "no verbatim paths:\n{raw}"
    );

    let mut entries = lines(&log);
    // Calls run concurrently: order by the tool outcome, not by arrival.
    entries.sort_by_key(|e| e["result"].as_str().unwrap().to_owned());
    let [blocked, error, success] = entries.as_slice() else {
        panic!("three entries: {raw}")
    };
    let keys: Vec<&str> = success.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "id",
            "timestamp",
            "auditSchemaVersion",
            "auditChainVersion",
            "sequence",
            "segmentId",
            "previousHash",
            "entryHash",
            "tool",
            "event_type",
            "repo_scope",
            "args_fingerprint",
            "risk",
            "approval",
            "result",
            "session_id",
            "duration_ms",
            "summary",
            "readOnly",
            "sidecarReadOnly",
            "signature",
            "signatureKeyId",
            "signatureVersion",
        ]
    );
    assert_eq!(success["tool"], "repo.status");
    assert_eq!(success["event_type"], "tool_call");
    assert_eq!(success["risk"], "read");
    assert_eq!(success["approval"], "none");
    assert_eq!(success["readOnly"], true);
    assert_eq!(success["summary"], "ok");
    assert_eq!(success["signatureVersion"], 3);
    let scope = format!(
        "repoPath:{}",
        gitward::audit::canonical::sha256_tag(&serde_json::to_vec(repo.to_str().unwrap()).unwrap())
    );
    assert_eq!(success["repo_scope"], json!(scope));
    assert_eq!(
        error["repo_scope"],
        json!(scope),
        "an alias hashes like the canonical path"
    );
    assert_eq!(
        success["args_fingerprint"],
        json!(gitward::audit::canonical::sha256_tag(
            &gitward::audit::canonical::to_vec(&json!({ "repoPath": repo }))
        ))
    );
    assert_eq!(error["result"], "error");
    assert_eq!(error["summary"], "error -32602 (maxEntries)");
    assert_eq!(blocked["tool"], "no.such.tool");
    assert_eq!(blocked["event_type"], "write_block");
    assert_eq!(blocked["approval"], "denied");
    assert_eq!(blocked["readOnly"], false);
    assert_eq!(blocked["summary"], "unknown tool");
    let session = &success["session_id"];
    assert!(uuid::Uuid::parse_str(session.as_str().unwrap()).is_ok());
    assert!(entries.iter().all(|e| &e["session_id"] == session));

    let (code, report) = verify(
        &fx,
        &log,
        &["--pubkey", public.to_str().unwrap(), "--require-signed"],
    );
    assert_eq!(code, 0, "{report}");
    assert_eq!(
        report,
        json!({ "ok": true, "entries": 3, "chained": 3, "legacy": 0, "signed": 3, "unsigned": 0,
                "segments": 1, "keyChanges": 0, "breaks": 0, "firstSequence": 1, "lastSequence": 3 })
    );

    // A second run continues the same chain.
    serve(
        &fx,
        &[("FLUXGIT_MCP_AUDIT_SIGN_KEY", key.to_str().unwrap())],
        &[("repo.status", json!({ "repoPath": repo }))],
    );
    let (code, report) = verify(&fx, &log, &["--pubkey", public.to_str().unwrap()]);
    assert_eq!((code, &report["lastSequence"]), (0, &json!(4)), "{report}");

    // Another key cannot vouch for these entries.
    let other = fx.path("other");
    let out = run(&fx, &["keygen", "--out", other.to_str().unwrap()], &[], b"");
    assert!(out.status.success());
    let other_pub = other.join("audit-signing.pub.pem");
    let (code, report) = verify(&fx, &log, &["--pubkey", other_pub.to_str().unwrap()]);
    assert_eq!(code, 3, "{report}");
    let (code, _) = verify(&fx, &log, &[]);
    assert_eq!(code, 3, "signed entries need their public key");
}

/// A ledger of three segments (signed), written by real calls with a small rotation size.
fn rotated_ledger(fx: &Fixture, key: &Path, calls_n: usize) -> PathBuf {
    let repo = fx.init("repo", &[]);
    let log = fx.path("ledger/mcp.jsonl");
    let requests: Vec<(&str, Value)> = (0..calls_n)
        .map(|i| {
            (
                "repo.status",
                json!({ "repoPath": repo, "maxEntries": 1 + i }),
            )
        })
        .collect();
    serve(
        fx,
        &[
            ("FLUXGIT_MCP_AUDIT_LOG", log.to_str().unwrap()),
            ("FLUXGIT_MCP_AUDIT_SIGN_KEY", key.to_str().unwrap()),
            ("GITWARD_AUDIT_ROTATE_BYTES", "4000"),
        ],
        &requests,
    );
    log
}

/// Copies the ledger's files into a fresh directory for one tampering case.
pub(crate) fn copy_ledger(fx: &Fixture, log: &Path, case: &str) -> PathBuf {
    let dir = fx.path(&format!("cases/{case}"));
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(log.parent().unwrap()).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    dir.join("mcp.jsonl")
}

pub(crate) fn edit_lines(path: &Path, f: impl FnOnce(&mut Vec<String>)) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    f(&mut lines);
    let mut out = lines.join("\n");
    out.push('\n');
    std::fs::write(path, out).unwrap();
}

pub(crate) fn rotated(log: &Path, n: u32) -> PathBuf {
    PathBuf::from(format!("{}.{n}", log.display()))
}

#[test]
fn tampering_is_detected() {
    let fx = Fixture::new();
    let (key, public) = keygen(&fx);
    let log = rotated_ledger(&fx, &key, 14);
    let pubkey = public.to_str().unwrap();
    assert!(rotated(&log, 2).exists(), "at least three segments");
    let (code, report) = verify(&fx, &log, &["--pubkey", pubkey, "--require-signed"]);
    assert_eq!(code, 0, "{report}");
    assert!(report["segments"].as_u64().unwrap() >= 3);

    type Tamper = fn(&Path);
    let cases: Vec<(&str, Tamper)> = vec![
        ("edit a byte", |log| {
            let log = rotated(log, 1);
            let mut bytes = std::fs::read(&log).unwrap();
            let at = bytes.windows(4).position(|w| w == b"\"ok\"").unwrap();
            bytes[at + 1] = b'O';
            std::fs::write(&log, bytes).unwrap();
        }),
        ("delete a line", |log| {
            edit_lines(&rotated(log, 1), |l| drop(l.remove(1)))
        }),
        ("reorder two lines", |log| {
            edit_lines(&rotated(log, 1), |l| l.swap(1, 2))
        }),
        ("truncate mid-line", |log| {
            let len = std::fs::metadata(log).unwrap().len();
            std::fs::OpenOptions::new()
                .write(true)
                .open(log)
                .unwrap()
                .set_len(len - 40)
                .unwrap();
        }),
        ("drop a rotated segment's first line", |log| {
            edit_lines(&rotated(log, 1), |l| drop(l.remove(0)))
        }),
        ("swap two segments", |log| {
            let (a, b, tmp) = (rotated(log, 1), rotated(log, 2), rotated(log, 9));
            std::fs::rename(&a, &tmp).unwrap();
            std::fs::rename(&b, &a).unwrap();
            std::fs::rename(&tmp, &b).unwrap();
        }),
        ("delete a middle segment", |log| {
            std::fs::remove_file(rotated(log, 1)).unwrap()
        }),
        ("duplicate a line", |log| {
            edit_lines(&rotated(log, 1), |l| {
                let dup = l[1].clone();
                l.insert(2, dup)
            })
        }),
        ("rewrite an entry and re-hash the chain", |log| {
            rehash_from(log, 1)
        }),
        (
            "a duplicate key that readers keeping the first would believe",
            |log| {
                edit_lines(log, |l| {
                    assert!(l[1].contains(r#""result":"success""#));
                    l[1] = l[1].replacen('{', r#"{"result":"error","#, 1);
                })
            },
        ),
        ("strip the newest signatures and re-hash the chain", |log| {
            strip_signatures_from(log, 1)
        }),
    ];
    for (name, tamper) in cases {
        let copy = copy_ledger(&fx, &log, &name.replace(' ', "-"));
        tamper(&copy);
        let (code, report) = verify(&fx, &copy, &["--pubkey", pubkey]);
        assert_eq!(code, 3, "{name}: {report}");
        assert_eq!(report["ok"], false, "{name}");
        let text = report.to_string();
        assert!(
            !text.contains("repoPath:"),
            "{name}: the report repeats no content"
        );
    }
}

/// Edits line `from` of the active segment and recomputes every hash after it, as someone
/// without the signing key could: only the signatures give it away.
fn rehash_from(log: &Path, from: usize) {
    use gitward::audit::canonical;
    let excluded = [
        "entryHash",
        "signature",
        "signatureKeyId",
        "signatureVersion",
    ];
    let mut entries = lines(log);
    entries[from].insert("summary".into(), "nothing happened".into());
    for i in from..entries.len() {
        if i > 0 {
            let prev = entries[i - 1]["entryHash"].clone();
            entries[i].insert("previousHash".into(), prev);
        }
        let hash = canonical::sha256_tag(&canonical::object_without(&entries[i], &excluded));
        entries[i].insert("entryHash".into(), hash.into());
    }
    let text: String = entries
        .iter()
        .map(|e| format!("{}\n", Value::Object(e.clone())))
        .collect();
    std::fs::write(log, text).unwrap();
}

/// Removes the signatures of the active segment's entries from line `from` on and
/// recomputes their hashes, as someone without the key could.
fn strip_signatures_from(log: &Path, from: usize) {
    use gitward::audit::canonical;
    let mut entries = lines(log);
    for i in from..entries.len() {
        for field in ["signature", "signatureKeyId", "signatureVersion"] {
            entries[i].remove(field);
        }
        if i > 0 {
            let prev = entries[i - 1]["entryHash"].clone();
            entries[i].insert("previousHash".into(), prev);
        }
        let hash = canonical::sha256_tag(&canonical::object_without(&entries[i], &["entryHash"]));
        entries[i].insert("entryHash".into(), hash.into());
    }
    let text: String = entries
        .iter()
        .map(|e| format!("{}\n", Value::Object(e.clone())))
        .collect();
    std::fs::write(log, text).unwrap();
}

#[test]
fn a_change_of_signing_key_is_recorded_and_verifies() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let (key, public) = keygen(&fx);
    let log = fx.path("ledger/mcp.jsonl");
    let log_env = ("FLUXGIT_MCP_AUDIT_LOG", log.to_str().unwrap());
    let status = [("repo.status", json!({ "repoPath": repo }))];
    // Signed, then the key is taken away, then signing resumes.
    serve(
        &fx,
        &[
            log_env,
            ("FLUXGIT_MCP_AUDIT_SIGN_KEY", key.to_str().unwrap()),
        ],
        &status,
    );
    serve(&fx, &[log_env], &status);
    serve(
        &fx,
        &[
            log_env,
            ("FLUXGIT_MCP_AUDIT_SIGN_KEY", key.to_str().unwrap()),
        ],
        &status,
    );
    let entries = lines(&log);
    let kinds: Vec<&str> = entries
        .iter()
        .map(|e| e["event_type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "tool_call",
            "key_change",
            "tool_call",
            "key_change",
            "tool_call"
        ]
    );
    let key_id = entries[0]["signatureKeyId"].clone();
    assert_eq!(entries[1]["previousSignatureKeyId"], key_id);
    assert!(entries[1].get("signature").is_none(), "written unsigned");
    assert_eq!(entries[3]["previousSignatureKeyId"], Value::Null);
    assert_eq!(entries[3]["signatureKeyId"], key_id);
    let pubkey = public.to_str().unwrap();
    let (code, report) = verify(&fx, &log, &["--pubkey", pubkey]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["keyChanges"], 2, "{report}");
    assert_eq!(report["unsigned"], 2, "{report}");
    let (code, _) = verify(&fx, &log, &["--pubkey", pubkey, "--require-signed"]);
    assert_eq!(code, 3, "strict mode still wants every entry signed");

    // A key change record must agree with the entry before it.
    let copy = copy_ledger(&fx, &log, "wrong-previous-key");
    edit_lines(&copy, |l| {
        l.truncate(3);
        l[1] = l[1].replace(key_id.as_str().unwrap(), "0000000000000000");
    });
    strip_signatures_from(&copy, 1);
    let (code, report) = verify(&fx, &copy, &["--pubkey", pubkey]);
    assert_eq!(code, 3, "{report}");
    assert_eq!(
        report["failure"]["reason"],
        "the recorded key change does not match the previous entry's key"
    );
}

#[test]
fn rotation_keeps_four_segments_linked_by_checkpoints() {
    let fx = Fixture::new();
    let (key, public) = keygen(&fx);
    let log = rotated_ledger(&fx, &key, 40);
    assert!(rotated(&log, 4).exists());
    assert!(!rotated(&log, 5).exists(), "only four rotations are kept");
    let mut previous_segment: Option<Value> = None;
    for path in [
        rotated(&log, 4),
        rotated(&log, 3),
        rotated(&log, 2),
        rotated(&log, 1),
        log.clone(),
    ] {
        let entries = lines(&path);
        let first = &entries[0];
        assert_eq!(first["event_type"], "checkpoint", "{}", path.display());
        assert_eq!(
            first["lastSequence"].as_u64().unwrap() + 1,
            first["sequence"].as_u64().unwrap()
        );
        assert_eq!(first["lastEntryHash"], first["previousHash"]);
        assert!(first.contains_key("signature"), "checkpoints are signed");
        if let Some(prev) = &previous_segment {
            assert_eq!(&first["previousSegmentId"], prev);
        }
        assert!(entries.iter().all(|e| e["segmentId"] == first["segmentId"]));
        assert!(std::fs::metadata(&path).unwrap().len() <= 4000);
        previous_segment = Some(first["segmentId"].clone());
    }
    let (code, report) = verify(
        &fx,
        &log,
        &["--pubkey", public.to_str().unwrap(), "--require-signed"],
    );
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["segments"], 5);
    assert!(
        report["firstSequence"].as_u64().unwrap() > 1,
        "the oldest segments are gone"
    );
    assert_eq!(
        report["lastSequence"].as_u64().unwrap() - report["firstSequence"].as_u64().unwrap() + 1,
        report["chained"].as_u64().unwrap()
    );
}

#[test]
fn strict_mode_and_usage() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    serve(&fx, &[], &[("repo.status", json!({ "repoPath": repo }))]);
    let log = fx.run_dir().join("audit/mcp.jsonl");
    let (code, report) = verify(&fx, &log, &[]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["unsigned"], 1);
    let (code, report) = verify(&fx, &log, &["--require-signed"]);
    assert_eq!(code, 3, "{report}");
    assert_eq!(report["unsigned"], 1);

    let (_, public) = keygen(&fx);
    let garbage = fx.path("garbage.pem");
    std::fs::write(&garbage, "not a key").unwrap();
    let missing = fx.path("missing.jsonl");
    for args in [
        vec!["verify-audit"],
        vec!["verify-audit", log.to_str().unwrap(), "--bogus"],
        vec!["verify-audit", log.to_str().unwrap(), log.to_str().unwrap()],
        vec!["verify-audit", log.to_str().unwrap(), "--pubkey"],
        vec![
            "verify-audit",
            log.to_str().unwrap(),
            "--pubkey",
            garbage.to_str().unwrap(),
        ],
        vec![
            "verify-audit",
            missing.to_str().unwrap(),
            "--pubkey",
            public.to_str().unwrap(),
        ],
        vec!["keygen"],
    ] {
        let out = run(&fx, &args, &[], b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // keygen never overwrites a key.
    let keys = public.parent().unwrap().to_str().unwrap().to_owned();
    let out = run(&fx, &["keygen", "--out", &keys], &[], b"");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

#[test]
fn legacy_records_are_counted_apart_from_the_chain() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let log = fx.path("ledger/mcp.jsonl");
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    std::fs::write(
        &log,
        "{\"id\":\"mcp-tool-1-repo-status\",\"tool\":\"repo.status\",\"event_type\":\"tool_call\"}\n",
    )
    .unwrap();
    serve(
        &fx,
        &[("FLUXGIT_MCP_AUDIT_LOG", log.to_str().unwrap())],
        &[("repo.status", json!({ "repoPath": repo }))],
    );
    let (code, report) = verify(&fx, &log, &[]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(
        (report["legacy"].clone(), report["chained"].clone()),
        (json!(1), json!(1))
    );
    assert_eq!(
        report["firstSequence"], 1,
        "the chain starts after legacy records"
    );
}

#[test]
fn concurrent_writers_share_one_chain() {
    let fx = Fixture::new();
    let log = fx.path("ledger/mcp.jsonl");
    let per_server = 1500;
    let requests: Vec<(&str, Value)> = (0..per_server)
        .map(|i| ("no.such.tool", json!({ "i": i })))
        .collect();
    let input = calls(&requests);
    let servers: Vec<_> = (0..4)
        .map(|_| {
            let mut cmd = Command::new(gitward_bin());
            cmd.env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("FLUXGIT_MCP_AUDIT_LOG", &log)
                // Refused calls are the load here: one entry each.
                .env("GITWARD_AUDIT_REFUSAL_WINDOW_MS", "0")
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
            for (k, v) in fx.env() {
                cmd.env(k, v);
            }
            cmd.spawn().unwrap()
        })
        .collect();
    let mut handles = Vec::new();
    for mut child in servers {
        let input = input.clone();
        handles.push(std::thread::spawn(move || {
            child.stdin.take().unwrap().write_all(&input).unwrap();
            child.wait_with_output().unwrap()
        }));
    }
    // The library writer appends at the same time, as the gateway would.
    let mut ledger = gitward::audit::Ledger::open(gitward::audit::AuditConfig {
        path: log.clone(),
        signer: None,
        rotate_bytes: 4 * 1024 * 1024,
    })
    .unwrap();
    for i in 0..500 {
        ledger
            .append(
                gitward::audit::Entry::now()
                    .with("event_type", "human_decision")
                    .with("n", i),
            )
            .unwrap();
    }
    for handle in handles {
        let out = handle.join().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stderr(&out).is_empty() || !stderr(&out).contains("audit"),
            "{}",
            stderr(&out)
        );
    }
    let (code, report) = verify(&fx, &log, &[]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["firstSequence"], 1);
    assert_eq!(report["lastSequence"], report["chained"]);
    // Several MiB of entries: there may be rotations, and their checkpoints.
    let mut all = lines(&log);
    for n in 1..=4 {
        if rotated(&log, n).exists() {
            all.extend(lines(&rotated(&log, n)));
        }
    }
    let events = all
        .iter()
        .filter(|e| e["event_type"] != "checkpoint")
        .count();
    assert_eq!(events, 4 * per_server + 500);
    let sessions: std::collections::HashSet<String> = all
        .iter()
        .filter_map(|e| {
            e.get("session_id")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .collect();
    assert_eq!(sessions.len(), 4, "one session id per server process");
}

#[test]
fn bad_signing_keys_refuse_to_start() {
    let fx = Fixture::new();
    let (good, _) = keygen(&fx);
    let dir = fx.path("bad");
    std::fs::create_dir_all(&dir).unwrap();
    let private = |name: &str, content: &[u8], mode: u32| {
        let path = dir.join(name);
        std::fs::write(&path, content).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let pem = std::fs::read(&good).unwrap();
    let empty = private("empty.pem", b"", 0o600);
    let readable = private("readable.pem", &pem, 0o644);
    let group = private("group.pem", &pem, 0o640);
    let oversized = private("big.pem", &[b'A'; 5000], 0o600);
    let garbage = private(
        "garbage.pem",
        b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        0o600,
    );
    let public = fx
        .path("keys/audit-signing.pub.pem")
        .to_str()
        .unwrap()
        .to_owned();
    std::fs::set_permissions(&public, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = dir.join("link.pem");
    std::os::unix::fs::symlink(&good, &link).unwrap();
    let link = link.to_str().unwrap().to_owned();
    let missing = dir.join("missing.pem").to_str().unwrap().to_owned();
    let request = calls(&[("repo.status", json!({ "repoPath": "/" }))]);
    for (case, value) in [
        ("empty", empty.as_str()),
        ("missing", &missing),
        ("0644", &readable),
        ("0640", &group),
        ("symlink", &link),
        ("oversized", &oversized),
        ("garbage", &garbage),
        ("a public key", &public),
        ("empty variable", ""),
    ] {
        let out = run(&fx, &[], &[("FLUXGIT_MCP_AUDIT_SIGN_KEY", value)], &request);
        assert_eq!(out.status.code(), Some(1), "{case}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{case}: nothing on stdout");
        let err = stderr(&out);
        assert!(
            err.contains("FLUXGIT_MCP_AUDIT_SIGN_KEY") && err.contains("refusing to start"),
            "{case}: {err}"
        );
        assert!(
            !fx.run_dir().join("audit").exists(),
            "{case}: nothing written"
        );
    }
    // The good key, for contrast, starts.
    let out = run(
        &fx,
        &[],
        &[("FLUXGIT_MCP_AUDIT_SIGN_KEY", good.to_str().unwrap())],
        &request,
    );
    assert!(
        out.status.success() && !out.stdout.is_empty(),
        "{}",
        stderr(&out)
    );
}

#[test]
fn disabled_audit_writes_nothing() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let log = fx.path("ledger/mcp.jsonl");
    let out = serve(
        &fx,
        &[
            ("FLUXGIT_MCP_AUDIT_DISABLED", ""),
            ("FLUXGIT_MCP_AUDIT_LOG", log.to_str().unwrap()),
            // Disabled wins: not even the key is looked at.
            ("FLUXGIT_MCP_AUDIT_SIGN_KEY", "/nonexistent"),
        ],
        &[("repo.status", json!({ "repoPath": repo }))],
    );
    assert!(!out.stdout.is_empty());
    assert!(!log.parent().unwrap().exists());
    assert!(!fx.run_dir().join("audit").exists());
}

#[test]
fn a_failing_ledger_degrades_without_failing_calls() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    // A path below a regular file cannot be created, even by root.
    let blocker = fx.path("blocker");
    std::fs::write(&blocker, "").unwrap();
    let log = blocker.join("mcp.jsonl");
    let out = serve(
        &fx,
        &[("FLUXGIT_MCP_AUDIT_LOG", log.to_str().unwrap())],
        &[
            ("repo.status", json!({ "repoPath": repo })),
            ("repo.status", json!({ "repoPath": repo })),
        ],
    );
    let replies: Vec<Value> = String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(replies.len(), 2);
    assert!(
        replies.iter().all(|r| r["result"]["isError"] == false),
        "{replies:?}"
    );
    let err = stderr(&out);
    assert_eq!(err.matches("degraded").count(), 1, "reported once: {err}");
}

#[test]
fn sigterm_flushes_the_ledger() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let mut server = fx.server(&[], &[]);
    for _ in 0..5 {
        server.call("repo.status", json!({ "repoPath": repo }));
    }
    let pid = server.pid().to_string();
    let status = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(status.success());
    let rest = server.finish();
    assert!(rest.is_empty());
    let log = fx.run_dir().join("audit/mcp.jsonl");
    assert_eq!(lines(&log).len(), 5);
    let (code, report) = verify(&fx, &log, &[]);
    assert_eq!(code, 0, "{report}");
}

#[test]
fn lock_file_sits_beside_the_log() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    serve(&fx, &[], &[("repo.status", json!({ "repoPath": repo }))]);
    let lock = fx.run_dir().join("audit/mcp.jsonl.lock");
    let meta = std::fs::metadata(&lock).unwrap();
    assert_eq!(meta.size(), 0, "the lock file holds no data");
    assert_eq!(mode(&lock), 0o600);
}

#[test]
fn an_interrupted_append_is_repaired_by_the_next_writer() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let call = [("repo.status", json!({ "repoPath": repo }))];
    serve(&fx, &[], &call);
    serve(&fx, &[], &call);
    let log = fx.run_dir().join("audit/mcp.jsonl");
    // What a writer killed in the middle of `write` leaves behind.
    let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    file.write_all(br#"{"id":"7f9c","timestamp":17"#).unwrap();
    drop(file);
    let (code, report) = verify(&fx, &log, &[]);
    assert_eq!(code, 3, "{report}");
    assert_eq!(report["failure"]["line"], 3);

    let out = serve(&fx, &[], &call);
    assert!(
        stderr(&out).contains("incomplete final line"),
        "{}",
        stderr(&out)
    );
    let (code, report) = verify(&fx, &log, &[]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["lastSequence"], 3);
}

#[test]
fn hostile_names_and_arguments_stay_out_of_the_ledger() {
    let fx = Fixture::new();
    let secret = fx.path("private/secret-project");
    let name = format!("{}\n--output=/etc/passwd", secret.display());
    serve(
        &fx,
        &[],
        &[
            (
                name.as_str(),
                json!({ "repoPath": secret, "token": "hunter2" }),
            ),
            (
                "repo.status",
                json!({ "repoPath": secret, "pathspec": "--output=x" }),
            ),
        ],
    );
    let log = fx.run_dir().join("audit/mcp.jsonl");
    let raw = std::fs::read_to_string(&log).unwrap();
    for needle in ["secret-project", "hunter2", "--output", "passwd"] {
        assert!(!raw.contains(needle), "{needle} leaked:\n{raw}");
    }
    let entries = lines(&log);
    let blocked = entries.iter().find(|e| e["result"] == "blocked").unwrap();
    assert!(
        blocked["tool"]
            .as_str()
            .unwrap()
            .starts_with("name:sha256:")
    );
    let (code, report) = verify(&fx, &log, &[]);
    assert_eq!((code, &report["chained"]), (0, &json!(2)), "{report}");
}

#[test]
fn concurrent_writers_rotate_without_breaking_the_chain() {
    let fx = Fixture::new();
    let (key, public) = keygen(&fx);
    let log = fx.path("ledger/mcp.jsonl");
    let requests: Vec<(&str, Value)> = (0..400)
        .map(|i| ("no.such.tool", json!({ "i": i })))
        .collect();
    let input = calls(&requests);
    let handles: Vec<_> = (0..3)
        .map(|_| {
            let mut cmd = Command::new(gitward_bin());
            cmd.env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("FLUXGIT_MCP_AUDIT_LOG", &log)
                .env("FLUXGIT_MCP_AUDIT_SIGN_KEY", &key)
                .env("GITWARD_AUDIT_ROTATE_BYTES", "16384")
                .env("GITWARD_AUDIT_REFUSAL_WINDOW_MS", "0")
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
            for (k, v) in fx.env() {
                cmd.env(k, v);
            }
            let mut child = cmd.spawn().unwrap();
            let input = input.clone();
            std::thread::spawn(move || {
                child.stdin.take().unwrap().write_all(&input).unwrap();
                child.wait_with_output().unwrap()
            })
        })
        .collect();
    for handle in handles {
        let out = handle.join().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(!stderr(&out).contains("degraded"), "{}", stderr(&out));
    }
    let (code, report) = verify(
        &fx,
        &log,
        &["--pubkey", public.to_str().unwrap(), "--require-signed"],
    );
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["segments"], 5);
    let (first, last) = (
        report["firstSequence"].as_u64().unwrap(),
        report["lastSequence"].as_u64().unwrap(),
    );
    assert_eq!(last - first + 1, report["chained"].as_u64().unwrap());
    assert!(
        last > 1200,
        "every call and every checkpoint took a sequence number"
    );
}

#[test]
fn a_symlinked_ledger_is_not_followed() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let target = fx.path("elsewhere.txt");
    std::fs::write(&target, "precious\n").unwrap();
    let audit_dir = fx.run_dir().join("audit");
    std::fs::create_dir_all(&audit_dir).unwrap();
    std::os::unix::fs::symlink(&target, audit_dir.join("mcp.jsonl")).unwrap();
    let out = serve(&fx, &[], &[("repo.status", json!({ "repoPath": repo }))]);
    assert!(!out.stdout.is_empty());
    assert!(stderr(&out).contains("degraded"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious\n");
}
