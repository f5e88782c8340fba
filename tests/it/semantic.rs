//! `diff.semantic` and `diff.semanticFallbacks`: the built-in engine's local answer, and the
//! pass-through to a real HTTP peer standing in for the FluxGit gateway.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::mpsc;

use serde_json::{Value, json};

use crate::common::Fixture;
use crate::tool_snapshot;

fn repo_with_change(fx: &Fixture) -> (PathBuf, String) {
    let repo = fx.init("repo", &[]);
    let base = fx.commit(
        &repo,
        "src/main.rs",
        "fn main() {\n    let x = 1;\n}\n",
        "base",
    );
    fx.commit(
        &repo,
        "src/main.rs",
        "fn main() {\n    let x = 2;\n}\n",
        "change",
    );
    fx.commit(&repo, "logo.bin", "\0bin", "logo");
    (repo, base)
}

/// A one-shot HTTP server on loopback: answers the first request with `status` and
/// `body`, and hands the request (head, body) back to the test.
fn gateway(status: u16, body: &'static str) -> (String, mpsc::Receiver<(String, Value)>) {
    serve(status, body.to_owned(), "")
}

/// Like [`gateway`], with any body and extra header lines.
fn serve(
    status: u16,
    body: String,
    headers: &'static str,
) -> (String, mpsc::Receiver<(String, Value)>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut head = String::new();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" || line.is_empty() {
                break;
            }
            head.push_str(&line);
        }
        let length: usize = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse().unwrap())
            })
            .unwrap_or(0);
        let mut request = vec![0; length];
        reader.read_exact(&mut request).unwrap();
        let mut stream = stream;
        // The client may hang up early (a capped body); that is not the test's concern.
        let _ = write!(
            stream,
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{headers}Connection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.flush();
        let _ = tx.send((
            head,
            serde_json::from_slice(&request).unwrap_or(Value::Null),
        ));
    });
    (addr, rx)
}

const ENGINE: &str = r#"{"tool":"diff.semantic","readOnly":true,"source":"fluxgit-gateway","data":{"supported":true,"engine":"fluxgit-diff-engine","files":[{"path":"src/main.rs","fallbackToText":false,"hunks":[{"header":"fn main","lines":[{"type":"modified","oldLine":2,"newLine":2,"content":"    let x = 2;","oldContent":"    let x = 1;","changedTokens":["2"],"oldChangedTokens":["1"]}]}]},{"path":"logo.bin","fallbackToText":true,"hunks":[]}],"changedFiles":2,"filesTruncated":false}}"#;

#[test]
fn diff_semantic_answers_locally_from_the_built_in_engine() {
    let fx = Fixture::new();
    let (repo, base) = repo_with_change(&fx);
    let result = tool_snapshot!(
        "diff_semantic_local",
        fx,
        "diff.semantic",
        json!({ "repoPath": repo, "base": base, "head": "HEAD", "path": "src/main.rs" })
    );
    assert_eq!(result["source"], "local-engine");
    let data = &result["data"];
    assert_eq!(data["supported"], true);
    assert_eq!(data["engine"], "gitward-tree-sitter");
    assert_eq!(
        (&data["changedFiles"], &data["filesTruncated"]),
        (&json!(1), &json!(false))
    );
    // The seed's own example, computed.
    assert_eq!(
        data["files"],
        json!([{ "path": "src/main.rs", "language": "rust", "fallbackToText": false,
            "hunks": [{ "header": "fn main", "lines": [{ "type": "modified", "oldLine": 2,
                "newLine": 2, "content": "    let x = 2;", "oldContent": "    let x = 1;",
                "changedTokens": ["2"], "oldChangedTokens": ["1"] }] }] }])
    );
}

#[test]
fn diff_semantic_fallbacks_local_lists_exactly_the_files_that_fell_back() {
    let fx = Fixture::new();
    let (repo, base) = repo_with_change(&fx);
    let fallbacks = tool_snapshot!(
        "diff_semantic_fallbacks_local",
        fx,
        "diff.semanticFallbacks",
        json!({ "repoPath": repo, "base": base })
    );
    assert_eq!(fallbacks["source"], "local-engine");
    assert_eq!(fallbacks["data"]["analyzedFiles"], 2);
    assert_eq!(
        fallbacks["data"]["fallbacks"],
        json!([{ "path": "logo.bin", "reason": "binary: git reports binary content",
            "textDiffArguments": { "repoPath": repo, "base": base, "path": "logo.bin" } }])
    );
}

