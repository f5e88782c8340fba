//! The human listener of a real `gitward gateway`: the login link, CSRF and origin checks,
//! the page's security headers, decisions, the live stream, the CLI's bearer token.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::common::Fixture;
use super::gateway_support::{Gateway, dirty_repo, preview_id, request};

#[test]
fn the_login_link_works_once_and_gives_a_session_token_never_a_cookie() {
    let fixture = Fixture::new();
    let gw = Gateway::start(&fixture, &[], &[]);
    assert!(gw.login.contains("/login#"), "{}", gw.login);
    let anonymous = gw.ui_get_raw("/api/session", &[]);
    assert_eq!(anonymous.status, 401, "{anonymous:?}");

    let own = format!("http://{}", gw.ui);
    let token = json!({"token": gw.login_token()});
    let foreign = gw.ui_post_raw("/api/login", &[("Origin", "http://evil.test")], &token);
    assert_eq!(foreign.status, 403, "{foreign:?}");
    let no_origin = gw.ui_post_raw("/api/login", &[], &token);
    assert_eq!(no_origin.status, 403);
    let wrong = gw.ui_post_raw(
        "/api/login",
        &[("Origin", &own)],
        &json!({"token": "guess"}),
    );
    assert_eq!(wrong.status, 401);

    let session = gw.login();
    assert_ne!(session.token, session.csrf);
    let replay = gw.ui_post_raw("/api/login", &[("Origin", &own)], &token);
    assert_eq!(replay.status, 401, "{replay:?}");
    let whoami = session.get("/api/session");
    assert_eq!(whoami.status, 200);
    assert_eq!(whoami.json()["csrf"], json!(session.csrf));
    let forged = gw.ui_get_raw("/api/session", &[("X-Gitward-Session", "forged")]);
    assert_eq!(forged.status, 401);
    // The token as a cookie is nothing: cookies reach every port of the host.
    let cookie = format!("gw_session={0}; x-gitward-session={0}", session.token);
    let as_cookie = gw.ui_get_raw("/api/session", &[("Cookie", &cookie)]);
    assert_eq!(as_cookie.status, 401);
}

#[test]
fn every_answer_carries_the_pages_security_headers_and_no_cors() {
    let fixture = Fixture::new();
    let gw = Gateway::start(&fixture, &[], &[]);
    let session = gw.login();
    for answer in [
        gw.ui_get_raw("/", &[]),
        gw.ui_get_raw("/login", &[]),
        gw.ui_get_raw("/assets/app.js", &[]),
        session.get("/api/proposals?view=pending"),
        gw.ui_get_raw("/api/session", &[]),
        gw.ui_get_raw("/nope", &[]),
    ] {
        assert_eq!(
            answer.header("content-security-policy"),
            Some("default-src 'self'; frame-ancestors 'none'"),
            "{answer:?}"
        );
        assert_eq!(answer.header("referrer-policy"), Some("no-referrer"));
        assert_eq!(answer.header("x-content-type-options"), Some("nosniff"));
        assert_eq!(answer.header("cache-control"), Some("no-store"));
        answer.assert_no_cors();
    }
    let page = gw.ui_get_raw("/", &[]);
    assert!(page.body.contains("/assets/app.js"), "{}", page.body);
    let rebound = request(&gw.ui, "GET", "/", &[("Host", "evil.test")], b"");
    assert_eq!(rebound.status, 403, "{rebound:?}");
    let rebound_api = request(
        &gw.ui,
        "GET",
        "/api/proposals",
        &[("Host", "evil.test"), ("X-Gitward-Session", &session.token)],
        b"",
    );
    assert_eq!(rebound_api.status, 403);
    rebound_api.assert_no_cors();
}

