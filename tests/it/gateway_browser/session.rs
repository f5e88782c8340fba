//! The page's session in a real browser: it belongs to the page's origin (scheme, host and
//! port), so another loopback server the person opens receives nothing it could approve
//! with; `--open` logs in through a private file; hidden characters show on the card.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::harness::{Gateway, find, screenshot, wait_text, with_browser};
use crate::common::{Fixture, write_executable};

/// A second loopback web server, as an agent's dev server would be: it answers every
/// request with a small page and keeps every request head it received.
struct Spy {
    port: u16,
    heads: Arc<Mutex<Vec<String>>>,
}

impl Spy {
    fn start() -> Spy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let heads = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&heads);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut head = String::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    head.push_str(&line);
                }
                kept.lock().unwrap().push(head);
                let page = "<!doctype html><title>dev server</title><p>hello</p>";
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                    page.len()
                );
            }
        });
        Spy { port, heads }
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

fn http() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .build()
        .into()
}

/// What the spy can do with a request head it received: replay its `Cookie` header (and
/// any other credential in it) against the gateway, as the agent's server would.
fn replay(ui: &str, head: &str, id: &str) -> Vec<u16> {
    let host = ui.trim_start_matches("http://").trim_end_matches('/');
    let mut statuses = Vec::new();
    let credentials: Vec<(String, String)> = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .filter(|(k, _)| {
            ["cookie", "x-gitward-session", "authorization"].contains(&k.to_lowercase().as_str())
        })
        .collect();
    for (name, value) in &credentials {
        let mut answer = http()
            .get(format!("{ui}api/session"))
            .header(name, value)
            .call()
            .unwrap();
        statuses.push(answer.status().as_u16());
        let text = answer.body_mut().read_to_string().unwrap_or_default();
        let csrf = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v["csrf"].as_str().map(str::to_owned))
            .unwrap_or_default();
        let approve = http()
            .post(format!("{ui}api/proposals/{id}/approve"))
            .header(name, value)
            .header("X-CSRF-Token", &csrf)
            .header("Origin", format!("http://{host}"))
            .header("Content-Type", "application/json")
            .send(r#"{"confirmDestructive":false}"#)
            .unwrap();
        statuses.push(approve.status().as_u16());
    }
    statuses
}

fn dirty_repo(fx: &Fixture) -> PathBuf {
    let repo = fx.init("r", &[]);
    fx.commit(&repo, "a.txt", "one\n", "first");
    fx.write(&repo, "a.txt", "two\n");
    repo
}

#[test]
fn the_session_stays_with_the_pages_origin_and_another_loopback_server_gets_nothing() {
    let fx = Fixture::new();
    let repo = dirty_repo(&fx);
    let gw = Gateway::start(&fx, &[]);
    let id = gw.propose(
        "commit",
        &repo,
        "tidy \u{202E}gnp.exe and ma\u{200B}in",
        json!({"message": "m", "stageAll": true}),
    );
    let spy = Spy::start();
    let (login, ui) = (gw.login.clone(), gw.ui.clone());
    let handshake_id = id.clone();
    with_browser(move |client| async move {
        client.goto(&login).await.unwrap();
        find(&client, "body[data-state='ready']").await;
        let card = format!("article.card[data-id='{id}']");
        find(&client, &card).await;

        // The person opens another server on 127.0.0.1 (cookies ignore ports; storage
        // does not): whatever it receives gets it nowhere on the gateway.
        client
            .goto(&format!("http://127.0.0.1:{}/", spy.port))
            .await
            .unwrap();
        find(&client, "p").await;
        let heads = spy.heads();
        assert!(!heads.is_empty());
        for head in &heads {
            for status in replay(&ui, head, &id) {
                assert!(status >= 400, "the other server got in with {head}");
            }
        }
        let theirs = client
            .execute("return JSON.stringify(Object.keys(localStorage))", vec![])
            .await
            .unwrap();
        assert_eq!(theirs, json!("[]"));

        // Back on the page: the session is in its own origin's storage, no cookie at all,
        // and none of it reached the other server.
        client.goto(&ui).await.unwrap();
        find(&client, "body[data-state='ready']").await;
        let saved = client
            .execute("return localStorage.getItem('gitward.session')", vec![])
            .await
            .unwrap();
        assert!(
            saved.as_str().is_some_and(|s| s.contains("session")),
            "{saved}"
        );
        assert!(client.get_all_cookies().await.unwrap().is_empty());
        let secret: Value = serde_json::from_str(saved.as_str().unwrap()).unwrap();
        for head in &heads {
            for value in [&secret["session"], &secret["csrf"]] {
                assert!(!head.contains(value.as_str().unwrap()), "{head}");
            }
        }

        // Hidden characters are shown, not obeyed.
        let shown = wait_text(&client, &card, "<U+202E>").await;
        assert!(
            shown.contains("tidy <U+202E>gnp.exe and ma<U+200B>in"),
            "{shown}"
        );
        assert!(
            !shown.contains('\u{202E}') && !shown.contains('\u{200B}'),
            "{shown}"
        );
        screenshot(&client, "session-hidden-characters").await;
    });
    assert_eq!(gw.status(&handshake_id)["status"], "pending");
}

/// A `$BROWSER` that records its argv, then lets the test's browser open the file.
fn recording_browser(bin: &Path, record: &Path) {
    write_executable(
        &bin.join("my-browser"),
        &format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{0}.tmp' && mv '{0}.tmp' '{0}'\n",
            record.display()
        ),
    );
}

#[test]
fn open_logs_in_through_a_private_file_that_goes_once_used() {
    let fx = Fixture::new();
    let bin = fx.path("bin");
    let record = fx.path("opened.txt");
    recording_browser(&bin, &record);
    let path = std::env::join_paths(std::iter::once(bin.clone()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let gw = crate::gateway_support::Gateway::start(
        &fx,
        &["--open"],
        &[("PATH", path.to_str().unwrap()), ("BROWSER", "my-browser")],
    );
    let until = Instant::now() + Duration::from_secs(30);
    let argv = loop {
        if let Ok(text) = std::fs::read_to_string(&record) {
            break text;
        }
        assert!(Instant::now() < until, "the opener never ran");
        std::thread::sleep(Duration::from_millis(20));
    };
    let token = gw.login_token();
    assert!(!argv.contains(&token), "{argv}");
    let file = PathBuf::from(argv.trim());
    let ui = format!("http://{}/", gw.ui);
    with_browser(move |client| async move {
        client
            .goto(&format!("file://{}", file.display()))
            .await
            .unwrap();
        find(&client, "body[data-state='ready']").await;
        assert_eq!(client.current_url().await.unwrap().as_str(), ui);
        let until = Instant::now() + Duration::from_secs(30);
        while file.exists() {
            assert!(Instant::now() < until, "{} stayed", file.display());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    drop(gw);
}