#[test]
fn gateway_answer_passes_through_for_a_registered_repository() {
    let fx = Fixture::new();
    let (repo, base) = repo_with_change(&fx);
    std::fs::create_dir_all(fx.run_dir().join("repos")).unwrap();
    std::fs::write(
        fx.run_dir().join("repos/ws-42.path"),
        format!("{}\n", repo.display()),
    )
    .unwrap();
    let (addr, requests) = gateway(200, ENGINE);
    let url = format!("http://{addr}/");
    // Proxy settings are ignored: the gateway is always reached directly.
    let mut server = fx.server(
        &[],
        &[
            ("FLUXGIT_MCP_HANDSHAKE_ADDR", &url),
            ("HTTP_PROXY", "http://127.0.0.1:9"),
            ("http_proxy", "http://127.0.0.1:9"),
            ("ALL_PROXY", "http://127.0.0.1:9"),
        ],
    );
    let result = server.call(
        "diff.semantic",
        json!({ "repoPath": repo, "base": base, "head": "HEAD" }),
    );
    let (head, body) = requests.recv().unwrap();
    assert!(
        head.starts_with("POST /v1/mcp/diff/semantic HTTP/1.1"),
        "{head}"
    );
    assert_eq!(
        body,
        json!({
            "repoId": "ws-42",
            "repoPath": repo,
            "baseRef": base,
            "headRef": "HEAD",
            "paths": ["logo.bin", "src/main.rs"],
        })
    );
    tool_snapshot!("diff_semantic_gateway", fx, result);
    assert_eq!(result["source"], "fluxgit-gateway");
    assert_eq!(result["data"]["supported"], true);
    let logo = &result["data"]["files"][1];
    assert_eq!(logo["fallbackToText"], true);
    assert_eq!(
        logo["textDiffArguments"],
        json!({ "repoPath": repo, "base": base, "head": "HEAD", "path": "logo.bin" })
    );
    assert!(logo["reason"].is_string());

    // The fallbacks tool reports the engine's own per-file records.
    let (addr, _requests) = gateway(200, ENGINE);
    let mut server = fx.server(&[], &[("FLUXGIT_GATEWAY_ADDR", &addr)]);
    let fallbacks = server.call(
        "diff.semanticFallbacks",
        json!({ "repoPath": repo, "repoId": "explicit", "base": base, "head": "HEAD" }),
    );
    assert_eq!(fallbacks["source"], "fluxgit-gateway");
    assert_eq!(fallbacks["data"]["analyzedFiles"], 2);
    assert_eq!(fallbacks["data"]["fallbacks"][0]["path"], "logo.bin");
}

#[test]
fn every_gateway_failure_falls_back_locally() {
    let fx = Fixture::new();
    let (repo, base) = repo_with_change(&fx);
    let args = json!({ "repoPath": repo, "repoId": "ws", "base": base });
    let local = |env: &[(&str, &str)]| {
        let r = fx.server(&[], env).call("diff.semantic", args.clone());
        assert_eq!(r["source"], "local-engine", "{env:?}: {r}");
        assert_eq!(r["data"]["engine"], "gitward-tree-sitter");
    };
    // Refused addresses: never contacted.
    for bad in [
        "example.com:80",
        "https://127.0.0.1:1",
        "http://user:pw@127.0.0.1:1",
        "127.0.0.1",
        "http://127.0.0.1:1/path",
    ] {
        local(&[("FLUXGIT_MCP_HANDSHAKE_ADDR", bad)]);
    }
    // Nothing listening.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = closed.local_addr().unwrap().to_string();
    drop(closed);
    local(&[("FLUXGIT_GATEWAY_URL", &dead)]);
    // An error status, a non-JSON body, and an engine that declines.
    let (addr, _r1) = gateway(500, r#"{"error":"boom"}"#);
    local(&[("FLUXGIT_MCP_HANDSHAKE_ADDR", &addr)]);
    let (addr, _r2) = gateway(200, "not json");
    local(&[("FLUXGIT_MCP_HANDSHAKE_ADDR", &addr)]);
    let (addr, _r3) = gateway(200, r#"{"data":{"supported":"yes","files":[]}}"#);
    local(&[("FLUXGIT_MCP_HANDSHAKE_ADDR", &addr)]);
    // An answer that does not match the advertised output schema.
    let (addr, _r8) = gateway(
        200,
        r#"{"data":{"supported":true,"files":[{"path":"a","fallbackToText":false,"hunks":[{"lines":[{"type":"added","newLine":"two"}]}]}],"changedFiles":1}}"#,
    );
    local(&[("FLUXGIT_MCP_HANDSHAKE_ADDR", &addr)]);
    // A redirect is not followed, even to a peer that would answer; and an answer over
    // 1 MiB is not read.
    let (target, _r5) = gateway(200, ENGINE);
    let location: &'static str =
        Box::leak(format!("Location: http://{target}/v1/mcp/diff/semantic\r\n").into_boxed_str());
    let (addr, _r6) = serve(307, String::from("{}"), location);
    local(&[("FLUXGIT_MCP_HANDSHAKE_ADDR", &addr)]);
    let huge = format!(
        r#"{{"data":{{"supported":true,"files":[],"pad":"{}"}}}}"#,
        "x".repeat(2 * 1024 * 1024)
    );
    let (addr, _r7) = serve(200, huge, "");
    local(&[("FLUXGIT_MCP_HANDSHAKE_ADDR", &addr)]);
    // A configured gateway but an unregistered repository and no repoId.
    let (addr, _r4) = gateway(200, ENGINE);
    let r = fx
        .server(&[], &[("FLUXGIT_MCP_HANDSHAKE_ADDR", &addr)])
        .call("diff.semantic", json!({ "repoPath": repo }));
    assert_eq!(r["source"], "local-engine");
}

#[test]
fn hostile_and_bad_input() {
    let fx = Fixture::new();
    let (repo, _) = repo_with_change(&fx);
    let target = fx.path("clobbered");
    let mut server = fx.server(&[], &[]);
    let errors: Vec<Value> = [
        json!({ "repoPath": repo, "base": format!("--output={}", target.display()) }),
        json!({ "repoPath": repo, "head": "-n" }),
        json!({ "repoPath": repo, "base": "a\nb" }),
        json!({ "repoPath": repo, "base": "nope" }),
        json!({ "repoPath": repo, "path": "../x" }),
        json!({ "repoPath": repo, "path": "/etc/passwd" }),
        json!({ "repoPath": repo, "repoId": "a\u{0}b" }),
        json!({ "repoPath": "relative" }),
    ]
    .into_iter()
    .flat_map(|args| {
        ["diff.semantic", "diff.semanticFallbacks"].map(|tool| {
            let r = server.call(tool, args.clone());
            assert_eq!(r["error"]["code"], -32602, "{r}");
            r["error"]["data"].clone()
        })
    })
    .collect();
    assert!(!target.exists());
    tool_snapshot!("diff_semantic_bad_input", fx, json!(errors));
}