#[test]
fn approving_waits_for_the_preview_a_person_is_shown() {
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    // Development builds hold every preview while this file exists.
    let hold = fixture.root().join("hold-previews");
    std::fs::write(&hold, "").unwrap();
    let hold_env = hold.display().to_string();
    let gw = Gateway::start(
        &fixture,
        &[],
        &[("GITWARD_DEBUG_PREVIEW_HOLD", hold_env.as_str())],
    );
    let session = gw.login();
    let id = preview_id(&gw.propose_commit(&repo, "claude-code", None));
    let card_path = format!("/api/proposals/{id}");
    let card = session.get(&card_path).json();
    assert_eq!(card["previewPending"], true, "{card}");
    assert!(card["preview"].is_null(), "{card}");

    let approve = format!("{card_path}/approve");
    let early = session.post_now(&approve, &json!({"confirmDestructive": false}));
    assert_eq!(early.status, 409, "{early:?}");
    let error = &early.json()["error"];
    assert_eq!(error["code"], "previewNotReady", "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("preview"),
        "{error}"
    );
    assert_eq!(session.get(&card_path).json()["status"], "pending");

    std::fs::remove_file(&hold).unwrap();
    session.wait_preview(&card_path);
    let card = session.get(&card_path).json();
    assert_eq!(card["preview"]["files"][0]["path"], "a.txt", "{card}");
    let approved = session.post_now(&approve, &json!({"confirmDestructive": false}));
    assert_eq!(approved.status, 200, "{approved:?}");
    assert_ne!(approved.json()["status"], "pending");
}

/// A gateway whose previews wait while the returned file exists (development builds).
fn holding_previews(fixture: &Fixture) -> (Gateway, std::path::PathBuf) {
    let hold = fixture.root().join("hold-previews");
    std::fs::write(&hold, "").unwrap();
    let hold_env = hold.display().to_string();
    let env = [("GITWARD_DEBUG_PREVIEW_HOLD", hold_env.as_str())];
    (Gateway::start(fixture, &[], &env), hold)
}

#[test]
fn a_card_decided_while_its_preview_waits_gets_none_and_the_next_card_its_own() {
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    let (gw, hold) = holding_previews(&fixture);
    let session = gw.login();
    let first = preview_id(&gw.propose_commit(&repo, "claude-code", Some("first")));
    let second = preview_id(&gw.propose_commit(&repo, "claude-code", Some("second")));
    let cancel = format!("/v1/mcp/operation/cancel/{first}");
    let cancelled = gw.post_handshake(&cancel, &json!({"agentId": "claude-code"}));
    assert_eq!(cancelled.status, 200, "{cancelled:?}");

    std::fs::remove_file(&hold).unwrap();
    let second_path = format!("/api/proposals/{second}");
    session.wait_preview(&second_path);
    let card = session.get(&second_path).json();
    assert_eq!(card["preview"]["files"][0]["path"], "a.txt", "{card}");
    // Cards are previewed oldest first: the cancelled one had its turn before the
    // next one's preview was stored, and used it to compute nothing.
    for _ in 0..10 {
        let card = session.get(&format!("/api/proposals/{first}")).json();
        assert_eq!(card["status"], "cancelled", "{card}");
        assert_eq!(card["previewPending"], false, "{card}");
        assert!(card["preview"].is_null(), "{card}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn cards_still_queued_when_the_gateway_stops_get_their_preview_at_the_next_start() {
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    let (gw, hold) = holding_previews(&fixture);
    let ids: Vec<String> = ["one", "two", "three"]
        .iter()
        .map(|key| preview_id(&gw.propose_commit(&repo, "claude-code", Some(key))))
        .collect();
    gw.kill();
    std::fs::remove_file(&hold).unwrap();

    let gw = Gateway::start(&fixture, &[], &[]);
    let session = gw.login();
    for id in &ids {
        let path = format!("/api/proposals/{id}");
        session.wait_preview(&path);
        let card = session.get(&path).json();
        assert_eq!(card["status"], "pending", "{card}");
        assert_eq!(card["preview"]["files"][0]["path"], "a.txt", "{card}");
    }
}

#[test]
fn decisions_need_the_csrf_token_and_the_pages_own_origin() {
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    let gw = Gateway::start(&fixture, &[], &[]);
    let session = gw.login();
    let id = preview_id(&gw.propose_commit(&repo, "claude-code", None));
    let approve = format!("/api/proposals/{id}/approve");
    let body = json!({"confirmDestructive": false});
    let own = format!("http://{}", gw.ui);
    let token = session.token.as_str();

    let no_csrf = gw.ui_post_raw(
        &approve,
        &[("X-Gitward-Session", token), ("Origin", &own)],
        &body,
    );
    assert_eq!(no_csrf.status, 403, "{no_csrf:?}");
    let wrong_csrf = gw.ui_post_raw(
        &approve,
        &[
            ("X-Gitward-Session", token),
            ("Origin", &own),
            ("X-CSRF-Token", "nope"),
        ],
        &body,
    );
    assert_eq!(wrong_csrf.status, 403);
    let cross = gw.ui_post_raw(
        &approve,
        &[
            ("X-Gitward-Session", token),
            ("Origin", "http://evil.test"),
            ("X-CSRF-Token", &session.csrf),
        ],
        &body,
    );
    assert_eq!(cross.status, 403, "{cross:?}");
    cross.assert_no_cors();
    let no_origin = gw.ui_post_raw(
        &approve,
        &[
            ("X-Gitward-Session", token),
            ("X-CSRF-Token", &session.csrf),
        ],
        &body,
    );
    assert_eq!(no_origin.status, 403);
    let no_session = gw.ui_post_raw(
        &approve,
        &[("Origin", &own), ("X-CSRF-Token", &session.csrf)],
        &body,
    );
    assert_eq!(no_session.status, 401);
    assert_eq!(
        session.get(&format!("/api/proposals/{id}")).json()["status"],
        "pending"
    );

    let approved = session.post(&approve, &body);
    assert_eq!(approved.status, 200, "{approved:?}");
    let card = approved.json();
    assert_eq!(card["previewId"], json!(id));
    assert_ne!(card["status"], "pending");
    assert_eq!(card["decidedBy"]["channel"], "web");
    let again = session.post(&approve, &body);
    assert_eq!(again.status, 409, "{again:?}");
    let reject = session.post(
        &format!("/api/proposals/{id}/reject"),
        &json!({"reason": null}),
    );
    assert_eq!(reject.status, 409);
}

#[test]
fn cards_list_reject_and_extend() {
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    let gw = Gateway::start(&fixture, &[], &[]);
    let session = gw.login();
    let first = preview_id(&gw.propose_commit(&repo, "claude-code", None));
    let second = preview_id(&gw.propose_commit(&repo, "codex", None));
    let pending = session.get("/api/proposals?view=pending").json();
    let ids: Vec<&str> = pending["cards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["previewId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [first.as_str(), second.as_str()]);
    let card = &pending["cards"][0];
    assert_eq!(card["operationType"], "commit");
    assert_eq!(card["risk"], "low");
    assert_eq!(card["repoPath"], json!(repo));
    assert_eq!(card["needsConfirmation"], false);
    assert_eq!(card["confirmationCode"].as_str().unwrap().len(), 6);

    let before = card["expiresAt"].as_str().unwrap().to_owned();
    let extended = session.post(
        &format!("/api/proposals/{first}/extend"),
        &json!({"seconds": 600}),
    );
    assert_eq!(extended.status, 200, "{extended:?}");
    assert!(extended.json()["expiresAt"].as_str().unwrap() > before.as_str());
    let bad = session.post(
        &format!("/api/proposals/{first}/extend"),
        &json!({"seconds": -1}),
    );
    assert_eq!(bad.status, 422);

    let rejected = session.post(
        &format!("/api/proposals/{second}/reject"),
        &json!({"reason": "not now"}),
    );
    assert_eq!(rejected.status, 200, "{rejected:?}");
    assert_eq!(rejected.json()["status"], "rejected");
    assert_eq!(rejected.json()["rejectReason"], "not now");
    let history = session.get("/api/proposals?view=history").json();
    assert_eq!(history["cards"][0]["previewId"], json!(second));
    let status = gw.get_handshake(&format!("/v1/mcp/operation/status/{second}"));
    assert_eq!(status.json()["status"], "rejected");

    // The preview streams in after the 202: the commit's files and diff.
    let mut preview = Value::Null;
    for _ in 0..200 {
        preview = session.get(&format!("/api/proposals/{first}")).json();
        if preview["previewPending"] == false {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    assert_eq!(preview["previewPending"], false, "{preview}");
    assert!(
        preview["preview"].to_string().contains("a.txt"),
        "{preview}"
    );
}

/// Reads the event stream until a `card` event whose data names `id`; returns the card.
fn next_card(reader: &mut BufReader<TcpStream>, id: &str) -> Value {
    let mut event = String::new();
    loop {
        let mut line = String::new();
        assert!(reader.read_line(&mut line).unwrap() > 0, "stream ended");
        let line = line.trim_end();
        if let Some(name) = line.strip_prefix("event:") {
            event = name.trim().to_owned();
        } else if let Some(data) = line.strip_prefix("data:") {
            if event == "card" && data.contains(id) {
                return serde_json::from_str(data.trim()).unwrap();
            }
        }
    }
}

#[test]
fn new_proposals_and_decisions_reach_the_event_stream() {
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    let gw = Gateway::start(&fixture, &[], &[]);
    let session = gw.login();
    let mut stream = TcpStream::connect(&gw.ui).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "GET /api/events HTTP/1.1\r\nHost: {}\r\nX-Gitward-Session: {}\r\nAccept: text/event-stream\r\n\r\n",
        gw.ui, session.token
    )
    .unwrap();
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    assert!(status.contains(" 200 "), "{status}");

    let started = Instant::now();
    let id = preview_id(&gw.propose_commit(&repo, "claude-code", None));
    let card = next_card(&mut reader, &id);
    let latency = started.elapsed();
    assert_eq!(card["status"], "pending");
    eprintln!("proposal → event stream: {latency:?}");

    session.post(&format!("/api/proposals/{id}/reject"), &json!({}));
    loop {
        let card = next_card(&mut reader, &id);
        if card["status"] == "rejected" {
            break;
        }
    }
    let anonymous = gw.ui_get_raw("/api/events", &[]);
    assert_eq!(anonymous.status, 401);
}

#[test]
fn a_card_with_its_preview_is_never_followed_by_an_older_one() {
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    // The follower waits between reading the log and publishing, so the preview (stored
    // meanwhile) is published first: the follower must not send the older card after it.
    let gw = Gateway::start(&fixture, &[], &[("GITWARD_DEBUG_FOLLOW_DELAY_MS", "500")]);
    let session = gw.login();
    let mut stream = TcpStream::connect(&gw.ui).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "GET /api/events HTTP/1.1\r\nHost: {}\r\nX-Gitward-Session: {}\r\nAccept: text/event-stream\r\n\r\n",
        gw.ui, session.token
    )
    .unwrap();
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    assert!(status.contains(" 200 "), "{status}");

    let id = preview_id(&gw.propose_commit(&repo, "claude-code", None));
    while next_card(&mut reader, &id)["preview"].is_null() {}
    session.post(&format!("/api/proposals/{id}/reject"), &json!({}));
    loop {
        let card = next_card(&mut reader, &id);
        assert!(
            !card["preview"].is_null(),
            "an older card came later: {card}"
        );
        assert_eq!(card["previewPending"], false, "{card}");
        if card["status"] == "rejected" {
            break;
        }
    }
}

#[test]
fn the_cli_token_file_is_private_and_only_bearer_works_with_it() {
    use std::os::unix::fs::PermissionsExt;
    let fixture = Fixture::new();
    let repo = dirty_repo(&fixture, "r");
    let gw = Gateway::start(&fixture, &[], &[]);
    let dir = fixture.run_dir().join("gateway");
    for name in ["cli-token", "ui.json"] {
        let mode = std::fs::metadata(dir.join(name))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{name}");
    }
    let ui: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("ui.json")).unwrap()).unwrap();
    assert_eq!(ui["ui"], json!(format!("http://{}/", gw.ui)));
    let token = std::fs::read_to_string(dir.join("cli-token")).unwrap();
    let bearer = format!("Bearer {token}");
    let id = preview_id(&gw.propose_commit(&repo, "claude-code", None));

    let list = gw.ui_get_raw("/api/proposals", &[("Authorization", &bearer)]);
    assert_eq!(list.status, 200, "{list:?}");
    assert_eq!(list.json()["cards"][0]["previewId"], json!(id));
    let forged = gw.ui_get_raw("/api/proposals", &[("Authorization", "Bearer forged")]);
    assert_eq!(forged.status, 401);
    let reject = format!("/api/proposals/{id}/reject");
    let unnamed = gw.ui_post_raw(&reject, &[("Authorization", &bearer)], &json!({}));
    assert_eq!(unnamed.status, 403, "{unnamed:?}");
    let rejected = gw.ui_post_raw(
        &reject,
        &[("Authorization", &bearer), ("X-Gitward-Channel", "tty")],
        &json!({"reason": "from the terminal"}),
    );
    assert_eq!(rejected.status, 200, "{rejected:?}");
    assert_eq!(rejected.json()["decidedBy"]["channel"], "tty");
}
